// Shape arithmetic in tdfx's picture (issue 36, defect 12): the size computations each node uses
// fold into one "shape" node beside it; they can be drawn as nodes, one fold or all of them.
#include <algorithm>

#include <gtest/gtest.h>

#include "tdfx/ir/fx_target.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/runtime/graph_module.h"
#include "test_support.h"

namespace tdfx {
namespace {
using testing::traceFixture;

bool hasEdge(const ViewGraph& view, const std::string& from, const std::string& to) {
  return std::any_of(view.edges.begin(), view.edges.end(), [&](const ViewEdge& e) { return e.from == from && e.to == to; });
}

std::vector<const ViewNode*> shapeNodes(const ViewGraph& view) {
  std::vector<const ViewNode*> out;
  for (const ViewNode& n : view.nodes)
    if (n.kind == ViewNode::Kind::Shape) out.push_back(&n);
  return out;
}

// Patches: n, c, h, w = x.shape; proj(x).reshape(n, 8, (h // 2) * (w // 2)).permute(0, 2, 1);
// token.expand(y.shape[0], -1, -1); and torch._assert(h == 8, ...).
TEST(ShapeFolding, EachUseOfSizesIsOneShapeNodeBesideIt) {
  const GraphModule gm = traceFixture("patches.pt");
  const ViewGraph view = buildView(gm.traced(), ViewOptions());
  const std::vector<const ViewNode*> shapes = shapeNodes(view);
  ASSERT_EQ(shapes.size(), 2u) << "one for reshape, one for expand";
  const ViewNode* reshape = view.findNode("shape:reshape");
  const ViewNode* expand = view.findNode("shape:expand");
  ASSERT_NE(reshape, nullptr);
  ASSERT_NE(expand, nullptr);
  // The label says what the node receives, as Python, under "shape": no op names, no IR names.
  EXPECT_EQ(reshape->lines, (std::vector<std::string>{"shape", "x.shape[0]", "x.shape[2] // 2 * (x.shape[3] // 2)"}));
  EXPECT_EQ(expand->lines, (std::vector<std::string>{"shape", "permute.shape[0]"}));
  // It holds every size node of its use, the unused `c` included, and none is drawn by itself.
  for (const char* name : {"getattr_1", "getitem", "getitem_1", "getitem_2", "getitem_3", "floordiv", "floordiv_1", "mul"}) {
    EXPECT_NE(std::find(reshape->irNodes.begin(), reshape->irNodes.end(), name), reshape->irNodes.end()) << name;
    EXPECT_EQ(view.findNode(name), nullptr) << name << " is folded";
  }
  EXPECT_EQ(expand->irNodes, (std::vector<std::string>{"getattr_2", "getitem_4"}));
  // Wired as the values flow: the tensor whose size is read -> shape -> its user.
  EXPECT_TRUE(hasEdge(view, "x", "shape:reshape"));
  EXPECT_TRUE(hasEdge(view, "shape:reshape", "reshape"));
  EXPECT_TRUE(hasEdge(view, "permute", "shape:expand"));
  EXPECT_TRUE(hasEdge(view, "shape:expand", "expand"));
  for (const ViewEdge& e : view.edges) {
    EXPECT_NE(view.findNode(e.from), nullptr) << e.from;
    EXPECT_NE(view.findNode(e.to), nullptr) << e.to;
  }
  // The legend lists the shape colour because the picture has one, and nothing it lacks.
  const auto inLegend = [&](const std::string& label) {
    return std::any_of(view.legend.begin(), view.legend.end(), [&](const auto& l) { return l.first == label; });
  };
  EXPECT_TRUE(inLegend("shape arithmetic"));
  EXPECT_FALSE(inLegend("collapsed scope"));
  // The input check is still folded into its badge, on the shape node that reads h.
  EXPECT_EQ(reshape->checkAsserts, 1);
}

TEST(ShapeFolding, AFoldExpandsIntoItsNodesAndTheOptionDrawsThemAll) {
  const GraphModule gm = traceFixture("patches.pt");
  ViewOptions options;
  options.shapesExpanded = {"shape:reshape"};
  const ViewGraph one = buildView(gm.traced(), options);
  EXPECT_EQ(one.findNode("shape:reshape"), nullptr);
  EXPECT_NE(one.findNode("shape:expand"), nullptr);
  for (const char* name : {"getattr_1", "floordiv", "mul"}) EXPECT_NE(one.findNode(name), nullptr) << name;
  EXPECT_TRUE(hasEdge(one, "mul", "reshape"));

  options.shapesExpanded.clear();
  options.shapeArithmetic = true;
  const ViewGraph all = buildView(gm.traced(), options);
  EXPECT_TRUE(shapeNodes(all).empty());
  for (const char* name : {"getattr_1", "floordiv", "mul", "getattr_2", "getitem_4"}) EXPECT_NE(all.findNode(name), nullptr) << name;

  options.shapeArithmetic = false;
  options.style = ViewStyle::Fx;  // FxGraphDrawer's picture draws every node
  const ViewGraph fx = buildView(gm.traced(), options);
  EXPECT_TRUE(shapeNodes(fx).empty());
  EXPECT_NE(fx.findNode("floordiv"), nullptr);
}

// A tensor's getitem is not a size: x[:, :n] (n = x.size(1)) stays a node, labelled as Python
// writes the subscript, and n folds into the shape node beside it.
TEST(ShapeFolding, ATensorsSubscriptIsNotFoldedAndReadsAsPython) {
  const GraphModule gm = traceFixture("slice_bound_sequential.pt");
  const ViewGraph view = buildView(gm.traced(), ViewOptions());
  int subscripts = 0;
  for (const ViewNode& n : view.nodes)
    for (const std::string& line : n.lines) {
      EXPECT_EQ(line.find("slice("), std::string::npos) << n.id << ": " << line;
      subscripts += line.find("[:, :") != std::string::npos;
    }
  EXPECT_EQ(subscripts, 1);
  const std::vector<const ViewNode*> shapes = shapeNodes(view);
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(shapes[0]->lines.size(), 2u);
  EXPECT_NE(shapes[0]->lines[1].find(".size(1)"), std::string::npos) << shapes[0]->lines[1];
}


// x.reshape(n, -1) * k where n = x.size(dim=0) and k = (-2) ** (x.dim() ** 2): the keyword, the
// negative base and ** binding to the right read as Python, which FX's own code gets wrong here.
// (`mul` and `add` are the dead `a = x.shape[1] * x.shape[2]`, `b = a + 1`, recorded as FX does.)
TEST(ShapeFolding, TheLabelIsPythonForKeywordsPowersAndNegativeNumbers) {
  const GraphModule gm = traceFixture("sizes.pt");
  const ViewGraph view = buildView(gm.traced(), ViewOptions());
  const ViewNode* reshape = view.findNode("shape:reshape");
  const ViewNode* mul = view.findNode("shape:mul_1");
  ASSERT_NE(reshape, nullptr);
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(reshape->lines, (std::vector<std::string>{"shape", "x.size(dim=0)"}));
  EXPECT_EQ(mul->lines, (std::vector<std::string>{"shape", "(-2) ** x.dim() ** 2"}));
}

// A hand-built graph: x.view(h, -1) with h = x.shape[2]; a = h * w and b = a + 1 that nobody uses;
// and torch._assert(h == 8) inside module blk, collapsed.
TEST(ShapeFolding, UnusedSizesJoinTheirShapeNodeAndAnotherUseKeepsItsEdge) {
  auto g = std::make_shared<Graph>();
  Node* x = g->createNode(OpKind::Placeholder, "x");
  x->meta().tensordictKey = NestedKey("x");  // drawn as the input it is
  Node* shape = fx_target::create(*g, fx_target::kGetAttr, {x, "shape"});
  Node* h = fx_target::create(*g, fx_target::kGetItem, {shape, int64_t(2)});
  Node* w = fx_target::create(*g, fx_target::kGetItem, {shape, int64_t(3)});
  Node* a = g->createNode(OpKind::CallFunction, "operator.mul", {h, w});
  g->createNode(OpKind::CallFunction, "operator.add", {a, int64_t(1)});
  Node* fc = g->createNode(OpKind::CallModule, "blk.fc", {x});
  fc->meta().modulePath = "blk.fc";
  Node* eq = g->createNode(OpKind::CallFunction, "operator.eq", {h, int64_t(8)});
  eq->meta().modulePath = "blk";
  Node* check = fx_target::create(*g, fx_target::kAssert, {eq, "h is 8"});
  check->meta().modulePath = "blk";
  Node* view = g->createNode(OpKind::CallMethod, "view", {fc, h, int64_t(-1)});
  g->createNode(OpKind::Output, "output", {view});
  TracedGraph traced;
  traced.graph = g;
  ViewOptions options;
  options.hierarchy.depth = 0;  // blk collapsed, its check with it
  const ViewGraph picture = buildView(traced, options);
  const ViewNode* fold = picture.findNode("shape:view");
  ASSERT_NE(fold, nullptr);
  for (const char* name : {"getattr_1", "getitem", "getitem_1", "mul", "add"}) {
    EXPECT_NE(std::find(fold->irNodes.begin(), fold->irNodes.end(), name), fold->irNodes.end()) << name;
    EXPECT_EQ(picture.findNode(name), nullptr) << name << " is folded";
  }
  EXPECT_TRUE(hasEdge(picture, "x", "shape:view"));
  EXPECT_TRUE(hasEdge(picture, "shape:view", "view"));
  EXPECT_TRUE(hasEdge(picture, "shape:view", "scope:blk")) << "h is also read by the check inside blk";
  for (const ViewEdge& e : picture.edges) {
    EXPECT_NE(picture.findNode(e.from), nullptr) << e.from;
    EXPECT_NE(picture.findNode(e.to), nullptr) << e.to;
  }
}

}  // namespace
}  // namespace tdfx
