#include "trace/source_expr.h"
#include "trace/module_tracer.h"

#include <gtest/gtest.h>

#include "tdfx/nn/source_index.h"

namespace tdfx::trace::py {
namespace {

using K = Expr::Kind;

TEST(SourceExpr, ParsesCallsWithKeywords) {
  ExprPtr e = parseExpressionPrefix("torch.softmax(x * mask, dim=1)  # comment");
  ASSERT_TRUE(e);
  ASSERT_EQ(e->kind, K::Call);
  EXPECT_EQ(dottedName(*e->items[0]), "torch.softmax");
  EXPECT_EQ(e->positionalCount(), 1u);
  EXPECT_EQ(e->keywords, (std::vector<std::string>{"dim"}));
  EXPECT_EQ(e->items[1]->kind, K::BinOp);
  EXPECT_EQ(e->items[1]->text, "*");
  EXPECT_EQ(e->end, 30u);
}

TEST(SourceExpr, ReadsComprehensionsAsOneArgument) {
  // The keyword after a comprehension was lost: the parser stopped at `for`.
  ExprPtr e = parseExpressionPrefix("torch.stack([f(x) for f in self.fcs], dim=1) + y");
  ASSERT_TRUE(e);
  ASSERT_EQ(e->kind, K::BinOp);
  const Expr& call = *e->items[0];
  ASSERT_EQ(call.kind, K::Call);
  EXPECT_EQ(call.positionalCount(), 1u);
  EXPECT_EQ(call.keywords, (std::vector<std::string>{"dim"}));
  EXPECT_EQ(call.items[1]->kind, K::Comprehension);
  EXPECT_EQ(call.items[1]->text, "[");
  EXPECT_EQ(call.items[1]->items[0]->kind, K::Call);  // the element, f(x)
  EXPECT_EQ(call.items[2]->text, "1");
  // A generator passed alone, and a list display that is no comprehension.
  e = parseExpressionPrefix("torch.cat(tuple(x * i for i in range(3)), 0)");
  ASSERT_TRUE(e);
  ASSERT_EQ(e->kind, K::Call);
  EXPECT_EQ(e->positionalCount(), 2u);
  EXPECT_EQ(e->items[1]->items[1]->kind, K::Comprehension);
  EXPECT_EQ(e->items[1]->items[1]->text, "(");
  // A window that starts at the element, as a node inside the comprehension has: the element.
  e = parseExpressionPrefix("x * i for i in range(3)], dim=0)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::BinOp);
  EXPECT_EQ(e->end, 5u);
  e = parseExpressionPrefix("[a, b]");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::List);
  EXPECT_EQ(e->items.size(), 2u);
  // An unclosed comprehension is no expression; nor is one with an `if`, which TorchScript rejects.
  EXPECT_FALSE(parseExpressionPrefix("[f(x) for f in fs"));
  EXPECT_FALSE(parseExpressionPrefix("[f(x) for f in fs if f is not None]"));
}

// Literals as TorchScript's lexer reads them: the hand-written tokenizer this parser replaced read
// `x * 2.5e3 + 1e-3` wrongly (issue 54, class 1).
TEST(SourceExpr, ReadsLiteralsInEverySpelling) {
  ExprPtr e = parseExpressionPrefix("x * 2.5e3 + 1e-3");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->text, "+");
  EXPECT_EQ(e->items[0]->text, "*");
  EXPECT_EQ(e->items[0]->items[1]->text, "2.5e3");
  EXPECT_EQ(e->items[1]->text, "1e-3");
  for (const char* literal : {"1E3", "2.", ".5", "0x10", "2.5E+2", "1e-6"}) {
    e = parseExpressionPrefix(std::string("y - ") + literal + ")");
    ASSERT_TRUE(e) << literal;
    EXPECT_EQ(e->items[1]->kind, K::Number) << literal;
    EXPECT_EQ(e->items[1]->text, literal);
    EXPECT_EQ(e->end, 4 + std::string(literal).size()) << literal;
  }
  // A negative literal is a minus on the number, from the minus on.
  e = parseExpressionPrefix("x.view(-1, 4)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->items[1]->kind, K::UnaryOp);
  EXPECT_EQ(e->items[1]->begin, 7u);
  EXPECT_EQ(e->items[1]->items[0]->text, "1");
  // String prefixes, which TorchScript's lexer does not read, and `not in`.
  e = parseExpressionPrefix("f(r'\\d', b\"x\") + 1");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->items[0]->items[1]->text, "r'\\d'");
  EXPECT_EQ(e->items[0]->items[2]->text, "b\"x\"");
  e = parseExpressionPrefix("k not in d");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::Compare);
  EXPECT_EQ(e->text, "not in");
}

TEST(SourceExpr, FindsTheReturnOfTheBranchThatIsNotScripting) {
  const std::string linear =
      "def forward(self, input: torch.Tensor) -> torch.Tensor:\n"
      "    if torch.jit.is_scripting():\n"
      "        bias = self.bias.to(dtype=input.dtype) if self.bias is not None else None\n"
      "        return F.linear(input, self.weight.to(dtype=input.dtype), bias=bias)\n"
      "    else:  # what FX runs\n"
      "        return F.linear(input, self.weight, self.bias)\n";
  EXPECT_EQ(scriptingElseReturn(linear), "F.linear(input, self.weight, self.bias)");
  // Anything before the if, or after the else's one return, and the form is not recognised.
  EXPECT_FALSE(scriptingElseReturn("def forward(self, x):\n    x = x + 1\n    if torch.jit.is_scripting():\n"
                                   "        return x\n    else:\n        return x * 2\n"));
  EXPECT_FALSE(scriptingElseReturn("def forward(self, x):\n    if torch.jit.is_scripting():\n        return x\n"
                                   "    else:\n        y = x * 2\n        return y\n"));
  EXPECT_FALSE(scriptingElseReturn("def forward(self, x):\n    if self.training:\n        return x\n"
                                   "    else:\n        return x * 2\n"));
}

TEST(SourceExpr, StopsAtTheEndOfTheExpression) {
  // A window that runs on into an enclosing call and the next line.
  ExprPtr e = parseExpressionPrefix("-z], dim=1).sum()\n  y = 2");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::UnaryOp);
  EXPECT_EQ(e->end, 2u);
  e = parseExpressionPrefix("x.view(\n    2, -1)\nreturn y");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::Call);
  EXPECT_EQ(e->positionalCount(), 2u);
}

TEST(SourceExpr, FollowsPrecedence) {
  ExprPtr e = parseExpressionPrefix("a + b * c ** -d");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->text, "+");
  EXPECT_EQ(e->items[1]->text, "*");
  EXPECT_EQ(e->items[1]->items[1]->text, "**");
  EXPECT_EQ(e->items[1]->items[1]->items[1]->kind, K::UnaryOp);
  e = parseExpressionPrefix("(x != 0) & (y != 0)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->text, "&");
  EXPECT_EQ(e->items[0]->kind, K::Compare);
  e = parseExpressionPrefix("a if c else b");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::IfExp);
}

TEST(SourceExpr, ParsesSubscriptsAndSlices) {
  ExprPtr e = parseExpressionPrefix("z.view(z.size(0), -1)[:, 1:k] * 2");
  ASSERT_TRUE(e);
  ExprPtr sub = expressionForRange(e, 29);
  ASSERT_TRUE(sub);
  ASSERT_EQ(sub->kind, K::Subscript);
  const Expr& index = *sub->items[1];
  ASSERT_EQ(index.kind, K::Tuple);
  ASSERT_EQ(index.items.size(), 2u);
  EXPECT_EQ(index.items[0]->kind, K::Slice);
  EXPECT_FALSE(index.items[0]->items[0]);
  EXPECT_EQ(index.items[1]->items[0]->text, "1");
  EXPECT_EQ(index.items[1]->items[1]->text, "k");
  EXPECT_FALSE(index.items[1]->items[2]);
  e = parseExpressionPrefix("x[..., None, ::2]");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->items[1]->items[0]->kind, K::Ellipsis);
  EXPECT_EQ(e->items[1]->items[1]->text, "None");
  EXPECT_EQ(e->items[1]->items[2]->items[2]->text, "2");
}

TEST(SourceExpr, ReadsAugmentedAssignmentAsItsOperator) {
  ExprPtr e = parseExpressionPrefix("out += self.shortcut(x)\n  return out");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::BinOp);
  EXPECT_EQ(e->text, "+");
  EXPECT_EQ(e->items[1]->kind, K::Call);
  EXPECT_EQ(e->end, 23u);
}

TEST(SourceExpr, WidensACalleeRangeToItsCall) {
  // TorchScript's range for `x.contiguous()` may be `x.contiguou` (one character short).
  ExprPtr root = parseExpressionPrefix("x.contiguous().view(-1)");
  ExprPtr e = expressionForRange(root, 11);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::Call);
  EXPECT_EQ(e->end, 14u);
}

// TorchScript's ranges of chained calls leave out each call's brackets (torch 1.13, measured on
// scripted modules): `x.abs().exp().add(1.0)` gives its calls the ranges `x.abs` (5),
// `x.abs().e` (9) and `x.abs().exp()` (13). Each must read as its own call (issue 34, class 1:
// the third read as the second, and printed `exp_1 = exp.exp()`).
TEST(SourceExpr, EachCallOfAChainReadsAsItself) {
  const auto callAt = [](const std::string& text, size_t length) {
    ExprPtr e = expressionForRange(parseExpressionPrefix(text), length);
    return e && e->kind == K::Call && e->items[0]->kind == K::Attribute ? e->items[0]->text : std::string("?");
  };
  EXPECT_EQ(callAt("x.abs().exp().add(1.0)", 5), "abs");
  EXPECT_EQ(callAt("x.abs().exp().add(1.0)", 9), "exp");
  EXPECT_EQ(callAt("x.abs().exp().add(1.0)", 13), "add");
  // Arguments count up to their end, not the closing bracket: `x.view(3, 2).ex`, `x.view(3, 2).exp().`.
  EXPECT_EQ(callAt("x.view(3, 2).exp().abs()", 6), "view");
  EXPECT_EQ(callAt("x.view(3, 2).exp().abs()", 15), "exp");
  EXPECT_EQ(callAt("x.view(3, 2).exp().abs()", 19), "abs");
  // A subscript's range keeps its bracket: `x[0].exp`, `x[0].exp().a`, `x[0].exp().abs()`.
  EXPECT_EQ(callAt("x[0].exp().abs().neg()", 8), "exp");
  EXPECT_EQ(callAt("x[0].exp().abs().neg()", 12), "abs");
  EXPECT_EQ(callAt("x[0].exp().abs().neg()", 16), "neg");
  EXPECT_EQ(callAt("self.lin(x).exp().abs().neg()", 22), "neg");
}

// TorchScript's range for `(x + y).transpose(0, 1)` is `x + y).transpos`; widened over the opening
// bracket (sourceLocationOf), it must read as the method call on the bracketed sum (issue 21).
TEST(SourceExpr, AMethodOfABracketedExpressionStartsAtTheBracket) {
  ExprPtr root = parseExpressionPrefix("(x + y).transpose(0, 1)\n        m = 1");
  ExprPtr e = expressionForRange(root, 16);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, K::Call);
  EXPECT_EQ(e->begin, 0u);
  EXPECT_EQ(e->end, 23u);
  EXPECT_EQ(e->items[0]->kind, K::Attribute);
  EXPECT_EQ(e->items[0]->items[0]->kind, K::BinOp);
  EXPECT_EQ(e->items[0]->items[0]->begin, 1u);  // the sum itself, inside the brackets
  // `((x + y) * 2)`: the product starts at the inner bracket (its range widened over it).
  ExprPtr product = expressionForRange(parseExpressionPrefix("(x + y) * 2).sum(1)"), 11);
  ASSERT_TRUE(product);
  EXPECT_EQ(product->kind, K::BinOp);
  EXPECT_EQ(product->text, "*");
  const std::string text = "(x + y).transpose(0, 1)";
  EXPECT_EQ(unmatchedOpeningBrackets(text, 1, 16), 1u);
  EXPECT_EQ(unmatchedOpeningBrackets(std::string("f(a, b)"), 5, 7), 0u);  // no bracket right before: stays
  EXPECT_EQ(unmatchedOpeningBrackets(std::string("((x + y) * 2).sum(1)"), 1, 18), 1u);
}

TEST(SourceExpr, TellsConstantExpressions) {
  EXPECT_TRUE(isConstantExpression(*parseExpressionPrefix("2 ** 0.5")));
  EXPECT_TRUE(isConstantExpression(*parseExpressionPrefix("1.0 / math.sqrt(8)")));
  EXPECT_TRUE(isConstantExpression(*parseExpressionPrefix("'mean'")));
  EXPECT_FALSE(isConstantExpression(*parseExpressionPrefix("k + 1")));
  EXPECT_FALSE(isConstantExpression(*parseExpressionPrefix("x.size(0)")));
}

// `mx = x.max(-1)`, then `mx[1]`: FX's getitem at each read, where `mx.indices` is a getattr.
TEST(SourceExpr, TellsReadsOfAFieldByNameOrIndex) {
  ExprPtr e = parseExpressionPrefix("b * mx[1].unsqueeze(-1).float()");
  ASSERT_TRUE(e);
  const Expr& unsqueeze = *e->items[1]->items[0]->items[0];  // mx[1].unsqueeze(-1)
  ASSERT_EQ(unsqueeze.kind, K::Call);
  EXPECT_TRUE(operandReadsItem(unsqueeze, 1));
  EXPECT_FALSE(operandReadsItem(unsqueeze, 0));
  EXPECT_FALSE(operandReadsField(unsqueeze, "indices"));
  e = parseExpressionPrefix("(w - vm[-1]) / 2");
  ASSERT_TRUE(e);
  EXPECT_TRUE(operandReadsItem(*e->items[0], -1));
  e = parseExpressionPrefix("top.values + 1");
  ASSERT_TRUE(e);
  EXPECT_TRUE(operandReadsField(*e, "values"));
  EXPECT_FALSE(operandReadsItem(*e, 0));
}

TEST(SourceExpr, ParsesStringsAndContainers) {
  ExprPtr e = parseExpressionPrefix("f('a,)', {'k': [1, (2, 3)]}, *xs)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->items[1]->kind, K::String);
  EXPECT_EQ(e->items[1]->text, "'a,)'");
  EXPECT_EQ(e->items[2]->kind, K::Dict);
  EXPECT_EQ(e->items[3]->kind, K::Starred);
  EXPECT_FALSE(parseExpressionPrefix(""));
  EXPECT_FALSE(parseExpressionPrefix(")"));
}

TEST(SourceExpr, ReadsFunctionHeaders) {
  const std::string src =
      "    @torch.jit.export\n"
      "    def forward(self, x: torch.Tensor, k: int = 2,\n"
      "                mask: Optional[Tuple[int, int]] = None) -> Tuple[torch.Tensor, torch.Tensor]:\n"
      "        return x, x\n";
  auto h = parseFunctionHeader(src, "forward");
  ASSERT_TRUE(h);
  ASSERT_EQ(h->parameters.size(), 4u);
  EXPECT_EQ(h->parameters[0].name, "self");
  EXPECT_EQ(h->parameters[1].annotation, "torch.Tensor");
  EXPECT_EQ(h->parameters[2].annotation, "int");
  EXPECT_EQ(h->parameters[2].defaultText, "2");
  EXPECT_EQ(h->parameters[3].annotation, "Optional[Tuple[int, int]]");
  EXPECT_EQ(h->returnAnnotation, "Tuple[torch.Tensor, torch.Tensor]");
  h = parseFunctionHeader("def forward(self, x):\n    return x\n", "forward");
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->returnAnnotation.empty());
  EXPECT_TRUE(h->parameters[1].annotation.empty());
  EXPECT_FALSE(parseFunctionHeader("def forward_all(self):\n", "forward"));
  EXPECT_FALSE(parseFunctionHeader("def forward(self, *args):\n", "forward"));
  EXPECT_FALSE(parseFunctionHeader("def forward(self, x, *, k: int):\n", "forward"));
  h = parseFunctionHeader("def forward(self, x, eps: float = -1e-5, s: str = r'a'):\n    return x\n", "forward");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->parameters[2].defaultText, "-1e-5");
  EXPECT_EQ(h->parameters[3].defaultText, "r'a'");
}

}  // namespace
}  // namespace tdfx::trace::py
