// Verification: reports, tolerances, NaN handling, divergence, input specs.
#include "tdfx/runtime/verify.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tdfx/error.h"
#include "tdfx/util/dtype.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

VerifyReport verifyFixture(const std::string& name, VerifyOptions options = {}) {
  const ModelFile model = loadModelFile(fixture(name));
  const GraphModule gm = symbolicTrace(*model.module);
  return verify(*model.module, gm, verificationInputs(model, {}, 0), options);
}

TEST(Verify, SeedExamplesPassBitwise) {
  for (const char* name : {"seed_module.pt", "seed_sequential.pt", "control_flow.pt", "ops.pt"}) {
    const VerifyReport r = verifyFixture(name);
    EXPECT_TRUE(r.passed()) << name << "\n" << formatReport(r);
    for (const auto& k : r.keys) {
      EXPECT_TRUE(k.bitwiseEqual) << name;
      EXPECT_EQ(k.maxAbsDiff, 0.0);
    }
    EXPECT_FALSE(r.divergence.has_value());
    // Not timed unless asked for: each side ran once, for the comparison.
    EXPECT_FALSE(r.timed);
    EXPECT_EQ(r.eagerSeconds, 0.0);
  }
}

TEST(Verify, TimesBothPassesOnlyWhenAsked) {
  VerifyOptions timed;
  timed.time = true;
  const VerifyReport r = verifyFixture("seed_module.pt", timed);
  EXPECT_TRUE(r.passed()) << formatReport(r);
  EXPECT_TRUE(r.timed);
  EXPECT_GT(r.eagerSeconds, 0.0);
  EXPECT_GT(r.tracedSeconds, 0.0);
  EXPECT_NE(formatReport(r).find(" ms, traced "), std::string::npos) << formatReport(r);
  EXPECT_EQ(formatReport(verifyFixture("seed_module.pt")).find(" ms, traced "), std::string::npos);
}

VerifyOptions unseeded() {
  VerifyOptions o;
  o.randomSeed = std::nullopt;
  return o;
}

TEST(Verify, RandomOpsDrawTheSameNumbersInBothPasses) {
  // y = h + rand_like(h): the generator is seeded before each pass, and the op runs in the same order.
  const VerifyReport r = verifyFixture("noisy.pt");
  EXPECT_TRUE(r.passed()) << formatReport(r);
  for (const auto& k : r.keys) EXPECT_TRUE(k.bitwiseEqual) << keyToString(k.key);
  EXPECT_TRUE(r.randomNodes.empty());
}

TEST(Verify, UnseededRandomOpsDrawTheSameNumbersToo) {
  // Without a seed the generator's state is saved before the first pass and restored before each.
  const VerifyReport r = verifyFixture("noisy.pt", unseeded());
  EXPECT_TRUE(r.passed()) << formatReport(r);
  for (const auto& k : r.keys) EXPECT_TRUE(k.bitwiseEqual) << keyToString(k.key);
}

// noisy.pt with its `add` (y = h + rand_like(h)) printed as a subtraction.
VerifyReport verifyNoisyWithASubtraction() {
  const ModelFile model = loadModelFile(fixture("noisy.pt"));
  TracedGraph traced = traceGraph(*model.module);
  traced.graph->setTarget(*traced.graph->findNode("add"), "operator.sub");
  const GraphModule gm(traced, model.module->inKeys());
  return verify(*model.module, gm, verificationInputs(model, {}, 0));
}

TEST(Verify, AWrongNodeIsCaughtAndNamedWithTheRandomNodes) {
  const VerifyReport r = verifyNoisyWithASubtraction();
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.keys.size(), 3u);
  EXPECT_TRUE(r.keys[0].matches);   // h = x * 2
  EXPECT_FALSE(r.keys[1].matches);  // y
  EXPECT_GT(r.keys[1].maxAbsDiff, 0.0);
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->node, "add");
  EXPECT_EQ(r.divergence->module, "1");
  EXPECT_EQ(r.divergence->key, NestedKey("y"));
  const std::string text = formatReport(r);
  EXPECT_NE(text.find("first difference: node 'add' writing key 'y' in module 1"), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED"), std::string::npos);
  // The random op is named as a possible cause (TorchScript marks rand_like nondeterministic).
  EXPECT_EQ(r.randomNodes, std::vector<std::string>{"rand_like"});
  EXPECT_NE(text.find("likely cause: these nodes draw random numbers: rand_like"), std::string::npos) << text;
}

TEST(Verify, JsonReportHasEveryField) {
  const auto j = nlohmann::json::parse(reportToJson(verifyNoisyWithASubtraction()));
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["bitwise"], true);
  EXPECT_EQ(j["keys"].size(), 3u);
  EXPECT_EQ(j["keys"][1]["key"], nlohmann::json::array({"y"}));
  EXPECT_EQ(j["keys"][1]["shape"], nlohmann::json::array({4, 3}));
  EXPECT_EQ(j["keys"][1]["dtype"], "float32");
  EXPECT_EQ(j["keys"][1]["bitwise_equal"], false);
  EXPECT_EQ(j["first_divergence"]["node"], "add");
  EXPECT_TRUE(j.contains("eager_seconds"));
  ASSERT_FALSE(j["inputs"].empty());  // what the passes ran on: key, shape, dtype of each leaf
  EXPECT_TRUE(j["inputs"][0]["key"].is_array());
  EXPECT_TRUE(j["inputs"][0]["shape"].is_array());
  EXPECT_EQ(j["inputs"][0]["dtype"], "float32");
  EXPECT_EQ(j["random_nodes"], nlohmann::json::array({"rand_like"}));
}

TEST(Verify, InputSpecsParseAndReject) {
  const InputSpec s = parseInputSpec("input.x=2x3x224x224:float64");
  EXPECT_EQ(s.key, (NestedKey{"input", "x"}));
  EXPECT_EQ(s.shape, (std::vector<int64_t>{2, 3, 224, 224}));
  EXPECT_EQ(s.dtype, c10::kDouble);
  EXPECT_EQ(parseInputSpec("x=5").shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(parseInputSpec("x=5").dtype, c10::kFloat);
  for (const char* bad : {"x", "=3", "x=3xx4", "x=a", "x=3:float99", "a..b=3"}) {
    EXPECT_THROW(parseInputSpec(bad), Error) << bad;
  }
}

TEST(Verify, PlainArchivesNeedInputShapes) {
  const ModelFile model = loadModelFile(fixture("plain.pt"));
  try {
    verificationInputs(model, {}, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no input shape for 'x'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--input x=SHAPE[:DTYPE]"), std::string::npos) << e.what();
  }
  const TensorDict td = verificationInputs(model, {parseInputSpec("x=3x8")}, 0);
  EXPECT_EQ(td.get("x").sizes(), (std::vector<int64_t>{3, 8}));
  const GraphModule gm = symbolicTrace(*model.module);
  EXPECT_TRUE(verify(*model.module, gm, td).passed());
}

TEST(Verify, WrongInputShapesAreAClearError) {
  const ModelFile model = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  const TensorDict td = verificationInputs(model, {parseInputSpec("input.x=32x99")}, 0);
  try {
    verify(*model.module, gm, td);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the eager module failed on these inputs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(verificationInputs(model, {parseInputSpec("input.x=7x100")}, 0), Error);  // batch size 32
}

TEST(Verify, AQuantizedInputDtypeIsNamedAndNotDrawn) {
  // Quantized dtypes are read (a call's argument, `torch.qint8`), but no input is drawn in one.
  try {
    parseInputSpec("x=2x3:qint8");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--input \"x=2x3:qint8\": a quantized input is not drawn; give its tensor "
                                         "with --input-values"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(parseDtype("quint8"), c10::kQUInt8);
  EXPECT_EQ(dtypeRepr(c10::kQInt8), "torch.qint8");
}

// plain.pt verified on `rows` rows of NaN input: NaN in the same places in both passes.
VerifyReport verifyPlainOnNaN(int64_t rows) {
  const ModelFile model = loadModelFile(fixture("plain.pt"));
  const GraphModule gm = symbolicTrace(*model.module);
  TensorDict td;
  td.set("x", at::full({rows, 8}, std::numeric_limits<float>::quiet_NaN()));
  return verify(*model.module, gm, td);
}

TEST(Verify, NanInTheSamePlacesCountsAsEqual) {
  const VerifyReport r = verifyPlainOnNaN(2);
  EXPECT_TRUE(r.passed()) << formatReport(r);
  EXPECT_GT(r.keys[0].eagerNaN, 0);
  EXPECT_EQ(r.keys[0].eagerNaN, r.keys[0].tracedNaN);
}

TEST(Verify, ComplexOutputsCompareTheImaginaryPartToo) {
  // z = complex(x, rand_like(x)) printed with zeros_like: the real parts agree, the imaginary do not.
  const ModelFile model = loadModelFile(fixture("complex_noise.pt"));
  TracedGraph traced = traceGraph(*model.module);
  traced.graph->setTarget(*traced.graph->findNode("rand_like"), "torch.zeros_like");
  const GraphModule gm(traced, model.module->inKeys());
  const VerifyReport differs = verify(*model.module, gm, verificationInputs(model, {}, 0));
  ASSERT_EQ(differs.keys.size(), 1u);
  EXPECT_FALSE(differs.keys[0].bitwiseEqual);
  EXPECT_FALSE(differs.keys[0].matches) << formatReport(differs);
  EXPECT_GT(differs.keys[0].maxAbsDiff, 0.0);
  EXPECT_FALSE(differs.passed());
  const VerifyReport seeded = verifyFixture("complex_noise.pt");
  EXPECT_TRUE(seeded.passed()) << formatReport(seeded);
  EXPECT_TRUE(seeded.keys[0].bitwiseEqual);
}

TEST(Verify, NamedTupleOutputsAreKeyedByFieldAndNoneMatchesNone) {
  // forward -> AuxOutputs(logits, aux) with aux None in eval mode, as scripted googlenet returns.
  const ModelFile model = loadModelFile(fixture("named_outputs.pt"));
  EXPECT_EQ(model.module->outKeys(), (std::vector<NestedKey>{"logits", "aux"}));
  const GraphModule gm = symbolicTrace(*model.module);
  const VerifyReport r = verify(*model.module, gm, verificationInputs(model, {parseInputSpec("x=2x3")}, 0));
  ASSERT_EQ(r.keys.size(), 2u);
  EXPECT_TRUE(r.keys[0].bitwiseEqual);
  EXPECT_TRUE(r.keys[1].matches);
  EXPECT_EQ(r.keys[1].problem, "None in both");
  EXPECT_TRUE(r.passed()) << formatReport(r);
  EXPECT_NE(formatReport(r).find("ok (None in both)"), std::string::npos) << formatReport(r);
}

TEST(Verify, NothingComparedIsNotAPass) {
  // Every out key is "_": no output was shown to agree, so the verdict cannot be PASSED.
  const VerifyReport r = verifyFixture("discard_only.pt");
  EXPECT_TRUE(r.keys.empty());
  EXPECT_FALSE(r.passed());
  const std::string text = formatReport(r);
  EXPECT_NE(text.find("FAILED: nothing to compare"), std::string::npos) << text;
  EXPECT_EQ(text.find("PASSED"), std::string::npos) << text;
}

TEST(Verify, NanAndInfCountsArePerPass) {
  // The same NaN count in each pass is that count, not the sum of both passes.
  const VerifyReport r = verifyPlainOnNaN(1);
  const std::string text = formatReport(r);
  ASSERT_GT(r.keys[0].eagerNaN, 0);
  // The table's columns are aligned: read the NaN and Inf cells of the first row under their headers.
  const std::string row = text.substr(text.find('\n') + 1);
  const auto cell = [&](const char* header) {
    const size_t col = text.find(header);
    return row.substr(col, row.find(' ', col) - col);
  };
  EXPECT_EQ(cell("NaN"), std::to_string(r.keys[0].eagerNaN)) << text;
  EXPECT_EQ(cell("Inf"), "0") << text;
}

}  // namespace
}  // namespace tdfx
