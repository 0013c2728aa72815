// The seed document's two examples: printout and code byte-identical to fx-format.md, and the
// traced module computing exactly what the eager module computes.
#include <gtest/gtest.h>

#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

const char* kSeedModuleGraph =
    "graph():\n"
    "    %tensordict : [#users=1] = placeholder[target=tensordict]\n"
    "    %getitem : [#users=1] = call_function[target=operator.getitem](args = (%tensordict, input), kwargs = {})\n"
    "    %linear : [#users=2] = call_module[target=linear](args = (%getitem,), kwargs = {})\n"
    "    %sigmoid : [#users=1] = call_function[target=torch.sigmoid](args = (%linear,), kwargs = {})\n"
    "    return (linear, sigmoid)";

const char* kSeedModuleCode =
    "\n\n\n"
    "def forward(self, tensordict):\n"
    "    getitem = tensordict['input'];  tensordict = None\n"
    "    linear = self.linear(getitem);  getitem = None\n"
    "    sigmoid = torch.sigmoid(linear)\n"
    "    return (linear, sigmoid)\n"
    "    ";

const char* kSeedSequentialGraph =
    "graph():\n"
    "    %tensordict : [#users=2] = placeholder[target=tensordict]\n"
    "    %getitem : [#users=1] = call_function[target=operator.getitem](args = (%tensordict, (input, x)), kwargs = {})\n"
    "    %_0_fc1 : [#users=1] = call_module[target=0.module.fc1](args = (%getitem,), kwargs = {})\n"
    "    %relu : [#users=1] = call_function[target=torch.relu](args = (%_0_fc1,), kwargs = {})\n"
    "    %_0_fc2 : [#users=2] = call_module[target=0.module.fc2](args = (%relu,), kwargs = {})\n"
    "    %getitem_1 : [#users=1] = call_function[target=operator.getitem](args = (%tensordict, (input, mask)), kwargs = {})\n"
    "    %mul : [#users=1] = call_function[target=operator.mul](args = (%_0_fc2, %getitem_1), kwargs = {})\n"
    "    %softmax : [#users=1] = call_function[target=torch.softmax](args = (%mul,), kwargs = {dim: 1})\n"
    "    return (_0_fc2, softmax)";

const char* kSeedSequentialCode =
    "\n\n\n"
    "def forward(self, tensordict):\n"
    "    getitem = tensordict[('input', 'x')]\n"
    "    _0_fc1 = getattr(self, \"0\").module.fc1(getitem);  getitem = None\n"
    "    relu = torch.relu(_0_fc1);  _0_fc1 = None\n"
    "    _0_fc2 = getattr(self, \"0\").module.fc2(relu);  relu = None\n"
    "    getitem_1 = tensordict[('input', 'mask')];  tensordict = None\n"
    "    mul = _0_fc2 * getitem_1;  getitem_1 = None\n"
    "    softmax = torch.softmax(mul, dim = 1);  mul = None\n"
    "    return (_0_fc2, softmax)\n"
    "    ";

TEST(SeedTrace, ModulePrintoutIsFxExact) {
  const ModelFile model = loadModelFile(fixture("seed_module.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  EXPECT_EQ(gm.graphText(), kSeedModuleGraph);
  EXPECT_EQ(gm.code().text, kSeedModuleCode);
}

TEST(SeedTrace, SequentialPrintoutIsFxExact) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  EXPECT_EQ(gm.graphText(), kSeedSequentialGraph);
  EXPECT_EQ(gm.code().text, kSeedSequentialCode);
}

TEST(SeedTrace, ModuleTracedMatchesEagerBitwiseIntoTensordictOut) {
  const ModelFile model = loadModelFile(fixture("seed_module.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict td = makeExampleInputs(model, 7);
  TensorDict eagerOut, tracedOut;
  model.module->forward(td, &eagerOut);
  gm.forward(td, &tracedOut);
  EXPECT_TRUE(testing::sameTensorDict(eagerOut, tracedOut));
  // As in the seed: the outputs land in tensordict_out under their nested keys, the input is untouched.
  EXPECT_EQ(tracedOut.keys(true, true), (std::vector<NestedKey>{{"outputs", "logits"}, {"outputs", "probabilities"}}));
  EXPECT_EQ(tracedOut.get({"outputs", "logits"}).sizes(), (std::vector<int64_t>{32, 1}));
  EXPECT_EQ(td.keys(true, true), (std::vector<NestedKey>{"input"}));
  EXPECT_TRUE(testing::bitwiseEqual(tracedOut.get({"outputs", "probabilities"}),
                                    at::sigmoid(tracedOut.get({"outputs", "logits"}))));
}

TEST(SeedTrace, SequentialTracedMatchesEagerBitwise) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  for (uint64_t seed : {0, 1, 2}) {
    TensorDict td = makeExampleInputs(model, seed);
    TensorDict eagerOut, tracedOut;
    model.module->forward(td, &eagerOut);
    gm.forward(td, &tracedOut);
    EXPECT_TRUE(testing::sameTensorDict(eagerOut, tracedOut));
    EXPECT_EQ(tracedOut.keys(true, true),
              (std::vector<NestedKey>{{"intermediate", "x"}, {"output", "probabilities"}}));
    // softmax over dim 1: each row sums to one.
    EXPECT_TRUE(at::allclose(tracedOut.get({"output", "probabilities"}).sum(1), at::ones({32})));
  }
}

TEST(SeedTrace, InPlaceForwardWritesIntoTheInputTensorDict) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict eager = makeExampleInputs(model, 3);
  TensorDict traced = eager;
  model.module->forward(eager);
  gm.forward(traced);
  EXPECT_TRUE(testing::sameTensorDict(eager, traced));
  EXPECT_TRUE(traced.contains({"output", "probabilities"}));
  EXPECT_TRUE(traced.contains({"input", "mask"}));
}

TEST(SeedTrace, WithoutDebugInfoStillValidFromSchema) {
  // No source text: the call form comes from the operator schema; arguments that the user wrote
  // by keyword become positional, and everything else is unchanged.
  const ModelFile model = loadModelFile(fixture("seed_sequential_nodebug.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  std::string expected = kSeedSequentialGraph;
  const std::string from = "(args = (%mul,), kwargs = {dim: 1})", to = "(args = (%mul, 1), kwargs = {})";
  expected.replace(expected.find(from), from.size(), to);
  EXPECT_EQ(gm.graphText(), expected);
  EXPECT_NE(gm.code().text.find("softmax = torch.softmax(mul, 1);  mul = None\n"), std::string::npos);
  for (const auto& n : gm.graph().nodes()) {
    EXPECT_TRUE(n->meta().sourceText.empty()) << n->name();
    EXPECT_EQ(n->meta().sourceFile.find("make_fixtures.py"), std::string::npos) << n->name();
  }
}

TEST(SeedTrace, NodesCarrySourceLocationsAndSchemas) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  const Node* softmax = gm.graph().findNode("softmax");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->meta().sourceText, "torch.softmax(x * mask, dim=1)");
  EXPECT_NE(softmax->meta().sourceFile.find("make_fixtures.py"), std::string::npos);
  EXPECT_GT(softmax->meta().sourceLine, 0);
  EXPECT_NE(softmax->meta().schema.find("aten::softmax"), std::string::npos);
  const Node* fc1 = gm.graph().findNode("_0_fc1");
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->meta().moduleType, "torch.nn.modules.linear.Linear");
  const Node* read = gm.graph().findNode("getitem_1");
  ASSERT_NE(read, nullptr);
  ASSERT_TRUE(read->meta().tensordictKey.has_value());
  EXPECT_EQ(*read->meta().tensordictKey, (NestedKey{"input", "mask"}));
  // Code lines map back to nodes.
  EXPECT_EQ(gm.code().nodeLines.at("getitem"), 5);
  EXPECT_EQ(gm.code().nodeLines.at("softmax"), 11);
}

}  // namespace
}  // namespace tdfx
