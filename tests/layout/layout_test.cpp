// Views, Graphviz layouts and exports of real traced fixtures.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"
#include "support/layout_geometry.h"
#include "support/synthetic_graph.h"
#include "test_support.h"

namespace tdfx {
namespace {
using testing::geometryIsSane;

namespace fs = std::filesystem;
using testing::fixture;
using testing::readFile;
using testing::traceFixture;
using testing::geometryIsSane;


ViewOptions optionsFor(ViewStyle style, std::optional<int> depth = std::nullopt, bool expandAll = false) {
  ViewOptions o;
  o.style = style;
  o.hierarchy.depth = depth;
  o.hierarchy.expandAll = expandAll;
  return o;
}

int run(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()); }

using LayoutExport = testing::ScratchDir;


TEST(Layout, GeometryIsSaneForEveryFixtureStyleAndDepth) {
  for (const char* name : {"seed_module.pt", "seed_sequential.pt", "nested_sequential.pt", "scoped.pt", "ops.pt",
                           "control_flow.pt", "weird_keys.pt"}) {
    const GraphModule gm = traceFixture(name);
    for (ViewStyle style : {ViewStyle::Tdfx, ViewStyle::Fx})
      for (int depth : {0, 1, 2, 5}) {
        const ViewGraph view = buildView(gm.traced(), optionsFor(style, depth));
        const LayoutResult layout = layoutView(view);
        EXPECT_TRUE(geometryIsSane(view, layout)) << name << " depth " << depth;
        EXPECT_GT(layout.width, 0);
      }
  }
}

TEST(Layout, TdfxStyleShowsKeysAndShortLabels) {
  const GraphModule gm = traceFixture("seed_sequential.pt");
  const ViewGraph view = buildView(gm.traced(), optionsFor(ViewStyle::Tdfx, std::nullopt, true));
  const ViewNode* read = view.findNode("getitem_1");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->kind, ViewNode::Kind::Key);
  EXPECT_EQ(read->lines, (std::vector<std::string>{"(input, mask)"}));
  const ViewNode* written = view.findNode("out:(output, probabilities)");
  ASSERT_NE(written, nullptr);
  EXPECT_EQ(view.findNode("_0_fc1")->lines.front(), "Linear 100\u219250");
  EXPECT_EQ(view.findNode("tensordict"), nullptr);  // the placeholder is not a key
  ASSERT_EQ(view.clusters.size(), 2u);
  EXPECT_EQ(view.clusters[0].title, "0: (input, x) \u2192 (intermediate, x)");
  EXPECT_FALSE(view.legend.empty());
}

TEST(Layout, NoLabelRepeatsItsName) {
  // Issue 36, defect 12: ViT's first nodes read "getitem 0 / getitem", ".reshape / reshape": the
  // name is written once, with what the label adds.
  const GraphModule gm = traceFixture("checked.pt");  // x.shape[1] in an input check
  ViewOptions options = optionsFor(ViewStyle::Tdfx, std::nullopt, true);
  options.checks = true;  // draws the shape arithmetic the check reads
  options.shapeArithmetic = true;  // as nodes, not folded into a shape node
  const ViewGraph view = buildView(gm.traced(), options);
  int single = 0;
  for (const ViewNode& n : view.nodes) {
    if (n.kind != ViewNode::Kind::Op) continue;
    if (n.lines.size() == 2) {
      std::string first = n.lines[0].substr(n.lines[0][0] == '.' ? 1 : 0);
      first = first.substr(0, first.find(' '));
      std::string name = n.lines[1];
      if (const size_t cut = name.find_last_not_of("0123456789"); cut + 1 < name.size() && name[cut] == '_') name.resize(cut);
      EXPECT_NE(first, name) << n.lines[0] << " / " << n.lines[1];
    }
    single += n.lines.size() == 1;
  }
  const ViewNode* getitem = view.findNode("getitem_1");  // getattr_1[1]
  ASSERT_NE(getitem, nullptr);
  EXPECT_EQ(getitem->lines, (std::vector<std::string>{"getitem_1[1]"}));
  const ViewNode* shape = view.findNode("getattr_1");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->lines, (std::vector<std::string>{"getattr_1 .shape"}));
  EXPECT_GE(single, 2);
}

TEST(Layout, AModuleCalledAgainIsNamedWithinItsFrame) {
  // TwiceFc calls its fc twice: FX names the calls _0__0_fc and _0__0_fc_1. Inside the frame of
  // that module the labels read fc and fc_1 (the frame names the rest), as resnet's second
  // layer1.0.relu reads relu_1 inside frame layer1.0.
  const GraphModule gm = traceFixture("nested_sequential.pt");
  const ViewGraph view = buildView(gm.traced(), optionsFor(ViewStyle::Tdfx, std::nullopt, true));
  const ViewNode* first = view.findNode("_0__0_fc");
  const ViewNode* again = view.findNode("_0__0_fc_1");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(again, nullptr);
  EXPECT_FALSE(again->cluster.empty());
  EXPECT_EQ(first->lines.back(), "fc") << first->lines.back();
  EXPECT_EQ(again->lines.back(), "fc_1") << again->lines.back();
}

TEST(Layout, AModuleCalledTwiceGetsAFramePerCallAndEveryEdgeRunsDown) {
  // Swin's blocks call one module (stochastic_depth) after the attention and again after the MLP.
  // One frame for both calls held the two ends of the block, and each edge into the second call
  // went up through it: torchvision's swin_t was laid out as a staircase, right to left (issue 57, K).
  const GraphModule gm = traceFixture("reused_module.pt");
  const ViewGraph view = buildView(gm.traced(), optionsFor(ViewStyle::Tdfx, std::nullopt, true));
  std::map<std::string, const ViewCluster*> clusters;
  for (const ViewCluster& c : view.clusters) clusters[c.id] = &c;
  for (const std::string block : {"0", "1", "2", "3"}) {
    ASSERT_TRUE(clusters.count("cluster_" + block + ".scale")) << block;
    const auto again = clusters.find("cluster_" + block + ".scale (call 2)");
    ASSERT_NE(again, clusters.end()) << block;
    EXPECT_EQ(again->second->title, block + ".scale (LayerScale), call 2");
    EXPECT_EQ(again->second->parent, "cluster_" + block);
    EXPECT_FALSE(clusters.count("cluster_" + block + ".scale (call 3)"));
  }
  // Modules called once keep one frame: the mlp, the blocks.
  EXPECT_FALSE(clusters.count("cluster_0.mlp (call 2)"));
  EXPECT_FALSE(clusters.count("cluster_0 (call 2)"));
  const ViewNode* secondMul = view.findNode("mul_1");
  ASSERT_NE(secondMul, nullptr);
  EXPECT_EQ(secondMul->cluster, "cluster_0.scale (call 2)");
  const LayoutResult layout = layoutView(view);
  std::map<std::string, double> y;
  for (const auto& n : layout.nodes) y[n.id] = n.y;
  for (const ViewEdge& e : view.edges) EXPECT_LT(y.at(e.from), y.at(e.to)) << e.from << " -> " << e.to << " runs up";
}

TEST(Layout, FxStyleMatchesFxGraphDrawer) {
  const GraphModule gm = traceFixture("seed_sequential.pt");
  const ViewGraph view = buildView(gm.traced(), optionsFor(ViewStyle::Fx));
  // Colours from fx-format.md: op kinds, and md5 of the printed target for functions.
  EXPECT_EQ(view.findNode("tensordict")->fillColor, "AliceBlue");
  EXPECT_EQ(view.findNode("_0_fc1")->fillColor, "LemonChiffon1");
  EXPECT_EQ(view.findNode("output")->fillColor, "PowderBlue");
  EXPECT_EQ(view.findNode("getitem")->fillColor, "LavenderBlush1");
  EXPECT_EQ(view.findNode("relu")->fillColor, "Thistle1");
  EXPECT_EQ(view.findNode("mul")->fillColor, "MistyRose2");
  EXPECT_EQ(view.findNode("softmax")->fillColor, "DarkOliveGreen1");
  EXPECT_EQ(view.findNode("relu")->recordLabel, "{name=%relu|op_code=call_function\\n|target=torch.relu\\n|num_users=1\\n}");
  EXPECT_EQ(view.findNode("softmax")->recordLabel,
            "{name=%softmax|op_code=call_function\\n|target=torch.softmax\\n|kwargs=\\{\\ldim: 1,\\n\\}\\l|num_users=1\\n}");
  EXPECT_NE(view.findNode("getitem")->recordLabel.find("target=_operator.getitem\\n|args=(\\l(input, x),\\n)\\l"),
            std::string::npos);
  const ViewNode* weight = view.findNode("_0_fc1.weight");
  ASSERT_NE(weight, nullptr);
  EXPECT_EQ(weight->fillColor, "Salmon");
  EXPECT_EQ(weight->recordLabel, "{_0_fc1.weight|op_code=get_parametertorch.float32[50, 100]\\n}");
  // The DOT export keeps FxGraphDrawer's text (no break after get_parameter); a picture breaks it.
  EXPECT_NE(renderView(view, ExportFormat::Dot).find("op_code=get_parametertorch.float32[50, 100]"), std::string::npos);
  const std::string svg = renderView(view, ExportFormat::Svg);
  EXPECT_EQ(svg.find("get_parametertorch"), std::string::npos);
  EXPECT_NE(svg.find(">op_code=get_parameter</text>"), std::string::npos);
  EXPECT_TRUE(view.clusters.empty());
}

TEST(Layout, CollapseAndExpandKeepEveryEdge) {
  const GraphModule gm = traceFixture("scoped.pt");
  const Graph& g = gm.graph();
  for (int depth = 0; depth <= 5; ++depth) {
    const ViewGraph view = buildView(gm.traced(), optionsFor(ViewStyle::Fx, depth));
    std::map<std::string, std::string> drawnAs;
    for (const ViewNode& v : view.nodes)
      for (const std::string& ir : v.irNodes) drawnAs[ir] = v.id;
    std::set<std::pair<std::string, std::string>> edges;
    for (const ViewEdge& e : view.edges) edges.insert({e.from, e.to});
    for (const auto& n : g.nodes())
      for (const Node* user : n->users()) {
        const std::string& a = drawnAs.at(n->name());
        const std::string& b = drawnAs.at(user->name());
        EXPECT_TRUE(a == b || edges.count({a, b})) << n->name() << " -> " << user->name() << " at depth " << depth;
      }
  }
  // Collapsing one scope at full depth, then expanding it again.
  ViewOptions o = optionsFor(ViewStyle::Tdfx, std::nullopt, true);
  const size_t full = buildView(gm.traced(), o).nodes.size();
  o.hierarchy.collapsed = {"0.module.stages.1"};
  const ViewGraph collapsed = buildView(gm.traced(), o);
  EXPECT_LT(collapsed.nodes.size(), full);
  const ViewNode* scope = collapsed.findNode("scope:0.module.stages.1");
  ASSERT_NE(scope, nullptr);
  // Named within the frame of 0.module.stages around it, as the nodes of an expanded module are.
  EXPECT_EQ(scope->lines, (std::vector<std::string>{"1", "Stage"}));
  EXPECT_EQ(scope->scope, "0.module.stages.1");
  o.hierarchy.collapsed.clear();
  EXPECT_EQ(buildView(gm.traced(), o).nodes.size(), full);
}

TEST(Layout, DefaultDepthKeepsTheNodeBudget) {
  const GraphModule gm = traceFixture("scoped.pt");
  const auto scopes = allScopes(gm.graph());
  EXPECT_EQ(scopes.at("0.module"), 1);
  EXPECT_EQ(scopes.at("0.module.stages.1.blocks"), 4);
  EXPECT_EQ(scopes.at("0.module.stages.1.blocks.2"), 5);
  for (int budget : {5, 9, 12, 1000}) {
    ViewOptions o;
    o.hierarchy.maxVisibleNodes = budget;
    const ViewGraph view = buildView(gm.traced(), o);
    size_t graphNodes = 0;
    for (const ViewNode& v : view.nodes) graphNodes += v.kind != ViewNode::Kind::Key || v.id.rfind("out:", 0) != 0;
    if (view.depth > 0) {
      EXPECT_LE(graphNodes, static_cast<size_t>(budget) + 2) << budget;
    }
  }
  EXPECT_EQ(autoDepth(gm.graph(), 1000), 5);  // everything fits: fully expanded
  EXPECT_EQ(autoDepth(gm.graph(), 1), 0);
}

// Issue 57, I: a dynamically quantized LSTM was labelled as a float one, and its dtype attribute
// read "dtype: 12".
TEST_F(LayoutExport, AQuantizedModuleSaysSoInItsLabelAndItsDtypeIsNamed) {
  const GraphModule gm = traceFixture("quantized_dynamic.pt");
  const Node* lstm = gm.graph().findNode("lstm");
  ASSERT_NE(lstm, nullptr);
  const auto& attributes = lstm->meta().moduleAttributes;
  const auto dtype = std::find_if(attributes.begin(), attributes.end(), [](const auto& a) { return a.first == "dtype"; });
  ASSERT_NE(dtype, attributes.end());
  EXPECT_EQ(dtype->second, "torch.qint8");
  const ViewGraph view = buildView(gm.traced(), optionsFor(ViewStyle::Tdfx));
  const ViewNode* drawn = view.findNode("lstm");
  ASSERT_NE(drawn, nullptr);
  ASSERT_FALSE(drawn->lines.empty());
  EXPECT_EQ(drawn->lines[0], "LSTM (dynamic quantized)");
  const ViewNode* fc = view.findNode("fc");
  ASSERT_NE(fc, nullptr);
  EXPECT_NE(fc->lines[0].find("(dynamic quantized)"), std::string::npos) << fc->lines[0];
  // Their packed weights are listed for the inspector, but FX's drawing (FxGraphDrawer: the
  // named_parameters of a leaf, none here) has no node for them.
  const ViewGraph fxView = buildView(gm.traced(), optionsFor(ViewStyle::Fx));
  for (const ViewNode& n : fxView.nodes) EXPECT_NE(n.kind, ViewNode::Kind::Parameter) << n.id;
}

// The width and height a PNG's header gives (its IHDR chunk), or {0, 0}.
std::pair<uint32_t, uint32_t> pngSize(const std::string& bytes) {
  if (bytes.size() < 24 || bytes.compare(12, 4, "IHDR") != 0) return {0, 0};
  const auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(bytes[at])) << 24) | (uint32_t(uint8_t(bytes[at + 1])) << 16) |
           (uint32_t(uint8_t(bytes[at + 2])) << 8) | uint32_t(uint8_t(bytes[at + 3]));
  };
  return {be32(16), be32(20)};
}

// Issue 57, M: a detection backbone's PNG was 394 x 20949 px, past the 16384 px a side image tools
// take. A picture up to twice that is drawn smaller to fit; a larger one is refused.
TEST_F(LayoutExport, APngFitsTheSizeImageToolsTake) {
  ViewOptions options;
  options.hierarchy.expandAll = true;
  const ViewGraph tall = buildView(tdfx::testing::syntheticTransformer(260), options);
  const LayoutResult laid = layoutView(tall);
  const double heightPx = laid.height * 96.0 / 72.0;
  ASSERT_GT(heightPx, 16384) << "a picture taller than the limit";
  ASSERT_LT(heightPx, 2 * 16384);
  exportView(tall, path("tall.png"));
  const auto [w, h] = pngSize(readFile(path("tall.png")));
  EXPECT_GT(h, 12000u);
  EXPECT_LE(h, 16384u);
  EXPECT_LE(w, 16384u);
  const ViewGraph taller = buildView(tdfx::testing::syntheticTransformer(700), options);
  try {
    exportView(taller, path("taller.png"));
    FAIL() << "a PNG more than twice the limit was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("export SVG or PDF instead"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path("taller.png")));
}

TEST_F(LayoutExport, ExportsEveryFormatValidly) {
  const GraphModule gm = traceFixture("weird_keys.pt");  // quotes, backslashes, tabs and Cyrillic in keys
  for (ViewStyle style : {ViewStyle::Tdfx, ViewStyle::Fx}) {
    const ViewGraph view = buildView(gm.traced(), optionsFor(style));
    const std::string tag = style == ViewStyle::Fx ? "fx" : "tdfx";
    exportView(view, path(tag + ".dot"));
    EXPECT_EQ(run("dot -Tsvg -o " + path(tag + "-redrawn.svg") + " " + path(tag + ".dot")), 0) << "dot cannot read it";
    exportView(view, path(tag + ".svg"));
    EXPECT_EQ(run("xmllint --noout " + path(tag + ".svg")), 0) << readFile(path(tag + ".svg"));
    EXPECT_EQ(run("xmllint --noout " + path(tag + "-redrawn.svg")), 0);
    const std::string svg = readFile(path(tag + ".svg"));
    EXPECT_NE(svg.find("id=\"getitem\""), std::string::npos) << "SVG elements carry IR node names";
    exportView(view, path(tag + ".png"));
    EXPECT_EQ(readFile(path(tag + ".png")).substr(1, 3), "PNG");
    exportView(view, path(tag + ".pdf"));
    EXPECT_EQ(readFile(path(tag + ".pdf")).substr(0, 5), "%PDF-");
  }
  const std::string dot = readFile(path("tdfx.dot"));
  EXPECT_NE(dot.find("ключ ü"), std::string::npos);
  EXPECT_NE(dot.find("label=\"(a\\\\b, tab"), std::string::npos) << dot;  // the label's backslash, escaped once
}

TEST(Layout, PreparingGraphvizOnAnotherThreadLeavesTheRenderAsItWas) {
  // tdfx-cli runs prepareGraphviz beside the model worker's load; renders wait on the same lock.
  const GraphModule gm = traceFixture("seed_sequential.pt");
  const ViewGraph view = buildView(gm.traced(), optionsFor(ViewStyle::Fx));
  const std::string alone = renderView(view, ExportFormat::Svg);
  std::thread prepare([] {
    for (ExportFormat f : {ExportFormat::Svg, ExportFormat::Png, ExportFormat::Pdf, ExportFormat::Dot}) prepareGraphviz(f);
  });
  const std::string beside = renderView(view, ExportFormat::Svg);
  prepare.join();
  EXPECT_EQ(beside, alone);
  EXPECT_EQ(renderView(view, ExportFormat::Svg), alone);
}

TEST(Layout, EdgeLabelsAreDrawnInTheNodeFont) {
  // The shapes on edges (--shapes, tdfx.draw(inputs=...)) were set in Graphviz's default Times,
  // beside nodes in Helvetica.
  const GraphModule gm = traceFixture("seed_sequential.pt");
  ViewGraph view = buildView(gm.traced(), optionsFor(ViewStyle::Tdfx));
  ASSERT_FALSE(view.edges.empty());
  for (ViewEdge& e : view.edges) e.label = "float32[2, 3]";
  const std::string svg = renderView(view, ExportFormat::Svg);
  EXPECT_NE(svg.find("font-family=\"Helvetica,sans-Serif\" font-size=\"10.00\">float32[2, 3]</text>"), std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("Times"), std::string::npos) << svg;
}

TEST_F(LayoutExport, HostileNamesAreEscaped) {
  ViewGraph view;
  view.name = "we\"ird {graph}";
  // A key holding ESC or another control character (hostile round five, 14): XML 1.0 has none.
  for (const char* id : {"a\"b", "c\\d", "{e|f}", "<g>", "h\ni", "ünï", "esc\x1b[31mred", "bell\x07\x01"}) {
    ViewNode n;
    n.id = id;
    n.lines = {std::string("label ") + id, "x & y < z"};
    n.fillColor = "#FFFFFF";
    view.nodes.push_back(n);
  }
  ViewNode record;
  record.id = "rec";
  record.shape = "record";
  record.recordLabel = "{name=%rec|op_code=x\\n}";
  view.nodes.push_back(record);
  for (size_t i = 0; i + 1 < view.nodes.size(); ++i) view.edges.push_back({view.nodes[i].id, view.nodes[i + 1].id, "e\"<&>"});
  view.clusters.push_back({"cluster_x", "title \"quoted\" <b>", ""});
  view.nodes[0].cluster = "cluster_x";
  exportView(view, path("h.dot"));
  EXPECT_EQ(run("dot -Tdot -o " + path("again.dot") + " " + path("h.dot")), 0) << readFile(path("h.dot"));
  exportView(view, path("h.svg"));
  EXPECT_EQ(run("xmllint --noout " + path("h.svg")), 0) << readFile(path("h.svg"));
  EXPECT_NE(readFile(path("h.svg")).find("esc\u241b[31mred"), std::string::npos);  // drawn as its control picture
  EXPECT_TRUE(geometryIsSane(view, layoutView(view)));
}

TEST_F(LayoutExport, ExportWritesAtomically) {
  const ViewGraph view = buildView(traceFixture("seed_module.pt").traced(), ViewOptions{});
  // An existing file is replaced only by a complete new one.
  std::ofstream(path("old.svg")) << "old";
  exportView(view, path("old.svg"));
  EXPECT_NE(readFile(path("old.svg")).find("<svg"), std::string::npos);
  // Failures leave nothing behind and touch nothing.
  std::ofstream(path("keep.txt")) << "keep";
  EXPECT_THROW(exportView(view, path("keep.txt")), Error);  // unknown format
  EXPECT_EQ(readFile(path("keep.txt")), "keep");
  try {
    exportView(view, path("missing-dir/out.svg"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing-dir/out.svg: cannot write in"), std::string::npos) << e.what();
  }
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) files += entry.is_regular_file();
  EXPECT_EQ(files, 2u);  // old.svg and keep.txt: no temporary files left
  EXPECT_THROW(exportFormatForPath("a.jpeg"), Error);
  EXPECT_EQ(exportFormatForPath("A.GV"), ExportFormat::Dot);
}

}  // namespace
}  // namespace tdfx

namespace tdfx {
namespace {

TEST(Layout, LargeGraphsAreComposedPerCluster) {
  const TracedGraph big = testing::syntheticTransformer(3000);
  ViewOptions o;
  o.hierarchy.expandAll = true;
  const ViewGraph view = buildView(big, o);
  ASSERT_GT(view.nodes.size(), 1500u);
  ASSERT_FALSE(view.clusters.empty());
  const LayoutResult layout = layoutView(view);
  EXPECT_TRUE(geometryIsSane(view, layout));
  // The default view of the same graph stays within the node budget.
  EXPECT_LE(buildView(big, ViewOptions{}).nodes.size(), 305u);
}

TEST_F(LayoutExport, LargeGraphSvgIsValid) {
  ViewOptions o;
  o.hierarchy.expandAll = true;
  exportView(buildView(testing::syntheticTransformer(2000), o), path("big.svg"));
  EXPECT_EQ(run("xmllint --noout " + path("big.svg")), 0);
  EXPECT_NE(readFile(path("big.svg")).find("id=\"layers_0_attn_q\""), std::string::npos);
}

}  // namespace
}  // namespace tdfx
