// The part of ModuleTracer for values FX holds outside the graph until a recorded operation uses
// them: buffers and plain tensors (a get_attr per use; on the left of an operator, Tensor's
// method), and lazy attribute proxies (a named tuple's field, a tensor property), also while a
// Python list holds them.
#include <algorithm>

#include "module_tracer.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx::trace {

namespace jit = torch::jit;

Node* ModuleTracer::tensorAttribute(const std::string& attribute, const at::Tensor& t, Frame& frame, jit::Node* source,
                                    bool shared) {
  bool made = false;
  Node* fx = builder_.tensorAttribute(attribute, t, shared, made);
  if (made) describeSource(source, frame, fx->meta());
  // A parameter's node made by a `_tensor_constantN` name probe (GraphBuilder::tensorAttribute)
  // stands for the value of the parameter's first read, `source`.
  if (shared && !fx->meta().eagerValue && source->kind() == c10::prim::GetAttr) {
    describeSource(source, frame, fx->meta());
    fx->meta().eagerValue = EagerValueRef{path_, source->output()};
  }
  return fx;
}

void ModuleTracer::restorePendingTensors(Frame& frame) {
  for (auto& m : frame.materialized) {
    const bool alive = builder_.holds(m.node, m.index);
    auto it = frame.env.find(m.value);
    if (it == frame.env.end()) continue;
    // Still unused (made ahead of the operation that reads it): the next use takes this node.
    if (alive && m.node->users().empty() && it->second.arg.isNode() && it->second.arg.node() == m.node) continue;
    if (!alive || (it->second.arg.isNode() && it->second.arg.node() == m.node)) it->second = std::move(m.pending);
  }
  frame.materialized.clear();
}

std::string ModuleTracer::concreteLeftMethod(const std::string& operatorTarget) {
  // What torch.Tensor's binary slots hand to __torch_function__ (generated from torch.fx 1.13:
  // `c / x` records `c.div(x)`, `c // x` `c.__floordiv__(x)`, `c % x` `c.remainder(x)`).
  const auto name = fx_target::operatorName(operatorTarget);
  const auto* magic = name ? fx::findMagicMethod(*name) : nullptr;
  return magic ? magic->concreteLeftMethod : "";
}

void ModuleTracer::applyConcreteLeftOperand(CallForm& form) const {
  if (form.op != OpKind::CallFunction || form.args.size() != 2 || !form.kwargs.empty()) return;
  const Argument& left = form.args[0];
  const Argument& right = form.args[1];
  if (!left.isNode() || !builder_.isConcreteTensor(left.node())) return;
  if (!right.isNode() || builder_.isConcreteTensor(right.node())) return;
  if (fx_target::names(form.target, fx_target::kGetItem)) {
    // `self.table[idx]`: Tensor.__getitem__ dispatches with the index as a tuple.
    form.op = OpKind::CallMethod;
    form.target = concreteLeftMethod(form.target);
    form.args = {left, Argument(ArgumentTuple{{right}})};
    return;
  }
  const std::string method = concreteLeftMethod(form.target);
  if (method.empty()) return;
  form.op = OpKind::CallMethod;
  form.target = method;
}


bool ModuleTracer::deferAttributeRead(const CallForm& form, const jit::Value* output, const NodeMeta& meta, Frame& frame) {
  // `w.shape` on a Proxy is FX's Attribute proxy, whose getattr node is made at its first use:
  // `F.layer_norm(x, self.w.shape, self.w, self.b)` records w, b, then getattr_1 = w.shape.
  if (form.op != OpKind::CallFunction || !fx_target::names(form.target, fx_target::kGetAttr) || form.args.size() != 2 ||
      !form.kwargs.empty() || !form.args[0].isNode() || builder_.isConcreteTensor(form.args[0].node()))
    return false;
  const auto* field = std::get_if<std::string>(&form.args[1].value);
  if (!field) return false;
  SymValue read = SymValue::ofPendingField(form.args[0].node(), 0, *field);
  read.pendingField->meta = std::make_shared<const NodeMeta>(meta);
  frame.env[output] = std::move(read);
  return true;
}

void ModuleTracer::materializeInputs(jit::Node* node, Frame& frame) {
  if (node->kind() == c10::prim::Constant || node->kind() == c10::prim::GetAttr || foldable(node, frame)) return;
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
    if (it != frame.env.end() && !containerOperation && it->second.arg.items() &&
        (it->second.input.kind == ValueParts::Kind::List || it->second.input.kind == ValueParts::Kind::Tuple)) {
      if (materializeParts(it->second.input, it->second.arg)) shareListChange(it->second);
      continue;
    }
    if (it != frame.env.end() && it->second.pendingField && it->second.pendingField->perRead &&
        !it->second.pendingField->node) {
      const py::ExprPtr written = source_.writtenExpression(node).second;
      if (written && py::operandReadsField(*written, it->second.pendingField->field)) {
        // This operation reads the field by name itself: a getattr node of its own; the value
        // stays pending for the next read (restorePendingTensors).
        auto read = std::make_shared<SymValue::PendingField>(*it->second.pendingField);
        Node* made = builder_.materializeField(read);
        if (!made->meta().eagerValue) made->meta().eagerValue = EagerValueRef{path_, in};
        frame.materialized.push_back({in, it->second, made, made->index()});
        it->second = SymValue::ofNode(made);
        continue;
      }
    }
    if (it != frame.env.end() && it->second.pendingField) {
      const std::shared_ptr<SymValue::PendingField> field = it->second.pendingField;
      builder_.materializeField(field);
      it->second = SymValue::ofNode(field->node);
      if (!field->node->meta().eagerValue) field->node->meta().eagerValue = EagerValueRef{path_, in};
      continue;
    }
    if (it == frame.env.end() || !it->second.pendingTensor) continue;
    const at::Tensor t = it->second.constant->toTensor();
    Node* attribute = tensorAttribute(it->second.tensorTarget, t, frame, node, false);
    SymValue pending = it->second;
    pending.tensorTarget = attribute->target();  // a computed constant keeps its `_tensor_constantN`
    frame.materialized.push_back({in, std::move(pending), attribute, attribute->index()});
    it->second = SymValue::ofNode(attribute);
    if (!attribute->meta().eagerValue) attribute->meta().eagerValue = EagerValueRef{path_, in};
  }
}

bool ModuleTracer::materializeParts(ValueParts& parts, Argument& arg) {
  std::vector<Argument>* items = nullptr;
  if (auto* list = std::get_if<ArgumentList>(&arg.value)) items = &list->items;
  if (auto* tuple = std::get_if<ArgumentTuple>(&arg.value)) items = &tuple->items;
  if (!items || items->size() != parts.items.size()) return false;
  bool made = false;
  for (size_t i = 0; i < parts.items.size(); ++i) {
    ValueParts& part = parts.items[i];
    if (part.kind == ValueParts::Kind::PendingField && part.field) {
      Node* n = builder_.materializeField(part.field);
      part = ValueParts::ofNode(n);
      (*items)[i] = Argument(n);
      made = true;
    } else if (part.kind == ValueParts::Kind::List || part.kind == ValueParts::Kind::Tuple) {
      made = materializeParts(part, (*items)[i]) || made;
    }
  }
  return made;
}


}  // namespace tdfx::trace
