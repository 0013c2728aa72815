// GraphModule: traced graphs compute exactly what the eager modules compute.
#include "tdfx/runtime/graph_module.h"

#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "tdfx/model/model_file.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

class EagerVsTraced : public ::testing::TestWithParam<const char*> {};

TEST_P(EagerVsTraced, BitwiseEqualOutputs) {
  const ModelFile model = loadModelFile(fixture(GetParam()));
  const GraphModule gm = symbolicTrace(*model.module);
  for (uint64_t seed : {0, 1}) {
    TensorDict td = makeExampleInputs(model, seed);
    TensorDict eagerOut, tracedOut;
    model.module->forward(td, &eagerOut);
    gm.forward(td, &tracedOut);
    EXPECT_TRUE(testing::sameTensorDict(eagerOut, tracedOut)) << GetParam() << " seed " << seed;
    EXPECT_FALSE(tracedOut.empty());
    // The interpreter, node by node over what the same emitter made, computes the same bits.
    TensorDict nodeByNodeOut;
    gm.forwardRecorded(td, &nodeByNodeOut);
    EXPECT_TRUE(testing::sameTensorDict(eagerOut, nodeByNodeOut)) << GetParam() << " seed " << seed << " node by node";
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EagerVsTraced,
                         ::testing::Values("seed_module.pt", "seed_sequential.pt", "seed_sequential_nodebug.pt",
                                           "nested_sequential.pt", "one_output.pt", "shared_read.pt",
                                           "repeated_in_key.pt", "weird_keys.pt", "rewrite_key.pt", "default_arg.pt",
                                           "dedup_nested.pt", "discard.pt", "ops.pt", "control_flow.pt", "checked.pt",
                                           "attention.pt", "scoped.pt"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(0, n.find('.'));
                         });

TEST(GraphModule, OneOutputModuleWritesTheWholeTensor) {
  // fx-format.md fault 1: Python's traced module writes row 0 only; tdfx writes what eager writes.
  const ModelFile model = loadModelFile(fixture("one_output.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict td = makeExampleInputs(model, 0);
  gm.forward(td);
  EXPECT_EQ(td.get("y").sizes(), (std::vector<int64_t>{4, 3}));
}

TEST(GraphModule, DiscardKeyIsComputedButNotWritten) {
  const ModelFile model = loadModelFile(fixture("discard.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict td = makeExampleInputs(model, 0);
  TensorDict out;
  gm.forward(td, &out);
  EXPECT_EQ(out.keys(true), (std::vector<NestedKey>{"y"}));
}

TEST(GraphModule, DeduplicatedNestedKeysMatchEager) {
  const ModelFile model = loadModelFile(fixture("dedup_nested.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict td = makeExampleInputs(model, 0);
  TensorDict out;
  gm.forward(td, &out);
  const at::Tensor x = td.get("x");
  EXPECT_TRUE(testing::bitwiseEqual(out.get("c"), x * 2.0 * 5.0 - x * 3.0));
}

TEST(GraphModule, RecordsShapesAndDtypes) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  GraphModule gm = symbolicTrace(*model.module);
  TensorDict td = makeExampleInputs(model, 0);
  gm.forwardAndRecordShapes(td);
  const auto& fc1 = gm.graph().findNode("_0_fc1")->meta().outputs;
  ASSERT_EQ(fc1.size(), 1u);
  EXPECT_EQ(fc1[0].shape, (std::vector<int64_t>{32, 50}));
  EXPECT_EQ(fc1[0].dtype, c10::kFloat);
  EXPECT_EQ(gm.graph().findNode("softmax")->meta().outputs.at(0).shape, (std::vector<int64_t>{32, 10}));
}

TEST(GraphModule, RecordedRunLeavesTheGraphAloneUntilApplied) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict td = makeExampleInputs(model, 0);
  const std::vector<NodeRunRecord> records = gm.forwardRecorded(td);
  ASSERT_EQ(records.size(), gm.graph().nodes().size());
  const Node* fc1 = gm.graph().findNode("_0_fc1");
  EXPECT_TRUE(fc1->meta().outputs.empty());  // a recorded run only reads the graph
  EXPECT_LT(fc1->meta().seconds, 0.0);
  EXPECT_EQ(records[fc1->index()].outputs.at(0).shape, (std::vector<int64_t>{32, 50}));
  double total = 0;
  for (const NodeRunRecord& r : records) {
    EXPECT_GE(r.seconds, 0.0);
    total += r.seconds;
  }
  EXPECT_GT(total, 0.0);

  auto graph = gm.traced().graph;
  applyRunRecords(*graph, records);
  EXPECT_EQ(fc1->meta().outputs.at(0).shape, (std::vector<int64_t>{32, 50}));
  EXPECT_EQ(fc1->meta().seconds, records[fc1->index()].seconds);
  const std::string error = testing::errorOf<Error>([&] { applyRunRecords(*graph, {records.begin(), records.end() - 1}); });
  EXPECT_NE(error.find("run records are for a graph of"), std::string::npos) << error;
}

TEST(GraphModule, MissingInputKeyIsAKeyError) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict td({32});
  td.set({"input", "x"}, at::randn({32, 100}));
  try {
    gm.forward(td);
    FAIL() << "expected a KeyError";
  } catch (const KeyError& e) {
    EXPECT_NE(std::string(e.what()).find("('input', 'mask') not found"), std::string::npos) << e.what();
  }
}

TEST(GraphModule, WrongShapesNameTheFailingNode) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict td({32});
  td.set({"input", "x"}, at::randn({32, 100}));
  td.set({"input", "mask"}, at::randn({32, 7}));
  try {
    gm.forward(td);
    FAIL() << "expected a RuntimeError";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("running node 'mul' (call_function operator.mul, "), std::string::npos) << msg;
    EXPECT_NE(msg.find("make_fixtures.py:"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace tdfx
