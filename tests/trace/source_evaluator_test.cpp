// The source evaluator: FX's Proxy semantics over an expression parsed by TorchScript's parser,
// as torch.fx 1.13 records the same Python (the expected graphs are FX's, checked by hand against
// torch.fx.symbolic_trace on the one-line forwards in the comments).
#include <gtest/gtest.h>

#include "trace/source_evaluator.h"

namespace tdfx::trace {
namespace {

struct Evaluated {
  Graph graph;
  std::optional<Argument> value;
};

// Runs `text` over the names x and y (placeholders, FX's Proxies) and k (the int 3, concrete).
std::unique_ptr<Evaluated> evaluate(const std::string& text) {
  auto out = std::make_unique<Evaluated>();
  Node* x = out->graph.createNode(OpKind::Placeholder, "x");
  Node* y = out->graph.createNode(OpKind::Placeholder, "y");
  GraphBuilder builder(out->graph);
  SourceScope scope;
  scope.name = [&](const std::string& name) -> std::optional<Argument> {
    if (name == "x") return Argument(x);
    if (name == "y") return Argument(y);
    if (name == "k") return Argument(int64_t{3});
    return std::nullopt;
  };
  const py::ExprPtr e = py::parseExpressionPrefix(text);
  EXPECT_TRUE(e) << text;
  if (e) out->value = evaluateSource(builder, *e, scope);
  return out;
}

// "op target(args)" for every node past the two placeholders.
std::vector<std::string> recorded(const Graph& graph) {
  std::vector<std::string> out;
  for (size_t i = 2; i < graph.size(); ++i) {
    const Node& n = *graph.nodes()[i];
    std::string line = std::string(opKindName(n.op())) + " " + n.target() + "(";
    for (size_t a = 0; a < n.args().size(); ++a) line += (a ? ", " : "") + formatCodeArgument(n.args()[a]);
    for (const auto& [k, v] : n.kwargs()) line += ", " + k + "=" + formatCodeArgument(v);
    out.push_back(line + ")");
  }
  return out;
}

TEST(SourceEvaluator, OperatorsOnProxiesAreRecordedInPythonsOrder) {
  // def forward(self, x, y): h = x * 2.5 + y
  const auto r = evaluate("x * 2.5 + y");
  ASSERT_TRUE(r->value && r->value->isNode());
  EXPECT_EQ(recorded(r->graph), (std::vector<std::string>{"call_function operator.mul(x, 2.5)",
                                                          "call_function operator.add(mul, y)"}));
}

TEST(SourceEvaluator, AnAttributeIsANodeOnlyWhereItIsUsed) {
  // `c = x.shape` alone: FX's Attribute proxy makes no node.
  const auto unused = evaluate("x.shape");
  EXPECT_FALSE(unused->value);
  EXPECT_TRUE(recorded(unused->graph).empty());
  // `c = x.shape[1]`: the getattr, then the getitem.
  const auto read = evaluate("x.shape[1]");
  EXPECT_EQ(recorded(read->graph), (std::vector<std::string>{"call_function builtins.getattr(x, 'shape')",
                                                             "call_function operator.getitem(getattr_1, 1)"}));
  // A method of a Proxy is call_method, no getattr: `y = x.view(-1).sum(0, keepdim=True)`.
  const auto method = evaluate("x.view(-1).sum(0, keepdim=True)");
  EXPECT_EQ(recorded(method->graph), (std::vector<std::string>{"call_method view(x, -1)",
                                                               "call_method sum(view, 0, keepdim=True)"}));
}

TEST(SourceEvaluator, TorchFunctionsFxRecordsAsWrittenAndConcreteWorkRecordsNothing) {
  EXPECT_EQ(recorded(evaluate("torch.sigmoid(x) - k * 2")->graph),
            (std::vector<std::string>{"call_function torch.sigmoid(x)", "call_function operator.sub(sigmoid, 6)"}));
  const auto concrete = evaluate("k * 2 + 1");
  ASSERT_TRUE(concrete->value);
  EXPECT_EQ(formatCodeArgument(*concrete->value), "7");
  EXPECT_TRUE(recorded(concrete->graph).empty());
  EXPECT_EQ(recorded(evaluate("-x[..., 1:k]")->graph),
            (std::vector<std::string>{"call_function operator.getitem(x, (Ellipsis, slice(1, 3, None)))",
                                      "call_function operator.neg(getitem)"}));
}

TEST(SourceEvaluator, WhatItCannotRunIsRefused) {
  for (const char* text : {"x.add_(1)",            // in place: never dead code, never recorded here
                           "torch.relu_(x)",       // in place
                           "F.relu(x)",            // FX records it with its defaults (Handled)
                           "not x",                // bool of a Proxy: FX refuses it
                           "self.lin(x)",          // a module
                           "z + 1",                // a name not known
                           "[a for a in x]"}) {
    const auto r = evaluate(text);
    EXPECT_FALSE(r->value) << text;
  }
}

}  // namespace
}  // namespace tdfx::trace
