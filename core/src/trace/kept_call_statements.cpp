// The part of ModuleTracer for statements TorchScript compiled away around a call it kept.
// TorchScript keeps a call for its possible side effects even when its result is unused, and
// removes what the statement does with it. A WaveNet stack's last `h = h + r(z)`, unrolled over a
// ModuleList, keeps `r(z)` and loses the add; FX records `add_5 = add_3 + res_2`. Such a statement
// (PartlyDeadStatement) is noted when its kept call is converted and run by the source evaluator
// with the call's value once the code after it is reached (recordDeadReadsBefore).
#include <algorithm>
#include <cctype>

#include "dead_statements.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

// The value TorchScript kept named `name` (as written, or numbered on load where no other name
// of the function is that) made last so far in this call: at a point inside an unrolled loop, the
// one the previous iteration assigned.
const jit::Value* latestValueNamed(const std::string& name, const std::unordered_set<std::string>& assignedNames,
                                   const Frame& frame) {
  const jit::Value* found = nullptr;
  for (const auto& [value, held] : frame.env) {
    (void)held;
    const std::string written = writtenName(value);
    const bool numbered = isNumberedFrom(written, name) && assignedNames.count(written) == 0;
    if (written != name && !numbered) continue;
    // A `self.x` read is named after its attribute, not a Python name: it is `x` only where the
    // function assigns that name (`x = self.x`); else `x` is the argument (fuzz seed 155692).
    if (value->node()->kind() == c10::prim::GetAttr && value->node()->s(c10::attr::name) == written &&
        assignedNames.count(name) == 0)
      continue;
    const bool param = value->node()->kind() == c10::prim::Param;
    if (!found || (found->node()->kind() == c10::prim::Param && !param) ||
        (!param && found->node()->kind() != c10::prim::Param && value->node()->isAfter(found->node())))
      found = value;
  }
  return found;
}

}  // namespace

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
