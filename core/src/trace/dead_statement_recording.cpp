// The part of ModuleTracer that records the statements TorchScript compiled away (found by
// dead_statements.cpp's deadReads) where they stand: before the first node that comes from source
// after them. A read is made on its container (the value TorchScript kept of that name, or a tuple
// it kept as a call's outputs); any other statement is run by the source evaluator over the values
// its names hold there.
#include <algorithm>
#include <cctype>

#include "dead_statements.h"

namespace tdfx::trace {

namespace jit = torch::jit;

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

namespace {

// The value named `name` (as written: "spx" for "spx.1", or numbered where a statement assigning
// `name` made it) defined last before the dead read.
const jit::Value* lastValueNamed(TraceContext& cx, const DeadRead& dead, const std::string& name, const Frame& frame) {
  const jit::Value* found = nullptr;
  size_t definedAt = 0;
  for (const auto& [value, held] : frame.env) {
    (void)held;
    const std::string written = writtenName(value);
    const bool numbered = isNumberedFrom(written, name);
    if (written != name && !numbered) continue;
    size_t at = 0;
    const auto assignedThere = [&](size_t start) {
      return std::any_of(dead.assignedAt.begin(), dead.assignedAt.end(), [&](const auto& a) {
        return a.first == name && start >= a.second.first && start < a.second.second;
      });
    };
    if (value->node()->kind() != c10::prim::Param) {
      const auto start = madeAt(cx, value->node());
      if (!start) {
        // Made by TorchScript's own builtin function (`v1 = 2 * x` runs mul(int, Tensor), whose
        // node carries the builtin's range): it stands where the last statement assigning the name
        // before the dead read does (fuzz seed 161459: the dead reads of v1 were dropped).
        if (numbered || value->node()->kind() == c10::prim::GetAttr) continue;
        size_t assigned = 0;
        for (const auto& [n, range] : dead.assignedAt)
          if (n == name && range.first < dead.begin) assigned = std::max(assigned, range.first + 1);
        if (assigned == 0) continue;
        at = assigned;
      } else {
        if (*start >= dead.begin) continue;
        if (numbered && !assignedThere(*start)) continue;
        // `self.x` read is named after the attribute, not a Python name: it is `x` only where a
        // statement assigns it (`x = self.x`); otherwise the name is the argument's (seed 155692).
        if (value->node()->kind() == c10::prim::GetAttr && value->node()->s(c10::attr::name) == written &&
            !assignedThere(*start))
          continue;
        at = *start + 1;
      }
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

// `w = top[0]`, `i = top.indices` of `top = x.topk(2)`: TorchScript keeps the tuple as its call's
// outputs and has no node for either read. FX's getitem is made here; its Attribute where `i` is
// first used. Operations reading the name use that node (PendingField::boundNames). False when
// the container's statement made no such call.
bool recordStoredItemRead(TraceContext& cx, const DeadRead& dead, Frame& frame) {
  const auto [begin, end] = dead.containerDefinition;
  if (begin == end || !dead.attribute.empty()) return false;
  const jit::Node* call = nullptr;
  Node* tuple = nullptr;
  for (const auto& [value, held] : frame.env) {
    const jit::Node* node = value->node();
    // The tuple itself kept in the variable (`top = x.topk(2)`), not one field read right after the
    // call (`v = x.sort().values`: its fields are read by name or not named at all).
    const auto* field = held.pendingField.get();
    if (!field || field->containerField || node->outputs().size() < 2 || !(field->perRead || field->field.empty()))
      continue;
    const auto start = madeAt(cx, node);
    if (!start || *start < begin || *start >= end) continue;
    // A statement run more than once (a loop TorchScript unrolled): the latest call is this run's.
    if (!call || node->isAfter(call)) {
      call = node;
      tuple = held.pendingField->container;
    }
  }
  if (!call || !tuple) return false;
  const int64_t n = static_cast<int64_t>(call->outputs().size());
  int64_t index = dead.index < 0 ? dead.index + n : dead.index;
  if (!dead.field.empty()) {
    const c10::FunctionSchema* schema = call->maybeSchema();
    index = -1;
    for (int64_t k = 0; schema && k < n && k < static_cast<int64_t>(schema->returns().size()); ++k)
      if (schema->returns()[static_cast<size_t>(k)].name() == dead.field) index = k;
  }
  if (index < 0 || index >= n) return !dead.field.empty();  // not a field of it: nothing FX makes here
  const jit::Value* item = call->outputs()[static_cast<size_t>(index)];
  auto read = std::make_shared<PendingField>();
  read->container = tuple;
  read->index = index;
  read->field = dead.field;
  read->eager = EagerValueRef{cx.path, item};
  if (dead.field.empty()) cx.builder.materializeField(read);
  auto held = frame.env.find(item);
  if (!dead.boundName.empty() && held != frame.env.end() && held->second.pendingField && !held->second.pendingField->node)
    held->second.pendingField->boundNames[dead.boundName] = read;
  return true;
}

// Where a call TorchScript compiled without a source range was written (a staticmethod's
// prim::CallFunction carries `:0:0`): the first `NAME(` after the last node of the function's own
// level that has one. Its callee's nodes carry offsets in the callee's text, so without this the
// statements before the call would be recorded after the callee's nodes.
std::optional<size_t> callSiteOf(TraceContext& cx, const jit::Node* node, const Frame& frame) {
  if (!frame.function) return std::nullopt;
  std::string name;
  if (node->kind() == c10::prim::CallMethod) {
    name = node->s(c10::attr::name);
  } else if (node->kind() == c10::prim::CallFunction) {
    const auto fn = node->input(0)->type()->cast<c10::FunctionType>();
    if (fn) name = fn->function()->name();
  }
  if (name.empty()) return std::nullopt;
  const std::string& text = statementsOf(cx, *frame.function).source;
  const auto isNameChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(name, frame.lastMadeAt); at != std::string::npos; at = text.find(name, at + 1)) {
    const size_t after = text.find_first_not_of(" \t", at + name.size());
    if ((at == 0 || !isNameChar(text[at - 1])) && after != std::string::npos && text[after] == '(') return at;
  }
  return std::nullopt;
}

// Where the statement whose value a node of TorchScript's builtin functions made stands: the first
// assignment of the value's name (`v3` of `v3 = 2 * x`) at or after the last code converted.
// nullopt for an unnamed value (a part of a larger expression) or a name not assigned there.
std::optional<size_t> assignmentOfBuiltinValue(TraceContext& cx, const jit::Node* node, const Frame& frame) {
  if (!frame.function || node->outputs().size() != 1) return std::nullopt;
  const std::string name = writtenName(node->output());
  if (name.empty()) return std::nullopt;
  const FunctionStatements& statements = statementsOf(cx, *frame.function);
  const auto it = statements.byName->find(name);
  if (it == statements.byName->end()) return std::nullopt;
  std::optional<size_t> first;
  for (const auto& [begin, end] : it->second)
    if (end > frame.lastMadeAt && (!first || begin < *first)) first = begin;
  return first;
}

}  // namespace

void recordDeadReadsBefore(TraceContext& cx, jit::Node* node, Frame& frame) {
  if (frame.deadReads.empty() && frame.partlyDead.empty()) return;
  size_t before = std::string::npos;  // the end of the block: every one left
  if (node) {
    if (node->kind() == c10::prim::Constant) return;
    auto loc = cx.source.userSource(node);
    // A range of no text (`:0:0`, as TorchScript gives a staticmethod's call) says nothing of where.
    if (loc && loc->file.empty() && loc->window.empty()) loc.reset();
    // A read of `self.NAME` TorchScript made without a range (a parameter's get_attr) stands where
    // the code first uses it: FX makes the node there.
    if (!loc && node->kind() == c10::prim::GetAttr)
      for (const jit::Use& use : node->output()->uses()) {
        const auto at = cx.source.userSource(use.user);
        if (at && at->builtinDef.empty() && (!loc || at->start < loc->start)) loc = at;
      }
    if (loc && !loc->builtinDef.empty()) {
      // A node of TorchScript's own builtin functions (`2 * x` runs `def mul(a : int, b : Tensor)`)
      // carries that function's range, not the user's. Where its value is a name's (`v3 = 2 * x`),
      // it stands at the first statement assigning that name after the code converted last, and
      // the dead statements before it are recorded first (fuzz seed 153233).
      if (const auto at = assignmentOfBuiltinValue(cx, node, frame)) {
        before = *at;
        frame.lastMadeAt = std::max(frame.lastMadeAt, before);
      } else {
        // Live, it is code after any statement whose kept call was converted: everything else
        // such a statement did is dead, and what fed its call was converted before the call.
        for (PartlyDeadStatement& statement : frame.partlyDead) recordPartlyDead(cx, statement, frame);
        frame.partlyDead.clear();
        return;
      }
    } else if (loc) {
      before = loc->start;
      frame.lastMadeAt = std::max(frame.lastMadeAt, before);
    } else if (auto site = callSiteOf(cx, node, frame)) {
      before = *site;
    } else {
      return;
    }
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
    if (!dead.target.empty() || dead.expressionStatement) {
      const py::ExprPtr rhs = cx.source.parsed(dead.rhsText);
      std::optional<Argument> value;
      if (rhs) {
        SourceScope scope;
        scope.name = [&](const std::string& name) { return valueBefore(cx, dead, name, frame); };
        value = runDead(cx, *rhs, scope, frame, dead.rhsText.substr(0, rhs->end));
      }
      if (!dead.target.empty()) frame.deadBound[dead.target] = {dead.begin, value};
      continue;
    }
    // The container: the value of that name defined last before the statement; else of the name
    // it was assigned from (`v = h`); else the value its defining statement made.
    const jit::Value* containerValue = lastValueNamed(cx, dead, dead.container, frame);
    if (!containerValue && dead.containerAlias != dead.container)
      containerValue = lastValueNamed(cx, dead, dead.containerAlias, frame);
    if (!containerValue && recordStoredItemRead(cx, dead, frame)) continue;
    if (!dead.field.empty()) continue;  // FX's Attribute of a Proxy: made where it is used
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
