// Comparing two models: the same file is identical; retrained weights differ by value with their
// largest difference; another architecture shows nodes removed and added.
#include "tdfx/worker/model_diff.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>
#include <torch/script.h>

#include "tdfx/worker/model_worker.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

struct Opened {
  ModelWorker worker;
  TracedModel model;
  std::vector<ParameterValues> values;
  explicit Opened(const std::string& name) : model(worker.open(fixture(name))), values(worker.parameterValues()) {}
};

TEST(ModelDiff, TheSameFileIsIdentical) {
  Opened a("seed_sequential.pt"), b("seed_sequential.pt");
  ASSERT_EQ(a.values.size(), 4u);
  EXPECT_EQ(a.values[0].name, "0.module.fc1.weight");
  EXPECT_EQ(a.values[0].values.size(), 5000u);
  const ModelDiff diff = diffModels(a.model, b.model, a.values, b.values);
  EXPECT_TRUE(diff.identical()) << formatModelDiff(diff, "a", "b");
  EXPECT_NE(formatModelDiff(diff, "a", "b").find("identical"), std::string::npos);
}

TEST(ModelDiff, OtherWeightsDifferByTheirLargestDelta) {
  // The same Net(8, 6, 2), scripted with seed 6 and traced with seed 7.
  Opened a("plain.pt"), b("jit_traced.pt");
  const ModelDiff diff = diffModels(a.model, b.model, a.values, b.values);
  EXPECT_FALSE(diff.identical());
  EXPECT_TRUE(diff.added.empty());
  EXPECT_TRUE(diff.removed.empty());
  ASSERT_EQ(diff.parameters.size(), 4u);
  for (const ParameterChange& p : diff.parameters) {
    EXPECT_EQ(p.kind, ParameterChange::Kind::Differs) << p.name;
    // The largest difference, computed here from the values the workers sent.
    const auto& va = std::find_if(a.values.begin(), a.values.end(), [&](auto& v) { return v.name == p.name; })->values;
    const auto& vb = std::find_if(b.values.begin(), b.values.end(), [&](auto& v) { return v.name == p.name; })->values;
    double most = 0;
    for (size_t i = 0; i < va.size(); ++i) most = std::max(most, std::abs(va[i] - vb[i]));
    EXPECT_DOUBLE_EQ(p.maxAbsDiff, most) << p.name;
    EXPECT_GT(p.maxAbsDiff, 0);
  }
}

// Issue 57, F: a lone TensorDictModule's archive names its weights "module.conv1.weight" (the
// user's module is its `module`), while the graph's call_module targets are "conv1", as tensordict
// traces it: tdfx.show's changed weight was listed, but marked no node and its row selected none.
TEST(ModelDiff, AChangedWeightOfATensorDictModuleMarksItsNode) {
  Opened a("conv_bn.pt"), b("conv_bn.pt");
  const auto changed = std::find_if(b.values.begin(), b.values.end(),
                                    [](const ParameterValues& p) { return p.name == "module.conv1.weight"; });
  ASSERT_NE(changed, b.values.end());
  changed->values[0] += 0.5;
  const ModelDiff diff = diffModels(a.model, b.model, a.values, b.values);
  EXPECT_EQ(diff.marksA.weights, std::vector<std::string>{"conv1"});
  EXPECT_EQ(diff.marksB.weights, std::vector<std::string>{"conv1"});
  const auto row = std::find_if(diff.parameters.begin(), diff.parameters.end(),
                                [](const ParameterChange& p) { return p.kind != ParameterChange::Kind::Equal; });
  ASSERT_NE(row, diff.parameters.end());
  EXPECT_EQ(row->name, "module.conv1.weight");
  EXPECT_EQ(row->usedBy, std::vector<std::string>{"conv1"});
}

// parametersToCompare: weights cross the process boundary as digests, and only those whose digests
// differ come with their values; the diff is the one all values give.
class ParametersToCompare : public testing::ScratchDir {};

TEST_F(ParametersToCompare, OnlyWeightsThatDifferAreReadByValue) {
  const auto save = [&](const std::string& name, float second) {
    torch::jit::Module m("__torch__.TwoWeights");
    m.register_parameter("kept", at::arange(1000, at::kFloat), false);
    m.register_parameter("tuned", at::full({4}, second), false);
    m.register_buffer("steps", at::tensor({3}, at::kLong));
    m.define("def forward(self, x):\n  return x * self.kept[0] + self.tuned[0]\n");
    const std::string path = (dir_ / name).string();
    m.save(path);
    return path;
  };
  const std::string pathA = save("a.pt", 1.0f), pathB = save("b.pt", 1.5f);
  ModelWorker a, b;
  const TracedModel ma = a.open(pathA), mb = b.open(pathB);
  const auto [pa, pb] = parametersToCompare(a, b);
  ASSERT_EQ(pa.size(), 3u);
  for (const auto* side : {&pa, &pb}) {
    for (const ParameterValues& p : *side) {
      const bool read = !p.values.empty() || !p.integers.empty();
      EXPECT_EQ(read, p.name == "tuned") << p.name << ": only the weight that differs is read";
      EXPECT_EQ(p.digest.has_value(), p.name != "tuned") << p.name;
    }
  }
  const ModelDiff diff = diffModels(ma, mb, pa, pb);
  const ModelDiff full = diffModels(ma, mb, a.parameterValues(), b.parameterValues());
  EXPECT_EQ(formatModelDiff(diff, "a", "b"), formatModelDiff(full, "a", "b"));
  ASSERT_EQ(diff.parameters.size(), 3u);
  for (const ParameterChange& p : diff.parameters)
    EXPECT_EQ(p.kind, p.name == "tuned" ? ParameterChange::Kind::Differs : ParameterChange::Kind::Equal) << p.name;
  // A file against itself: no value crosses at all.
  ModelWorker c;
  c.open(pathA);
  const auto [self, other] = parametersToCompare(a, c);
  for (const ParameterValues& p : self) EXPECT_TRUE(p.values.empty() && p.integers.empty() && p.digest) << p.name;
  EXPECT_TRUE(diffModels(ma, ma, self, other).identical());
}

TEST(ModelDiff, AnotherArchitectureHasNodesRemovedAddedAndChanged) {
  Opened a("scoped.pt"), b("seed_sequential.pt");
  const ModelDiff diff = diffModels(a.model, b.model, a.values, b.values);
  const auto has = [](const std::vector<DiffNode>& nodes, const std::string& module) {
    return std::any_of(nodes.begin(), nodes.end(), [&](const DiffNode& n) { return n.module == module; });
  };
  EXPECT_TRUE(has(diff.removed, "0.module.head"));
  EXPECT_TRUE(has(diff.added, "0.module.fc1"));
  EXPECT_FALSE(diff.changedInA().empty());
  EXPECT_FALSE(diff.marksB.added.empty());
  const std::string text = formatModelDiff(diff, "scoped.pt", "seed_sequential.pt");
  EXPECT_NE(text.find("- node _0_head (module 0.module.head)"), std::string::npos) << text;
  EXPECT_NE(text.find("+ parameter 0.module.fc1.weight"), std::string::npos) << text;
}

}  // namespace
}  // namespace tdfx
