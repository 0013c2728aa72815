// The part of ModuleTracer for values FX holds outside the graph until a recorded operation uses
// them: buffers and plain tensors (a get_attr per use; on the left of an operator, Tensor's
// method), and lazy attribute proxies (a named tuple's field, a tensor property), also while a
// Python list holds them.
#include <algorithm>

#include "trace_context.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx::trace {

namespace jit = torch::jit;

Node* tensorAttribute(TraceContext& cx, const std::string& attribute, const at::Tensor& t, Frame& frame, jit::Node* source,
                                    bool shared) {
  bool made = false;
  Node* fx = cx.builder.tensorAttribute(attribute, t, shared, made);
  if (made) describeSource(cx, source, frame, fx->meta());
  // A parameter's node made by a `_tensor_constantN` name probe (GraphBuilder::tensorAttribute)
  // stands for the value of the parameter's first read, `source`.
  if (shared && !fx->meta().eagerValue && source->kind() == c10::prim::GetAttr) {
    describeSource(cx, source, frame, fx->meta());
    fx->meta().eagerValue = EagerValueRef{cx.path, source->output()};
  }
  return fx;
}

void restorePendingTensors(TraceContext& cx, Frame& frame) {
  for (auto& m : frame.materialized) {
    const bool alive = cx.builder.holds(m.node, m.index);
    auto it = frame.env.find(m.value);
    if (it == frame.env.end()) continue;
    // Still unused (made ahead of the operation that reads it): the next use takes this node.
    if (alive && m.node->users().empty() && it->second.arg.isNode() && it->second.arg.node() == m.node) continue;
    if (!alive || (it->second.arg.isNode() && it->second.arg.node() == m.node)) it->second = std::move(m.pending);
  }
  frame.materialized.clear();
}

std::string concreteLeftMethod(const std::string& operatorTarget) {
  // What torch.Tensor's binary slots hand to __torch_function__ (generated from torch.fx 1.13:
  // `c / x` records `c.div(x)`, `c // x` `c.__floordiv__(x)`, `c % x` `c.remainder(x)`).
  const auto name = fx_target::operatorName(operatorTarget);
  const auto* magic = name ? fx::findMagicMethod(*name) : nullptr;
  return magic ? magic->concreteLeftMethod : "";
}

void applyConcreteLeftOperand(TraceContext& cx, CallForm& form) {
  if (form.op != OpKind::CallFunction || form.args.size() != 2 || !form.kwargs.empty()) return;
  const Argument& left = form.args[0];
  const Argument& right = form.args[1];
  if (!left.isNode() || !cx.builder.isConcreteTensor(left.node())) return;
  const auto isProxy = [&](const Argument& a) { return a.isNode() && !cx.builder.isConcreteTensor(a.node()); };
  if (fx_target::names(form.target, fx_target::kGetItem)) {
    // `self.table[idx]`: Tensor.__getitem__ dispatches with the index as a tuple; `self.t[a, b]`
    // passes its tuple as it is.
    const auto* tuple = std::get_if<ArgumentTuple>(&right.value);
    if (!isProxy(right) && !(tuple && std::any_of(tuple->items.begin(), tuple->items.end(), isProxy))) return;
    form.op = OpKind::CallMethod;
    form.target = concreteLeftMethod(form.target);
    form.args = {left, tuple ? right : Argument(ArgumentTuple{{right}})};
    return;
  }
  if (!isProxy(right)) return;
  const std::string method = concreteLeftMethod(form.target);
  if (method.empty()) return;
  form.op = OpKind::CallMethod;
  form.target = method;
}


bool deferAttributeRead(TraceContext& cx, const CallForm& form, const jit::Value* output, const NodeMeta& meta, Frame& frame) {
  // `w.shape` on a Proxy is FX's Attribute proxy, whose getattr node is made at its first use:
  // `F.layer_norm(x, self.w.shape, self.w, self.b)` records w, b, then getattr_1 = w.shape.
  if (form.op != OpKind::CallFunction || !fx_target::names(form.target, fx_target::kGetAttr) || form.args.size() != 2 ||
      !form.kwargs.empty() || !form.args[0].isNode() || cx.builder.isConcreteTensor(form.args[0].node()))
    return false;
  const auto* field = std::get_if<std::string>(&form.args[1].value);
  if (!field) return false;
  SymValue read = SymValue::ofPendingField(form.args[0].node(), 0, *field);
  read.pendingField->meta = std::make_shared<const NodeMeta>(meta);
  frame.env[output] = std::move(read);
  return true;
}

Node* materializePendingField(TraceContext& cx, const jit::Value* value, Frame& frame) {
  auto it = frame.env.find(value);
  if (it == frame.env.end() || !it->second.pendingField) return nullptr;
  const std::shared_ptr<SymValue::PendingField> field = it->second.pendingField;
  Node* made = cx.builder.materializeField(field);
  if (!made->meta().eagerValue) made->meta().eagerValue = EagerValueRef{cx.path, value};
  it->second = SymValue::ofNode(made);
  return made;
}

namespace {
// Whether `node` builds a list of values Python knows (tensors FX holds in Python among them) that
// only operators Python computes with read: `torch.meshgrid([torch.arange(3), torch.arange(4)])`
// is computed while FX traces, its tensors never in the graph.
bool buildsListForFolds(jit::Node* node, const Frame& frame) {
  if (node->kind() != c10::prim::ListConstruct || node->output()->uses().empty()) return false;
  const auto known = [&](const jit::Value* v) {
    auto it = frame.env.find(v);
    return it != frame.env.end() && knownValue(it->second).has_value();
  };
  for (const jit::Value* in : node->inputs())
    if (!known(in)) return false;
  for (const jit::Use& use : node->output()->uses()) {
    const jit::Node* user = use.user;
    if (user->kind().is_prim() || user->hasSideEffects() || user->isNondeterministic() || !user->maybeOperator())
      return false;
    for (const jit::Value* in : user->inputs())
      if (in != node->output() && !known(in)) return false;
  }
  return true;
}
}  // namespace

namespace {
// The node an operation uses for an item read and assigned to names (PendingField::boundNames):
// the read of the name it applies itself to; else, written as a read of the item itself
// (`top[0]`, `top.indices`), a node of its own; else the one name's, when there is one. Null:
// none of these, the value is made as any pending field.
Node* boundNameRead(TraceContext& cx, jit::Node* node, const SymValue& held) {
  const auto& field = *held.pendingField;
  const py::ExprPtr written = cx.source.writtenExpression(node).second;
  if (written)
    for (const auto& [name, read] : field.boundNames)
      if (py::operandIsName(*written, name)) return cx.builder.materializeField(read);
  const bool byName = written && !field.field.empty() && py::operandReadsField(*written, field.field);
  const bool byIndex = written && !byName && py::operandReadsItem(*written, field.index);
  if (byName || byIndex) {
    auto read = std::make_shared<PendingField>(field);
    read->boundNames.clear();
    if (byIndex) read->field.clear();
    return cx.builder.materializeField(read);
  }
  if (field.boundNames.size() == 1) return cx.builder.materializeField(field.boundNames.begin()->second);
  return nullptr;
}
}  // namespace

void materializeInputs(TraceContext& cx, jit::Node* node, Frame& frame) {
  if (node->kind() == c10::prim::Constant || node->kind() == c10::prim::GetAttr || foldable(node, frame) ||
      buildsListForFolds(node, frame))
    return;
  // A property read of a field not yet in the graph (`v.dtype` of `v = x.max(1).values`) is a
  // field of that field: both are made where the property is first used (convertOperator).
  if (node->kind().is_prim() && node->inputs().size() == 1 && isTensorProperty(node->kind().toUnqualString())) {
    auto it = frame.env.find(node->input(0));
    if (it != frame.env.end() && it->second.pendingField && !it->second.pendingField->node) return;
  }
  const bool containerOperation = isPythonContainerOperation(node, frame);
  for (const jit::Value* in : node->inputs()) {
    auto it = frame.env.find(in);
    if (it != frame.env.end() && containerOperation && it->second.pendingField) continue;
    if (it != frame.env.end() && it->second.pendingField && !it->second.pendingField->node &&
        !it->second.pendingField->boundNames.empty()) {
      if (Node* made = boundNameRead(cx, node, it->second)) {
        // The value stays pending for reads through another name (restorePendingTensors).
        if (!made->meta().eagerValue) made->meta().eagerValue = EagerValueRef{cx.path, in};
        frame.materialized.push_back({in, it->second, made, made->index()});
        it->second = SymValue::ofNode(made);
        continue;
      }
    }
    if (it != frame.env.end() && !containerOperation && it->second.arg.items() &&
        (it->second.input.kind == ValueParts::Kind::List || it->second.input.kind == ValueParts::Kind::Tuple)) {
      if (materializeParts(cx, it->second.input, it->second.arg)) shareListChange(cx, it->second);
      continue;
    }
    if (it != frame.env.end() && it->second.pendingField && it->second.pendingField->perRead &&
        !it->second.pendingField->node) {
      const py::ExprPtr written = cx.source.writtenExpression(node).second;
      const bool byName = written && py::operandReadsField(*written, it->second.pendingField->field);
      const bool byIndex = !byName && written && py::operandReadsItem(*written, it->second.pendingField->index);
      if (byName || byIndex) {
        // This operation reads the field itself, by name (`top.values`: a getattr node of its
        // own) or by index (`top[0]`: a getitem); the value stays pending for the next read
        // (restorePendingTensors).
        auto read = std::make_shared<SymValue::PendingField>(*it->second.pendingField);
        if (byIndex) read->field.clear();
        Node* made = cx.builder.materializeField(read);
        if (!made->meta().eagerValue) made->meta().eagerValue = EagerValueRef{cx.path, in};
        frame.materialized.push_back({in, it->second, made, made->index()});
        it->second = SymValue::ofNode(made);
        continue;
      }
    }
    if (it != frame.env.end() && it->second.pendingField) {
      materializePendingField(cx, in, frame);
      continue;
    }
    if (it == frame.env.end() || !it->second.pendingTensor) continue;
    const at::Tensor t = it->second.constant->toTensor();
    Node* attribute = tensorAttribute(cx, it->second.tensorTarget, t, frame, node, false);
    SymValue pending = it->second;
    pending.tensorTarget = attribute->target();  // a computed constant keeps its `_tensor_constantN`
    frame.materialized.push_back({in, std::move(pending), attribute, attribute->index()});
    it->second = SymValue::ofNode(attribute);
    if (!attribute->meta().eagerValue) attribute->meta().eagerValue = EagerValueRef{cx.path, in};
  }
}

bool materializeParts(TraceContext& cx, ValueParts& parts, Argument& arg) {
  std::vector<Argument>* items = nullptr;
  if (auto* list = std::get_if<ArgumentList>(&arg.value)) items = &list->items;
  if (auto* tuple = std::get_if<ArgumentTuple>(&arg.value)) items = &tuple->items;
  if (!items || items->size() != parts.items.size()) return false;
  bool made = false;
  for (size_t i = 0; i < parts.items.size(); ++i) {
    ValueParts& part = parts.items[i];
    if (part.kind == ValueParts::Kind::PendingField && part.field) {
      Node* n = cx.builder.materializeField(part.field);
      part = ValueParts::ofNode(n);
      (*items)[i] = Argument(n);
      made = true;
    } else if (part.kind == ValueParts::Kind::List || part.kind == ValueParts::Kind::Tuple) {
      made = materializeParts(cx, part, (*items)[i]) || made;
    }
  }
  return made;
}


}  // namespace tdfx::trace
