#pragma once
// The user's source text behind a TorchScript node, read into the call, operator or subscript the
// user wrote. TorchScript's own parser (torch::jit::Parser, the grammar that accepted this very
// source) reads it; this file only turns its trees into a view with whole-text extents, since the
// parser's ranges cover one token of a node (a call's `(`, an operator, a selector).
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tdfx::trace::py {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

/// One expression node. `begin` and `end` are offsets into the parsed text.
struct Expr {
  enum class Kind {
    Name,       ///< text: the identifier (also None, True, False)
    Number,     ///< text: the literal as written
    String,     ///< text: the literal as written, quotes and prefixes included
    Ellipsis,   ///< `...`
    Attribute,  ///< items[0].text
    Call,       ///< items[0](items[1..]); the last keywords.size() items are keyword arguments
    Subscript,  ///< items[0][items[1]]
    Slice,      ///< items: lower, upper, step; null where not written
    Tuple,      ///< items
    List,       ///< items
    Dict,       ///< items: key, value, key, value, ...
    BinOp,      ///< items[0] text items[1]; text is the operator (`+`, `//`, `@`, ...)
    UnaryOp,    ///< text items[0]; text is `-`, `+`, `~` or `not`
    Compare,    ///< items[0] text items[1]; text is `<`, `==`, `is not`, `in`, ...
    BoolOp,     ///< items joined by text (`and`, `or`)
    IfExp,      ///< items: body, test, orelse
    Starred,    ///< `*items[0]` (text "*") or `**items[0]` (text "**") in a call
    Comprehension,  ///< `[items[0] for ...]`, `(items[0] for ...)`: text is the opening bracket
                    ///< ("(" also for a generator passed alone to a call); the `for` clauses are skipped
  };
  Kind kind = Kind::Name;
  std::string text;
  std::vector<ExprPtr> items;
  std::vector<std::string> keywords;
  size_t begin = 0, end = 0;

  /// Call: the positional arguments (items after the callee, before the keyword arguments).
  size_t positionalCount() const { return items.size() - 1 - keywords.size(); }
};

/// `text` as TorchScript's lexer and parser read it, every offset kept: string prefixes and the
/// escapes Python accepts and TorchScript's parser refuses become spaces; a newline is added.
std::string lexable(std::string text);

/// Parses the longest expression at the start of `text` (a window of source that may go on past
/// the expression, into the rest of a line or an enclosing call). Null when no expression starts
/// there, or when TorchScript's parser does not read it (a window cut inside an expression).
/// An augmented assignment `a += b` reads as the BinOp `a + b` (what torch.fx records for it).
ExprPtr parseExpressionPrefix(const std::string& text);

/// The expression of `root` that starts at offset 0 and whose TorchScript source range is `length`
/// long (TorchScript's ranges leave out a call's brackets: in a chain of calls they fall short of
/// the text), else the innermost one that covers at least `length` characters; a callee is widened
/// to its call (TorchScript's ranges often cover only the callee).
ExprPtr expressionForRange(const ExprPtr& root, size_t length);

/// The attribute read right after `inner` in `root` (`values` in `x.max(1).values`), or "" when
/// `inner` is not the object of an attribute read. `inner` must be a node of `root`.
std::string attributeReadOf(const ExprPtr& root, const Expr* inner);

/// Whether one of the operands `e` applies itself to (a call's arguments and a method's object, an
/// operator's operands, a subscript's object and index) is the read `NAME.field` of a variable.
bool operandReadsField(const Expr& e, const std::string& field);
/// Whether one of those operands is the read `NAME[index]` of a variable, the index an int literal.
bool operandReadsItem(const Expr& e, int64_t index);
/// Whether one of those operands is the variable `name` itself.
bool operandIsName(const Expr& e, const std::string& name);

/// `a.b.c` as a dotted name, or nullopt when the expression is not a chain of names.
std::optional<std::string> dottedName(const Expr& e);

/// Whether the expression contains no names other than `math` (numbers, strings, operators on them):
/// Python evaluates it before torch.fx sees it.
bool isConstantExpression(const Expr& e);

/// The parameters of a `def NAME(...) -> R:` header, as written.
struct Parameter {
  std::string name;
  std::string annotation;  ///< empty when none
  std::string defaultText; ///< empty when none
};
struct FunctionHeader {
  std::vector<Parameter> parameters;
  std::string returnAnnotation;  ///< empty when none
};
/// Finds `def name(` in `source` and reads its header with TorchScript's parser; nullopt when it
/// cannot, or when the signature is not plain (`*args`, a bare `*`).
std::optional<FunctionHeader> parseFunctionHeader(const std::string& source, const std::string& name);

}  // namespace tdfx::trace::py
