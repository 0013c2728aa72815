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
// TorchScript keeps a call for its possible side effects even when its result is unused, and
// removes what the statement does with it. A WaveNet stack's last `h = h + r(z)`, unrolled over a
// ModuleList, keeps `r(z)` and loses the add; FX records `add_5 = add_3 + res_2`. Such a statement
// (PartlyDeadStatement) is run by the evaluator with the call's value, once the code after it is
// reached.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <functional>

#include <torch/csrc/jit/frontend/parser.h>
#include <torch/csrc/jit/frontend/tree_views.h>

#include "source_evaluator.h"
#include "trace_context.h"

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

// Whether some line ends with `[INT]` (a comment after it aside): only then can the source hold a
// dead read, and only then is it parsed (parsing every inlined function made tracing swin_t 12 %
// slower).
bool mayHoldDeadRead(const std::string& source) {
  for (size_t close = source.find(']'); close != std::string::npos; close = source.find(']', close + 1)) {
    size_t after = close + 1;
    while (after < source.size() && (source[after] == ' ' || source[after] == '\t' || source[after] == '\r')) ++after;
    if (after < source.size() && source[after] != '\n' && source[after] != '#') continue;
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

// Whether some line of the body assigns one name an expression that does something (a call, an
// operator, a subscript) and no node of the graph starts on it: only then can the source hold a
// dead statement other than a read, and only then is it parsed.
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
    if (i == begin || i >= end || !(std::isalpha(static_cast<unsigned char>(source[i])) || source[i] == '_')) continue;
    while (i < end && (std::isalnum(static_cast<unsigned char>(source[i])) || source[i] == '_')) ++i;
    while (i < end && source[i] == ' ') ++i;
    if (i >= end || (source[i] != '=' && source[i] != ':') || (i + 1 < end && source[i + 1] == '=')) continue;
    const size_t rhs = assignedExpressionAt(source, i, end);
    if (rhs == std::string::npos || source.find_first_of("([+-*/%@&|^<>~", rhs) >= end) continue;
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

// The value named `name` (as written: "spx" for "spx.1", or numbered where a statement assigning
// `name` made it) defined last before the dead read.
const jit::Value* lastValueNamed(TraceContext& cx, const DeadRead& dead, const std::string& name, const Frame& frame) {
  const jit::Value* found = nullptr;
  size_t definedAt = 0;
  for (const auto& [value, held] : frame.env) {
    (void)held;
    const std::string written = writtenName(value);
    const bool numbered = written.size() > name.size() && written.compare(0, name.size(), name) == 0 &&
                          written.find_first_not_of("0123456789", name.size()) == std::string::npos;
    if (written != name && !numbered) continue;
    size_t at = 0;
    if (value->node()->kind() != c10::prim::Param) {
      const auto start = madeAt(cx, value->node());
      if (!start || *start >= dead.begin) continue;
      if (numbered && std::none_of(dead.assignedAt.begin(), dead.assignedAt.end(), [&](const auto& a) {
            return a.first == name && *start >= a.second.first && *start < a.second.second;
          }))
        continue;
      at = *start + 1;
    } else if (numbered) {
      continue;
    }
    // Values of one statement run more than once (a loop unrolled over a ModuleList) share its
    // location: the last in the graph is the one defined last.
    if (!found || at > definedAt || (at == definedAt && value->node()->isAfter(found->node()))) {
      found = value;
      definedAt = at;
    }
  }
  return found;
}

// The value the statement `NAME = ...` that defines a dead read's container assigned, when
// TorchScript kept no name for it (`v = torch.sort(x).values` is an output of aten::sort, not
// named `v`): the one value made in that statement's text that code after it reads.
const jit::Value* assignedValue(TraceContext& cx, const DeadRead& dead, const Frame& frame) {
  const auto [begin, end] = dead.containerDefinition;
  if (begin == end) return nullptr;
  const auto inStatement = [&, begin = begin, end = end](const jit::Node* node) {
    const auto start = madeAt(cx, node);
    return start && *start >= begin && *start < end;
  };
  const jit::Value* found = nullptr;
  for (const auto& [value, held] : frame.env) {
    (void)held;
    // Constants are shared between statements (`-1` here and in a later `x.shape[-1]`): not it.
    const c10::Symbol kind = value->node()->kind();
    if (kind == c10::prim::Param || kind == c10::prim::Constant || !inStatement(value->node())) continue;
    const auto& uses = value->uses();
    if (std::none_of(uses.begin(), uses.end(), [&](const jit::Use& use) { return !inStatement(use.user); })) continue;
    if (found) return nullptr;  // more than one: not known which
    found = value;
  }
  return found;
}

// What a value TorchScript kept holds for the evaluator: a node (a Proxy) or a constant; nullopt
// for a module, a pending tensor, or a value not known.
std::optional<Argument> heldArgument(TraceContext& cx, const jit::Value* value, Frame& frame) {
  if (Node* field = materializePendingField(cx, value, frame)) return Argument(field);  // FX's Attribute, used here
  const SymValue& held = frame.env.at(value);
  if (held.kind != SymValue::Kind::Value || held.pendingTensor || held.pendingField) return std::nullopt;
  if (held.arg.isNode() && held.input.kind == ValueParts::Kind::NodeValue) return held.arg;
  if (const auto known = knownValue(held)) return argumentFromIValue(*known);
  return std::nullopt;
}

// The value `name` holds where the dead statement stands: the one an earlier dead statement
// assigned it, else the value TorchScript kept of that name (or of the name it was assigned from).
std::optional<Argument> valueBefore(TraceContext& cx, const DeadRead& dead, const std::string& name, Frame& frame) {
  size_t lastAssigned = std::string::npos;
  std::pair<size_t, size_t> definition{0, 0};  // the text of the last statement assigning the name (or its alias)
  DeadRead probe;
  probe.begin = dead.begin;
  const auto alias = dead.aliases.find(name);
  const std::string from = alias == dead.aliases.end() ? name : alias->second;
  if (dead.assignments)
    for (const std::string& n : {name, from})
      if (auto it = dead.assignments->find(n); it != dead.assignments->end())
        for (const auto& range : it->second) {
          probe.assignedAt.push_back({n, range});
          if (n == name && range.first < dead.begin && (lastAssigned == std::string::npos || range.first > lastAssigned))
            lastAssigned = range.first;
          if (n == from && range.first < dead.begin && range.first >= definition.first) definition = range;
        }
  if (auto bound = frame.deadBound.find(name); bound != frame.deadBound.end() && bound->second.first == lastAssigned)
    return bound->second.second;
  const jit::Value* value = lastValueNamed(cx, probe, name, frame);
  if (!value && from != name) value = lastValueNamed(cx, probe, from, frame);
  if (!value) {
    // TorchScript kept no name for it (`v1 = x.topk(8).values` is an output of aten::topk).
    probe.containerDefinition = definition;
    value = assignedValue(cx, probe, frame);
  }
  return value ? heldArgument(cx, value, frame) : std::nullopt;
}

// The value TorchScript kept named `name` (as written, or numbered on load where no other name
// of the function is that) made last so far in this call: at a point inside an unrolled loop, the
// one the previous iteration assigned.
const jit::Value* latestValueNamed(const std::string& name, const std::unordered_set<std::string>& assignedNames,
                                   const Frame& frame) {
  const jit::Value* found = nullptr;
  for (const auto& [value, held] : frame.env) {
    (void)held;
    const std::string written = writtenName(value);
    const bool numbered = written.size() > name.size() && written.compare(0, name.size(), name) == 0 &&
                          written.find_first_not_of("0123456789", name.size()) == std::string::npos &&
                          assignedNames.count(written) == 0;
    if (written != name && !numbered) continue;
    const bool param = value->node()->kind() == c10::prim::Param;
    if (!found || (found->node()->kind() == c10::prim::Param && !param) ||
        (!param && found->node()->kind() != c10::prim::Param && value->node()->isAfter(found->node())))
      found = value;
  }
  return found;
}

// Runs `rhs` with the evaluator; on anything it cannot run, the graph is as before.
std::optional<Argument> runDead(TraceContext& cx, const py::Expr& rhs, SourceScope& scope, Frame& frame,
                                const std::string& text) {
  scope.meta.modulePath = frame.scope.path;
  scope.meta.moduleType = pythonTypeName(frame.scope.module.type());
  scope.meta.sourceText = text;
  const GraphBuilder::Mark mark = cx.builder.mark();
  auto value = evaluateSource(cx.builder, rhs, scope);
  if (!value) cx.builder.rollBackTo(mark);
  return value;
}

// The single-name assignments of `fn` at any depth, parsed once per trace.
const FunctionStatements& statementsOf(TraceContext& cx, const jit::Function& fn) {
  if (auto known = cx.statementsOf.find(&fn); known != cx.statementsOf.end()) return known->second;
  FunctionStatements& statements = cx.statementsOf[&fn];
  statements.source = cx.source.functionSource(fn);
  if (statements.source.empty()) return statements;
  try {
    torch::jit::Parser parser(std::make_shared<torch::jit::Source>(parsableText(statements.source)));
    const torch::jit::Def def(parser.parseFunction(/*is_method=*/true));
    std::function<void(const torch::jit::List<torch::jit::Stmt>&, size_t)> collect = [&](const auto& list, size_t blockEnd) {
      for (size_t i = 0; i < list.size(); ++i) {
        const torch::jit::Stmt st = list[i];
        const size_t stEnd = i + 1 < list.size() ? list[i + 1].range().start() : blockEnd;
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
  } catch (const std::exception&) {
    statements.assignments.clear();  // source TorchScript's parser does not take: nothing read from it
  }
  return statements;
}

void recordPartlyDead(TraceContext& cx, PartlyDeadStatement& statement, Frame& frame) {
  const FunctionStatements& statements = statementsOf(cx, *frame.function);
  SourceScope scope;
  scope.computed = statement.computed;
  // A name's value: the one of that name made last so far, unless the name's last assignment before
  // the statement in the source is newer and makes no node (`h = v`, before the loop's first
  // iteration): then v's, looked up the same way.
  scope.name = [&](const std::string& written) -> std::optional<Argument> {
    std::string name = written;
    for (int hop = 0; hop < 16; ++hop) {
      const jit::Value* value = latestValueNamed(name, statements.names, frame);
      const AssignmentStatement* last = nullptr;
      for (const AssignmentStatement& a : statements.assignments)
        if (a.target == name && a.begin < statement.begin && (!last || a.begin > last->begin)) last = &a;
      std::string from;
      if (last) {
        from = statements.source.substr(last->rhsBegin, last->end - last->rhsBegin);
        while (!from.empty() && std::isspace(static_cast<unsigned char>(from.back()))) from.pop_back();
        const bool identifier = !from.empty() && !std::isdigit(static_cast<unsigned char>(from[0])) &&
                                std::all_of(from.begin(), from.end(), [](char c) {
                                  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                                });
        if (!identifier) from.clear();
      }
      const auto madeAfterAlias = [&] {
        if (value->node()->kind() == c10::prim::Param) return false;
        const auto at = madeAt(cx, value->node());
        return at && *at > last->begin;
      };
      if (value && (from.empty() || madeAfterAlias())) return heldArgument(cx, value, frame);
      if (!value && from.empty() && last) {
        // TorchScript kept no name for it (`v = torch.sort(x).values` is an output of aten::sort).
        DeadRead probe;
        probe.containerDefinition = {last->begin, last->end};
        value = assignedValue(cx, probe, frame);
        return value ? heldArgument(cx, value, frame) : std::nullopt;
      }
      if (from.empty()) return std::nullopt;
      name = from;
    }
    return std::nullopt;
  };
  runDead(cx, *statement.rhs, scope, frame,
          statements.source.substr(statement.begin, statement.end - statement.begin));
}

}  // namespace

const std::vector<DeadRead>& deadReads(TraceContext& cx, const jit::Function& fn, jit::Graph& g) {
  if (auto known = cx.deadReadsOf.find(&fn); known != cx.deadReadsOf.end()) return known->second;
  std::vector<DeadRead>& found = cx.deadReadsOf[&fn];
  const std::string source = cx.source.functionSource(fn);
  if (source.empty() || (!mayHoldDeadRead(source) && !mayHoldDeadStatement(cx, source, g))) return found;
  try {
    torch::jit::Parser parser(std::make_shared<torch::jit::Source>(parsableText(source)));
    const torch::jit::Def def(parser.parseFunction(/*is_method=*/true));
    const auto statements = def.statements();
    // Where each name is assigned, at any depth (a loop's body too): TorchScript's value names are
    // made unique on load (`h` assigned in an unrolled loop is `h0.1`, `h1.1`), so a value whose
    // name is the written one and more digits is that name's only where such a statement made it.
    auto assignmentsHeld = std::make_shared<Assignments>();
    Assignments& assignments = *assignmentsHeld;
    std::function<void(const torch::jit::List<torch::jit::Stmt>&)> collect = [&](const auto& list) {
      for (size_t i = 0; i < list.size(); ++i) {
        const torch::jit::Stmt st = list[i];
        const size_t stEnd = i + 1 < list.size() ? list[i + 1].range().start() : st.range().end();
        if (st.kind() == torch::jit::TK_ASSIGN || st.kind() == torch::jit::TK_AUG_ASSIGN) {
          const torch::jit::Expr lhs = st.kind() == torch::jit::TK_ASSIGN ? torch::jit::Assign(st).lhs()
                                                                          : torch::jit::AugAssign(st).lhs();
          if (lhs.kind() == torch::jit::TK_VAR) assignments[torch::jit::Var(lhs).name().name()].push_back({st.range().start(), stEnd});
        } else if (st.kind() == torch::jit::TK_FOR) {
          collect(torch::jit::For(st).body());
        } else if (st.kind() == torch::jit::TK_WHILE) {
          collect(torch::jit::While(st).body());
        } else if (st.kind() == torch::jit::TK_IF) {
          collect(torch::jit::If(st).trueBranch());
          collect(torch::jit::If(st).falseBranch());
        }
      }
    };
    collect(statements);
    std::map<std::string, std::pair<size_t, size_t>> assigned;  // each name's last assignment so far
    // `v = h` makes no node: TorchScript's value keeps the name `h`, which a read of `v` then looks up.
    std::map<std::string, std::string> aliasOf;
    const auto resolve = [&](const std::string& name) {
      auto it = aliasOf.find(name);
      return it == aliasOf.end() ? name : it->second;
    };
    for (size_t i = 0; i < statements.size(); ++i) {
      const torch::jit::Stmt stmt = statements[i];
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
      if (assign.lhs_list().size() != 1 || assign.lhs().kind() != torch::jit::TK_VAR || !assign.rhs().present())
        continue;
      // The statement's text runs to the next statement (TorchScript's ranges of a subscript are
      // its bracket's, not the whole expression's).
      const size_t end = i + 1 < statements.size() ? statements[i + 1].range().start() : source.size();
      const auto read = readOfName(assign.rhs().get());
      const std::string target = torch::jit::Var(assign.lhs()).name().name();
      if (read && read->first != target) {
        DeadRead dead;
        dead.begin = stmt.range().start();
        dead.end = end;
        dead.container = read->first;
        dead.index = read->second.second;
        dead.attribute = read->second.first;
        dead.containerAlias = resolve(read->first);
        for (const std::string& name : {dead.container, dead.containerAlias})
          if (auto it = assignments.find(name); it != assignments.end())
            for (const auto& range : it->second) dead.assignedAt.push_back({name, range});
        if (auto it = assigned.find(dead.containerAlias); it != assigned.end()) dead.containerDefinition = it->second;
        found.push_back(dead);
      } else if (!read) {
        // Any other expression that does something: run by the evaluator if it is dead.
        const size_t rhsBegin = assignedExpressionAt(source, stmt.range().start(), end);
        const int kind = assign.rhs().get().kind();
        if (rhsBegin != std::string::npos && kind != torch::jit::TK_VAR && kind != torch::jit::TK_CONST &&
            kind != torch::jit::TK_STRINGLITERAL && kind != torch::jit::TK_LIST_LITERAL &&
            kind != torch::jit::TK_TUPLE_LITERAL && kind != torch::jit::TK_DICT_LITERAL) {
          DeadRead dead;
          dead.begin = stmt.range().start();
          dead.end = end;
          dead.rhsText = source.substr(rhsBegin, end - rhsBegin);
          dead.target = target;
          dead.aliases = aliasOf;
          dead.assignments = assignmentsHeld;
          found.push_back(std::move(dead));
        }
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
    return found;  // source TorchScript's parser does not take: no dead statement is read from it
  }
  if (found.empty()) return found;
  // A statement some node comes from is alive (constants are shared and hoisted: not counted).
  // A node of TorchScript's own builtin functions (`v = 2 * x` runs `def mul(a : int, b : Tensor)`,
  // whose nodes carry that function's range, not the user's) belongs to some statement between
  // the user's nodes before and after it: a statement there whose expression holds an operator
  // (what such functions implement) may be its one, and is kept; so is one whose name such a node's
  // value has.
  const auto mayBeBuiltin = [&](const DeadRead& d) {
    if (d.target.empty()) return false;  // a read: TorchScript's select or size, never a builtin's
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

void recordDeadReadsBefore(TraceContext& cx, jit::Node* node, Frame& frame) {
  if (frame.deadReads.empty() && frame.partlyDead.empty()) return;
  size_t before = std::string::npos;  // the end of the block: every one left
  if (node) {
    if (node->kind() == c10::prim::Constant) return;
    auto loc = cx.source.userSource(node);
    // A read of `self.NAME` TorchScript made without a range (a parameter's get_attr) stands where
    // the code first uses it: FX makes the node there.
    if (!loc && node->kind() == c10::prim::GetAttr)
      for (const jit::Use& use : node->output()->uses()) {
        const auto at = cx.source.userSource(use.user);
        if (at && at->builtinDef.empty() && (!loc || at->start < loc->start)) loc = at;
      }
    if (!loc || !loc->builtinDef.empty()) return;
    before = loc->start;
  }
  // A statement whose kept call is converted is recorded once the code goes on outside it.
  for (auto it = frame.partlyDead.begin(); it != frame.partlyDead.end();) {
    if (before != std::string::npos && before >= it->begin && before < it->end) {
      ++it;
      continue;
    }
    recordPartlyDead(cx, *it, frame);
    it = frame.partlyDead.erase(it);
  }
  while (!frame.deadReads.empty() && frame.deadReads.front().begin < before) {
    const DeadRead dead = frame.deadReads.front();
    frame.deadReads.erase(frame.deadReads.begin());
    if (!dead.target.empty()) {
      const py::ExprPtr rhs = cx.source.parsed(dead.rhsText);
      std::optional<Argument> value;
      if (rhs) {
        SourceScope scope;
        scope.name = [&](const std::string& name) { return valueBefore(cx, dead, name, frame); };
        value = runDead(cx, *rhs, scope, frame, dead.rhsText.substr(0, rhs->end));
      }
      frame.deadBound[dead.target] = {dead.begin, value};
      continue;
    }
    // The container: the value of that name defined last before the statement; else of the name
    // it was assigned from (`v = h`); else the value its defining statement made.
    const jit::Value* containerValue = lastValueNamed(cx, dead, dead.container, frame);
    if (!containerValue && dead.containerAlias != dead.container)
      containerValue = lastValueNamed(cx, dead, dead.containerAlias, frame);
    if (!containerValue) containerValue = assignedValue(cx, dead, frame);
    if (!containerValue) continue;
    // A field not yet in the graph (`v = x.sort(-1).values`) is a Proxy FX already holds: made now.
    materializePendingField(cx, containerValue, frame);
    const SymValue* container = &frame.env.at(containerValue);
    // Only a Proxy is recorded: a Python list or tuple is indexed while FX traces.
    if (container->kind != SymValue::Kind::Value || !container->arg.isNode() ||
        container->input.kind != ValueParts::Kind::NodeValue)
      continue;
    Node* object = container->arg.node();
    if (!dead.attribute.empty()) {
      object = cx.builder.getItem(object, 0, dead.attribute);  // `x.shape`: the getattr first
      object->meta().modulePath = frame.scope.path;
      object->meta().moduleType = pythonTypeName(frame.scope.module.type());
    }
    Node* item = cx.builder.getItem(object, dead.index);
    item->meta().modulePath = frame.scope.path;
    item->meta().moduleType = pythonTypeName(frame.scope.module.type());
  }
}

}  // namespace tdfx::trace

namespace tdfx::trace {

void notePartlyDeadStatements(TraceContext& cx, jit::graph_node_list_iterator first, jit::graph_node_list_iterator last,
                              Frame& frame) {
  if (!frame.function) return;
  for (auto it = first; it != last; ++it) {
    jit::Node* node = *it;
    if (node->outputs().size() != 1 || node->output()->hasUses() || node->kind() == c10::prim::Constant) continue;
    const auto loc = cx.source.userSource(node);
    if (!loc || !loc->builtinDef.empty()) continue;
    const FunctionStatements& statements = statementsOf(cx, *frame.function);
    // The innermost assignment around the node (assignments are listed outer first).
    const AssignmentStatement* around = nullptr;
    for (const AssignmentStatement& a : statements.assignments)
      if (loc->start >= a.rhsBegin && loc->start < a.end) around = &a;
    if (!around) continue;
    const auto found = frame.env.find(node->output());
    if (found == frame.env.end() || !found->second.arg.isNode()) continue;
    PartlyDeadStatement* statement = nullptr;
    for (auto& p : frame.partlyDead)
      if (p.begin == around->begin) statement = &p;
    if (!statement) {
      const std::string text = statements.source.substr(around->rhsBegin, around->end - around->rhsBegin);
      const py::ExprPtr rhs = cx.source.parsed(text);
      if (!rhs) continue;
      statement = &frame.partlyDead.emplace_back();
      statement->begin = around->begin;
      statement->end = around->end;
      statement->rhsBegin = around->rhsBegin;
      statement->target = around->target;
      statement->rhs = rhs;
    }
    // The call the node is: a part of the expression, not all of it (then nothing was removed).
    const py::Expr* call = callStartingAt(*statement->rhs, loc->start - around->rhsBegin);
    if (!call || call == statement->rhs.get()) {
      if (statement->computed.empty()) frame.partlyDead.pop_back();
      continue;
    }
    statement->computed[call] = found->second.arg;
  }
}

}  // namespace tdfx::trace
