#include "python_expr.h"

#include <algorithm>

#include <cctype>
#include <cstring>
#include <functional>
#include <unordered_map>

namespace tdfx::trace::py {
namespace {

struct Token {
  enum class Kind { Name, Number, String, Op, End };
  Kind kind = Kind::End;
  std::string text;
  size_t begin = 0, end = 0;
};

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Splits source into tokens. A newline outside brackets ends the expression (an End token), as
// does anything that is not Python.
std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  int depth = 0;
  size_t i = 0;
  const auto push = [&](Token::Kind k, size_t b, size_t e) { out.push_back({k, s.substr(b, e - b), b, e}); };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {  // explicit line continuation
      i += 2;
      continue;
    }
    if (c == '\n' || c == '\r') {
      if (depth == 0) break;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    // String literals, with prefixes (r, b, f, u and pairs of them).
    size_t q = i;
    while (q < s.size() && q - i < 2 && s[q] != '\0' && std::strchr("rRbBuUfF", s[q])) ++q;
    if (q < s.size() && (s[q] == '\'' || s[q] == '"') && (q == i || isIdentStart(s[i]))) {
      const char quote = s[q];
      const bool triple = s.compare(q, 3, std::string(3, quote)) == 0;
      size_t k = q + (triple ? 3 : 1);
      while (k < s.size()) {
        if (s[k] == '\\') {
          k += 2;
          continue;
        }
        if (triple ? s.compare(k, 3, std::string(3, quote)) == 0 : s[k] == quote) break;
        if (!triple && s[k] == '\n') return out;  // unterminated: not Python
        ++k;
      }
      if (k >= s.size()) return out;
      k += triple ? 3 : 1;
      push(Token::Kind::String, i, k);
      i = k;
      continue;
    }
    if (isIdentStart(c)) {
      size_t k = i;
      while (k < s.size() && isIdentChar(s[k])) ++k;
      push(Token::Kind::Name, i, k);
      i = k;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t k = i;
      if (c == '0' && k + 1 < s.size() && std::strchr("xXoObB", s[k + 1])) {
        k += 2;
        while (k < s.size() && (std::isxdigit(static_cast<unsigned char>(s[k])) || s[k] == '_')) ++k;
      } else {
        while (k < s.size() && (std::isdigit(static_cast<unsigned char>(s[k])) || s[k] == '_' || s[k] == '.')) ++k;
        if (k < s.size() && (s[k] == 'e' || s[k] == 'E')) {
          size_t e = k + 1;
          if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
          if (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) {
            k = e;
            while (k < s.size() && (std::isdigit(static_cast<unsigned char>(s[k])) || s[k] == '_')) ++k;
          }
        }
        if (k < s.size() && (s[k] == 'j' || s[k] == 'J')) ++k;
      }
      push(Token::Kind::Number, i, k);
      i = k;
      continue;
    }
    static const char* ops[] = {"...", "**=", "//=", ">>=", "<<=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
                                "->", ":=", "+=", "-=", "*=", "/=", "%=", "@=", "&=", "|=", "^="};
    bool matched = false;
    for (const char* op : ops) {
      const size_t n = std::strlen(op);
      if (s.compare(i, n, op) == 0) {
        push(Token::Kind::Op, i, i + n);
        i += n;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    if (std::strchr("+-*/%@&|^~<>()[]{},:.=;", c)) {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      push(Token::Kind::Op, i, i + 1);
      ++i;
      continue;
    }
    break;  // not Python
  }
  out.push_back({Token::Kind::End, "", i, i});
  return out;
}

// Recursive descent over Python's expression grammar. Any syntax error stops the parse at the
// last complete expression (the callers parse windows that may end mid-expression).
class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  ExprPtr expression() {
    ExprPtr body = orTest();
    if (!body) return nullptr;
    if (isName("if")) {
      const size_t save = p_;
      ++p_;
      ExprPtr test = orTest();
      if (test && isName("else")) {
        ++p_;
        if (ExprPtr orelse = expression()) return make(Expr::Kind::IfExp, "", {body, test, orelse}, start(body), orelse->end);
      }
      p_ = save;
    }
    return body;
  }

  const Token& peek() const { return t_[p_]; }

 private:
  static ExprPtr make(Expr::Kind kind, std::string text, std::vector<ExprPtr> items, size_t begin, size_t end) {
    auto e = std::make_shared<Expr>();
    e->kind = kind;
    e->text = std::move(text);
    e->items = std::move(items);
    e->begin = begin;
    e->end = end;
    return e;
  }
  bool isOp(const char* op) const { return t_[p_].kind == Token::Kind::Op && t_[p_].text == op; }
  bool isName(const char* name) const { return t_[p_].kind == Token::Kind::Name && t_[p_].text == name; }

  ExprPtr orTest() { return boolOp("or", [this] { return andTest(); }); }
  ExprPtr andTest() { return boolOp("and", [this] { return notTest(); }); }
  ExprPtr boolOp(const char* word, const std::function<ExprPtr()>& next) {
    ExprPtr first = next();
    if (!first || !isName(word)) return first;
    std::vector<ExprPtr> items{first};
    while (isName(word)) {
      const size_t save = p_++;
      ExprPtr more = next();
      if (!more) {
        p_ = save;
        break;
      }
      items.push_back(more);
    }
    if (items.size() == 1) return first;
    return make(Expr::Kind::BoolOp, word, items, start(first), items.back()->end);
  }
  ExprPtr notTest() {
    if (isName("not")) {
      const size_t begin = t_[p_++].begin;
      ExprPtr operand = notTest();
      if (!operand) return nullptr;
      return make(Expr::Kind::UnaryOp, "not", {operand}, begin, operand->end);
    }
    return comparison();
  }
  ExprPtr comparison() {
    ExprPtr left = binary(0);
    while (left) {
      std::string op;
      size_t width = 1;
      static const char* ops[] = {"<", ">", "==", ">=", "<=", "!="};
      for (const char* o : ops)
        if (isOp(o)) op = o;
      if (op.empty() && isName("in")) op = "in";
      if (op.empty() && isName("is")) {
        op = "is";
        if (t_[p_ + 1].kind == Token::Kind::Name && t_[p_ + 1].text == "not") op = "is not", width = 2;
      }
      if (op.empty() && isName("not") && t_[p_ + 1].kind == Token::Kind::Name && t_[p_ + 1].text == "in")
        op = "not in", width = 2;
      if (op.empty()) break;
      const size_t save = p_;
      p_ += width;
      ExprPtr right = binary(0);
      if (!right) {
        p_ = save;
        break;
      }
      left = make(Expr::Kind::Compare, op, {left, right}, start(left), right->end);
    }
    return left;
  }
  // Binary operators by precedence level, lowest first (`**` is handled in power()).
  ExprPtr binary(int level) {
    static const std::vector<std::vector<const char*>> levels = {
        {"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}};
    if (level == static_cast<int>(levels.size())) return factor();
    ExprPtr left = binary(level + 1);
    while (left) {
      const char* op = nullptr;
      for (const char* o : levels[level])
        if (isOp(o)) op = o;
      if (!op) break;
      const size_t save = p_++;
      ExprPtr right = binary(level + 1);
      if (!right) {
        p_ = save;
        break;
      }
      left = make(Expr::Kind::BinOp, op, {left, right}, start(left), right->end);
    }
    return left;
  }
  ExprPtr factor() {
    if (isOp("-") || isOp("+") || isOp("~")) {
      const Token& op = t_[p_++];
      ExprPtr operand = factor();
      if (!operand) return nullptr;
      return make(Expr::Kind::UnaryOp, op.text, {operand}, op.begin, operand->end);
    }
    return power();
  }
  ExprPtr power() {
    ExprPtr base = primary();
    if (base && isOp("**")) {
      const size_t save = p_++;
      if (ExprPtr exponent = factor()) return make(Expr::Kind::BinOp, "**", {base, exponent}, start(base), exponent->end);
      p_ = save;
    }
    return base;
  }
  ExprPtr primary() {
    ExprPtr e = atom();
    while (e) {
      if (isOp(".") && t_[p_ + 1].kind == Token::Kind::Name) {
        const Token& name = t_[p_ + 1];
        p_ += 2;
        e = make(Expr::Kind::Attribute, name.text, {e}, start(e), name.end);
      } else if (isOp("(")) {
        const size_t save = p_;
        ExprPtr call = callArguments(e);
        if (!call) {
          p_ = save;
          break;
        }
        e = call;
      } else if (isOp("[")) {
        const size_t save = p_++;
        ExprPtr index = subscriptList();
        if (!index || !isOp("]")) {
          p_ = save;
          break;
        }
        e = make(Expr::Kind::Subscript, "", {e, index}, start(e), t_[p_++].end);
      } else {
        break;
      }
    }
    return e;
  }
  ExprPtr callArguments(const ExprPtr& callee) {
    ++p_;  // (
    std::vector<ExprPtr> positional, keywordValues;
    std::vector<std::string> keywords;
    while (!isOp(")")) {
      if (isOp("*") || isOp("**")) {
        const Token& star = t_[p_++];
        ExprPtr value = expression();
        if (!value) return nullptr;
        (star.text == "**" ? keywordValues : positional)
            .push_back(make(Expr::Kind::Starred, star.text, {value}, star.begin, value->end));
        if (star.text == "**") keywords.push_back("**");
      } else if (t_[p_].kind == Token::Kind::Name && t_[p_ + 1].kind == Token::Kind::Op && t_[p_ + 1].text == "=") {
        keywords.push_back(t_[p_].text);
        p_ += 2;
        ExprPtr value = expression();
        if (!value) return nullptr;
        keywordValues.push_back(value);
      } else {
        if (!keywords.empty()) return nullptr;  // positional after keyword: not Python
        const size_t begin = t_[p_].begin;
        ExprPtr value = expression();
        if (!value) return nullptr;
        if (positional.empty() && skipComprehension(")")) {  // `sum(x for x in xs)`: a generator argument
          value = make(Expr::Kind::Comprehension, "(", {value}, begin, t_[p_ - 1].end);
        }
        positional.push_back(value);
      }
      if (isOp(",")) {
        ++p_;
      } else if (!isOp(")")) {
        return nullptr;
      }
    }
    std::vector<ExprPtr> items{callee};
    items.insert(items.end(), positional.begin(), positional.end());
    items.insert(items.end(), keywordValues.begin(), keywordValues.end());
    auto call = std::make_shared<Expr>();
    call->kind = Expr::Kind::Call;
    call->items = std::move(items);
    call->keywords = std::move(keywords);
    call->begin = start(callee);
    call->end = t_[p_++].end;
    return call;
  }
  // One subscript item: an expression or a slice `a:b:c`.
  ExprPtr subscriptItem() {
    const size_t begin = t_[p_].begin;
    ExprPtr lower;
    if (!isOp(":")) {
      lower = expression();
      if (!lower || !isOp(":")) return lower;
    }
    ++p_;  // :
    ExprPtr upper, step;
    if (!isOp(":") && !isOp("]") && !isOp(",")) upper = expression();
    if (isOp(":")) {
      ++p_;
      if (!isOp("]") && !isOp(",")) step = expression();
    }
    return make(Expr::Kind::Slice, "", {lower, upper, step}, begin, t_[p_ - 1].end);
  }
  ExprPtr subscriptList() {
    const size_t begin = t_[p_].begin;
    ExprPtr first = subscriptItem();
    if (!first || !isOp(",")) return first;
    std::vector<ExprPtr> items{first};
    while (isOp(",")) {
      ++p_;
      if (isOp("]")) break;
      ExprPtr item = subscriptItem();
      if (!item) return nullptr;
      items.push_back(item);
    }
    return make(Expr::Kind::Tuple, "", items, begin, t_[p_ - 1].end);
  }
  // At `for` after a comprehension's element: skips its clauses (`for a in b if c ...`) up to the
  // `close` that ends it, leaving p_ on it; false, not moving, when no `for` is here.
  bool skipComprehension(const char* close) {
    if (t_[p_].kind != Token::Kind::Name || t_[p_].text != "for") return false;
    const size_t save = p_;
    int depth = 0;
    for (; t_[p_].kind != Token::Kind::End; ++p_) {
      const Token& tok = t_[p_];
      if (tok.kind != Token::Kind::Op) continue;
      if (depth == 0 && tok.text == close) return true;
      if (tok.text == "(" || tok.text == "[" || tok.text == "{") ++depth;
      if (tok.text == ")" || tok.text == "]" || tok.text == "}") {
        if (depth == 0) break;
        --depth;
      }
    }
    p_ = save;
    return false;
  }
  // Comma-separated expressions up to `close`; `dict` reads key: value pairs.
  bool sequence(const char* close, std::vector<ExprPtr>& items, bool& trailingComma, bool dict) {
    trailingComma = false;
    while (!isOp(close)) {
      ExprPtr e = expression();
      if (!e) return false;
      items.push_back(e);
      if (dict) {
        if (!isOp(":")) return false;
        ++p_;
        ExprPtr v = expression();
        if (!v) return false;
        items.push_back(v);
      }
      trailingComma = false;
      if (isOp(",")) {
        ++p_;
        trailingComma = true;
      } else if (!isOp(close)) {
        return false;
      }
    }
    return true;
  }
  ExprPtr atom() {
    const Token& tok = t_[p_];
    switch (tok.kind) {
      case Token::Kind::Name: {
        static const char* keywords[] = {"if", "else", "and", "or", "not", "in", "is", "for", "lambda", "return"};
        for (const char* k : keywords)
          if (tok.text == k) return nullptr;
        ++p_;
        return make(Expr::Kind::Name, tok.text, {}, tok.begin, tok.end);
      }
      case Token::Kind::Number: ++p_; return make(Expr::Kind::Number, tok.text, {}, tok.begin, tok.end);
      case Token::Kind::String: {
        // Adjacent literals concatenate.
        size_t end = tok.end;
        ++p_;
        while (t_[p_].kind == Token::Kind::String) end = t_[p_++].end;
        return make(Expr::Kind::String, "", {}, tok.begin, end);
      }
      case Token::Kind::Op: {
        if (tok.text == "...") {
          ++p_;
          return make(Expr::Kind::Ellipsis, "...", {}, tok.begin, tok.end);
        }
        const size_t save = p_;
        std::vector<ExprPtr> items;
        bool trailing = false;
        if (tok.text == "(" || tok.text == "[" || tok.text == "{") {
          ++p_;
          const char* close = tok.text == "(" ? ")" : tok.text == "[" ? "]" : "}";
          bool dict = false;
          if (tok.text == "{" && !isOp("}")) {
            // A dict when the first item is followed by ':'.
            const size_t probe = p_;
            ExprPtr k = expression();
            dict = k && isOp(":");
            p_ = probe;
          }
          if (tok.text != "{") {
            // A comprehension: the element, then `for` clauses up to the closing bracket.
            const size_t probe = p_;
            ExprPtr element = expression();
            if (element && skipComprehension(close)) {
              const size_t end = t_[p_++].end;
              return make(Expr::Kind::Comprehension, tok.text, {element}, tok.begin, end);
            }
            p_ = probe;
          }
          if (sequence(close, items, trailing, dict)) {
            const size_t end = t_[p_++].end;
            if (tok.text == "(") {
              if (items.size() == 1 && !trailing) {  // parentheses: the inner expression
                bracketedFrom_[items[0]] = tok.begin;
                return items[0];
              }
              return make(Expr::Kind::Tuple, "", items, tok.begin, end);
            }
            return make(tok.text == "[" ? Expr::Kind::List : (dict ? Expr::Kind::Dict : Expr::Kind::Tuple), "", items,
                        tok.begin, end);
          }
        }
        p_ = save;
        return nullptr;
      }
      case Token::Kind::End: return nullptr;
    }
    return nullptr;
  }

  // Where an expression starts when what contains it starts there too: at its opening bracket when
  // it was written in brackets. A bracketed atom is its inner expression (`(x + y)` is the sum), but
  // `(x + y).transpose(0, 1)` and `(x + y) * 2` start at the bracket, as TorchScript's ranges of
  // their nodes do once widened over it.
  size_t start(const ExprPtr& e) const {
    const auto it = bracketedFrom_.find(e);
    return it == bracketedFrom_.end() ? e->begin : it->second;
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  // Keys hold their expressions: one dropped by backtracking must not lend its address to another.
  std::unordered_map<ExprPtr, size_t> bracketedFrom_;
};

// Source text of a parsed string is not kept in `text` for strings: filled by the callers that need it.
void fillStringText(const std::string& source, const ExprPtr& e) {
  if (!e) return;
  auto* mut = const_cast<Expr*>(e.get());
  if (mut->kind == Expr::Kind::String) mut->text = source.substr(mut->begin, mut->end - mut->begin);
  for (const ExprPtr& item : mut->items) fillStringText(source, item);
}

// Innermost expression starting at 0 with end >= length, and its parent.
void findCovering(const ExprPtr& e, const ExprPtr& parent, size_t length, ExprPtr& best, ExprPtr& bestParent) {
  if (!e || e->begin != 0 || e->end < length) return;
  if (!best || e->end <= best->end) {
    best = e;
    bestParent = parent;
  }
  for (const ExprPtr& item : e->items) findCovering(item, e, length, best, bestParent);
}

}  // namespace

ExprPtr parseExpressionPrefix(const std::string& text) {
  Parser parser(tokenize(text));
  ExprPtr e = parser.expression();
  // `out += identity`: torch.fx's proxies have no in-place operators, so Python evaluates
  // `out + identity`; the statement reads as that binary operation.
  const Token& next = parser.peek();
  if (e && next.kind == Token::Kind::Op && next.text.size() >= 2 && next.text.back() == '=' && next.text != "==" &&
      next.text != "<=" && next.text != ">=" && next.text != "!=") {
    const std::string op = next.text.substr(0, next.text.size() - 1);
    Parser rhsParser(tokenize(text.substr(next.end)));
    if (ExprPtr rhs = rhsParser.expression()) {
      auto shifted = std::const_pointer_cast<Expr>(rhs);
      std::function<void(Expr&)> shift = [&](Expr& x) {
        x.begin += next.end;
        x.end += next.end;
        for (const ExprPtr& item : x.items)
          if (item) shift(*std::const_pointer_cast<Expr>(item));
      };
      shift(*shifted);
      auto aug = std::make_shared<Expr>();
      aug->kind = Expr::Kind::BinOp;
      aug->text = op;
      aug->items = {e, rhs};
      aug->begin = e->begin;
      aug->end = rhs->end;
      e = aug;
    }
  }
  fillStringText(text, e);
  return e;
}

namespace {

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
  const std::string rest = source.substr(source.find('(', at));
  const std::vector<Token> tokens = tokenize(rest);
  FunctionHeader header;
  size_t p = 1;
  int depth = 0;
  Parameter current;
  enum { Name, Annotation, Default } part = Name;
  size_t partBegin = 0;
  const auto finishPart = [&](size_t end) {
    const std::string text = rest.substr(partBegin, end - partBegin);
    if (part == Annotation) current.annotation = text;
    if (part == Default) current.defaultText = text;
  };
  for (; p < tokens.size() && tokens[p].kind != Token::Kind::End; ++p) {
    const Token& tok = tokens[p];
    if (tok.kind == Token::Kind::Op && (tok.text == "(" || tok.text == "[" || tok.text == "{")) ++depth;
    if (tok.kind == Token::Kind::Op && (tok.text == ")" || tok.text == "]" || tok.text == "}")) {
      if (depth == 0) {
        if (!current.name.empty()) {
          finishPart(tok.begin);
          header.parameters.push_back(current);
        }
        break;
      }
      --depth;
    }
    if (depth > 0) continue;
    if (tok.kind == Token::Kind::Op && tok.text == ",") {
      finishPart(tok.begin);
      if (!current.name.empty()) header.parameters.push_back(current);
      current = Parameter{};
      part = Name;
      continue;
    }
    if (part == Name && tok.kind == Token::Kind::Name && current.name.empty()) {
      current.name = tok.text;
    } else if (tok.kind == Token::Kind::Op && tok.text == ":" && part == Name) {
      part = Annotation;
      partBegin = tokens[p + 1].begin;
    } else if (tok.kind == Token::Kind::Op && tok.text == "=" && part != Default) {
      finishPart(tok.begin);
      part = Default;
      partBegin = tokens[p + 1].begin;
    } else if (part == Name && tok.kind == Token::Kind::Op && (tok.text == "*" || tok.text == "**")) {
      return std::nullopt;  // *args / **kwargs: not a plain signature
    }
  }
  if (p >= tokens.size() || tokens[p].kind == Token::Kind::End) return std::nullopt;
  // `-> annotation:` after the closing parenthesis.
  if (p + 1 < tokens.size() && tokens[p + 1].kind == Token::Kind::Op && tokens[p + 1].text == "->") {
    size_t q = p + 2;
    int d = 0;
    for (; q < tokens.size() && tokens[q].kind != Token::Kind::End; ++q) {
      const std::string& t = tokens[q].text;
      if (tokens[q].kind == Token::Kind::Op && (t == "[" || t == "(")) ++d;
      if (tokens[q].kind == Token::Kind::Op && (t == "]" || t == ")")) --d;
      if (d == 0 && tokens[q].kind == Token::Kind::Op && t == ":") break;
    }
    if (q < tokens.size() && tokens[q].kind == Token::Kind::Op) {
      const size_t b = tokens[p + 2].begin;
      header.returnAnnotation = rest.substr(b, tokens[q].begin - b);
      while (!header.returnAnnotation.empty() && std::isspace(static_cast<unsigned char>(header.returnAnnotation.back())))
        header.returnAnnotation.pop_back();
    }
  }
  for (Parameter& param : header.parameters) {
    for (std::string* s : {&param.annotation, &param.defaultText})
      while (!s->empty() && std::isspace(static_cast<unsigned char>(s->back()))) s->pop_back();
  }
  return header;
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

bool operandReadsField(const Expr& e, const std::string& field) {
  const auto isRead = [&](const ExprPtr& operand) {
    return operand && operand->kind == Expr::Kind::Attribute && operand->text == field &&
           operand->items[0]->kind == Expr::Kind::Name;
  };
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
      return false;
  }
  for (const ExprPtr& operand : operands) {
    if (isRead(operand)) return true;
    if (operand && operand->kind == Expr::Kind::Tuple && std::any_of(operand->items.begin(), operand->items.end(), isRead))
      return true;
  }
  return false;
}

}  // namespace tdfx::trace::py
