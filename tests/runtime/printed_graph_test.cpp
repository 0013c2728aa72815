// The runtime runs the graph it prints: a node's op, target, args and kwargs say what it computes,
// so a wrong printout fails verify and is named there.
#include <functional>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "tdfx/runtime/verify.h"
#include "support/traced_fixture.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

using Traced = testing::TracedFixture;

Traced traceFixture(const std::string& name) { return testing::loadTraced(name); }

Node& nodeNamed(const TracedGraph& traced, const std::string& name) {
  Node* node = traced.graph->findNode(name);
  if (!node) throw Error("no node " + name);
  return *node;
}

VerifyReport verifyEdited(const Traced& t) {
  const GraphModule gm(t.traced, t.model.module->inKeys());
  return verify(*t.model.module, gm, verificationInputs(t.model, {}, 0));
}

TEST(PrintedGraph, FixturesRunFromTheirPrintedNodesBitwise) {
  // The graph holds no kernels: what runs is what the nodes say.
  for (const char* name : {"seed_module.pt", "seed_sequential.pt", "nested_sequential.pt", "ops.pt", "checked.pt",
                           "attention.pt", "control_flow.pt", "default_arg.pt", "scoped.pt", "weird_keys.pt"}) {
    Traced t = traceFixture(name);
    const VerifyReport r = verifyEdited(t);
    EXPECT_TRUE(r.passed()) << name << "\n" << formatReport(r);
    for (const auto& k : r.keys) EXPECT_TRUE(k.bitwiseEqual) << name << " " << keyToString(k.key);
  }
}

TEST(PrintedGraph, AWrongTargetFailsVerifyAndIsNamed) {
  Traced t = traceFixture("seed_module.pt");
  Node& sigmoid = nodeNamed(t.traced, "sigmoid");
  ASSERT_EQ(sigmoid.target(), "torch.sigmoid");
  t.traced.graph->setTarget(sigmoid, "torch.tanh");
  const GraphModule gm(t.traced, t.model.module->inKeys());
  EXPECT_NE(gm.code().text.find("sigmoid = torch.tanh(linear)"), std::string::npos) << gm.code().text;
  const VerifyReport r = verifyEdited(t);
  EXPECT_FALSE(r.passed());
  ASSERT_TRUE(r.divergence.has_value()) << formatReport(r);
  EXPECT_EQ(r.divergence->node, "sigmoid");
}

TEST(PrintedGraph, AWrongArgumentFailsVerifyAndIsNamed) {
  Traced t = traceFixture("seed_sequential.pt");
  Node& softmax = nodeNamed(t.traced, "softmax");
  ASSERT_EQ(softmax.kwargs().size(), 1u);
  ASSERT_EQ(softmax.kwargs()[0].first, "dim");
  t.traced.graph->setArguments(softmax, softmax.args(), {{"dim", Argument(int64_t(0))}});
  const VerifyReport r = verifyEdited(t);
  EXPECT_FALSE(r.passed());
  ASSERT_TRUE(r.divergence.has_value()) << formatReport(r);
  EXPECT_EQ(r.divergence->node, "softmax");
  EXPECT_TRUE(r.keys.at(0).matches);  // the key written before softmax is still right
}

// The message of the RuntimeError running the edited graph throws; "" when it runs.
std::string runError(const Traced& t) {
  const GraphModule gm(t.traced, t.model.module->inKeys());
  TensorDict td = verificationInputs(t.model, {}, 0);
  try {
    gm.forward(td);
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "";
}

TEST(PrintedGraph, ATargetThatResolvesToNothingNamesTheNodeAndItsLine) {
  Traced t = traceFixture("seed_module.pt");
  t.traced.graph->setTarget(nodeNamed(t.traced, "sigmoid"), "torch.no_such_function");
  const std::string what = runError(t);
  EXPECT_NE(what.find("node 'sigmoid'"), std::string::npos) << what;
  EXPECT_NE(what.find("printed `sigmoid = torch.no_such_function(linear)`"), std::string::npos) << what;
  EXPECT_NE(what.find("no function 'torch.no_such_function'"), std::string::npos) << what;
}

TEST(PrintedGraph, ArgumentsNoOverloadTakesAreAnErrorNamingTheNode) {
  Traced t = traceFixture("seed_module.pt");
  Node& sigmoid = nodeNamed(t.traced, "sigmoid");
  t.traced.graph->setArguments(sigmoid, {sigmoid.args().at(0), Argument("not a tensor")}, {});
  const std::string what = runError(t);
  EXPECT_NE(what.find("node 'sigmoid'"), std::string::npos) << what;
  EXPECT_NE(what.find("no overload of 'torch.sigmoid' takes these arguments"), std::string::npos) << what;
}

TEST(PrintedGraph, AGraphEditedAfterCompilingRunsOnlyOnceRecompiled) {
  Traced t = traceFixture("seed_module.pt");
  GraphModule gm(t.traced, t.model.module->inKeys());  // shares t's Graph
  const TensorDict inputs = verificationInputs(t.model, {}, 0);
  TensorDict td = inputs.clone();
  gm.forward(td);
  t.traced.graph->setTarget(nodeNamed(t.traced, "sigmoid"), "torch.tanh");
  // Neither the whole forward nor the interpreter runs the stale code.
  for (const auto& run : std::vector<std::function<void(TensorDict&)>>{
           [&](TensorDict& in) { gm.forward(in); }, [&](TensorDict& in) { gm.forwardRecorded(in); },
           [&](TensorDict& in) { gm.call(in); }}) {
    TensorDict in = inputs.clone();
    try {
      run(in);
      ADD_FAILURE() << "a stale GraphModule ran";
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("the graph was edited after this GraphModule compiled it"), std::string::npos)
          << e.what();
    }
  }
  gm.recompile();
  EXPECT_NE(gm.code().text.find("sigmoid = torch.tanh(linear)"), std::string::npos) << gm.code().text;
  const Node* linear = &nodeNamed(t.traced, "linear");
  const Node* sigmoid = &nodeNamed(t.traced, "sigmoid");
  TensorDict in = inputs.clone(), out;
  const auto values = gm.forwardCapturing(in, &out, {linear, sigmoid});
  EXPECT_TRUE(values.at(1).toTensor().equal(at::tanh(values.at(0).toTensor())));
  TensorDict whole = inputs.clone();
  gm.forward(whole);  // the whole forward is recompiled too
  EXPECT_TRUE(testing::sameTensorDict(whole, [&] {
    TensorDict nodeByNode = inputs.clone();
    gm.forwardRecorded(nodeByNode);
    return nodeByNode;
  }()));
}

}  // namespace
}  // namespace tdfx
