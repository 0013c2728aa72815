// Search as you type, regular expressions, going to a node at a readable scale, and zooming that
// keeps the selection (keys) or the point under the cursor (wheel) in place.
#include <QToolButton>
#include <QApplication>
#include <QGraphicsItem>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTest>
#include <QWheelEvent>
#include <gtest/gtest.h>

#include "support/synthetic_graph.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "test_support.h"
#include "ui/window_driver.h"

namespace tdfx::ui {
namespace {

using tdfx::testing::fixture;

/// Waits out the search field's debounce.
void waitForLiveSearch() { QTest::qWait(600); }

TEST(SearchAndZoom, TypingSearchesLiveAndOpeningAnotherModelResetsIt) {
  MainWindow w(/*interactive=*/false);
  w.resize(1200, 800);
  w.show();
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  QTest::keyClicks(w.searchField(), QStringLiteral("relu"));  // no Enter
  waitForLiveSearch();
  const QStringList matches = w.searchMatches();
  ASSERT_GE(matches.size(), 2);
  EXPECT_EQ(w.scene()->markedNodes(GraphScene::SearchMatch).size(), matches.size());
  const QString halo = QStringLiteral("yellow halo: search match");
  EXPECT_TRUE(w.view()->legendLabels().contains(halo)) << "the legend names the marks shown";
  EXPECT_EQ(w.scene()->selectedNode(), matches.first());  // the first match is shown
  EXPECT_EQ(w.searchCountText().trimmed().toStdString(), "1 of " + std::to_string(matches.size()));
  // Enter goes on to the next match.
  QTest::keyClick(w.searchField(), Qt::Key_Return);
  EXPECT_EQ(w.scene()->selectedNode(), matches[1]);

  // Another model: no query, no count, no marks, no highlighted code line of the old one.
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  EXPECT_TRUE(w.searchField()->text().isEmpty());
  EXPECT_TRUE(w.searchCountText().isEmpty());
  EXPECT_TRUE(w.searchMatches().isEmpty());
  EXPECT_TRUE(w.scene()->markedNodes(GraphScene::SearchMatch).isEmpty());
  EXPECT_FALSE(w.view()->legendLabels().contains(halo));
  EXPECT_TRUE(w.codeEditor()->extraSelections().isEmpty());
}

TEST(SearchAndZoom, RegularExpressionsAndInvalidPatterns) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  w.setSearchRegex(true);
  // Anchored: getitem and getitem_1, not every node whose target mentions getitem.
  EXPECT_FALSE(w.findNext(QStringLiteral("^getitem(_\\d+)?$")).isEmpty());
  QStringList found = w.searchMatches();
  found.sort();
  EXPECT_EQ(found, (QStringList{QStringLiteral("getitem"), QStringLiteral("getitem_1")}));
  EXPECT_TRUE(w.findNext(QStringLiteral("relu(")).isEmpty());  // unbalanced
  EXPECT_TRUE(w.searchCountText().contains(QStringLiteral("invalid pattern"))) << w.searchCountText().toStdString();
  // A new picture searches again, and the pattern's error stays (it read " 0 matches").
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setRankdir(QStringLiteral("LR")); }));
  EXPECT_TRUE(w.searchCountText().contains(QStringLiteral("invalid pattern"))) << w.searchCountText().toStdString();
  // Plain text again: "relu(" is text, and "^getitem" matches nothing literally.
  w.setSearchRegex(false);
  EXPECT_TRUE(w.findNext(QStringLiteral("^getitem")).isEmpty());
}

TEST(SearchAndZoom, GoingToANodeZoomsToAReadableScale) {
  MainWindow w(/*interactive=*/false);
  w.resize(1200, 800);
  w.show();
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  w.view()->resetTransform();
  w.view()->scale(0.1, 0.1);  // far out: every label a speck
  const QString id = w.findNext(QStringLiteral("relu"));
  ASSERT_FALSE(id.isEmpty());
  EXPECT_GE(w.view()->transform().m11(), GraphView::kReadableScale - 1e-9);
  const QRectF shown = w.view()->mapToScene(w.view()->viewport()->rect()).boundingRect();
  EXPECT_TRUE(shown.contains(w.scene()->nodeItem(id)->sceneBoundingRect())) << id.toStdString();
  // Already close in: going to another node keeps the zoom.
  w.view()->scale(2, 2);
  const double close = w.view()->transform().m11();
  w.findNext(QStringLiteral("relu"));
  EXPECT_DOUBLE_EQ(w.view()->transform().m11(), close);
}

TEST(SearchAndZoom, KeyZoomKeepsTheSelectionAndWheelZoomThePointUnderTheCursor) {
  SyntheticView narrow(40, 200, 400);  // narrower than the graph: there is room to scroll both ways
  const ViewGraph& view = narrow.graph;
  GraphScene& scene = narrow.scene;
  GraphView& graphView = narrow.view;
  ASSERT_GT(scene.nodeCount(), 40);
  ASSERT_GT(scene.sceneRect().width(), 260);
  // A node in the middle of the graph, selected, shown off-centre.
  const QString id = QString::fromStdString(view.nodes[view.nodes.size() / 2].id);
  QGraphicsItem* item = scene.nodeItem(id);
  ASSERT_NE(item, nullptr);
  scene.selectNode(id);
  graphView.resetTransform();
  graphView.centerOn(item->sceneBoundingRect().center() + QPointF(50, 100));
  const QPoint before = graphView.mapFromScene(item->sceneBoundingRect().center());
  ASSERT_TRUE(graphView.viewport()->rect().contains(before));
  graphView.zoomBy(1.25);
  const QPoint after = graphView.mapFromScene(item->sceneBoundingRect().center());
  EXPECT_LE((after - before).manhattanLength(), 2) << scene.sceneRect().width() << "x" << scene.sceneRect().height() << " " << before.x() << "," << before.y() << " -> " << after.x() << ","
                                                   << after.y();
  EXPECT_NEAR(graphView.transform().m11(), 1.25, 1e-9);

  // Ctrl+wheel: the scene point under the cursor stays under it.
  scene.selectNode({});
  const QPoint cursor(60, 150);
  const QPointF underCursor = graphView.mapToScene(cursor);
  QWheelEvent wheel(QPointF(cursor), graphView.viewport()->mapToGlobal(QPointF(cursor)), QPoint(), QPoint(0, 120),
                    Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(graphView.viewport(), &wheel);
  EXPECT_GT(graphView.transform().m11(), 1.25);
  EXPECT_LE((graphView.mapFromScene(underCursor) - cursor).manhattanLength(), 2);
}

TEST(SearchAndZoom, TheClearButtonGoesWithTheTextWhenAnotherFileOpens) {
  MainWindow w(/*interactive=*/false);
  w.show();
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  auto* clear = w.searchField()->findChild<QToolButton*>();  // the field's clear button
  ASSERT_NE(clear, nullptr);
  w.searchField()->setText(QStringLiteral("relu"));
  QTest::qWait(400);  // it fades in and out
  EXPECT_TRUE(clear->isVisible());
  ASSERT_TRUE(openAndWait(w, fixture("plain.pt")));
  EXPECT_TRUE(w.searchField()->text().isEmpty());
  QTest::qWait(400);
  EXPECT_FALSE(clear->isVisible());
}

}  // namespace
}  // namespace tdfx::ui
