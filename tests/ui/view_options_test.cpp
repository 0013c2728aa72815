// The picture's options in the window: the depth box, fit for tall graphs, a relayout that keeps
// the selection in view, one shape label per value, and node names relative to their frame.
#include <QGraphicsItem>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTextBlock>
#include <QTest>
#include <algorithm>
#include <gtest/gtest.h>
#include <map>

#include "support/synthetic_graph.h"
#include "support/test_paths.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "test_support.h"
#include "ui/window_driver.h"

namespace tdfx::ui {
namespace {

using tdfx::testing::fixture;

bool inSight(const GraphView& view, const QGraphicsItem* item) {
  return view.mapToScene(view.viewport()->rect()).boundingRect().contains(item->sceneBoundingRect().center());
}

TEST(ViewOptions, TheDepthBoxShowsAndSetsTheDepth) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  QSpinBox* depth = w.depthBox();
  EXPECT_TRUE(depth->isEnabled());
  EXPECT_EQ(depth->value(), w.session()->view.depth);
  EXPECT_GE(depth->maximum(), 3);
  const int nodes = w.scene()->nodeCount();
  ASSERT_TRUE(relayoutAndWait(w, [&] { depth->setValue(0); }));
  EXPECT_EQ(w.session()->view.depth, 0);
  EXPECT_LT(w.scene()->nodeCount(), nodes);
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setExpandAll(true); }));
  ASSERT_TRUE(openAndWait(w, fixture("plain.pt")));  // one module, no scopes inside: nothing to choose
  EXPECT_FALSE(w.depthBox()->isEnabled());
}

TEST(ViewOptions, FitShowsATallGraphByItsWidthFromTheTop) {
  SyntheticView deep(300, 1000, 700);
  const GraphScene& scene = deep.scene;
  GraphView& graphView = deep.view;
  ASSERT_GT(scene.sceneRect().height(), 20 * scene.sceneRect().width()) << "a deep net";
  graphView.fitAll();
  const double whole = graphView.transform().m11();
  graphView.fit();
  EXPECT_TRUE(graphView.fitsByWidth());
  EXPECT_GT(graphView.transform().m11(), 4 * whole);
  const QRectF shown = graphView.mapToScene(graphView.viewport()->rect()).boundingRect();
  EXPECT_LT(shown.top() - scene.sceneRect().top(), 1.0);  // from the top
  EXPECT_GE(shown.width() + 1, std::min(scene.sceneRect().width(), 1000.0 / graphView.transform().m11()) - 1);
}

TEST(ViewOptions, ARelayoutKeepsTheSelectionInViewAndEachShapeIsWrittenOnce) {
  MainWindow w(/*interactive=*/false);
  w.resize(1200, 800);
  w.show();
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setExpandAll(true); }));
  // A node far from the top, selected and shown.
  const std::string last = w.session()->view.nodes.back().id;
  w.findNext(QString::fromStdString(last));
  ASSERT_EQ(w.scene()->selectedNode().toStdString(), last);
  ASSERT_TRUE(verifyAndWait(w));
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setShapesShown(true); }));
  ASSERT_EQ(w.scene()->selectedNode().toStdString(), last);
  EXPECT_TRUE(inSight(*w.view(), w.scene()->nodeItem(QString::fromStdString(last))));
  // Shapes are on, and no value's shape is written on two of its edges.
  std::map<std::string, int> labelsFrom;
  int labels = 0;
  for (const ViewEdge& e : w.session()->view.edges)
    if (!e.label.empty()) ++labels, ++labelsFrom[e.from];
  EXPECT_GT(labels, 5);
  // As drawn: no label overlaps another or a node.
  const QList<QRectF> rects = w.scene()->edgeLabelRects();
  EXPECT_EQ(rects.size(), labels);
  for (int i = 0; i < rects.size(); ++i) {
    for (int j = i + 1; j < rects.size(); ++j)
      EXPECT_FALSE(rects[i].adjusted(1, 1, -1, -1).intersects(rects[j])) << i << " and " << j;
    for (const ViewNode& n : w.session()->view.nodes) {
      const QGraphicsItem* item = w.scene()->nodeItem(QString::fromStdString(n.id));
      ASSERT_NE(item, nullptr);
      EXPECT_FALSE(rects[i].adjusted(1, 1, -1, -1).intersects(item->sceneBoundingRect().adjusted(5, 5, -5, -5)))
          << "label " << i << " over " << n.id;
    }
  }
  for (const auto& [from, count] : labelsFrom) {
    const ViewNode* n = w.session()->view.findNode(from);
    ASSERT_NE(n, nullptr);
    if (n->kind != ViewNode::Kind::Collapsed) {  // a collapsed scope sends several values
      EXPECT_EQ(count, 1) << from;
    }
  }
}

TEST(ViewOptions, NodeNamesAreWrittenRelativeToTheirFrame) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setExpandAll(true); }));
  int shortened = 0;
  for (const ViewNode& n : w.session()->view.nodes) {
    if (n.kind != ViewNode::Kind::Op || n.lines.size() < 2 || n.cluster.empty()) continue;
    const std::string& name = n.lines.back();
    EXPECT_LE(name.size(), n.id.size());
    if (name.size() < n.id.size()) {
      ++shortened;
      EXPECT_EQ(n.id.substr(n.id.size() - name.size()), name) << "the end of the FX name";
    }
  }
  EXPECT_GT(shortened, 3);
}

TEST(ViewOptions, InputChecksFoldIntoABadgeUnlessAskedFor) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("checked.pt")));  // torch._assert(x.shape[1] == 6, f"...")
  const ViewGraph& folded = w.session()->view;
  // The f-string reads x.shape[1] again (getattr_2, getitem_2): FX formats that Proxy into the
  // message, and the read, with no user, is part of the check.
  for (const char* check : {"_assert", "eq", "getitem_1", "getattr_2", "getitem_2"}) {
    EXPECT_EQ(folded.findNode(check), nullptr) << check << " is folded";
    EXPECT_NE(std::find(folded.foldedChecks.begin(), folded.foldedChecks.end(), check), folded.foldedChecks.end()) << check;
  }
  // The badge sits on the value checked: the key x.
  const ViewNode* x = folded.findNode("getitem");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->checkAsserts, 1);
  EXPECT_EQ(w.scene()->checkBadge(QStringLiteral("getitem")).toStdString(), "\u2713" "1");
  EXPECT_NE(folded.findNode("fc"), nullptr);
  // The code keeps every line, and the assert's line selects the node it checks.
  EXPECT_NE(w.codeEditor()->toPlainText().indexOf(QStringLiteral("torch._assert(")), -1);
  const int nodes = w.scene()->nodeCount();
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setChecksShown(true); }));
  EXPECT_NE(w.session()->view.findNode("_assert"), nullptr);
  EXPECT_TRUE(w.session()->view.foldedChecks.empty());
  EXPECT_GT(w.scene()->nodeCount(), nodes + 3);
  EXPECT_TRUE(w.scene()->checkBadge(QStringLiteral("getitem")).isEmpty());
}

TEST(ViewOptions, TheOutputIsBadgedWhereTheGraphFollowsCodeFxDoesNotRun) {
  // torchvision's GoogLeNet form: the archive holds only the is_scripting() side of forward's
  // return, and the output node says so, with an amber "≠ FX" tag and the reason.
  // The output is drawn as the keys it writes; each carries the tag.
  const auto outputKeys = [](const ViewGraph& view) {
    std::vector<const ViewNode*> keys;
    for (const ViewNode& n : view.nodes)
      if (n.id.rfind("out:", 0) == 0) keys.push_back(&n);
    return keys;
  };
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("scripting_outputs.pt")));
  const auto keys = outputKeys(w.session()->view);
  ASSERT_FALSE(keys.empty());
  for (const ViewNode* key : keys) {
    EXPECT_NE(key->fxDifference.find("`else: return self.eager_outputs(x, aux)`"), std::string::npos)
        << key->fxDifference;
    EXPECT_EQ(w.scene()->checkBadge(QString::fromStdString(key->id)).toStdString(), "\u2260 FX") << key->id;
  }
  // A model whose graph is FX's throughout has no such tag.
  ASSERT_TRUE(openAndWait(w, fixture("optional_mask.pt")));
  const auto plain = outputKeys(w.session()->view);
  ASSERT_FALSE(plain.empty());
  for (const ViewNode* key : plain) {
    EXPECT_TRUE(key->fxDifference.empty()) << key->id;
    EXPECT_TRUE(w.scene()->checkBadge(QString::fromStdString(key->id)).isEmpty()) << key->id;
  }
}


// Issue 36, defect 12: ViT's first screen was shape arithmetic (getattr, getitem 0..3, floordiv, mul
// before any layer). The sizes each node uses are one small "shape" node beside it, whose card says
// what it holds; a double-click opens it; View > Show shape arithmetic draws them all.
TEST(ViewOptions, ShapeArithmeticIsOneShapeNodePerUseThatADoubleClickOpens) {
  MainWindow w(/*interactive=*/false);
  w.resize(1200, 800);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  ASSERT_TRUE(openAndWait(w, fixture("patches.pt")));  // n, c, h, w = x.shape; reshape(n, 8, (h // 2) * (w // 2))
  GraphScene& scene = *w.scene();
  QGraphicsItem* shape = scene.nodeItem(QStringLiteral("shape:reshape"));
  ASSERT_NE(shape, nullptr);
  EXPECT_NE(scene.nodeItem(QStringLiteral("shape:expand")), nullptr);
  for (const char* folded : {"getattr_1", "getitem", "floordiv", "mul"}) EXPECT_EQ(scene.nodeItem(folded), nullptr) << folded;
  const QString card = scene.hoverCard(QStringLiteral("shape:reshape"));
  EXPECT_TRUE(card.contains(QStringLiteral("shape arithmetic"))) << card.toStdString();
  EXPECT_TRUE(card.contains(QStringLiteral("floordiv, floordiv_1, mul"))) << card.toStdString();
  // Selecting it shows the lines it folds in the code.
  w.selectNode(QStringLiteral("shape:reshape"));
  EXPECT_NE(w.codeEditor()->textCursor().block().text().indexOf(QStringLiteral("getattr")), -1)
      << w.codeEditor()->textCursor().block().text().toStdString();

  w.view()->centerOn(shape);
  QTest::qWait(50);
  const QPoint at = w.view()->mapFromScene(shape->sceneBoundingRect().center());
  ASSERT_TRUE(relayoutAndWait(w, [&] { QTest::mouseDClick(w.view()->viewport(), Qt::LeftButton, {}, at); }));
  for (const char* opened : {"getattr_1", "floordiv", "mul"}) EXPECT_NE(scene.nodeItem(opened), nullptr) << opened;
  EXPECT_EQ(scene.nodeItem(QStringLiteral("shape:reshape")), nullptr);
  EXPECT_NE(scene.nodeItem(QStringLiteral("shape:expand")), nullptr) << "the other use stays folded";

  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setShapeArithmeticShown(true); }));
  EXPECT_EQ(scene.nodeItem(QStringLiteral("shape:expand")), nullptr);
  EXPECT_NE(scene.nodeItem(QStringLiteral("getitem_4")), nullptr);
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setShapeArithmeticShown(false); }));
  EXPECT_NE(scene.nodeItem(QStringLiteral("shape:reshape")), nullptr) << "off folds every use again";
  EXPECT_EQ(scene.nodeItem(QStringLiteral("floordiv")), nullptr);
}

}  // namespace
}  // namespace tdfx::ui

namespace tdfx::ui {
namespace {

// Issue 57, D: View > FX style with nothing selected left the view where the tdfx picture had
// been, on empty canvas (mobilenet_v3_small), until View > Fit.
TEST(ViewOptions, AStyleChangeWithNothingSelectedShowsTheGraph) {
  MainWindow w(/*interactive=*/false);
  w.resize(1400, 900);
  w.show();
  ASSERT_TRUE(openAndWait(w, std::string(tdfx::testing::kZooDir) + "/mobilenet_v3_small.pt"));
  ASSERT_TRUE(w.scene()->selectedNode().isEmpty());
  for (const ViewStyle style : {ViewStyle::Fx, ViewStyle::Tdfx, ViewStyle::Fx}) {
    ASSERT_TRUE(relayoutAndWait(w, [&] { w.setStyle(style); }));
    QTest::qWait(20);
    int nodesInSight = 0;
    for (const ViewNode& n : w.session()->view.nodes)
      if (const QGraphicsItem* item = w.scene()->nodeItem(QString::fromStdString(n.id)); item && inSight(*w.view(), item))
        ++nodesInSight;
    EXPECT_GE(nodesInSight, 2) << "style " << (style == ViewStyle::Fx ? "fx" : "tdfx") << ": the view is on empty canvas";
  }
}

}  // namespace
}  // namespace tdfx::ui
