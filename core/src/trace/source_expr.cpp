#include "source_expr.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>

#include <torch/csrc/jit/frontend/lexer.h>
#include <torch/csrc/jit/frontend/parser.h>
#include <torch/csrc/jit/frontend/tree_views.h>

namespace tdfx::trace::py {
namespace {

namespace jit = torch::jit;

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The text as TorchScript's lexer and parser read it, every offset kept. Python, through which
// torch/jit/frontend.py read the source, accepts string prefixes (`r'\d'`, `b"x"`) and escapes
// (`'\d'`) that TorchScript's own parser refuses, though they never change a string's bounds: the
// prefix letters and such backslashes become spaces. The values are never read from here.
//
// A newline is added at the end: at the very end of a text, torch 1.13's lexer gives a token the
// end offset 0 (its iterator's end position).
}  // namespace

std::string lexable(std::string text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '#') {  // a comment: its quotes open nothing
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (text[i] != '\'' && text[i] != '"') continue;
    size_t p = i;
    while (p > 0 && i - p < 2 && std::strchr("rRbBuUfF", text[p - 1])) --p;
    if (p < i && (p == 0 || !isIdentChar(text[p - 1])))
      for (size_t k = p; k < i; ++k) text[k] = ' ';
    const std::string close(text.compare(i, 3, std::string(3, text[i])) == 0 ? 3 : 1, text[i]);
    size_t k = i + close.size();
    for (; k < text.size() && text.compare(k, close.size(), close) != 0; ++k) {
      if (text[k] != '\\' || k + 1 >= text.size()) continue;
      if (std::strchr("\\'\"\n", text[k + 1])) ++k;  // an escape that keeps a quote inside: kept
      else text[k] = ' ';
    }
    i = k + close.size() - 1;
  }
  return text + "\n";
}

namespace {

struct Token {
  int kind;
  size_t begin, end;
};

// The tokens of text[0, stop), as TorchScript's lexer reads them, with each bracket's partner.
struct Tokens {
  std::vector<Token> list;
  std::vector<size_t> partner;  // for a bracket, the index of its partner; else npos

  // Up to offset `stop`, or (`oneLine`) to the end of the logical line.
  Tokens(const std::string& text, size_t stop, bool oneLine = false) {
    jit::Lexer lexer(std::make_shared<jit::Source>(text));
    for (;;) {
      jit::Token t = lexer.next();
      if (t.kind == jit::TK_EOF || t.range.start() >= stop) break;
      if (t.kind == jit::TK_NEWLINE || t.kind == jit::TK_INDENT || t.kind == jit::TK_DEDENT) {
        if (oneLine) break;
        continue;
      }
      list.push_back({t.kind, t.range.start(), t.range.end()});
    }
    partner.assign(list.size(), std::string::npos);
    std::vector<size_t> open;
    for (size_t i = 0; i < list.size(); ++i) {
      const int k = list[i].kind;
      if (k == '(' || k == '[' || k == '{') open.push_back(i);
      if ((k == ')' || k == ']' || k == '}') && !open.empty()) {
        partner[i] = open.back();
        partner[open.back()] = i;
        open.pop_back();
      }
    }
  }
  // The token that starts at `offset` (or the first after it); size() when none.
  size_t at(size_t offset) const {
    return std::lower_bound(list.begin(), list.end(), offset, [](const Token& t, size_t o) { return t.begin < o; }) -
           list.begin();
  }
  // The token that ends at `offset`; npos when none.
  size_t endingAt(size_t offset) const {
    const size_t i = std::lower_bound(list.begin(), list.end(), offset, [](const Token& t, size_t o) { return t.end < o; }) -
                     list.begin();
    return i < list.size() && list[i].end == offset ? i : std::string::npos;
  }
  bool is(size_t i, int kind) const { return i < list.size() && list[i].kind == kind; }
  // A `(` that opens a call's arguments: it follows what ends an expression.
  bool opensCall(size_t i) const {
    if (i == 0 || !is(i, '(')) return false;
    switch (list[i - 1].kind) {
      case jit::TK_IDENT: case jit::TK_NUMBER: case jit::TK_STRINGLITERAL: case jit::TK_NONE: case jit::TK_TRUE:
      case jit::TK_FALSE: case ')': case ']': case '}':
        return true;
      default:
        return false;
    }
  }
};

const char* operatorText(int kind) {
  switch (kind) {
    case '+': return "+";
    case '-': return "-";
    case '*': return "*";
    case '/': return "/";
    case '%': return "%";
    case '@': return "@";
    case '&': return "&";
    case '|': return "|";
    case '^': return "^";
    case jit::TK_POW: return "**";
    case jit::TK_FLOOR_DIV: return "//";
    case jit::TK_LSHIFT: return "<<";
    case jit::TK_RSHIFT: return ">>";
    default: return nullptr;
  }
}

const char* comparisonText(int kind) {
  switch (kind) {
    case '<': return "<";
    case '>': return ">";
    case jit::TK_EQ: return "==";
    case jit::TK_NE: return "!=";
    case jit::TK_LE: return "<=";
    case jit::TK_GE: return ">=";
    case jit::TK_IS: return "is";
    case jit::TK_ISNOT: return "is not";
    case jit::TK_IN: return "in";
    default: return nullptr;
  }
}

// `a += b` reads as the operator of its augmented assignment.
const char* augmentedOperatorText(int kind) {
  switch (kind) {
    case jit::TK_PLUS_EQ: return "+";
    case jit::TK_MINUS_EQ: return "-";
    case jit::TK_TIMES_EQ: return "*";
    case jit::TK_DIV_EQ: return "/";
    case jit::TK_MOD_EQ: return "%";
    case jit::TK_BIT_OR_EQ: return "|";
    case jit::TK_BIT_AND_EQ: return "&";
    case jit::TK_BIT_XOR_EQ: return "^";
    case jit::TK_LSHIFT_EQ: return "<<";
    case jit::TK_RSHIFT_EQ: return ">>";
    case jit::TK_POW_EQ: return "**";
    default: return nullptr;
  }
}

ExprPtr make(Expr::Kind kind, std::string text, std::vector<ExprPtr> items, size_t begin, size_t end) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->text = std::move(text);
  e->items = std::move(items);
  e->begin = begin;
  e->end = end;
  return e;
}

// Turns the parser's trees into Exprs whose begin and end span the text each stands for. An
// expression in brackets is its inner expression (`(x + y)` is the sum); what it starts (a method
// of it, an operator on it) starts at the bracket, as TorchScript's ranges do once widened over it.
class TreeReader {
 public:
  /// `text` is what the tokens were read from, string prefixes included.
  TreeReader(const std::string& text, const Tokens& tokens) : text_(text), tokens_(tokens) {}

  ExprPtr read(const jit::TreeRef& tree) {
    const size_t at = tree->range().start(), atEnd = tree->range().end();
    const int kind = tree->kind();
    if (const char* op = operatorText(kind); op && tree->trees().size() == 2) return binary(Expr::Kind::BinOp, op, tree);
    if (const char* op = comparisonText(kind); op && tree->trees().size() == 2) return binary(Expr::Kind::Compare, op, tree);
    switch (kind) {
      case jit::TK_AND: return boolOp("and", tree);
      case jit::TK_OR: return boolOp("or", tree);
      case jit::TK_VAR: return make(Expr::Kind::Name, jit::Var(tree).name().name(), {}, at, atEnd);
      case jit::TK_TRUE: return make(Expr::Kind::Name, "True", {}, at, atEnd);
      case jit::TK_FALSE: return make(Expr::Kind::Name, "False", {}, at, atEnd);
      case jit::TK_NONE: return make(Expr::Kind::Name, "None", {}, at, atEnd);
      case jit::TK_NONE_TYPE: return make(Expr::Kind::Name, "NoneType", {}, at, atEnd);
      case jit::TK_DOTS: return make(Expr::Kind::Ellipsis, "...", {}, at, atEnd);
      case jit::TK_CONST: return number(tree);
      case jit::TK_STRINGLITERAL: return string(at);
      case '.': {
        const jit::Select select(tree);
        ExprPtr object = read(select.value());
        return make(Expr::Kind::Attribute, select.selector().name(), {object}, start(object), atEnd);
      }
      case jit::TK_APPLY: return call(jit::Apply(tree));
      case jit::TK_SUBSCRIPT: return subscript(jit::Subscript(tree));
      case jit::TK_SLICE_EXPR: return slice(jit::SliceExpr(tree));
      case jit::TK_UNARY_MINUS: return unary("-", tree);
      case '~': return unary("~", tree);
      case jit::TK_NOT: {
        // `a not in b` is parsed as not(a in b), both at the `not in` token.
        const jit::TreeRef& operand = tree->trees()[0];
        if (operand->kind() == jit::TK_IN && operand->range().start() == at)
          return binary(Expr::Kind::Compare, "not in", operand);
        return unary("not", tree);
      }
      case jit::TK_STARRED: return unary("*", tree, Expr::Kind::Starred);
      case jit::TK_IF_EXPR: {
        const jit::TernaryIf ternary(tree);
        ExprPtr body = read(ternary.true_expr()), test = read(ternary.cond()), orelse = read(ternary.false_expr());
        return make(Expr::Kind::IfExp, "", {body, test, orelse}, start(body), orelse->end);
      }
      case jit::TK_LIST_LITERAL: return bracketed(Expr::Kind::List, jit::ListLiteral(tree).inputs(), at);
      case jit::TK_TUPLE_LITERAL: return tuple(jit::TupleLiteral(tree).inputs(), at);
      case jit::TK_DICT_LITERAL: {
        const jit::DictLiteral dict(tree);
        std::vector<ExprPtr> items;
        for (size_t i = 0; i < dict.key_inputs().size(); ++i) {
          items.push_back(read(dict.key_inputs()[i]));
          items.push_back(read(dict.value_inputs()[i]));
        }
        return inBraces(Expr::Kind::Dict, "", std::move(items), at);
      }
      case jit::TK_LIST_COMP: return comprehension(read(jit::ListComp(tree).elt()), at);
      case jit::TK_DICT_COMP: return inBraces(Expr::Kind::Comprehension, "{", {read(jit::DictComp(tree).key())}, at);
      default:
        throw std::runtime_error("an expression tdfx does not read: " + jit::kindToString(kind));
    }
  }

 private:
  // Where `e` starts as a part of what contains it: at its opening bracket when written in brackets.
  size_t start(const ExprPtr& e) const {
    size_t first = tokens_.at(e->begin), last = tokens_.endingAt(e->end);
    while (first > 0 && last != std::string::npos && tokens_.is(first - 1, '(') && !tokens_.opensCall(first - 1) &&
           tokens_.partner[first - 1] == last + 1) {
      --first;
      ++last;
    }
    return first < tokens_.list.size() ? tokens_.list[first].begin : e->begin;
  }
  // The bracket `kind` that opens a call's arguments or a subscript of `e`: the first after it,
  // past the brackets `e` is written in. (TorchScript's ranges of calls and subscripts start
  // where their callee or object does.)
  size_t bracketAfter(const ExprPtr& e, int kind) const {
    size_t i = tokens_.at(e->end);
    while (tokens_.is(i, ')')) ++i;
    if (!tokens_.is(i, kind)) throw std::runtime_error("no bracket after a callee or object");
    return i;
  }
  // The end of the bracket that closes the one at token `open`.
  size_t closeOf(size_t open) const {
    if (open >= tokens_.list.size() || tokens_.partner[open] == std::string::npos)
      throw std::runtime_error("an unclosed bracket");
    return tokens_.list[tokens_.partner[open]].end;
  }

  ExprPtr binary(Expr::Kind kind, const char* op, const jit::TreeRef& tree) {
    ExprPtr lhs = read(tree->trees()[0]), rhs = read(tree->trees()[1]);
    return make(kind, op, {lhs, rhs}, start(lhs), rhs->end);
  }
  // `a and b and c` is one BoolOp of three, as Python's ast has it.
  ExprPtr boolOp(const char* word, const jit::TreeRef& tree) {
    ExprPtr lhs = read(tree->trees()[0]), rhs = read(tree->trees()[1]);
    std::vector<ExprPtr> items{lhs};
    if (lhs->kind == Expr::Kind::BoolOp && lhs->text == word && start(lhs) == lhs->begin) items = lhs->items;
    items.push_back(rhs);
    return make(Expr::Kind::BoolOp, word, std::move(items), start(lhs), rhs->end);
  }
  ExprPtr unary(const char* op, const jit::TreeRef& tree, Expr::Kind kind = Expr::Kind::UnaryOp) {
    ExprPtr operand = read(tree->trees()[0]);
    return make(kind, op, {operand}, tree->range().start(), operand->end);
  }
  // The parser folds `-1` into one constant over the digits' range (the constant's text is "-1"):
  // each minus folded is a token before it.
  ExprPtr number(const jit::TreeRef& tree) {
    const size_t at = tree->range().start(), atEnd = tree->range().end();
    ExprPtr e = make(Expr::Kind::Number, text_.substr(at, atEnd - at), {}, at, atEnd);
    const std::string written = jit::Const(tree).text();
    size_t i = tokens_.at(at);
    for (size_t n = 0; n < written.size() && written[n] == '-'; ++n) {
      if (i == 0 || !tokens_.is(i - 1, '-')) throw std::runtime_error("a folded minus without its token");
      e = make(Expr::Kind::UnaryOp, "-", {e}, tokens_.list[--i].begin, e->end);
    }
    return e;
  }
  ExprPtr string(size_t at) {
    size_t i = tokens_.at(at), end = at;
    while (tokens_.is(i, jit::TK_STRINGLITERAL)) end = tokens_.list[i++].end;
    size_t begin = at;
    while (begin > 0 && std::strchr("rRbBuUfF", text_[begin - 1]) && at - begin < 2) --begin;
    if (begin < at && begin > 0 && isIdentChar(text_[begin - 1])) begin = at;
    return make(Expr::Kind::String, text_.substr(begin, end - begin), {}, begin, end);
  }
  ExprPtr call(const jit::Apply& apply) {
    ExprPtr callee = read(apply.callee());
    std::vector<ExprPtr> items{callee};
    std::vector<std::string> keywords;
    for (const jit::Expr& input : apply.inputs()) items.push_back(read(input));
    for (const jit::Attribute& attribute : apply.attributes()) {
      keywords.push_back(attribute.name().name());
      items.push_back(read(attribute.value()));
    }
    ExprPtr e = make(Expr::Kind::Call, "", std::move(items), start(callee), closeOf(bracketAfter(callee, '(')));
    std::const_pointer_cast<Expr>(e)->keywords = std::move(keywords);
    return e;
  }
  ExprPtr subscript(const jit::Subscript& sub) {
    ExprPtr object = read(sub.value());
    const size_t open = bracketAfter(object, '[');
    std::vector<ExprPtr> indices;
    for (const jit::Expr& index : sub.subscript_exprs()) indices.push_back(read(index));
    if (indices.empty()) throw std::runtime_error("an empty subscript");
    ExprPtr index = indices.front();
    if (indices.size() > 1) {
      const size_t close = tokens_.partner[open];
      index = make(Expr::Kind::Tuple, "", std::move(indices), tokens_.list[open + 1].begin, tokens_.list[close - 1].end);
    }
    return make(Expr::Kind::Subscript, "", {object, index}, start(object), closeOf(open));
  }
  ExprPtr slice(const jit::SliceExpr& s) {
    const auto part = [&](const jit::Maybe<jit::Expr>& m) { return m.present() ? read(m.get()) : nullptr; };
    ExprPtr lower = part(s.start()), upper = part(s.end()), step = part(s.step());
    // The item runs to the `,` or `]` that ends it.
    size_t i = tokens_.at(s.range().start());
    const size_t first = i;
    for (int depth = 0; i < tokens_.list.size(); ++i) {
      const int k = tokens_.list[i].kind;
      if (depth == 0 && (k == ',' || k == ']')) break;
      if (k == '(' || k == '[' || k == '{') ++depth;
      if (k == ')' || k == ']' || k == '}') --depth;
    }
    const size_t end = i > first ? tokens_.list[i - 1].end : s.range().end();
    return make(Expr::Kind::Slice, "", {lower, upper, step}, s.range().start(), end);
  }
  std::vector<ExprPtr> readAll(const jit::List<jit::Expr>& list) {
    std::vector<ExprPtr> items;
    for (const jit::Expr& e : list) items.push_back(read(e));
    return items;
  }
  // A list display: its range is its `[`.
  ExprPtr bracketed(Expr::Kind kind, const jit::List<jit::Expr>& list, size_t at) {
    std::vector<ExprPtr> items = readAll(list);
    const size_t open = tokens_.at(at);
    return make(kind, "", std::move(items), at, closeOf(open));
  }
  // A dict display or comprehension: its range is the token after its `{`.
  ExprPtr inBraces(Expr::Kind kind, std::string text, std::vector<ExprPtr> items, size_t at) {
    const size_t open = tokens_.at(at) - 1;
    if (!tokens_.is(open, '{')) throw std::runtime_error("a dict without its brace");
    return make(kind, std::move(text), std::move(items), tokens_.list[open].begin, closeOf(open));
  }
  // A tuple display: its range is its first item's (the token after its `)` when empty).
  ExprPtr tuple(const jit::List<jit::Expr>& list, size_t at) {
    std::vector<ExprPtr> items = readAll(list);
    if (items.empty()) {
      const size_t close = tokens_.at(at) - 1;
      if (!tokens_.is(close, ')') || tokens_.partner[close] == std::string::npos) throw std::runtime_error("an empty tuple");
      return make(Expr::Kind::Tuple, "", {}, tokens_.list[tokens_.partner[close]].begin, tokens_.list[close].end);
    }
    const size_t first = tokens_.at(start(items.front()));
    if (first > 0 && tokens_.is(first - 1, '(')) return make(Expr::Kind::Tuple, "", std::move(items), tokens_.list[first - 1].begin, closeOf(first - 1));
    return make(Expr::Kind::Tuple, "", items, start(items.front()), items.back()->end);
  }
  // `[e for ...]` (its range is the `for`): in a `[` it is a list comprehension; else a generator,
  // written as a call's one argument, from its element to the bracket that closes the call.
  // A window that starts at the element (`x * i for i in range(3)]`, the range of a node inside
  // the comprehension) holds no comprehension: the element is the expression there.
  ExprPtr comprehension(const ExprPtr& element, size_t forAt) {
    const size_t first = tokens_.at(start(element));
    if (first == 0) return element;
    if (first > 0 && tokens_.is(first - 1, '[') && !tokens_.opensCall(first - 1))
      return make(Expr::Kind::Comprehension, "[", {element}, tokens_.list[first - 1].begin, closeOf(first - 1));
    size_t i = tokens_.at(forAt);
    for (int depth = 0; i < tokens_.list.size(); ++i) {
      const int k = tokens_.list[i].kind;
      if (k == '(' || k == '[' || k == '{') ++depth;
      if (k == ')' || k == ']' || k == '}') {
        if (depth == 0) break;
        --depth;
      }
    }
    if (i >= tokens_.list.size()) throw std::runtime_error("an unclosed generator");
    return make(Expr::Kind::Comprehension, "(", {element}, start(element), tokens_.list[i - 1].end);
  }

 private:
  const std::string& text_;
  const Tokens& tokens_;
};

}  // namespace

ExprPtr parseExpressionPrefix(const std::string& text) {
  try {
    const std::string lexed = lexable(text);
    jit::Parser parser(std::make_shared<jit::Source>(lexed));
    const jit::Expr first = parser.parseExp();
    // `out += identity`: torch.fx's proxies have no in-place operators, so Python evaluates
    // `out + identity`; the statement reads as that binary operation.
    const char* augmented = augmentedOperatorText(parser.lexer().cur().kind);
    c10::optional<jit::Expr> rhs;
    if (augmented) {
      parser.lexer().next();
      rhs = parser.parseExp();
    }
    const Tokens tokens(lexed, parser.lexer().cur().range.start());
    TreeReader reader(text, tokens);
    ExprPtr e = reader.read(first);
    if (rhs) {
      ExprPtr r = reader.read(*rhs);
      e = make(Expr::Kind::BinOp, augmented, {e, r}, e->begin, r->end);
    }
    return e;
  } catch (const std::exception&) {
    // Not an expression TorchScript's parser reads from here (a window cut inside one, a keyword).
    return nullptr;
  }
}

namespace {

// Innermost expression starting at 0 with end >= length, and its parent.
void findCovering(const ExprPtr& e, const ExprPtr& parent, size_t length, ExprPtr& best, ExprPtr& bestParent) {
  if (!e || e->begin != 0 || e->end < length) return;
  if (!best || e->end <= best->end) {
    best = e;
    bestParent = parent;
  }
  for (const ExprPtr& item : e->items) findCovering(item, e, length, best, bestParent);
}

// Where TorchScript's source range of `e` ends, as an offset like Expr::end. Its ranges join those
// of an expression's parts, and an attribute read's range is its object's extended by `.name`, so
// a call's own brackets are not in it: TorchScript's ranges of `x.abs().exp().add(1.0)`'s three
// calls are `x.abs`, `x.abs().e` and `x.abs().exp()` (measured with torch 1.13), each shorter in a
// chain than the text it stands for.
size_t torchScriptEnd(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Attribute: return torchScriptEnd(*e.items[0]) + 1 + e.text.size();
    case Expr::Kind::Call:
    case Expr::Kind::BinOp:
    case Expr::Kind::UnaryOp:
    case Expr::Kind::Compare:
    case Expr::Kind::BoolOp:
    case Expr::Kind::IfExp:
      return e.items.empty() || !e.items.back() ? e.end : torchScriptEnd(*e.items.back());
    default: return e.end;
  }
}

// The innermost expression starting at offset 0 whose TorchScript range is `length` long.
void findTorchScriptRange(const ExprPtr& e, const ExprPtr& parent, size_t length, ExprPtr& best, ExprPtr& bestParent) {
  if (!e || e->begin != 0) return;
  if (torchScriptEnd(*e) == length) {
    best = e;
    bestParent = parent;
  }
  for (const ExprPtr& item : e->items) findTorchScriptRange(item, e, length, best, bestParent);
}

}  // namespace

ExprPtr expressionForRange(const ExprPtr& root, size_t length) {
  ExprPtr best, parent;
  // The expression whose TorchScript range this is; else the innermost that covers the length.
  findTorchScriptRange(root, nullptr, length, best, parent);
  if (!best) findCovering(root, nullptr, length, best, parent);
  if (best && parent && parent->kind == Expr::Kind::Call && parent->items[0] == best) return parent;
  return best;
}

std::optional<std::string> dottedName(const Expr& e) {
  if (e.kind == Expr::Kind::Name) return e.text;
  if (e.kind == Expr::Kind::Attribute) {
    auto base = dottedName(*e.items[0]);
    if (base) return *base + "." + e.text;
  }
  return std::nullopt;
}

bool isConstantExpression(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Number:
    case Expr::Kind::String:
      return true;
    case Expr::Kind::Name: return e.text == "None" || e.text == "True" || e.text == "False";
    case Expr::Kind::Attribute: return dottedName(e) && dottedName(e)->rfind("math.", 0) == 0;
    case Expr::Kind::Call: {
      auto callee = dottedName(*e.items[0]);
      if (!callee || (callee->rfind("math.", 0) != 0 && *callee != "float" && *callee != "int")) return false;
      for (size_t i = 1; i < e.items.size(); ++i)
        if (!isConstantExpression(*e.items[i])) return false;
      return true;
    }
    case Expr::Kind::BinOp:
    case Expr::Kind::UnaryOp:
    case Expr::Kind::Tuple:
      for (const ExprPtr& item : e.items)
        if (!item || !isConstantExpression(*item)) return false;
      return true;
    default: return false;
  }
}

std::optional<FunctionHeader> parseFunctionHeader(const std::string& source, const std::string& name) {
  const std::string needle = "def " + name;
  size_t at = 0;
  while ((at = source.find(needle, at)) != std::string::npos) {
    const size_t after = at + needle.size();
    size_t open = after;
    while (open < source.size() && (source[open] == ' ' || source[open] == '\t')) ++open;
    if (open < source.size() && source[open] == '(' && (at == 0 || !isIdentChar(source[at - 1]))) break;
    at = after;
  }
  if (at == std::string::npos) return std::nullopt;
  try {
    // The header's text, `def` to the `:` that ends it, parsed as a function of one `pass`.
    const std::string rest = lexable(source.substr(at));
    const Tokens line(rest, rest.size(), /*oneLine=*/true);
    if (line.list.empty() || line.list.back().kind != ':') return std::nullopt;
    const std::string headerText = source.substr(at, line.list.back().end);
    const std::string parsed = lexable(headerText) + "\n    pass\n";
    jit::Parser parser(std::make_shared<jit::Source>(parsed));
    const jit::Def def(parser.parseFunction(/*is_method=*/false));
    const Tokens tokens(parsed, headerText.size());
    TreeReader reader(headerText, tokens);
    const auto textOf = [&](const jit::Maybe<jit::Expr>& m) {
      if (!m.present()) return std::string();
      const ExprPtr e = reader.read(m.get());
      return headerText.substr(e->begin, e->end - e->begin);
    };
    FunctionHeader header;
    for (const jit::Param& param : def.decl().params()) {
      if (param.kwarg_only()) return std::nullopt;  // after `*` or `*args`: not a plain signature
      header.parameters.push_back({param.ident().name(), textOf(param.type()), textOf(param.defaultValue())});
    }
    header.returnAnnotation = textOf(def.decl().return_type());
    return header;
  } catch (const std::exception&) {
    return std::nullopt;  // `**kwargs`, or a header TorchScript's parser does not read
  }
}

std::string attributeReadOf(const ExprPtr& root, const Expr* inner) {
  if (!root) return "";
  if (root->kind == Expr::Kind::Attribute && root->items[0].get() == inner) return root->text;
  for (const ExprPtr& item : root->items) {
    if (!item || item->begin > inner->begin || item->end < inner->end) continue;  // only the branch holding it
    std::string name = attributeReadOf(item, inner);
    if (!name.empty()) return name;
  }
  return "";
}

namespace {
// The operands `e` applies itself to: a call's arguments and a method's object, an operator's
// operands, a subscript's object and index, a display's items.
std::vector<ExprPtr> operandsOf(const Expr& e) {
  std::vector<ExprPtr> operands;
  switch (e.kind) {
    case Expr::Kind::Call:
      operands.assign(e.items.begin() + 1, e.items.end());
      if (e.items[0]->kind == Expr::Kind::Attribute) operands.push_back(e.items[0]->items[0]);
      break;
    case Expr::Kind::BinOp:
    case Expr::Kind::UnaryOp:
    case Expr::Kind::Compare:
    case Expr::Kind::BoolOp:
    case Expr::Kind::Subscript:
    case Expr::Kind::Tuple:
    case Expr::Kind::List:
      operands = e.items;
      break;
    default:
      break;
  }
  return operands;
}

// Whether `e`, or an item of it when it is a tuple, is a read that `isRead` tells.
bool anyOperand(const Expr& e, const std::function<bool(const ExprPtr&)>& isRead) {
  for (const ExprPtr& operand : operandsOf(e)) {
    if (isRead(operand)) return true;
    if (operand && operand->kind == Expr::Kind::Tuple && std::any_of(operand->items.begin(), operand->items.end(), isRead))
      return true;
  }
  return false;
}
}  // namespace

bool operandReadsField(const Expr& e, const std::string& field) {
  return anyOperand(e, [&](const ExprPtr& operand) {
    return operand && operand->kind == Expr::Kind::Attribute && operand->text == field &&
           operand->items[0]->kind == Expr::Kind::Name;
  });
}

bool operandReadsItem(const Expr& e, int64_t index) {
  return anyOperand(e, [&](const ExprPtr& operand) {
    if (!operand || operand->kind != Expr::Kind::Subscript || operand->items[0]->kind != Expr::Kind::Name) return false;
    const Expr& i = *operand->items[1];
    const bool negative = i.kind == Expr::Kind::UnaryOp && i.text == "-" && i.items[0]->kind == Expr::Kind::Number;
    const Expr& digits = negative ? *i.items[0] : i;
    if (digits.kind != Expr::Kind::Number || digits.text.empty() || digits.text.size() > 18 ||
        digits.text.find_first_not_of("0123456789") != std::string::npos)
      return false;
    return (negative ? -1 : 1) * std::stoll(digits.text) == index;
  });
}

bool operandIsName(const Expr& e, const std::string& name) {
  return anyOperand(e, [&](const ExprPtr& operand) {
    return operand && operand->kind == Expr::Kind::Name && operand->text == name;
  });
}

}  // namespace tdfx::trace::py
