#include "tdfx/tensordict/tensordict.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "test_support.h"

namespace tdfx {
namespace {

std::string errorOf(const std::function<void()>& fn) { return testing::errorOf<KeyError>(fn); }

TEST(TensorDict, SetCreatesIntermediateTensorDicts) {
  TensorDict td({4});
  td.set({"input", "x"}, at::zeros({4, 3}));
  EXPECT_TRUE(td.contains("input"));
  EXPECT_TRUE(td.isTensorDict("input"));
  EXPECT_TRUE(td.contains({"input", "x"}));
  EXPECT_EQ(td.getTensorDict("input").batchSize(), (std::vector<int64_t>{4}));
  EXPECT_EQ(td.get({"input", "x"}).sizes(), (std::vector<int64_t>{4, 3}));
}

TEST(TensorDict, StringAndOneTupleKeysAreTheSame) {
  TensorDict td;
  td.set("a", at::ones({2}));
  EXPECT_TRUE(td.contains(NestedKey({"a"})));
  EXPECT_TRUE(at::equal(td.get(NestedKey({"a"})), at::ones({2})));
}

TEST(TensorDict, BatchMismatchNamesKeyAndShapes) {
  TensorDict td({32});
  const std::string msg = errorOf([&] { td.set({"obs", "x"}, at::zeros({16, 3})); });
  EXPECT_NE(msg.find("('obs', 'x')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[16, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[32]"), std::string::npos) << msg;
  EXPECT_FALSE(td.contains({"obs", "x"}));
}

TEST(TensorDict, MissingKeyListsExistingKeys) {
  TensorDict td;
  td.set({"input", "x"}, at::zeros({1}));
  td.set("y", at::zeros({1}));
  const std::string msg = errorOf([&] { td.get({"input", "mask"}); });
  EXPECT_NE(msg.find("('input', 'mask') not found"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'input', ('input', 'x'), 'y'"), std::string::npos) << msg;
  EXPECT_NE(errorOf([&] { td.get({"y", "z"}); }).find("not found"), std::string::npos);
  EXPECT_NE(errorOf([&] { td.get("input"); }).find("nested TensorDict, not a tensor"), std::string::npos);
  EXPECT_NE(errorOf([&] { td.set({"y", "z"}, at::zeros({1})); }).find("'y' is a tensor"), std::string::npos);
  EXPECT_NE(errorOf([&] { td.erase("nope"); }).find("'nope' not found"), std::string::npos);
}

TEST(TensorDict, KeysNestedAndLeaves) {
  TensorDict td;
  td.set("a", at::zeros({1}));
  td.set({"b", "c"}, at::zeros({1}));
  td.set({"b", "d", "e"}, at::zeros({1}));
  EXPECT_EQ(td.keys(), (std::vector<NestedKey>{"a", "b"}));
  EXPECT_EQ(td.keys(true), (std::vector<NestedKey>{"a", "b", {"b", "c"}, {"b", "d"}, {"b", "d", "e"}}));
  EXPECT_EQ(td.keys(true, true), (std::vector<NestedKey>{"a", {"b", "c"}, {"b", "d", "e"}}));
}

TEST(TensorDict, EraseRemovesTensorsAndSubtrees) {
  TensorDict td;
  td.set({"b", "c"}, at::zeros({1}));
  td.set({"b", "d"}, at::zeros({1}));
  td.erase({"b", "c"});
  EXPECT_EQ(td.keys(true), (std::vector<NestedKey>{"b", {"b", "d"}}));
  td.erase("b");
  EXPECT_TRUE(td.empty());
}

TEST(TensorDict, CopySharesTensorsCloneDoesNot) {
  TensorDict td({2});
  td.set({"a", "x"}, at::zeros({2}));
  TensorDict copy = td;
  TensorDict cloned = td.clone();
  td.get({"a", "x"}).add_(1);
  EXPECT_EQ(copy.get({"a", "x"}).sum().item<float>(), 2.0f);
  EXPECT_EQ(cloned.get({"a", "x"}).sum().item<float>(), 0.0f);
  copy.set("new", at::zeros({2}));
  EXPECT_FALSE(td.contains("new"));
}

TEST(TensorDict, ToConvertsEveryTensor) {
  TensorDict td({2});
  td.set({"a", "x"}, at::ones({2}));
  td.set("b", at::ones({2, 2}, at::kLong));
  TensorDict d = td.to(at::kDouble);
  EXPECT_EQ(d.get({"a", "x"}).scalar_type(), at::kDouble);
  EXPECT_EQ(d.get("b").scalar_type(), at::kDouble);
  EXPECT_EQ(td.get("b").scalar_type(), at::kLong);
  EXPECT_EQ(td.to(c10::Device(c10::kCPU)).keys(true, true), td.keys(true, true));
}

TEST(TensorDict, PrintsLikePythonRepr) {
  TensorDict td({32});
  td.set("input", at::zeros({32, 100}));
  td.set({"outputs", "logits"}, at::zeros({32, 1}, at::kDouble));
  EXPECT_EQ(td.toString(),
            "TensorDict(\n"
            "    fields={\n"
            "        input: Tensor(shape=torch.Size([32, 100]), device=cpu, dtype=torch.float32, is_shared=False),\n"
            "        outputs: TensorDict(\n"
            "            fields={\n"
            "                logits: Tensor(shape=torch.Size([32, 1]), device=cpu, dtype=torch.float64, is_shared=False)},\n"
            "            batch_size=torch.Size([32]),\n"
            "            device=None,\n"
            "            is_shared=False)},\n"
            "    batch_size=torch.Size([32]),\n"
            "    device=None,\n"
            "    is_shared=False)");
}

}  // namespace
}  // namespace tdfx
