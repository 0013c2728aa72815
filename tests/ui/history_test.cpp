// Issue 36's history (defect 5): Back and Forward restore the selection, the inspector and the code
// together, through depth changes, expansions, right-clicks and searches.
#include <QApplication>
#include <QContextMenuEvent>
#include <QGraphicsItem>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTimer>
#include <gtest/gtest.h>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "test_support.h"
#include "ui/window_driver.h"
#include "support/test_paths.h"

namespace tdfx::ui {
namespace {

std::string resnet18() { return std::string(tdfx::testing::kZooDir) + "/resnet18.pt"; }

// The node items drawn selected.
QStringList drawnSelected(const MainWindow& w) {
  QStringList ids;
  for (const ViewNode& v : w.session()->view.nodes)
    if (QGraphicsItem* item = w.scene()->nodeItem(QString::fromStdString(v.id)); item && item->isSelected())
      ids << QString::fromStdString(v.id);
  return ids;
}

// The line (1-based) the code panel highlights first, 0 for none.
int highlightedLine(const MainWindow& w) {
  const auto marks = w.codeEditor()->extraSelections();
  int first = 0;
  for (const auto& m : marks) {
    const int line = m.cursor.blockNumber() + 1;
    if (first == 0 || line < first) first = line;
  }
  return first;
}

// Right-clicks `id` as a user does: the press, then the context menu (closed at once).
void rightClick(MainWindow& w, const QString& id) {
  QGraphicsItem* item = w.scene()->nodeItem(id);
  ASSERT_NE(item, nullptr) << id.toStdString();
  w.view()->centerOn(item);
  const QPoint at = w.view()->mapFromScene(item->sceneBoundingRect().center());
  QTest::mousePress(w.view()->viewport(), Qt::RightButton, {}, at);
  QTest::mouseRelease(w.view()->viewport(), Qt::RightButton, {}, at);
  QTimer::singleShot(100, [] {
    if (QWidget* menu = QApplication::activePopupWidget()) menu->close();
  });
  QContextMenuEvent event(QContextMenuEvent::Mouse, at, w.view()->viewport()->mapToGlobal(at));
  QApplication::sendEvent(w.view()->viewport(), &event);
}

// One node drawn selected, and the inspector and the code show that node.
void expectOneStory(const MainWindow& w, const std::string& step) {
  const QStringList selected = drawnSelected(w);
  ASSERT_EQ(selected.size(), 1) << step << ": " << selected.join(' ').toStdString();
  const std::string id = selected.front().toStdString();
  const std::string inspector = w.inspector()->toPlainText().toStdString();
  const auto& lines = w.session()->traced.code.nodeLines;
  if (const Node* node = w.session()->graph().findNode(id)) {
    EXPECT_NE(inspector.find("name: " + id), std::string::npos) << step << ": " << id << " selected; inspector:\n" << inspector;
    ASSERT_TRUE(lines.count(node->name())) << step << ": " << id;
    EXPECT_EQ(highlightedLine(w), lines.at(node->name())) << step << ": " << id;
  } else {  // a collapsed module: its statements highlighted, the first in view
    const ViewNode* v = w.session()->view.findNode(id);
    ASSERT_NE(v, nullptr) << step << ": " << id;
    EXPECT_NE(inspector.find(v->scope), std::string::npos) << step << ": " << id << "; inspector:\n" << inspector;
    int first = 0;
    for (const std::string& ir : v->irNodes)
      if (lines.count(ir) && (first == 0 || lines.at(ir) < first)) first = lines.at(ir);
    EXPECT_EQ(highlightedLine(w), first) << step << ": " << id;
  }
}

TEST(History, BackAndForwardRestoreTheSelectionTheInspectorAndTheCodeTogether) {
  MainWindow w(/*interactive=*/false);
  w.resize(1400, 900);
  w.show();
  ASSERT_TRUE(openAndWait(w, resnet18()));
  // What each step of the history draws selected: the same node may be drawn by the collapsed
  // module holding it.
  std::vector<std::string> visited;
  const auto look = [&](const std::string& step) {
    expectOneStory(w, step);
    visited.push_back(w.scene()->selectedNode().toStdString());
  };
  w.selectNode(QStringLiteral("layer1_0_conv1"));
  expectOneStory(w, "a click on layer1.0.conv1");
  // Depth 0: layer1 is one node, shown selected for the conv it holds; not a step of its own.
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setDepth(0); }));
  expectOneStory(w, "depth 0");
  EXPECT_EQ(w.scene()->selectedNode(), "scope:layer1");
  // Expanding layer1 shows layer1.0 holding the conv, selected; the collapsed layer1 the history
  // passed is drawn no more.
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.expandScope(QStringLiteral("scope:layer1")); }));
  look("layer1 expanded");
  EXPECT_EQ(w.scene()->selectedNode(), "scope:layer1.0");
  rightClick(w, QStringLiteral("fc"));
  look("right-click on fc");
  QTest::keyClicks(w.searchField(), QStringLiteral("maxpool"));  // live, after a pause
  for (int i = 0; i < 100 && w.scene()->selectedNode() != "maxpool"; ++i) QTest::qWait(20);
  look("search maxpool");
  // Back through each, then forward again: each step one story, the ones visited in turn.
  for (int i = static_cast<int>(visited.size()) - 2; i >= 0; --i) {
    QTest::keyClick(w.view(), Qt::Key_Left, Qt::AltModifier);
    expectOneStory(w, "back to " + visited[i]);
    EXPECT_EQ(w.scene()->selectedNode().toStdString(), visited[i]);
  }
  QTest::keyClick(w.view(), Qt::Key_Left, Qt::AltModifier);  // nothing further back
  EXPECT_EQ(w.scene()->selectedNode().toStdString(), visited[0]);
  for (size_t i = 1; i < visited.size(); ++i) {
    QTest::keyClick(w.view(), Qt::Key_Right, Qt::AltModifier);
    expectOneStory(w, "forward to " + visited[i]);
    EXPECT_EQ(w.scene()->selectedNode().toStdString(), visited[i]);
  }
}

// A step passed over (a collapsed module expanded since) stays in the history, in its place.
TEST(History, AStepDrawnNoMoreIsPassedOverAndKeptInItsPlace) {
  MainWindow w(/*interactive=*/false);
  w.resize(1400, 900);
  w.show();
  ASSERT_TRUE(openAndWait(w, resnet18()));
  w.selectNode(QStringLiteral("conv1"));
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setDepth(0); }));
  for (const char* id : {"scope:layer2", "fc", "maxpool"}) w.selectNode(QString::fromLatin1(id));
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setDepth(3); }));  // layer2 expanded: its node is gone
  ASSERT_EQ(w.scene()->nodeItem(QStringLiteral("scope:layer2")), nullptr);
  w.goBack();
  EXPECT_EQ(w.scene()->selectedNode(), "fc");
  w.goBack();  // past scope:layer2
  EXPECT_EQ(w.scene()->selectedNode(), "conv1");
  expectOneStory(w, "back to conv1");
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setDepth(0); }));  // layer2 is one node again
  for (const char* id : {"scope:layer2", "fc", "maxpool"}) {
    w.goForward();
    EXPECT_EQ(w.scene()->selectedNode().toStdString(), id);
    expectOneStory(w, std::string("forward to ") + id);
  }
}

}  // namespace
}  // namespace tdfx::ui
