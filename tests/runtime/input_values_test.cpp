// Inputs given with their values (tdfx-cli --input-values): read from what torch.save writes, and
// used as they are where the other inputs are drawn from the seed.
#include "tdfx/runtime/input_values.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "tdfx/error.h"
#include "tdfx/runtime/verify.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

// torch::pickle_save writes the format torch.save does (a zip of data.pkl and the tensors).
std::vector<char> saved(const c10::IValue& value) { return torch::jit::pickle_save(value); }

std::string errorOf(const std::vector<char>& bytes) {
  try {
    inputValuesFromPickle(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(InputValues, ADictOfTensorsIsReadWithDottedKeysSplit) {
  c10::Dict<std::string, at::Tensor> dict;
  const at::Tensor x = at::arange(6, at::kFloat).reshape({2, 3});
  const at::Tensor idx = at::tensor({3, 1, 4}, at::kLong);
  dict.insert("input.x", x);
  dict.insert("idx", idx);
  const InputValues values = inputValuesFromPickle(saved(dict));
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].first, NestedKey({"input", "x"}));
  EXPECT_TRUE(at::equal(values[0].second, x));
  EXPECT_EQ(values[1].first, NestedKey("idx"));
  EXPECT_TRUE(at::equal(values[1].second, idx));
  EXPECT_EQ(values[1].second.scalar_type(), at::kLong);
}

TEST(InputValues, ATupleOfPairsIsReadToo) {
  const at::Tensor x = at::ones({3});
  const InputValues values = inputValuesFromPickle(saved(c10::ivalue::Tuple::create({c10::ivalue::Tuple::create({"x", x})})));
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].first, NestedKey("x"));
  EXPECT_TRUE(at::equal(values[0].second, x));
  EXPECT_EQ(errorOf(saved(c10::ivalue::Tuple::create({x}))),
            "input values: an item is Tensor, not a (key, tensor) pair; expected a dict {\"input.x\": tensor} or a "
            "tuple of (\"input.x\", tensor) pairs saved with torch.save");
}

TEST(InputValues, AnythingButADictOfTensorsIsSaidInOneLine) {
  EXPECT_EQ(errorOf(saved(at::ones({2}))),
            "input values: expected a dict {\"input.x\": tensor} or a tuple of (\"input.x\", tensor) pairs saved "
            "with torch.save, got Tensor");
  c10::Dict<std::string, int64_t> numbers;
  numbers.insert("x", 5);
  EXPECT_EQ(errorOf(saved(numbers)), "input values: 'x' is Int, expected a tensor");
  c10::Dict<std::string, at::Tensor> emptyPart;
  emptyPart.insert("input..x", at::ones({1}));
  EXPECT_EQ(errorOf(saved(emptyPart)), "input values: empty part in key \"input..x\"");
  const std::string garbage = errorOf(std::vector<char>{'n', 'o', 't', ' ', 'a', ' ', 'p', 'i', 'c', 'k', 'l', 'e'});
  EXPECT_EQ(garbage.rfind("input values: not a file torch.save wrote (", 0), 0u) << garbage;
  EXPECT_EQ(garbage.find('\n'), std::string::npos) << garbage;
}

TEST(InputValues, ATupleKeyKeepsAPartThatHoldsADot) {
  // In a tuple of pairs, as tdfx.verify saves them (LibTorch's dict cannot hash a tuple key).
  using c10::ivalue::Tuple;
  const InputValues values = inputValuesFromPickle(saved(Tuple::create(
      {Tuple::create({Tuple::create({"input", "a.b"}), at::ones({1})}), Tuple::create({"c.d", at::zeros({1})})})));
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0].first, NestedKey({"input", "a.b"}));
  EXPECT_EQ(values[1].first, NestedKey({"c", "d"}));
}

TEST(InputValues, AKeyTheModelDoesNotReadIsAnError) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  try {
    verificationInputs(model, {}, 0, {{NestedKey({"input", "typo"}), at::ones({2})}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("input values: ('input', 'typo') is not an input of the model (its inputs: ", 0), 0u)
        << e.what();
  }
}

TEST(InputValues, GivenTensorsAreTheInputsAndTheOthersAreTheSeedsDraws) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const TensorDict drawn = verificationInputs(model, {}, 7);
  const std::vector<NestedKey> keys = drawn.keys(/*includeNested=*/true, /*leavesOnly=*/true);
  ASSERT_GE(keys.size(), 2u);
  const at::Tensor mine = at::full(drawn.get(keys[0]).sizes(), 0.25, drawn.get(keys[0]).options());
  const TensorDict given = verificationInputs(model, {}, 7, {{keys[0], mine}});
  EXPECT_TRUE(at::equal(given.get(keys[0]), mine));            // the values given, not a draw
  EXPECT_FALSE(at::equal(drawn.get(keys[0]), mine));
  EXPECT_TRUE(at::equal(given.get(keys[1]), drawn.get(keys[1])));  // the other inputs: the seed's
  // A copy: the run cannot change the caller's tensor.
  EXPECT_NE(given.get(keys[0]).data_ptr(), mine.data_ptr());
  // A tensor of another shape than its row: the other inputs still get the seed's draws.
  std::vector<int64_t> other = drawn.get(keys[0]).sizes().vec();
  other.back() += 3;
  const at::Tensor wider = at::zeros(other, drawn.get(keys[0]).options());
  const TensorDict givenWider = verificationInputs(model, {}, 7, {{keys[0], wider}});
  EXPECT_TRUE(at::equal(givenWider.get(keys[0]), wider));
  EXPECT_TRUE(at::equal(givenWider.get(keys[1]), drawn.get(keys[1])));
}

}  // namespace
}  // namespace tdfx
