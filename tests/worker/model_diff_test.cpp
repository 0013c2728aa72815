// Comparing two models: the same file is identical; retrained weights differ by value with their
// largest difference; another architecture shows nodes removed and added.
#include "tdfx/worker/model_diff.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

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
