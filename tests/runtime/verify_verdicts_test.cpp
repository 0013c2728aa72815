// Verify's three verdicts (issue 55): PASSED only with every node proven, NOT PROVEN when something
// was not shown to agree, FAILED when something differs; every value kind compared; the same
// inputs on both sides; ints that index drawn in range. (Each side run once: verify_verdicts_cli_test.py.)
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "tdfx/runtime/verify.h"
#include "runtime/fingerprint.h"
#include "runtime/value_comparison.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

KeyComparison compareOne(const c10::IValue& eager, const c10::IValue& traced) {
  std::vector<KeyComparison> rows;
  runtime::compareValues("v", eager, traced, {}, rows);
  EXPECT_EQ(rows.size(), 1u);
  return rows.at(0);
}

TEST(VerifyValueKinds, DevicesAreComparedNotWavedThrough) {
  const KeyComparison same = compareOne(c10::Device("cpu"), c10::Device("cpu"));
  EXPECT_TRUE(same.matches);
  EXPECT_FALSE(same.notComparable);
  EXPECT_EQ(same.problem, "");
  const KeyComparison other = compareOne(c10::Device("cpu"), c10::Device("meta"));
  EXPECT_FALSE(other.matches);
  EXPECT_EQ(other.problem, "devices differ (cpu vs meta)");
  EXPECT_FALSE(runtime::bitwiseSame(c10::Device("cpu"), c10::Device("meta")));
}

TEST(VerifyValueKinds, DtypesIntsFloatsBoolsStringsAndNoneAreCompared) {
  EXPECT_FALSE(compareOne(static_cast<int64_t>(at::kFloat), static_cast<int64_t>(at::kDouble)).matches);
  EXPECT_FALSE(compareOne(0.0, -0.0).matches);  // floats bitwise
  EXPECT_FALSE(compareOne(true, false).matches);
  EXPECT_FALSE(compareOne(std::string("a"), std::string("b")).matches);
  EXPECT_TRUE(compareOne(c10::IValue(), c10::IValue()).matches);
  EXPECT_FALSE(compareOne(c10::IValue(), static_cast<int64_t>(1)).matches);
}

TEST(VerifyValueKinds, AKindThatCannotBeComparedIsNotProvenNotEqual) {
  const KeyComparison generator = compareOne(at::detail::createCPUGenerator(1), at::detail::createCPUGenerator(1));
  EXPECT_TRUE(generator.notComparable);
  EXPECT_FALSE(generator.matches);
  VerifyReport r;
  r.keys.push_back(generator);
  EXPECT_EQ(r.verdict(), Verdict::NotProven);
  EXPECT_NE(formatReport(r).find("NOT PROVEN"), std::string::npos) << formatReport(r);
}

// Two quantized tensors with the same integers and another scale, zero point or scheme.
TEST(VerifyValueKinds, QuantizedTensorsAreComparedByTheirWholeQuantization) {
  const at::Tensor ints = at::arange(12, at::kInt).reshape({3, 4}).to(at::kByte);
  const at::Tensor a = at::_make_per_tensor_quantized_tensor(ints, 0.1, 3);
  const at::Tensor scaled = at::_make_per_tensor_quantized_tensor(ints, 0.2, 3);
  const at::Tensor shifted = at::_make_per_tensor_quantized_tensor(ints, 0.1, 4);
  const at::Tensor channels = at::_make_per_channel_quantized_tensor(ints, at::full({4}, 0.1, at::kDouble),
                                                                      at::full({4}, 3, at::kLong), 1);
  EXPECT_TRUE(runtime::compareKey(NestedKey("q"), a, a.clone(), {}).matches);
  const auto scale = runtime::compareKey(NestedKey("q"), a, scaled, {});
  EXPECT_FALSE(scale.matches);
  EXPECT_EQ(scale.problem, "scales differ (0.1 vs 0.2)");
  EXPECT_EQ(runtime::compareKey(NestedKey("q"), a, shifted, {}).problem, "zero points differ (3 vs 4)");
  EXPECT_NE(runtime::compareKey(NestedKey("q"), a, channels, {}).problem.find("qschemes differ"), std::string::npos);
  // The fingerprints, which decide which nodes are compared in full, see it too.
  const uint64_t key = 12345;
  EXPECT_TRUE(runtime::bitwiseSame(runtime::fingerprint(a, key), runtime::fingerprint(a.clone(), key)));
  EXPECT_FALSE(runtime::bitwiseSame(runtime::fingerprint(a, key), runtime::fingerprint(scaled, key)));
  EXPECT_FALSE(runtime::bitwiseSame(runtime::fingerprint(a, key), runtime::fingerprint(shifted, key)));
  EXPECT_FALSE(runtime::bitwiseSame(runtime::fingerprint(a, key), runtime::fingerprint(channels, key)));
}

// `forward(self, x, mask: Optional[Tensor] = None)` with a mask given: both sides get it.
TEST(VerifyVerdicts, AGivenOptionalReachesBothSides) {
  const ModelFile model = loadModelFile(fixture("optional_mask.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  const TensorDict inputs = verificationInputs(model, {parseInputSpec("x=4x3"), parseInputSpec("mask=4x3")}, 0, {}, &gm);
  const VerifyReport r = verify(*model.module, gm, inputs);
  EXPECT_EQ(r.verdict(), Verdict::Passed) << formatReport(r);
}

// `self.t[a, b]` with t of 3 x 4: a drawn in [0, 3), b in [0, 4); the same seed without the graph
// draws from [0, 10) and overruns.
TEST(VerifyVerdicts, IntsThatIndexAreDrawnInRange) {
  const ModelFile model = loadModelFile(fixture("indexes_buffer.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  const std::vector<InputSpec> shapes{parseInputSpec("a=64:int64"), parseInputSpec("b=64:int64")};
  const TensorDict blind = verificationInputs(model, shapes, 0);
  EXPECT_GE(blind.get(NestedKey("a")).max().item<int64_t>(), 3);
  const TensorDict inputs = verificationInputs(model, shapes, 0, {}, &gm);
  EXPECT_LT(inputs.get(NestedKey("a")).max().item<int64_t>(), 3);
  EXPECT_LT(inputs.get(NestedKey("b")).max().item<int64_t>(), 4);
  EXPECT_GE(inputs.get(NestedKey("b")).min().item<int64_t>(), 0);
  const VerifyReport r = verify(*model.module, gm, inputs);
  EXPECT_EQ(r.verdict(), Verdict::Passed) << formatReport(r);
  // Without the graph, the eager module fails, and the message says how to give the values.
  try {
    verify(*model.module, gm, blind);
    ADD_FAILURE() << "the drawn indexes did not overrun";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--input-values"), std::string::npos) << e.what();
  }
}

TEST(VerifyVerdicts, ADeviceOutputIsComparedAndPasses) {
  const ModelFile model = loadModelFile(fixture("returns_device.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  const VerifyReport r = verify(*model.module, gm, verificationInputs(model, {parseInputSpec("x=4x3")}, 0));
  EXPECT_EQ(r.verdict(), Verdict::Passed) << formatReport(r);
  ASSERT_EQ(r.keys.size(), 2u);
  EXPECT_EQ(r.keys[1].eagerDtype, "device");
  EXPECT_EQ(r.keys[1].problem, "");
}

}  // namespace
}  // namespace tdfx
