// Eager TensorDictModule / TensorDictSequential on real TorchScript modules from the fixtures.
#include "tdfx/nn/td_module.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "tdfx/model/model_file.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

torch::jit::Module scripted(const std::string& file) {
  return loadModelFile(fixture(file)).root.attr("module").toModule();
}

using testing::errorOf;

TEST(TensorDictModule, OneTensorIsWrittenWhole) {
  TensorDictModule m(scripted("one_output.pt"), {{"in", "x"}}, {"y"});
  TensorDict td({4});
  td.set({"in", "x"}, at::randn({4, 8}));
  m.forward(td);
  ASSERT_TRUE(td.contains("y"));
  EXPECT_EQ(td.get("y").sizes(), (std::vector<int64_t>{4, 3}));
}

TEST(TensorDictModule, TupleOutputsGoToTheirKeysAndUnderscoreIsSkipped) {
  TensorDict td({4});
  const at::Tensor x = at::randn({4, 3});
  td.set("x", x);
  TensorDictModule both(scripted("discard.pt"), {"x"}, {"a", {"b", "c"}});
  TensorDict out;
  both.forward(td, &out);
  EXPECT_TRUE(at::equal(out.get("a"), x * 2));
  EXPECT_TRUE(at::equal(out.get({"b", "c"}), x - 1));
  EXPECT_EQ(td.keys(true), (std::vector<NestedKey>{"x"}));  // td_out given: input untouched

  TensorDictModule skip(scripted("discard.pt"), {"x"}, {"_", "y"});
  TensorDict out2;
  skip.forward(td, &out2);
  EXPECT_EQ(out2.keys(true), (std::vector<NestedKey>{"y"}));
}

TEST(TensorDictModule, ExtraOutputsAreNotWrittenAsTensordictZipsThem) {
  // tensordict writes zip(out_keys, outputs): a forward returning (x * 2, x - 1) with one out key
  // writes the first (a scripted googlenet returns (logits, aux2, aux1) this way).
  TensorDictModule first(scripted("discard.pt"), {"x"}, {"a"});
  TensorDict td({4});
  td.set("x", at::ones({4, 3}));
  first.forward(td);
  EXPECT_EQ(td.keys(true), (std::vector<NestedKey>{"x", "a"}));
  EXPECT_TRUE(at::equal(td.get("a"), at::full({4, 3}, 2.0f)));
}

TEST(TensorDictModule, TooFewOutputsAreAClearError) {
  // The forward's return type is known, so the mismatch is found when the module is built.
  const std::string one = errorOf<Error>([&] { TensorDictModule(scripted("one_output.pt"), {"x"}, {"a", "b"}); });
  EXPECT_NE(one.find("forward returns 1 value(s) (Tensor) but out_keys has 2"), std::string::npos) << one;
}

TEST(TensorDictModule, InKeysMustFitTheForwardSignature) {
  const std::string msg = errorOf<Error>([&] { TensorDictModule(scripted("repeated_in_key.pt"), {"x"}, {"y"}); });
  EXPECT_NE(msg.find("forward(a, b) takes 2 inputs but in_keys has 1 ('x')"), std::string::npos) << msg;
  const std::string many = errorOf<Error>([&] { TensorDictModule(scripted("default_arg.pt"), {"a", "b", "c", "d"}, {"y"}); });
  EXPECT_NE(many.find("takes 1 to 3 inputs but in_keys has 4"), std::string::npos) << many;
  EXPECT_NE(errorOf<Error>([&] { TensorDictModule(scripted("default_arg.pt"), {"x"}, {}); }).find("out_keys is empty"),
            std::string::npos);
}

TEST(TensorDictModule, MissingInputKeyNamesIt) {
  TensorDictModule m(scripted("default_arg.pt"), {"x"}, {"y"});
  TensorDict td;
  td.set("z", at::zeros({1}));
  const std::string msg = errorOf<KeyError>([&] { m.forward(td); });
  EXPECT_NE(msg.find("'x' not found in TensorDict; existing keys: 'z'"), std::string::npos) << msg;
}

TEST(TensorDictModule, DefaultArgumentsTakeTheirDefaults) {
  TensorDictModule m(scripted("default_arg.pt"), {"x"}, {"y"});
  TensorDict td;
  const at::Tensor x = at::randn({4, 3});
  td.set("x", x);
  m.forward(td);
  EXPECT_TRUE(at::equal(td.get("y"), x * 2.0 + 1));
}

TEST(TensorDictSequential, KeysFollowTensordict) {
  auto root = loadModelFile(fixture("rewrite_key.pt"));
  const auto& seq = dynamic_cast<const TensorDictSequential&>(*root.module);
  // Modules: x->x, x->y, (x, y)->x. Reads before writes: x. Written, last occurrence kept: y, x.
  EXPECT_EQ(seq.inKeys(), (std::vector<NestedKey>{"x"}));
  EXPECT_EQ(seq.outKeys(), (std::vector<NestedKey>{"y", "x"}));

  TensorDict td({4});
  const at::Tensor x = at::randn({4, 3});
  td.set("x", x);
  seq.forward(td);
  const at::Tensor x1 = x * 2.0, y = x1 * 3.0;
  EXPECT_TRUE(at::equal(td.get("y"), y));
  EXPECT_TRUE(at::equal(td.get("x"), x1 + y));
}

TEST(TensorDictSequential, SelectedOutKeysLimitWhatIsWritten) {
  auto model = loadModelFile(fixture("shared_read.pt"));
  const auto& seq = dynamic_cast<const TensorDictSequential&>(*model.module);
  TensorDictSequential selected(seq.modules(), std::vector<NestedKey>{"b"});
  EXPECT_EQ(selected.outKeys(), (std::vector<NestedKey>{"b"}));
  TensorDict td = makeExampleInputs(model, 1);
  TensorDict out;
  selected.forward(td, &out);
  EXPECT_EQ(out.keys(true), (std::vector<NestedKey>{"b"}));
  TensorDict inPlace = td;
  selected.forward(inPlace);
  EXPECT_EQ(inPlace.keys(true, true), (std::vector<NestedKey>{{"in", "x"}, "b"}));

  const std::string msg = errorOf<Error>([&] { TensorDictSequential(seq.modules(), std::vector<NestedKey>{"zz"}); });
  EXPECT_NE(msg.find("selected out key 'zz' is not written by any module; written keys: 'h', 'a', 'b'"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace tdfx
