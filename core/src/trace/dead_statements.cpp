// The part of ModuleTracer for statements TorchScript compiled away. TorchScript removes pure code
// whose value is never used (dead code elimination), so the archive holds no node for it; torch.fx
// runs the Python, and every operation on a Proxy is recorded, used or not. timm's Res2Net:
//
//     spx = torch.split(out, self.width, 1)
//     sp = spx[0]  # redundant, for torchscript       <- FX: `getitem = split[0]`, 0 users
//     for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
//         if i == 0 or self.is_first:
//             sp = spx[i]
//
// Such a statement is found in the function's source, parsed with TorchScript's own parser: an
// assignment to one name at the body's own level (it always runs), where no node of the graph
// comes from. It is recorded where it stands, before the first node that comes from source after
// it. A read `NAME[INT]` or `NAME.shape[INT]` is found by its container (the value TorchScript
// kept of that name); any other expression is run by the source evaluator (source_evaluator.cpp)
// over the values its names hold there:
//
//     c = x.shape[1]     <- FX: `getattr_1 = x.shape`, `getitem = getattr_1[1]`, 0 users
//     h = x + 1          <- FX: `add = x + 1`, 0 users
//     c = x.shape[0]
//
// This file finds them (deadReads); dead_statement_recording.cpp records them as the code is
// converted. Statements TorchScript removed only in part, around a call it kept, are
// kept_call_statements.cpp's.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <functional>

#include <torch/csrc/jit/frontend/parser.h>
#include <torch/csrc/jit/frontend/tree_views.h>

#include "dead_statements.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

// The function's text for TorchScript's parser, at the same offsets: decorator lines blanked (the
// parser reads from `def`), then what py::lexable blanks; only the statements' shapes matter here.
std::string parsableText(const std::string& source) {
  std::string text = source;
  const size_t def = text.compare(0, 4, "def ") == 0 ? 0 : text.find("\ndef ");
  if (def != std::string::npos)
    for (size_t i = 0; i < def; ++i)
      if (text[i] != '\n') text[i] = ' ';
  return py::lexable(std::move(text));
}

// Whether the line holding `at` starts with names unpacked (`w, i = `).
bool unpacksNames(const std::string& source, size_t at) {
  const size_t lineStart = source.rfind('\n', at) == std::string::npos ? 0 : source.rfind('\n', at) + 1;
  size_t i = lineStart, names = 0;
  const auto blank = [&] { while (i < at && (source[i] == ' ' || source[i] == '\t')) ++i; };
  for (blank(); i < at; blank()) {
    const size_t name = i;
    while (i < at && (std::isalnum(static_cast<unsigned char>(source[i])) || source[i] == '_')) ++i;
    if (i == name || std::isdigit(static_cast<unsigned char>(source[name]))) return false;
    ++names;
    blank();
    if (i < at && source[i] == ',') { ++i; continue; }
    return names > 1 && i + 1 < at && source[i] == '=' && source[i + 1] != '=';
  }
  return false;
}

// Whether some line ends with `[INT]` (a comment after it aside), or unpacks names from a tuple
// with one: only then can the source hold a dead read, and only then is it parsed (parsing every
// inlined function made tracing swin_t 12 % slower).
bool mayHoldDeadRead(const std::string& source) {
  for (size_t close = source.find(']'); close != std::string::npos; close = source.find(']', close + 1)) {
    size_t after = close + 1;
    while (after < source.size() && (source[after] == ' ' || source[after] == '\t' || source[after] == '\r')) ++after;
    const bool tupleItem = after < source.size() && source[after] == ',' && unpacksNames(source, close);
    if (after < source.size() && source[after] != '\n' && source[after] != '#' && !tupleItem) continue;
    size_t open = close;
    while (open > 0 && (std::isdigit(static_cast<unsigned char>(source[open - 1])) || source[open - 1] == ' ')) --open;
    if (open > 0 && source[open - 1] == '-') --open;
    if (open > 0 && open < close && source[open - 1] == '[') return true;
  }
  return false;
}

// Every node of `block` and its sub-blocks.
void forEachNode(jit::Block* block, const std::function<void(jit::Node*)>& fn) {
  for (jit::Node* node : block->nodes()) {
    fn(node);
    for (jit::Block* sub : node->blocks()) forEachNode(sub, fn);
  }
}

// Whether a node's location is in `source`, the function being read, and not in a function
// TorchScript inlined into it (a helper, a staticmethod): their offsets count in their own text.
bool inFunction(const SourceLocation& loc, const std::string& source) {
  const size_t n = std::min<size_t>({loc.window.size(), 40, source.size() > loc.start ? source.size() - loc.start : 0});
  return n > 0 && source.compare(loc.start, n, loc.window, 0, n) == 0;
}

// Where the expression of the assignment in source[begin, end) starts: after its `=` (a type
// annotation `h: Tensor = ...` passed over); npos when there is none.
size_t assignedExpressionAt(const std::string& source, size_t begin, size_t end) {
  int depth = 0;
  for (size_t i = begin; i < end && i < source.size(); ++i) {
    const char c = source[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
    else if (c == '=' && depth == 0) {
      const char before = i > begin ? source[i - 1] : ' ';
      const char after = i + 1 < source.size() ? source[i + 1] : ' ';
      if (after == '=' || before == '=' || before == '<' || before == '>' || before == '!') continue;
      size_t at = i + 1;
      while (at < end && (source[at] == ' ' || source[at] == '\t' || source[at] == '\\' || source[at] == '\n')) ++at;
      return at < end ? at : std::string::npos;
    }
  }
  return std::string::npos;
}

// The items of the tuple display written at [begin, end) (`x * 2, x + 1`): each one's text without
// the spaces around it, split at the commas outside brackets and strings. Empty when `begin` is
// npos.
std::vector<std::pair<size_t, size_t>> tupleItemSpans(const std::string& source, size_t begin, size_t end) {
  std::vector<std::pair<size_t, size_t>> items;
  if (begin == std::string::npos) return items;
  end = std::min(end, source.size());
  int depth = 0;
  char quote = 0;
  size_t start = begin;
  const auto close = [&](size_t at) {
    size_t a = start, b = at;
    while (a < b && std::isspace(static_cast<unsigned char>(source[a]))) ++a;
    while (b > a && (std::isspace(static_cast<unsigned char>(source[b - 1])) || source[b - 1] == '\\')) --b;
    if (a < b) items.emplace_back(a, b);
  };
  for (size_t i = begin; i < end; ++i) {
    const char c = source[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#') {
      while (i < end && source[i] != '\n') ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      close(i);
      start = i + 1;
    }
  }
  close(end);
  return items;
}

// Whether an expression of this kind does something FX records (not a name, a literal or a display).
bool doesSomething(int kind) {
  return kind != torch::jit::TK_VAR && kind != torch::jit::TK_CONST && kind != torch::jit::TK_STRINGLITERAL &&
         kind != torch::jit::TK_NONE && kind != torch::jit::TK_LIST_LITERAL && kind != torch::jit::TK_TUPLE_LITERAL &&
         kind != torch::jit::TK_DICT_LITERAL;
}

// Python's keywords a statement may start with, followed by a bracket (`if(x)`): not a name.
bool isKeyword(const std::string& name) {
  static const char* const kKeywords[] = {"if", "elif", "while", "for", "return", "assert", "raise", "del", "not",
                                          "with", "and", "or", "in", "is", "yield", "print", "lambda", "await"};
  return std::any_of(std::begin(kKeywords), std::end(kKeywords), [&](const char* k) { return name == k; });
}

// Whether some line of the body assigns one name an expression that does something (a call, an
// operator, a subscript), or is a call or attribute read alone, and no node of the graph starts on
// it: only then can the source hold a dead statement other than a read, and only then is it parsed.
bool mayHoldDeadStatement(TraceContext& cx, const std::string& source, jit::Graph& g) {
  std::vector<size_t> starts;
  bool collected = false;
  size_t line = source.find('\n');  // the body starts after the `def` line
  while (line != std::string::npos && line + 1 < source.size()) {
    const size_t begin = line + 1;
    line = source.find('\n', begin);
    const size_t end = line == std::string::npos ? source.size() : line;
    size_t i = begin;
    while (i < end && (source[i] == ' ' || source[i] == '\t')) ++i;
    if (i == begin || i >= end) continue;
    // An expression alone that starts with a bracket or a unary operator (`(x + 1)`, `-x`,
    // `[x.sum(), x.mean()]`): it may be a statement of its own (or a continued line: the parse
    // tells).
    const bool bracketOrOperator = std::strchr("([{-+~", source[i]) != nullptr;
    if (!bracketOrOperator && !(std::isalpha(static_cast<unsigned char>(source[i])) || source[i] == '_')) continue;
    const size_t nameStart = i;
    while (i < end && (std::isalnum(static_cast<unsigned char>(source[i])) || source[i] == '_')) ++i;
    const std::string name = source.substr(nameStart, i - nameStart);
    while (i < end && source[i] == ' ') ++i;
    // An expression alone (`x.sum()`, `torch.relu(x)`): a name read by a call or an attribute.
    const bool expression = bracketOrOperator || (i < end && (source[i] == '.' || source[i] == '(') && !isKeyword(name));
    // A tuple target (`a, b = x * 2, x + 1`): names and commas up to the `=`. One item may be
    // dead beside a live one on the same line, so no node starting there rules it out.
    bool tupleTarget = false;
    while (!expression && i < end && source[i] == ',') {
      tupleTarget = true;
      ++i;
      while (i < end && (std::isalnum(static_cast<unsigned char>(source[i])) || source[i] == '_' || source[i] == ' ')) ++i;
    }
    if (!expression) {
      if (i >= end || (source[i] != '=' && source[i] != ':') || (i + 1 < end && source[i + 1] == '=')) continue;
      const size_t rhs = assignedExpressionAt(source, i, end);
      if (rhs == std::string::npos || source.find_first_of("([+-*/%@&|^<>~", rhs) >= end) continue;
      if (tupleTarget) return true;
    }
    if (!collected) {
      forEachNode(g.block(), [&](jit::Node* node) {
        if (node->kind() == c10::prim::Constant) return;
        const auto loc = cx.source.userSource(node);
        if (loc && loc->builtinDef.empty() && inFunction(*loc, source)) starts.push_back(loc->start);
      });
      std::sort(starts.begin(), starts.end());
      collected = true;
    }
    const auto first = std::lower_bound(starts.begin(), starts.end(), begin);
    if (first == starts.end() || *first >= end) return true;
  }
  return false;
}

// `x[INT]`, `x.shape[INT]`: the dead reads FX records of a Proxy named `x`, or nullopt.
std::optional<std::pair<std::string, std::pair<std::string, int64_t>>> readOfName(const jit::Expr& e) {
  using namespace torch::jit;
  const auto intOf = [](const Expr& i) -> std::optional<int64_t> {
    if (i.kind() == TK_CONST && Const(i).isIntegral()) return Const(i).asIntegral();
    if (i.kind() == TK_UNARY_MINUS) {
      const Expr operand(i.tree()->trees()[0]);
      if (operand.kind() == TK_CONST && Const(operand).isIntegral()) return -Const(operand).asIntegral();
    }
    return std::nullopt;
  };
  if (e.kind() != TK_SUBSCRIPT) return std::nullopt;
  const Subscript subscript(e);
  if (subscript.subscript_exprs().size() != 1) return std::nullopt;
  const auto index = intOf(subscript.subscript_exprs()[0]);
  if (!index) return std::nullopt;
  const Expr object = subscript.value();
  if (object.kind() == TK_VAR) return std::make_pair(Var(object).name().name(), std::make_pair(std::string(), *index));
  if (object.kind() == '.' && Select(object).value().kind() == TK_VAR && Select(object).selector().name() == "shape")
    return std::make_pair(Var(Select(object).value()).name().name(), std::make_pair(std::string("shape"), *index));
  return std::nullopt;
}

// `top.indices`: a field read by name of a variable, or nullopt.
std::optional<std::pair<std::string, std::string>> fieldReadOfName(const jit::Expr& e) {
  if (e.kind() != '.') return std::nullopt;
  const jit::Select select(e);
  if (select.value().kind() != jit::TK_VAR) return std::nullopt;
  return std::make_pair(jit::Var(select.value()).name().name(), select.selector().name());
}

}  // namespace

// Where in the user's source a node was made: its own range, or for a node TorchScript made without
// one (`v = self.gru(x)[0]` indexes the call's tuple with a prim::TupleIndex that has no range)
// the latest of its inputs' nodes, the expression it continues. nullopt when neither has one.
std::optional<size_t> madeAt(TraceContext& cx, const jit::Node* node) {
  if (const auto loc = cx.source.userSource(const_cast<jit::Node*>(node)))
    return loc->builtinDef.empty() ? std::optional<size_t>(loc->start) : std::nullopt;
  if (node->kind() != c10::prim::TupleIndex && node->kind() != c10::prim::TupleUnpack) return std::nullopt;
  std::optional<size_t> latest;
  for (const jit::Value* in : node->inputs()) {
    const c10::Symbol kind = in->node()->kind();
    if (kind == c10::prim::Constant || kind == c10::prim::Param) continue;
    const auto loc = cx.source.userSource(const_cast<jit::Node*>(in->node()));
    if (loc && loc->builtinDef.empty() && (!latest || loc->start > *latest)) latest = loc->start;
  }
  return latest;
}

// A TorchScript value's name as written: "spx" for "spx.1".
std::string writtenName(const jit::Value* v) {
  if (!v->hasDebugName()) return "";
  const std::string& name = v->debugName();
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos && name.find_first_not_of("0123456789", dot + 1) == std::string::npos)
    return name.substr(0, dot);
  return name;
}

// Whether `written` is `name` numbered on load (`h0` for `h`: TorchScript makes value names unique).
bool isNumberedFrom(const std::string& written, const std::string& name) {
  return written.size() > name.size() && written.compare(0, name.size(), name) == 0 &&
         written.find_first_not_of("0123456789", name.size()) == std::string::npos;
}

// `fn`'s source parsed, and its assignments at any depth, once per trace. TorchScript's value names
// are made unique on load (`h` assigned in an unrolled loop is `h0.1`, `h1.1`), so a value whose
// name is the written one and more digits is that name's only where such a statement made it:
// `byName` tells where.
const FunctionStatements& statementsOf(TraceContext& cx, const jit::Function& fn) {
  if (auto known = cx.statementsOf.find(&fn); known != cx.statementsOf.end()) return known->second;
  FunctionStatements& statements = cx.statementsOf[&fn];
  statements.source = cx.source.functionSource(fn);
  if (statements.source.empty()) return statements;
  auto byName = std::make_shared<Assignments>();
  try {
    torch::jit::Parser parser(std::make_shared<torch::jit::Source>(parsableText(statements.source)));
    const torch::jit::Def def(parser.parseFunction(/*is_method=*/true));
    std::function<void(const torch::jit::List<torch::jit::Stmt>&, size_t)> collect = [&](const auto& list, size_t blockEnd) {
      for (size_t i = 0; i < list.size(); ++i) {
        const torch::jit::Stmt st = list[i];
        const size_t stEnd = i + 1 < list.size() ? list[i + 1].range().start() : blockEnd;
        if (st.kind() == torch::jit::TK_ASSIGN || st.kind() == torch::jit::TK_AUG_ASSIGN) {
          const torch::jit::Expr lhs = st.kind() == torch::jit::TK_ASSIGN ? torch::jit::Assign(st).lhs()
                                                                          : torch::jit::AugAssign(st).lhs();
          if (lhs.kind() == torch::jit::TK_VAR)
            (*byName)[torch::jit::Var(lhs).name().name()].push_back({st.range().start(), stEnd});
          if (lhs.kind() == torch::jit::TK_TUPLE_LITERAL || lhs.kind() == torch::jit::TK_LIST_LITERAL) {
            const auto items = lhs.kind() == torch::jit::TK_TUPLE_LITERAL ? torch::jit::TupleLiteral(lhs).inputs()
                                                                          : torch::jit::ListLiteral(lhs).inputs();
            for (const torch::jit::Expr item : items)
              if (item.kind() == torch::jit::TK_VAR) {
                (*byName)[torch::jit::Var(item).name().name()].push_back({st.range().start(), stEnd});
                statements.names.insert(torch::jit::Var(item).name().name());
              }
          }
        }
        if (st.kind() == torch::jit::TK_ASSIGN) {
          const torch::jit::Assign assign(st);
          if (assign.lhs_list().size() == 1 && assign.lhs().kind() == torch::jit::TK_VAR && assign.rhs().present()) {
            AssignmentStatement a;
            a.begin = st.range().start();
            a.end = stEnd;
            a.rhsBegin = assignedExpressionAt(statements.source, a.begin, a.end);
            a.target = torch::jit::Var(assign.lhs()).name().name();
            statements.names.insert(a.target);
            if (a.rhsBegin != std::string::npos) statements.assignments.push_back(a);
          }
        } else if (st.kind() == torch::jit::TK_FOR) {
          collect(torch::jit::For(st).body(), stEnd);
        } else if (st.kind() == torch::jit::TK_WHILE) {
          collect(torch::jit::While(st).body(), stEnd);
        } else if (st.kind() == torch::jit::TK_IF) {
          collect(torch::jit::If(st).trueBranch(), stEnd);
          collect(torch::jit::If(st).falseBranch(), stEnd);
        }
      }
    };
    collect(def.statements(), statements.source.size());
    statements.def = def.tree();
    statements.byName = std::move(byName);
  } catch (const std::exception&) {
    statements.assignments.clear();  // source TorchScript's parser does not take: nothing read from it
  }
  return statements;
}

const std::vector<DeadRead>& deadReads(TraceContext& cx, const jit::Function& fn, jit::Graph& g) {
  if (auto known = cx.deadReadsOf.find(&fn); known != cx.deadReadsOf.end()) return known->second;
  std::vector<DeadRead>& found = cx.deadReadsOf[&fn];
  const std::string source = cx.source.functionSource(fn);
  if (source.empty() || (!mayHoldDeadRead(source) && !mayHoldDeadStatement(cx, source, g))) return found;
  const FunctionStatements& parsed = statementsOf(cx, fn);
  if (!parsed.def) return found;  // source TorchScript's parser does not take: no dead statement is read from it
  try {
    const auto statements = torch::jit::Def(parsed.def).statements();
    const Assignments& assignments = *parsed.byName;
    std::map<std::string, std::pair<size_t, size_t>> assigned;  // each name's last assignment so far
    // `v = h` makes no node: TorchScript's value keeps the name `h`, which a read of `v` then looks up.
    std::map<std::string, std::string> aliasOf;
    const auto resolve = [&](const std::string& name) {
      auto it = aliasOf.find(name);
      return it == aliasOf.end() ? name : it->second;
    };
    for (size_t i = 0; i < statements.size(); ++i) {
      const torch::jit::Stmt stmt = statements[i];
      // A statement the evaluator runs if it is dead: its text [begin, end), the expression from
      // `exprBegin`, the name it assigns ("" for an expression alone).
      const auto addStatement = [&](size_t begin, size_t end, size_t exprBegin, const std::string& target) {
        DeadRead dead;
        dead.begin = begin;
        dead.end = end;
        dead.rhsText = source.substr(exprBegin, end - exprBegin);
        dead.target = target;
        dead.expressionStatement = target.empty();
        dead.aliases = aliasOf;
        dead.assignments = parsed.byName;
        found.push_back(std::move(dead));
      };
      if (stmt.kind() == torch::jit::TK_EXPR_STMT) {
        // An expression alone that does something: run by the evaluator if it is dead. Its range
        // may start inside it (an operator's is the operator's): the text starts at its line.
        const int kind = torch::jit::ExprStmt(stmt).expr().kind();
        size_t begin = source.rfind('\n', stmt.range().start());
        begin = begin == std::string::npos ? 0 : begin + 1;
        while (begin < source.size() && (source[begin] == ' ' || source[begin] == '\t')) ++begin;
        const size_t end = i + 1 < statements.size() ? statements[i + 1].range().start() : source.size();
        if (kind != torch::jit::TK_VAR && kind != torch::jit::TK_CONST && kind != torch::jit::TK_STRINGLITERAL &&
            kind != torch::jit::TK_NONE && kind != torch::jit::TK_DOTS && begin <= stmt.range().start() && begin < end)
          addStatement(begin, end, begin, "");
        continue;
      }
      if (stmt.kind() != torch::jit::TK_ASSIGN) {
        // A loop or branch that assigns a name inside ends what was known of it (`h = v`, then
        // `for ...: h = layer(h)`: `h` is no longer `v`).
        const size_t stmtEnd = i + 1 < statements.size() ? statements[i + 1].range().start() : source.size();
        for (const auto& [name, ranges] : assignments)
          if (std::any_of(ranges.begin(), ranges.end(),
                          [&](const auto& r) { return r.first >= stmt.range().start() && r.first < stmtEnd; })) {
            aliasOf.erase(name);
            assigned.erase(name);
          }
        continue;
      }
      const torch::jit::Assign assign(stmt);
      // The statement's text runs to the next statement (TorchScript's ranges of a subscript are
      // its bracket's, not the whole expression's).
      const size_t end = i + 1 < statements.size() ? statements[i + 1].range().start() : source.size();
      // A read `NAME[INT]`, `NAME.shape[INT]` or `NAME.FIELD` of `container`, assigned to `boundName`.
      const auto addRead = [&](const std::string& container, int64_t index, const std::string& attribute,
                               const std::string& field, const std::string& boundName) {
        DeadRead dead;
        dead.begin = stmt.range().start();
        dead.end = end;
        dead.container = container;
        dead.index = index;
        dead.attribute = attribute;
        dead.field = field;
        dead.boundName = boundName;
        dead.containerAlias = resolve(container);
        for (const std::string& name : {dead.container, dead.containerAlias})
          if (auto it = assignments.find(name); it != assignments.end())
            for (const auto& range : it->second) dead.assignedAt.push_back({name, range});
        if (auto it = assigned.find(dead.containerAlias); it != assigned.end()) dead.containerDefinition = it->second;
        found.push_back(dead);
      };
      if (assign.lhs_list().size() == 1 && assign.lhs().kind() == torch::jit::TK_TUPLE_LITERAL &&
          assign.rhs().present() && assign.rhs().get().kind() == torch::jit::TK_TUPLE_LITERAL) {
        // `w, i = top[0], top.indices`: each item is a statement of its own (Python evaluates
        // them all before assigning any).
        const auto targets = torch::jit::TupleLiteral(assign.lhs()).inputs();
        const auto values = torch::jit::TupleLiteral(assign.rhs().get()).inputs();
        const std::vector<std::pair<size_t, size_t>> items =
            tupleItemSpans(source, assignedExpressionAt(source, stmt.range().start(), end), end);
        for (size_t k = 0; k < targets.size() && targets.size() == values.size(); ++k) {
          if (targets[k].kind() != torch::jit::TK_VAR) continue;
          const std::string name = torch::jit::Var(targets[k]).name().name();
          if (const auto read = readOfName(values[k])) {
            addRead(read->first, read->second.second, read->second.first, "", name);
          } else if (const auto field = fieldReadOfName(values[k])) {
            addRead(field->first, 0, "", field->second, name);
          } else if (items.size() == values.size() && doesSomething(values[k].kind())) {
            // An item that computes (`b` of `a, b = x * 2, x + 1`, never read): a statement of
            // its own, its text the item's.
            addStatement(items[k].first, items[k].second, items[k].first, name);
          }
        }
      }
      if (assign.lhs_list().size() != 1 || assign.lhs().kind() != torch::jit::TK_VAR || !assign.rhs().present()) {
        // Names assigned by unpacking: what was known of them ends here.
        for (const auto& [name, ranges] : assignments)
          if (std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) { return r.first == stmt.range().start(); })) {
            aliasOf.erase(name);
            assigned.erase(name);
          }
        continue;
      }
      const auto read = readOfName(assign.rhs().get());
      const std::string target = torch::jit::Var(assign.lhs()).name().name();
      if (read && read->first != target) {
        addRead(read->first, read->second.second, read->second.first, "", target);
      } else if (!read) {
        if (const auto field = fieldReadOfName(assign.rhs().get()); field && field->first != target)
          addRead(field->first, 0, "", field->second, target);
        // Any other expression that does something: run by the evaluator if it is dead.
        const size_t rhsBegin = assignedExpressionAt(source, stmt.range().start(), end);
        const int kind = assign.rhs().get().kind();
        if (rhsBegin != std::string::npos && kind != torch::jit::TK_VAR && kind != torch::jit::TK_CONST &&
            kind != torch::jit::TK_STRINGLITERAL && kind != torch::jit::TK_LIST_LITERAL &&
            kind != torch::jit::TK_TUPLE_LITERAL && kind != torch::jit::TK_DICT_LITERAL)
          addStatement(stmt.range().start(), end, rhsBegin, target);
      }
      const torch::jit::Expr rhs = assign.rhs().get();
      if (rhs.kind() == torch::jit::TK_VAR && resolve(torch::jit::Var(rhs).name().name()) != target)
        aliasOf[target] = resolve(torch::jit::Var(rhs).name().name());
      else
        aliasOf.erase(target);
      // A list, tuple or dict display is a Python value (indexing it records nothing), and
      // TorchScript may fold it away: its items are no container to look for.
      const int kind = rhs.kind();
      if (kind == torch::jit::TK_LIST_LITERAL || kind == torch::jit::TK_TUPLE_LITERAL ||
          kind == torch::jit::TK_DICT_LITERAL || kind == torch::jit::TK_LIST_COMP || kind == torch::jit::TK_DICT_COMP)
        assigned.erase(target);
      else if (kind != torch::jit::TK_VAR)
        assigned[target] = {stmt.range().start(), end};
    }
  } catch (const std::exception&) {
    return found;  // a tree view that does not hold what its kind says: nothing more read from it
  }
  if (found.empty()) return found;
  // A statement some node comes from is alive (constants are shared and hoisted: not counted).
  // A node of TorchScript's own builtin functions (`v = 2 * x` runs `def mul(a : int, b : Tensor)`,
  // whose nodes carry that function's range, not the user's) belongs to some statement between
  // the user's nodes before and after it: a statement there whose expression holds an operator
  // (what such functions implement) may be its one, and is kept; so is one whose name such a node's
  // value has.
  const auto mayBeBuiltin = [&](const DeadRead& d) {
    if (d.target.empty() && !d.expressionStatement) return false;  // a read: TorchScript's select or size, never a builtin's
    const py::ExprPtr rhs = cx.source.parsed(d.rhsText);
    if (!rhs) return true;
    std::function<bool(const py::Expr&)> hasOperator = [&](const py::Expr& e) {
      if (e.kind == py::Expr::Kind::BinOp || e.kind == py::Expr::Kind::Compare) return true;
      if (e.kind == py::Expr::Kind::UnaryOp && !(e.items[0] && e.items[0]->kind == py::Expr::Kind::Number)) return true;
      for (const auto& item : e.items)
        if (item && hasOperator(*item)) return true;
      return false;
    };
    return hasOperator(*rhs);
  };
  size_t lastUser = 0;
  bool builtinSince = false;
  const auto keepBetween = [&](size_t before) {
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const DeadRead& d) { return d.end > lastUser && d.begin < before && mayBeBuiltin(d); }),
                found.end());
    builtinSince = false;
  };
  forEachNode(g.block(), [&](jit::Node* node) {
    if (node->kind() == c10::prim::Constant) return;
    const auto loc = cx.source.userSource(node);
    // A node with no range of this function (a builtin's, a call whose range is the callee's
    // `def`, an inlined helper's) made a value of the statement that assigns its name.
    const bool here = loc && loc->builtinDef.empty() && inFunction(*loc, source);
    if (!here) {
      if (loc && !loc->builtinDef.empty()) {
        // The builtin's last node, its value unnamed (`return 2 * x`): which statement it is
        // cannot be told. A named one is found by its name, below.
        bool last = true, named = false;
        for (const jit::Value* out : node->outputs()) {
          named = named || !writtenName(out).empty();
          for (const jit::Use& use : out->uses()) {
            const auto at = cx.source.userSource(use.user);
            last = last && !(at && at->builtinDef == loc->builtinDef);
          }
        }
        builtinSince = builtinSince || (last && !named);
      }
      for (const jit::Value* out : node->outputs()) {
        const std::string name = writtenName(out);
        if (!name.empty() && node->kind() != c10::prim::GetAttr)
          found.erase(std::remove_if(found.begin(), found.end(), [&](const DeadRead& d) { return d.target == name; }),
                      found.end());
      }
      return;
    }
    if (builtinSince) keepBetween(loc->start);
    lastUser = loc->start;
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const DeadRead& d) { return loc->start >= d.begin && loc->start < d.end; }),
                found.end());
  });
  if (builtinSince) keepBetween(std::string::npos);
  return found;
}

}  // namespace tdfx::trace
