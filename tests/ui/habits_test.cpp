// Issue 36's habits a Netron or Model Explorer user brings (defect 15), and a legend that lists only
// what the picture has (defect 11): arrow keys along the edges, Esc out of the search, Ctrl+C and
// Ctrl+Shift+C on the selected node, zoom to selection, the wheel scrolling.
#include <QApplication>
#include <QClipboard>
#include <QGraphicsItem>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QWheelEvent>
#include <QHelpEvent>
#include <QToolTip>
#include <gtest/gtest.h>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "tdfx/ui/minimap.h"
#include "test_support.h"
#include "ui/window_driver.h"
#include "support/test_paths.h"

namespace tdfx::ui {
namespace {

using tdfx::testing::fixture;

std::string resnet18() { return std::string(tdfx::testing::kZooDir) + "/resnet18.pt"; }

// A shown, active window on `model`, the graph holding the keyboard focus.
bool openShown(MainWindow& w, const std::string& model) {
  w.resize(1400, 900);
  w.show();
  w.activateWindow();
  if (!QTest::qWaitForWindowActive(&w) || !openAndWait(w, model)) return false;
  w.view()->setFocus();
  return true;
}

TEST(Habits, ArrowKeysWalkAlongTheEdgesOfTheSelectedNode) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openShown(w, resnet18()));
  w.selectNode(QStringLiteral("conv1"));
  QTest::keyClick(w.view(), Qt::Key_Down);  // its first user
  EXPECT_EQ(w.scene()->selectedNode(), "bn1");
  QTest::keyClick(w.view(), Qt::Key_Down);
  QTest::keyClick(w.view(), Qt::Key_Up);  // back to its producer
  EXPECT_EQ(w.scene()->selectedNode(), "bn1");
  QTest::keyClick(w.view(), Qt::Key_Up);
  EXPECT_EQ(w.scene()->selectedNode(), "conv1");
  // layer2.0 starts two branches from one value: conv1 and the downsample conv are siblings.
  const QString left = w.scene()->step(QStringLiteral("layer2_0_conv1"), Qt::Key_Left);
  const QString right = w.scene()->step(QStringLiteral("layer2_0_conv1"), Qt::Key_Right);
  EXPECT_TRUE(left == "layer2_0_downsample_0" || right == "layer2_0_downsample_0") << left.toStdString() << " " << right.toStdString();
  // The inspector follows the keys, as it follows clicks.
  EXPECT_TRUE(w.inspector()->toPlainText().contains("name: conv1")) << w.inspector()->toPlainText().toStdString();
  // With nothing selected the arrow keys scroll, as before.
  w.selectNode({});
  const int top = w.view()->verticalScrollBar()->value();
  QTest::keyClick(w.view(), Qt::Key_Down);
  EXPECT_GT(w.view()->verticalScrollBar()->value(), top);
}

TEST(Habits, EscapeClearsTheSearchAndGivesTheGraphTheKeys) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openShown(w, fixture("seed_sequential.pt")));
  w.searchField()->setFocus();
  QTest::keyClicks(w.searchField(), "fc");
  w.findNext(QStringLiteral("fc"));
  ASSERT_FALSE(w.searchMatches().isEmpty());
  QTest::keyClick(w.searchField(), Qt::Key_Escape);
  EXPECT_TRUE(w.searchField()->text().isEmpty());
  EXPECT_TRUE(w.searchMatches().isEmpty());
  EXPECT_TRUE(w.scene()->markedNodes(GraphScene::SearchMatch).isEmpty());
  EXPECT_TRUE(w.view()->hasFocus()) << (QApplication::focusWidget() ? QApplication::focusWidget()->metaObject()->className() : "none");
}

TEST(Habits, CtrlCCopiesTheSelectedNodesNameAndCtrlShiftCItsLineOfCode) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openShown(w, fixture("seed_sequential.pt")));
  QTest::qWait(50);  // the code panel fills in a later turn of the event loop
  w.selectNode(QStringLiteral("_0_fc2"));
  w.view()->setFocus();
  QGuiApplication::clipboard()->clear();
  QTest::keyClick(w.view(), Qt::Key_C, Qt::ControlModifier);
  EXPECT_EQ(QGuiApplication::clipboard()->text(), "_0_fc2");
  QTest::keyClick(w.view(), Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
  const QString line = QGuiApplication::clipboard()->text();
  EXPECT_TRUE(line.startsWith("_0_fc2 = ")) << line.toStdString();
  EXPECT_TRUE(w.codeEditor()->toPlainText().contains(line));
}

TEST(Habits, ZoomToSelectionShowsTheNodeLargeAndClearOfTheOverview) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openShown(w, resnet18()));
  w.view()->fitAll();
  const QString id = QStringLiteral("layer3_0_conv1");
  w.selectNode(id);
  w.view()->setFocus();
  QTest::keyClick(w.view(), Qt::Key_Z);
  const QRect node = w.view()->mapFromScene(w.scene()->nodeItem(id)->sceneBoundingRect()).boundingRect();
  EXPECT_GE(w.view()->transform().m11(), GraphView::kReadableScale);
  EXPECT_TRUE(w.view()->viewport()->rect().contains(node));
  EXPECT_GE(node.width(), w.view()->freeArea().width() / 5) << node.width();
  if (w.view()->minimap() && w.view()->minimap()->isVisible()) {
    EXPECT_FALSE(node.intersects(w.view()->minimap()->geometry()));
  }
}

TEST(Habits, TheWheelScrollsAndCtrlWheelZooms) {
  SyntheticView tall(40, 400, 300);
  tall.view.resetTransform();
  tall.view.centerOn(tall.scene.sceneRect().center());
  const QPoint cursor(100, 100);
  const auto wheel = [&](Qt::KeyboardModifiers modifiers) {
    QWheelEvent e(QPointF(cursor), tall.view.viewport()->mapToGlobal(QPointF(cursor)), QPoint(), QPoint(0, -120),
                  Qt::NoButton, modifiers, Qt::NoScrollPhase, false);
    QApplication::sendEvent(tall.view.viewport(), &e);
  };
  const int before = tall.view.verticalScrollBar()->value();
  wheel(Qt::NoModifier);
  EXPECT_DOUBLE_EQ(tall.view.transform().m11(), 1.0);
  EXPECT_GT(tall.view.verticalScrollBar()->value(), before);
  wheel(Qt::ControlModifier);
  EXPECT_LT(tall.view.transform().m11(), 1.0);
  tall.view.setWheelZooms(true);  // View > Wheel zooms: the old way
  const double zoomed = tall.view.transform().m11();
  wheel(Qt::NoModifier);
  EXPECT_LT(tall.view.transform().m11(), zoomed);
}

// Defect 11: resnet18's legend listed "method" and "attribute", which it has none of, and called
// its input and output "tensordict read" and "tensordict write" (a plain module reads no tensordict).
TEST(Habits, TheLegendListsOnlyTheColoursThePictureHas) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openShown(w, resnet18()));
  const ViewGraph view = w.shownView();
  QSet<QString> fills;
  for (const ViewNode& n : view.nodes) fills.insert(QString::fromStdString(n.fillColor));
  const QStringList labels = w.view()->legendLabels();
  for (const auto& [label, colour] : view.legend) {
    const bool listed = labels.contains(QString::fromStdString(label));
    EXPECT_EQ(listed, fills.contains(QString::fromStdString(colour))) << label;
  }
  // resnet18 has no method call, attribute read or shape arithmetic.
  for (const char* absent : {"method", "attribute", "shape arithmetic"})
    EXPECT_FALSE(labels.contains(QString::fromUtf8(absent))) << absent << " in " << labels.join(", ").toStdString();
  EXPECT_TRUE(labels.contains(QStringLiteral("input")) && labels.contains(QStringLiteral("output"))) << labels.join(", ").toStdString();
  EXPECT_FALSE(labels.join(' ').contains(QStringLiteral("tensordict"))) << labels.join(", ").toStdString();
}

// Hovering a node showed only its name: now a card with what it does (issue 36, What to build 4).
TEST(Habits, HoveringANodeShowsItsCard) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openShown(w, resnet18()));
  ASSERT_TRUE(verifyAndWait(w));  // the shapes of a run
  const auto hover = [&](const QString& id) {
    QGraphicsItem* item = w.scene()->nodeItem(id);
    if (!item) return QString();
    w.view()->centerOn(item);
    const QPoint at = w.view()->mapFromScene(item->sceneBoundingRect().center());
    QHelpEvent event(QEvent::ToolTip, at, w.view()->viewport()->mapToGlobal(at));
    QApplication::sendEvent(w.view()->viewport(), &event);
    return QToolTip::isVisible() ? QToolTip::text() : QString();
  };
  const QString card = hover(QStringLiteral("layer1_0_conv2"));
  QTextDocument doc;
  doc.setHtml(card);
  const std::string text = doc.toPlainText().toStdString();
  for (const char* part : {"layer1_0_conv2", "op", "call_module layer1.0.conv2",  // op and target
                           "in", "layer1_0_relu: ", "out", "[1, 64, 56, 56]",     // shapes in and out
                           "module", "Conv2d", "parameter", "weight: ", "[64, 64, 3, 3]",  // parameters
                           "source", "resnet.py:"})                                 // the line that calls it
    EXPECT_NE(text.find(part), std::string::npos) << "missing '" << part << "' in:\n" << text;
  // A collapsed module: its type and size.
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setDepth(0); }));
  QTextDocument scope;
  scope.setHtml(hover(QStringLiteral("scope:layer2")));
  EXPECT_NE(scope.toPlainText().indexOf("Sequential"), -1) << scope.toPlainText().toStdString();
  EXPECT_NE(scope.toPlainText().indexOf("node(s); double-click to expand"), -1) << scope.toPlainText().toStdString();
}

// A node's own notes (its input checks) end the card, as text: no markup shown.
TEST(Habits, AHoverCardEndsWithTheNodesNotesAsText) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openShown(w, fixture("checked.pt")));  // fc's input is checked: x.shape[1] == 6
  QString checkedId;
  for (const ViewNode& n : w.session()->view.nodes)
    if (!n.checks.empty()) checkedId = QString::fromStdString(n.id);
  ASSERT_FALSE(checkedId.isEmpty());
  QTextDocument card;
  card.setHtml(w.scene()->hoverCard(checkedId));
  const QString text = card.toPlainText();
  EXPECT_TRUE(text.contains(QRegularExpression("\\nchecked by [a-z_0-9, ]*_assert \\(View > Show input checks draws them\\)$")))
      << text.toStdString();
  EXPECT_EQ(text.indexOf("&gt;"), -1) << text.toStdString();
  EXPECT_EQ(text.indexOf("<"), -1) << text.toStdString();
}

}  // namespace
}  // namespace tdfx::ui

namespace tdfx::ui {
namespace {

// Issue 57, O: the hovered node was drawn with the neighbours' blue outline, and kept it when the
// view moved under a still pointer (a zoom or a scroll).
TEST(Habits, TheHoveredNodeHasItsOwnOutlineAndLosesItWhenTheViewMovesAway) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openShown(w, resnet18()));
  w.view()->setZoom(1.0);
  const QString id = QStringLiteral("layer2_0_conv1");
  QGraphicsItem* item = w.scene()->nodeItem(id);
  ASSERT_NE(item, nullptr);
  w.view()->centerOn(item);
  const QColor plain = w.scene()->nodeLook(id).outline;
  // Select a neighbour: its producers and consumers are outlined blue.
  const QString neighbour = QStringLiteral("layer2_0_bn1");
  w.selectNode(neighbour);
  const QColor neighbourBlue = w.scene()->nodeLook(id).outline;
  w.scene()->clearSelection();
  ASSERT_NE(neighbourBlue, plain);
  const QPoint at = w.view()->mapFromScene(item->sceneBoundingRect().center());
  QTest::mouseMove(w.view()->viewport(), at);
  QApplication::processEvents();
  const QColor hovered = w.scene()->nodeLook(id).outline;
  EXPECT_NE(hovered, plain) << "hovering shows";
  EXPECT_NE(hovered, neighbourBlue) << "hovering looks like being a neighbour of the selection";
  // The view zooms out around a far point, the pointer still: the node is no longer under it.
  w.view()->zoomAround(0.25, w.view()->mapToScene(QPoint(0, 0)));
  QApplication::processEvents();
  ASSERT_FALSE(item->sceneBoundingRect().contains(w.view()->mapToScene(at)));
  EXPECT_EQ(w.scene()->nodeLook(id).outline, plain) << "the hover outline stuck after a zoom";
  // Back over it, then a scroll moves it away.
  w.view()->setZoom(1.0);
  w.view()->centerOn(item);
  QTest::mouseMove(w.view()->viewport(), w.view()->mapFromScene(item->sceneBoundingRect().center()));
  QApplication::processEvents();
  ASSERT_EQ(w.scene()->nodeLook(id).outline, hovered);
  w.view()->verticalScrollBar()->setValue(w.view()->verticalScrollBar()->value() + 400);
  QApplication::processEvents();
  EXPECT_EQ(w.scene()->nodeLook(id).outline, plain) << "the hover outline stuck after a scroll";
  // A zoom of a graph that fits whole either way moves no scroll bar (Qt replays the pointer only
  // on a scroll).
  w.view()->fitAll();
  const double whole = w.view()->transform().m11();
  QTest::mouseMove(w.view()->viewport(), w.view()->mapFromScene(item->sceneBoundingRect().center()));
  QApplication::processEvents();
  ASSERT_EQ(w.scene()->nodeLook(id).outline, hovered);
  const QPoint still = w.view()->mapFromScene(item->sceneBoundingRect().center());
  w.view()->setZoom(whole * 0.5);
  QApplication::processEvents();
  ASSERT_FALSE(item->sceneBoundingRect().contains(w.view()->mapToScene(still)));
  EXPECT_EQ(w.scene()->nodeLook(id).outline, plain) << "the hover outline stuck after a zoom that scrolled nothing";
}

}  // namespace
}  // namespace tdfx::ui
