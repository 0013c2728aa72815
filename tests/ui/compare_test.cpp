// File > Compare...: the two models side by side, coloured by what differs, a list of the
// differences that moves both pictures, selection followed across, and F3 walking the changes.
#include <QListWidget>
#include <QSignalSpy>
#include <QTest>
#include <gtest/gtest.h>

#include "tdfx/ui/compare_window.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/main_window.h"
#include "test_support.h"
#include "ui/window_driver.h"

namespace tdfx::ui {
namespace {

using testing::fixture;

// Opens `a`, compares it with `b`, and returns the side-by-side window (null on failure).
CompareWindow* compareAndWait(MainWindow& w, const std::string& a, const std::string& b) {
  if (!openAndWait(w, fixture(a))) return nullptr;
  QSignalSpy done(&w, &MainWindow::compared);
  w.compareWith(QString::fromStdString(fixture(b)));
  for (int i = 0; i < 600 && done.isEmpty(); ++i) QTest::qWait(50);
  if (done.isEmpty() || !done.first().at(1).toBool()) return nullptr;
  return w.compareWindow();
}

QStringList sorted(QStringList l) {
  l.sort();
  return l;
}

TEST(Compare, AFileAgainstItselfMarksNothing) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, "seed_sequential.pt", "seed_sequential.pt");
  ASSERT_NE(c, nullptr);
  for (GraphScene* scene : {c->sceneA(), c->sceneB()})
    for (auto mark : {GraphScene::DiffAdded, GraphScene::DiffRemoved, GraphScene::DiffChanged, GraphScene::DiffWeights})
      EXPECT_TRUE(scene->markedNodes(mark).isEmpty()) << mark;
  ASSERT_EQ(c->differences()->count(), 1);
  EXPECT_TRUE(c->differences()->item(0)->text().startsWith("identical"));
  EXPECT_TRUE(w.searchMatches().isEmpty());
  EXPECT_GT(c->sceneA()->nodeCount(), 0);
  EXPECT_EQ(c->sceneA()->nodeCount(), c->sceneB()->nodeCount());
}

TEST(Compare, OtherWeightsMarkTheirNodesOnBothSidesAndTheListMovesBoth) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, "plain.pt", "jit_traced.pt");  // the same net, other weights
  ASSERT_NE(c, nullptr);
  const QStringList both{QStringLiteral("fc1"), QStringLiteral("fc2")};
  EXPECT_EQ(sorted(c->sceneA()->markedNodes(GraphScene::DiffWeights)), both);
  EXPECT_EQ(sorted(c->sceneB()->markedNodes(GraphScene::DiffWeights)), both);
  EXPECT_TRUE(c->sceneB()->markedNodes(GraphScene::DiffAdded).isEmpty());
  // The row of fc2.weight selects fc2 on both sides.
  int row = -1;
  for (int i = 0; i < c->differences()->count(); ++i)
    if (c->differences()->item(i)->text().startsWith("~ parameter fc2.weight: values differ")) row = i;
  ASSERT_GE(row, 0);
  c->differences()->setCurrentRow(row);
  EXPECT_EQ(c->sceneA()->selectedNode(), "fc2");
  EXPECT_EQ(c->sceneB()->selectedNode(), "fc2");
  // A node selected on one side selects its partner on the other.
  c->sceneA()->selectNode(QStringLiteral("fc1"));
  EXPECT_EQ(c->sceneB()->selectedNode(), "fc1");
}

TEST(Compare, AnotherArchitectureColoursRemovedOnTheLeftAndAddedOnTheRight) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, "scoped.pt", "seed_sequential.pt");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->sceneA()->markedNodes(GraphScene::DiffRemoved).isEmpty());
  EXPECT_FALSE(c->sceneB()->markedNodes(GraphScene::DiffAdded).isEmpty());
  EXPECT_TRUE(c->sceneA()->markedNodes(GraphScene::DiffAdded).isEmpty());
  EXPECT_TRUE(c->sceneB()->markedNodes(GraphScene::DiffRemoved).isEmpty());
  EXPECT_GT(c->differences()->count(), 2);
}

TEST(Compare, FindNextWalksTheChangesWhileTheSearchFieldIsEmpty) {
  MainWindow w(/*interactive=*/false);
  ASSERT_NE(compareAndWait(w, "plain.pt", "jit_traced.pt"), nullptr);
  ASSERT_EQ(w.searchMatches(), (QStringList{QStringLiteral("fc1"), QStringLiteral("fc2")}));
  EXPECT_EQ(w.findNext(QString()), "fc1");
  EXPECT_EQ(w.findNext(QString()), "fc2");
  EXPECT_EQ(w.findNext(QString()), "fc1");
  EXPECT_EQ(w.searchCountText(), " 1 of 2 ");
}

}  // namespace
}  // namespace tdfx::ui
