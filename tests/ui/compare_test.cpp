// File > Compare...: the two models side by side, coloured by what differs, a list of the
// differences that moves both pictures, selection followed across, and F3 walking the changes.
#include <QApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QGraphicsItem>
#include <QMimeData>
#include <QUrl>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTextBrowser>
#include <QSignalSpy>
#include <QTest>
#include <gtest/gtest.h>

#include "tdfx/ui/compare_window.h"
#include "tdfx/ui/difference_list.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/minimap.h"
#include "tdfx/ui/main_window.h"
#include "test_support.h"
#include "ui/window_driver.h"
#include "support/test_paths.h"

namespace tdfx::ui {
namespace {

using testing::fixture;

// Opens `a`, compares it with `b` (fixture names or paths), and returns the side-by-side window
// (null on failure).
CompareWindow* compareAndWait(MainWindow& w, const std::string& a, const std::string& b) {
  const auto path = [](const std::string& f) { return f.find('/') == std::string::npos ? fixture(f) : f; };
  if (!openAndWait(w, path(a))) return nullptr;
  QSignalSpy done(&w, &MainWindow::compared);
  w.compareWith(QString::fromStdString(path(b)));
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
  ASSERT_EQ(c->differences()->rowCount(), 0);
  ASSERT_EQ(c->differences()->shownRows().size(), 1);
  EXPECT_TRUE(c->differences()->shownRows().first().startsWith("identical"));
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
  const QStringList rows = c->differences()->shownRows();
  int row = -1;
  for (int i = 0; i < rows.size(); ++i)
    if (rows[i].startsWith("~ parameter fc2.weight: values differ")) row = i;
  ASSERT_GE(row, 0);
  ASSERT_TRUE(c->differences()->selectRow(row));
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
  EXPECT_GT(c->differences()->rowCount(), 2);
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


// The models tests/app/make_diff_models.py makes beside the zoo: torchvision's resnet18, a copy with
// one conv weight and one norm's running mean changed, and resnet34 grown from resnet18's weights.
std::string diffModel(const char* name) { return std::string(tdfx::testing::kZooDir) + "/diff/" + name; }

// Shows `c` and waits until both panes are laid out at their size.
void showAndSettle(CompareWindow* c) {
  c->resize(1400, 900);
  c->show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(c));
  QTest::qWait(100);
}

// The node's box on screen, in its view's viewport coordinates.
QRect onScreen(GraphView* view, GraphScene* scene, const QString& id) {
  return view->mapFromScene(scene->nodeItem(id)->sceneBoundingRect()).boundingRect();
}

// Issue 36, defect 1: the changed conv was hidden under the selection's orange outline and its
// unchanged neighbours got the blue outline the legend called "weights differ". Now the finding
// is a fill and a badge that selection and hover never change, and no unchanged node has them.
TEST(Compare, AChangedNodeIsMarkedInAStyleNoUnchangedNodeHasEvenWhenItOrANeighbourIsSelected) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, diffModel("resnet18.pt"), diffModel("resnet18_finetuned.pt"));
  ASSERT_NE(c, nullptr);
  GraphScene* scene = c->sceneA();
  ASSERT_EQ(scene->markedNodes(GraphScene::DiffWeights), (QStringList{"layer2_1_conv2", "layer3_0_bn1"}));
  const QString changed = QStringLiteral("layer2_1_conv2");
  const auto unchangedLooksLikeIt = [&](const GraphScene::NodeLook& look) {
    QStringList same;
    for (QGraphicsItem* item : scene->items()) {
      const QString id = item->data(0).toString();
      if (id.isEmpty() || scene->markedNodes(GraphScene::DiffWeights).contains(id)) continue;
      const GraphScene::NodeLook other = scene->nodeLook(id);
      if (!other.diffBadge.isEmpty() || other.fill == look.fill) same << id;
    }
    return same;
  };
  // The changed node selected (as the difference row does), then a neighbour of it.
  for (const QString& selected : {changed, QStringLiteral("layer2_1_bn2"), QStringLiteral("layer2_1_bn1")}) {
    scene->selectNode(selected);
    const GraphScene::NodeLook look = scene->nodeLook(changed);
    EXPECT_EQ(look.diffBadge, QString(QChar(0x0394))) << selected.toStdString();
    EXPECT_EQ(look.fill, GraphScene::markColor(GraphScene::DiffWeights)) << selected.toStdString();
    EXPECT_EQ(unchangedLooksLikeIt(look), QStringList{}) << "selected " << selected.toStdString();
  }
  // The legend says how the mark is drawn, and lists only the marks the picture has.
  EXPECT_EQ(c->viewA()->legendLabels(), QStringList{"weights differ (blue fill, \u0394)"});
}

// Issue 36, defect 3: compare opened at the top of both graphs, no overview, nothing selected.
TEST(Compare, OpensOnTheFirstDifferenceWithItInViewReadableAndBesideTheOverview) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, diffModel("resnet18.pt"), diffModel("resnet18_finetuned.pt"));
  ASSERT_NE(c, nullptr);
  showAndSettle(c);
  const QStringList rows = c->differences()->shownRows();
  ASSERT_EQ(rows.size(), 2);
  EXPECT_EQ(c->differences()->selectedRow(), rows.first());
  EXPECT_TRUE(rows.first().startsWith("~ parameter layer2.1.conv2.weight: values differ")) << rows.first().toStdString();
  for (int side = 0; side < 2; ++side) {
    GraphView* view = side == 0 ? c->viewA() : c->viewB();
    GraphScene* scene = side == 0 ? c->sceneA() : c->sceneB();
    EXPECT_EQ(scene->selectedNode(), "layer2_1_conv2") << side;
    const QRect node = onScreen(view, scene, QStringLiteral("layer2_1_conv2"));
    EXPECT_TRUE(view->viewport()->rect().contains(node)) << side;
    EXPECT_GE(view->transform().m11(), GraphView::kReadableScale) << side;
    ASSERT_NE(view->minimap(), nullptr) << side;
    EXPECT_TRUE(view->minimap()->isVisible()) << side;  // resnet18 at a readable scale is larger than the pane
    EXPECT_FALSE(node.intersects(view->minimap()->geometry())) << side;
  }
  // Each pane's inspector describes the node shown.
  EXPECT_TRUE(c->inspectorA()->toPlainText().contains("layer2.1.conv2")) << c->inspectorA()->toPlainText().toStdString();
  EXPECT_TRUE(c->inspectorB()->toPlainText().contains("layer2.1.conv2"));
}

// Issue 36, defect 6: a "+ node" row moved only the right pane; zoom and scroll were never shared;
// the row stayed selected after another node was clicked.
TEST(Compare, PanesZoomAndScrollTogetherAndAnAddedBlockIsShownWhereItWouldBeOnTheOtherSide) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, diffModel("resnet18.pt"), diffModel("resnet18_finetuned.pt"));
  ASSERT_NE(c, nullptr);
  showAndSettle(c);
  c->viewA()->zoomBy(0.5);
  EXPECT_DOUBLE_EQ(c->viewB()->transform().m11(), c->viewA()->transform().m11());
  c->viewA()->verticalScrollBar()->setValue(c->viewA()->verticalScrollBar()->value() + 400);
  // The same layout on both sides: the same part of it in view.
  const QPointF centreA = c->viewA()->mapToScene(c->viewA()->viewport()->rect().center());
  const QPointF centreB = c->viewB()->mapToScene(c->viewB()->viewport()->rect().center());
  EXPECT_LE(QLineF(centreA, centreB).length(), 4.0) << centreA.y() << " " << centreB.y();  // a pixel or two
  c->viewB()->zoomBy(1.5);
  EXPECT_DOUBLE_EQ(c->viewA()->transform().m11(), c->viewB()->transform().m11());
  // Another node clicked: the row is no longer selected.
  ASSERT_FALSE(c->differences()->selectedRow().isEmpty());
  c->sceneA()->selectNode(QStringLiteral("layer1_0_conv1"));
  EXPECT_TRUE(c->differences()->selectedRow().isEmpty());
  EXPECT_EQ(c->sceneB()->selectedNode(), "layer1_0_conv1");

  MainWindow w2(/*interactive=*/false);
  CompareWindow* grown = compareAndWait(w2, diffModel("resnet18.pt"), diffModel("resnet34_grown.pt"));
  ASSERT_NE(grown, nullptr);
  showAndSettle(grown);
  const QStringList rows = grown->differences()->shownRows();
  const int added = static_cast<int>(rows.indexOf(QRegularExpression("\\+ node layer1_2_conv1 .*")));  // a whole-string match
  ASSERT_GE(added, 0) << rows.join('\n').toStdString();
  ASSERT_TRUE(grown->differences()->selectRow(added));
  EXPECT_EQ(grown->sceneB()->selectedNode(), "layer1_2_conv1");
  // resnet18 has no layer1.2: the left pane shows the last node both have before it.
  const QString anchor = grown->sceneA()->selectedNode();
  EXPECT_TRUE(anchor.startsWith("layer1_1_")) << anchor.toStdString();
  EXPECT_TRUE(grown->viewA()->viewport()->rect().contains(onScreen(grown->viewA(), grown->sceneA(), anchor)));
}

TEST(Compare, ANodeClickedOnOneSideHasItsPartnerBesideItOnTheOther) {
  // The other pane centred the partner wherever the clicked node was (issue 57's leftovers): the
  // two are now at the same place in their panes, and the clicked pane does not move under the pointer.
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, diffModel("resnet18.pt"), diffModel("resnet18_finetuned.pt"));
  ASSERT_NE(c, nullptr);
  showAndSettle(c);
  const QString id = QStringLiteral("layer2_0_conv1");
  c->viewA()->showItem(c->sceneA()->nodeItem(id));
  // Off the centre of pane A (down and to the left), still in sight.
  c->viewA()->verticalScrollBar()->setValue(c->viewA()->verticalScrollBar()->value() - 150);
  c->viewA()->horizontalScrollBar()->setValue(c->viewA()->horizontalScrollBar()->value() + 60);
  const QRect before = onScreen(c->viewA(), c->sceneA(), id);
  ASSERT_TRUE(c->viewA()->viewport()->rect().contains(before));
  c->sceneA()->selectNode(id);
  EXPECT_EQ(c->sceneB()->selectedNode(), id);
  EXPECT_EQ(onScreen(c->viewA(), c->sceneA(), id), before) << "the clicked pane moved";
  const QRect partner = onScreen(c->viewB(), c->sceneB(), id);
  EXPECT_LE(QLineF(partner.center(), before.center()).length(), 3.0)  // centerOn rounds to whole pixels
      << "partner at " << partner.center().x() << "," << partner.center().y() << ", clicked node at " << before.center().x()
      << "," << before.center().y();
}

// Issue 36's review: the compare window read side A's picture from the window's live session, which
// a relayout in the main window rewrites; it keeps a copy of the picture it draws.
TEST(Compare, ARelayoutInTheMainWindowLeavesTheComparedPictureAsItIsDrawn) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, diffModel("resnet34_grown.pt"), diffModel("resnet18.pt"));
  ASSERT_NE(c, nullptr);
  showAndSettle(c);
  const int drawnA = c->sceneA()->nodeCount();
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setDepth(0); }));  // the main window: one node per top module
  ASSERT_LT(w.scene()->nodeCount(), drawnA);
  EXPECT_EQ(c->sceneA()->nodeCount(), drawnA);
  const QStringList rows = c->differences()->shownRows();
  const int removed = static_cast<int>(rows.indexOf(QRegularExpression("- node layer1_2_conv1 .*")));
  ASSERT_GE(removed, 0) << rows.join('\n').toStdString();
  ASSERT_TRUE(c->differences()->selectRow(removed));
  EXPECT_EQ(c->sceneA()->selectedNode(), "layer1_2_conv1");
  // resnet18 has no layer1.2: the right pane shows the last node both have before it, found through
  // the edges A draws (not the main window's collapsed picture, where layer1_2_conv1 is no node).
  EXPECT_TRUE(c->sceneB()->selectedNode().startsWith("layer1_1_")) << c->sceneB()->selectedNode().toStdString();
  // A click on A's picture: the same, and A's inspector describes the node clicked.
  c->sceneA()->selectNode(QStringLiteral("layer1_2_conv2"));
  const QString anchor = c->sceneB()->selectedNode();
  EXPECT_TRUE(anchor.startsWith("layer1_1_")) << anchor.toStdString();
  EXPECT_TRUE(c->inspectorA()->toPlainText().contains(QStringLiteral("layer1_2_conv2")))
      << c->inspectorA()->toPlainText().toStdString();
}

// Issue 36, defect 7: 152 rows in one flat list five rows tall, with no grouping or filter.
TEST(Compare, TheDifferencesAreGroupedByModuleWithCountsAndFilteredByKind) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, diffModel("resnet18.pt"), diffModel("resnet34_grown.pt"));
  ASSERT_NE(c, nullptr);
  DifferenceList* list = c->differences();
  const QStringList groups = list->groupTitles();
  // layer1.2's seven new nodes and its parameters and buffers in one group (its conv1 is not a group).
  EXPECT_TRUE(groups.contains(QRegularExpression("^layer1\\.2 \\(\\d+\\)$"))) << groups.join(", ").toStdString();
  EXPECT_FALSE(groups.contains(QRegularExpression("^layer1\\.2\\.conv1 .*"))) << groups.join(", ").toStdString();
  int total = 0;
  for (const QString& g : groups) total += g.section('(', -1).chopped(1).toInt();
  EXPECT_EQ(total, list->rowCount());
  EXPECT_EQ(list->shownRows().size(), list->rowCount());
  list->setFilter(DifferenceList::Filter::Parameters);
  const QStringList parameters = list->shownRows();
  EXPECT_FALSE(parameters.isEmpty());
  for (const QString& row : parameters) EXPECT_TRUE(row.contains(QRegularExpression("^[-+~?] parameter "))) << row.toStdString();
  list->setFilter(DifferenceList::Filter::Nodes);
  const QStringList nodes = list->shownRows();
  EXPECT_FALSE(nodes.isEmpty());
  for (const QString& row : nodes) EXPECT_TRUE(row.contains(QRegularExpression("^[-+~] node "))) << row.toStdString();
  list->setFilter(DifferenceList::Filter::Buffers);
  const QStringList buffers = list->shownRows();
  EXPECT_EQ(parameters.size() + nodes.size() + buffers.size(), list->rowCount());
}

// Issue 36, defect 8: the main window marked compared differences with the search's yellow halo and
// said "0 changed" when there were differences.
TEST(Compare, TheMainWindowMarksDifferencesAsCompareDoesAndCountsThem) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, diffModel("resnet18.pt"), diffModel("resnet18_finetuned.pt"));
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(w.scene()->markedNodes(GraphScene::SearchMatch).isEmpty());
  const QStringList changed = w.scene()->markedNodes(GraphScene::DiffChanged) + w.scene()->markedNodes(GraphScene::DiffWeights);
  EXPECT_FALSE(changed.isEmpty());
  for (const QString& id : changed) EXPECT_FALSE(w.scene()->nodeLook(id).diffBadge.isEmpty()) << id.toStdString();
  const QString count = w.searchCountText();
  EXPECT_TRUE(count.contains(QStringLiteral("%1 difference(s)").arg(c->differences()->rowCount()))) << count.toStdString();
  EXPECT_GT(c->differences()->rowCount(), 0);
}

// Issue 36, habits: a file dropped on a side of Compare is compared in that side's place.
TEST(Compare, AFileDroppedOnASideIsComparedInItsPlace) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, "plain.pt", "jit_traced.pt");
  ASSERT_NE(c, nullptr);
  c->resize(1200, 700);
  c->show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(c));
  const auto drop = [&](CompareWindow* window, GraphView* pane, const std::string& file) {
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(QString::fromStdString(fixture(file)))});
    const QPointF at = pane->mapTo(window, pane->rect().center());
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window, &enter);
    EXPECT_TRUE(enter.isAccepted());
    QSignalSpy done(&w, &MainWindow::compared);
    QDropEvent event(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window, &event);
    for (int i = 0; i < 600 && done.isEmpty(); ++i) QTest::qWait(50);
    return !done.isEmpty() && done.first().at(1).toBool();
  };
  // On B: the open model (plain.pt) against the dropped file.
  ASSERT_TRUE(drop(c, c->viewB(), "seed_sequential.pt"));
  c = w.compareWindow();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->windowTitle(), "Compare plain.pt with seed_sequential.pt");
  c->resize(1200, 700);
  c->show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(c));
  // On A: the dropped file is opened in the main window, then compared with B.
  ASSERT_TRUE(drop(c, c->viewA(), "jit_traced.pt"));
  EXPECT_TRUE(w.windowTitle().startsWith("jit_traced.pt")) << w.windowTitle().toStdString();
  ASSERT_NE(w.compareWindow(), nullptr);
  EXPECT_EQ(w.compareWindow()->windowTitle(), "Compare jit_traced.pt with seed_sequential.pt");
  // Not a file: refused.
  QMimeData text;
  text.setText(QStringLiteral("not a file"));
  QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
  refused.setAccepted(false);
  QApplication::sendEvent(w.compareWindow(), &refused);
  EXPECT_FALSE(refused.isAccepted());
}

}  // namespace
}  // namespace tdfx::ui

namespace tdfx::ui {
namespace {

// Whether process `pid` still runs (a zombie waiting to be reaped does not).
bool running(pid_t pid) {
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return false;
  const QByteArray text = stat.readAll();
  const int close = text.lastIndexOf(')');
  return close > 0 && text.size() > close + 2 && text.at(close + 2) != 'Z';
}

// Issue 57, P: after about 12 opens and 5 compares, 6 worker processes (1.1 GB) lived beside the
// window. A model no longer shown, in the window or a compare window closed, has no worker.
TEST(Compare, TheWorkersOfModelsNoLongerShownEnd) {
  MainWindow w(/*interactive=*/false);
  CompareWindow* c = compareAndWait(w, "plain.pt", "jit_traced.pt");
  ASSERT_NE(c, nullptr);
  const pid_t opened = w.session()->worker->pid();
  const pid_t compared = c->sessionB()->worker->pid();
  ASSERT_TRUE(running(opened));
  ASSERT_TRUE(running(compared));
  c->close();
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  const pid_t shown = w.session()->worker->pid();
  for (int i = 0; i < 100 && (running(opened) || running(compared)); ++i) QTest::qWait(50);
  EXPECT_FALSE(running(opened)) << "the worker of the model opened before";
  EXPECT_FALSE(running(compared)) << "the worker of the closed compare window's model";
  EXPECT_TRUE(running(shown));
}

}  // namespace
}  // namespace tdfx::ui
