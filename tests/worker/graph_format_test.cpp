// The serialized graph: a traced model survives JSON and CBOR unchanged, and bad documents are
// refused with the location of what is wrong.
#include "tdfx/worker/graph_format.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/runtime/graph_module.h"
#include "tdfx/runtime/verify.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

// Every field of a view that the picture is drawn from, as text.
std::string viewText(const ViewGraph& view) {
  std::string s;
  for (const ViewNode& n : view.nodes) {
    s += "node " + n.id + " " + std::to_string(static_cast<int>(n.kind)) + " " + n.recordLabel + " " + n.fillColor + " " +
         n.shape + " " + n.cluster + " " + n.scope + " [";
    for (const auto& line : n.lines) s += line + "|";
    s += "]\n";
  }
  for (const ViewEdge& e : view.edges) s += "edge " + e.from + " " + e.to + " " + e.label + "\n";
  for (const ViewCluster& c : view.clusters) s += "cluster " + c.id + " " + c.title + " " + c.parent + "\n";
  return s;
}

TracedModel traceInProcess(const std::string& name, ModelFile& model, std::unique_ptr<GraphModule>& gm) {
  model = loadModelFile(fixture(name));
  gm = std::make_unique<GraphModule>(symbolicTrace(*model.module));
  TensorDict td = makeExampleInputs(model, 0), out;
  gm->forwardAndRecordShapes(td, &out);  // outputs and times travel too
  return {summarizeModel(model), gm->traced(), gm->code()};
}

TEST(GraphFormat, EveryFixtureRoundTripsToTheSameGraphCodeAndPicture) {
  for (const char* name : {"seed_module.pt", "seed_sequential.pt", "nested_sequential.pt", "ops.pt", "control_flow.pt",
                           "scoped.pt", "weird_keys.pt", "default_arg.pt", "discard.pt", "complex_noise.pt"}) {
    SCOPED_TRACE(name);
    ModelFile model;
    std::unique_ptr<GraphModule> gm;
    const TracedModel original = traceInProcess(name, model, gm);
    const TracedModel fromJson = tracedModelFromJson(tracedModelToJson(original));
    const TracedModel fromCbor = tracedModelFromCbor(tracedModelToCbor(original));
    for (const TracedModel* back : {&fromJson, &fromCbor}) {
      EXPECT_EQ(printGraph(*back->traced.graph), gm->graphText());
      EXPECT_EQ(printGraphWithShapes(*back->traced.graph), printGraphWithShapes(gm->graph()));
      EXPECT_EQ(back->code.text, gm->code().text);
      EXPECT_EQ(back->code.nodeLines, gm->code().nodeLines);
      EXPECT_EQ(pythonCode(*back->traced.graph).text, gm->code().text);  // the graph alone makes the same code
      EXPECT_EQ(back->model.inKeys, model.module->inKeys());
      EXPECT_EQ(back->model.outKeys, model.module->outKeys());
      ASSERT_EQ(back->traced.writes.size(), original.traced.writes.size());
      for (size_t i = 0; i < original.traced.writes.size(); ++i) {
        EXPECT_EQ(back->traced.writes[i].node->name(), original.traced.writes[i].node->name());
        EXPECT_EQ(back->traced.writes[i].tupleIndex, original.traced.writes[i].tupleIndex);
      }
      for (const ViewStyle style : {ViewStyle::Tdfx, ViewStyle::Fx}) {
        ViewOptions options;
        options.style = style;
        options.hierarchy.expandAll = true;
        options.shapes = true;
        // The picture: compared as the view it is drawn from (Graphviz's own DOT writer orders
        // subgraphs by address, so its text differs from call to call).
        EXPECT_EQ(viewText(buildView(back->traced, options)), viewText(buildView(original.traced, options)));
      }
    }
  }
}

TEST(GraphFormat, NonFiniteFloatsAndRichArgumentsSurvive) {
  Graph g;
  Node* x = g.createNode(OpKind::Placeholder, "x");
  Node* y = g.createNode(OpKind::CallFunction, "operator.getitem",
                         {x, ArgumentTuple{{ArgumentSlice{{Argument(), int64_t{2}, Argument()}}, ArgumentEllipsis{}, Argument()}}});
  Node* z = g.createNode(OpKind::CallFunction, "torch.clamp", {y},
                         {{"min", -std::numeric_limits<double>::infinity()}, {"max", 0.5}});
  Node* w = g.createNode(OpKind::CallMethod, "to", {z}, {{"dtype", c10::kHalf}, {"device", c10::Device("cpu")},
                                                           {"memory_format", c10::MemoryFormat::ChannelsLast}});
  g.createNode(OpKind::Output, "output", {ArgumentDict{std::vector<Argument>{Argument("a"), Argument("b")},
                                                std::vector<Argument>{Argument(w), ArgumentList{{z, true, "s"}}}}});
  TracedModel m;
  m.traced.graph = std::shared_ptr<Graph>(&g, [](Graph*) {});
  const TracedModel back = tracedModelFromJson(tracedModelToJson(m));
  EXPECT_EQ(printGraph(*back.traced.graph), printGraph(g));
}

// Issue 22, finding 6: a file name or string constant that is not UTF-8 made the JSON writer throw
// ("invalid UTF-8 byte", exit 2). Each such byte is written as U+FFFD; the document stays valid.
TEST(GraphFormat, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  Graph g;
  Node* x = g.createNode(OpKind::Placeholder, "x");
  Node* y = g.createNode(OpKind::CallFunction, "operator.add", {x, Argument(std::string("caf\xe9 \xff"))});
  g.createNode(OpKind::Output, "output", {y});
  TracedModel m;
  m.traced.graph = std::shared_ptr<Graph>(&g, [](Graph*) {});
  m.model.path = "/tmp/model-\xff\xfe.pt";
  std::string text;
  ASSERT_NO_THROW(text = tracedModelToJson(m));
  const nlohmann::json doc = nlohmann::json::parse(text);  // valid JSON, valid UTF-8
  EXPECT_NE(text.find("/tmp/model-\xef\xbf\xbd\xef\xbf\xbd.pt"), std::string::npos);
  EXPECT_NE(text.find("caf\xef\xbf\xbd \xef\xbf\xbd"), std::string::npos);
  const TracedModel back = tracedModelFromJson(text);
  EXPECT_EQ(back.traced.graph->size(), 3u);

  VerifyReport report;
  KeyComparison key;
  key.key = NestedKey(std::vector<std::string>{"out", "\xc3"});
  report.keys.push_back(key);
  ASSERT_NO_THROW(nlohmann::json::parse(reportToJson(report)));
  EXPECT_NE(reportToJson(report).find("\"\xef\xbf\xbd\""), std::string::npos);
}

TEST(GraphFormat, BadDocumentsNameWhereAndWhat) {
  ModelFile model;
  std::unique_ptr<GraphModule> gm;
  const nlohmann::json good = nlohmann::json::parse(tracedModelToJson(traceInProcess("seed_module.pt", model, gm)));
  const auto errorOf = [](const nlohmann::json& doc) {
    try {
      tracedModelFromJson(doc.dump());
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  nlohmann::json newer = good;
  newer["version"] = kGraphFormatVersion + 1;
  EXPECT_NE(errorOf(newer).find("version: version 2 is not one this tdfx reads"), std::string::npos) << errorOf(newer);
  nlohmann::json dangling = good;
  dangling["graph"]["nodes"][2]["args"][0] = {{"node", "nowhere"}};
  EXPECT_NE(errorOf(dangling).find("graph.nodes[2].args[0]: no earlier node named \"nowhere\""), std::string::npos)
      << errorOf(dangling);
  nlohmann::json badOp = good;
  badOp["graph"]["nodes"][1]["op"] = "call_everything";
  EXPECT_NE(errorOf(badOp).find("graph.nodes[1].op: unknown op \"call_everything\""), std::string::npos) << errorOf(badOp);
  EXPECT_NE(errorOf(nlohmann::json::array()).find("top level"), std::string::npos);
  EXPECT_THROW(tracedModelFromJson("{not json"), Error);
}

// CBOR's reader recurses once per level: a document nested a million deep (1 MB, from a
// misbehaving worker or a crafted file) is refused at the limit instead of overflowing the stack.
TEST(GraphFormat, DeeplyNestedCborIsRefusedNotAStackOverflow) {
  std::vector<uint8_t> deep(1'000'000, 0x81);  // an array of one element, a million times
  deep.push_back(0xf6);                          // null
  try {
    tracedModelFromCbor(deep);
    FAIL() << "a million levels accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph document: CBOR document nested deeper than 512 levels"), std::string::npos)
        << e.what();
  }
  // At the limit it still reads (and is then refused as a graph document, not as CBOR).
  std::vector<uint8_t> fine(512, 0x81);
  fine.push_back(0xf6);
  try {
    tracedModelFromCbor(fine);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("nested deeper"), std::string::npos) << e.what();
  }
  // The JSON form (graph.json files) parses iteratively: as deep, it is refused as a document.
  EXPECT_THROW(tracedModelFromJson(std::string(1'000'000, '[') + std::string(1'000'000, ']')), Error);
  // Malformed CBOR names the byte.
  try {
    tracedModelFromCbor({0x82, 0x01});  // an array of two with one element
    FAIL() << "truncated CBOR accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph document: not valid CBOR"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tdfx
