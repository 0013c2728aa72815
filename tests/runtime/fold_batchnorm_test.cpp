// The example pass of docs/editing.md: every BatchNorm2d that follows a Conv2d is folded into it.
// The edited graph is linted, printed, run against the eager model (a float tolerance: folding
// reorders the arithmetic) and saved as TorchScript.
#include <cmath>
#include <sstream>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/import.h>

#include "tdfx/runtime/torchscript_export.h"
#include "tdfx/runtime/verify.h"
#include "test_support.h"

namespace tdfx {
namespace {

// ---- The pass (docs/editing.md shows it) ----

// Whether `m` is an instance of torch.nn.modules.<file>.<name>: a scripted class is
// `__torch__.torch.nn.modules.conv.Conv2d`, or `...conv.___torch_mangle_3.Conv2d` for a second
// Conv2d class (one without a bias, say).
bool isModule(const torch::jit::Module& m, const std::string& file, const std::string& name) {
  const auto& type = m.type()->name();
  return type && type->name() == name && type->prefix().rfind("__torch__.torch.nn.modules." + file, 0) == 0;
}

Argument intsArgument(const c10::IValue& v) {  // a conv's stride (1, 1) as the printed tuple
  ArgumentTuple t;
  for (const c10::IValue& i : v.toTupleRef().elements()) t.items.emplace_back(i.toInt());
  return t;
}

/// Replaces `bn(conv(x))` by `torch.conv2d(x, w, b, stride, padding, dilation, groups)` with the
/// BatchNorm's affine map folded into w and b, which the graph holds as tensor constants.
/// Returns how many pairs it folded.
size_t foldBatchNorm(TracedGraph& traced) {
  Graph& graph = *traced.graph;
  size_t folded = 0;
  for (size_t i = 0; i < graph.size(); ++i) {
    Node& bn = *graph.nodes()[i];
    if (bn.op() != OpKind::CallModule || bn.args().size() != 1 || !bn.args()[0].isNode()) continue;
    Node& conv = *bn.args()[0].node();
    if (conv.op() != OpKind::CallModule || conv.users().size() != 1 || conv.args().size() != 1) continue;
    const torch::jit::Module bnModule(attributeValue(traced, bn.target()).toObject());
    const torch::jit::Module convModule(attributeValue(traced, conv.target()).toObject());
    if (!isModule(bnModule, "batchnorm", "BatchNorm2d") ||
        !isModule(convModule, "conv", "Conv2d"))
      continue;
    const auto constant = [&](const char* name) { return convModule.type()->getConstant(name); };
    if (constant("padding_mode").toStringRef() != "zeros" || !constant("padding").isTuple()) continue;

    // y = (conv(x) - mean) / sqrt(var + eps) * gamma + beta  =  conv'(x) with w' = w * s, b' = (b - mean) * s + beta
    const at::Tensor scale = bnModule.attr("weight").toTensor() /
                             at::sqrt(bnModule.attr("running_var").toTensor() + bnModule.type()->getConstant("eps").toDouble());
    const at::Tensor weight = convModule.attr("weight").toTensor() * scale.reshape({-1, 1, 1, 1});
    const c10::IValue convBias = convModule.attr("bias");
    const at::Tensor bias0 = convBias.isTensor() ? convBias.toTensor() : at::zeros_like(scale);
    const at::Tensor bias = (bias0 - bnModule.attr("running_mean").toTensor()) * scale + bnModule.attr("bias").toTensor();
    const std::string w = conv.name() + "_folded_weight", b = conv.name() + "_folded_bias";
    traced.tensorConstants[w] = weight;
    traced.tensorConstants[b] = bias;

    Node* wNode = graph.insertBefore(bn, OpKind::GetAttr, w);
    Node* bNode = graph.insertBefore(bn, OpKind::GetAttr, b);
    Node* fused = graph.insertBefore(bn, OpKind::CallFunction, "torch.conv2d",
                                     {conv.args()[0], wNode, bNode, intsArgument(constant("stride")),
                                      intsArgument(constant("padding")), intsArgument(constant("dilation")),
                                      constant("groups").toInt()});
    graph.replaceAllUsesWith(bn, *fused);
    graph.eraseNode(bn);
    graph.eraseNode(conv);
    i = fused->index();
    ++folded;
  }
  graph.lint();
  return folded;
}

// ---- Its test ----

TEST(FoldBatchNorm, TheFoldedGraphVerifiesAgainstEagerAndSaves) {
  ModelFile model = loadModelFile(testing::fixture("conv_bn.pt"));
  TracedGraph traced = traceGraph(*model.module);
  const size_t before = traced.graph->size();
  EXPECT_EQ(foldBatchNorm(traced), 2u);
  EXPECT_EQ(traced.graph->size(), before + 2 * 1);  // each pair: 2 nodes out, 3 in
  for (const auto& n : traced.graph->nodes()) EXPECT_EQ(n->target().find("bn"), std::string::npos) << n->name();

  const GraphModule folded(traced, model.module->inKeys());
  const std::string& code = folded.code().text;
  EXPECT_NE(code.find("conv1_folded_weight = self.conv1_folded_weight"), std::string::npos) << code;
  EXPECT_NE(code.find("conv2d = torch.conv2d(getitem, conv1_folded_weight, conv1_folded_bias, (1, 1), (1, 1), (1, 1), 1)"),
            std::string::npos) << code;

  const TensorDict inputs = verificationInputs(model, {}, 0);
  VerifyOptions tolerance;
  tolerance.atol = 1e-5;
  tolerance.rtol = 1e-4;
  const VerifyReport report = verify(*model.module, folded, inputs, tolerance);
  // The outputs agree within the tolerance, and every node the model's code has is compared; the
  // folded convolutions stand for no value of that code (conv then batch norm is two values), so
  // they have no proof of their own: NOT PROVEN, naming them, never PASSED.
  for (const auto& k : report.keys) EXPECT_TRUE(k.matches) << formatReport(report);
  EXPECT_TRUE(report.nodeMismatches.empty()) << formatReport(report);
  EXPECT_EQ(report.verdict(), Verdict::NotProven) << formatReport(report);
  std::vector<std::string> unproven;
  for (const auto& u : report.unproven) unproven.push_back(u.node);
  EXPECT_EQ(unproven, (std::vector<std::string>{"conv2d", "conv2d_1"})) << formatReport(report);
  // Not bitwise: the folding is a real change of the arithmetic, which a bitwise verify notices.
  EXPECT_FALSE(verify(*model.module, folded, inputs).keys.at(0).bitwiseEqual);

  std::istringstream bytes(saveTorchScript(folded).bytes);
  torch::jit::Module saved = torch::jit::load(bytes);
  c10::Dict<std::string, at::Tensor> in;
  in.insert("input.image", inputs.get(NestedKey({"input", "image"})));
  TensorDict expected = inputs.clone();
  folded.forward(expected);
  EXPECT_TRUE(at::equal(saved.forward({in}).toGenericDict().at("features").toTensor(), expected.get("features")));
  EXPECT_EQ(saved.attr("conv1_folded_weight").toTensor().sizes(), (std::vector<int64_t>{8, 3, 3, 3}));
}

}  // namespace
}  // namespace tdfx
