// The part of ModuleTracer for calls: a submodule's method (inlined, or one call_module node for a
// torch.nn leaf, or kept whole when its control flow depends on tensor data, with the rollback
// that takes), and a function (a user's, inlined; a torch library function, one call_function).
#include <algorithm>
#include <functional>
#include <tuple>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include "call_form.h"
#include "tdfx/ir/fx_tables.h"
#include "tdfx/util/dtype.h"
#include "trace_context.h"
#include "tdfx/error.h"
#include "tdfx/ir/fx_target.h"
#include "tdfx/nn/attribute_tensors.h"

namespace tdfx::trace {

namespace jit = torch::jit;

void registerCallConverters(ConverterTable& t) {
  t.add(c10::prim::GetAttr, &always<&convertGetAttr>);
  t.add(c10::prim::CallMethod, &always<&convertCallMethod>);
  t.add(c10::prim::CallFunction, &always<&convertCallFunction>);
  t.add(c10::prim::tolist, &convertToList);
}

// `x.tolist()` on a Proxy: FX records call_method tolist (x). TorchScript compiles it to
// prim::tolist(x, dim, elem_type), with the nesting and element type taken from the annotation
// (`v: List[List[float]] = x.tolist()`); the node's schema keeps that type, so the printed graph
// runs as the model did (runtime/call_emitter.cpp).
bool convertToList(TraceContext& cx, jit::Node* node, Frame& frame) {
  const SymValue& self = frame.get(node->input(0));
  if (!self.arg.isNode() || cx.builder.isConcreteTensor(self.arg.node())) return false;
  NodeMeta meta;
  describeSource(cx, node, frame, meta);
  Node* fx = cx.builder.graph().createNode(OpKind::CallMethod, "tolist", {self.arg}, {});
  fx->meta() = meta;
  fx->meta().schema = "prim::tolist(Tensor self) -> " + node->output()->type()->annotation_str();
  setOutputs(cx, node, fx, 1, frame);
  return true;
}

void convertCallMethod(TraceContext& cx, jit::Node* node, Frame& frame) {
  const SymValue& self = frame.get(node->input(0));
  if (self.kind != SymValue::Kind::Module) fail(cx, node, frame, "method call on a non-module object is not supported");
  const std::string methodName = node->s(c10::attr::name);
  const ModuleRef& target = *self.module;
  std::vector<SymValue> args;
  for (size_t i = 1; i < node->inputs().size(); ++i) {
    args.push_back(frame.get(node->input(i)));
    if (args.back().kind == SymValue::Kind::Module) fail(cx, node, frame, "passing modules as arguments is not supported");
  }
  // TorchScript compiles `self.lstm(x)` on a dynamically quantized RNN, whose Python forward is
  // @torch.jit.ignore'd and dispatches on the input's type, to its exported `forward_tensor`.
  const bool leafForward = isForwardMethod(methodName) || methodName == "forward_tensor";
  if (leafForward && isLeafModule(target.module) && !target.path.empty() && target.path != frame.scope.path) {
    setOutputs(cx, node, createLeafCall(cx, node, frame, target, methodName, args), 1, frame);
    return;
  }
  auto method = target.module.find_method(methodName);
  if (!method) fail(cx, node, frame, "module '" + target.path + "' has no method '" + methodName + "'");
  if (Node* fx = scriptingElseCall(cx, node, frame, target, method->function(), args)) {
    setOutputs(cx, node, fx, node->outputs().size(), frame);
    return;
  }
  std::vector<SymValue> callArgs = args;
  callArgs.insert(callArgs.begin(), self);
  // Undo state for the fallback below, lists included: the call may change a list its caller
  // holds (shareListChange), with nodes the rollback erases.
  const GraphBuilder::Mark mark = cx.builder.mark();
  // Only a list passed in can be changed by the call: the snapshot is taken only then (this runs
  // for every inlined call).
  std::vector<std::tuple<Frame*, const jit::Value*, SymValue>> lists;
  const std::function<bool(const ValueParts&)> holdsList = [&](const ValueParts& p) {
    return (p.kind == ValueParts::Kind::List && p.listId != 0) || std::any_of(p.items.begin(), p.items.end(), holdsList);
  };
  const bool passesList =
      std::any_of(args.begin(), args.end(), [&](const SymValue& a) { return holdsList(a.input); });
  for (Frame* f : passesList ? cx.frames : std::vector<Frame*>())
    for (const auto& [value, held] : f->env)
      if (held.input.kind == ValueParts::Kind::List && held.input.listId != 0) lists.emplace_back(f, value, held);
  try {
    const PathStep step(cx.path, node);
    auto outputs =
        inlineGraph(cx, *jit::toGraphFunction(method->function()).graph(), std::move(callArgs), target, frame.depth + 1,
                    &method->function());
    for (size_t i = 0; i < outputs.size(); ++i) frame.env[node->outputs()[i]] = outputs[i];
  } catch (const DataDependentError& e) {
    // Control flow on tensor data cannot be flattened into one graph: keep this submodule whole,
    // as one call_module node, and say why in its metadata.
    if (!isForwardMethod(methodName) || target.path.empty()) throw;
    cx.builder.rollBackTo(mark);
    for (auto& [f, value, held] : lists) f->env[value] = std::move(held);
    Node* fx = createLeafCall(cx, node, frame, target, methodName, args);
    fx->meta().leafReason = e.what();
    setOutputs(cx, node, fx, 1, frame);
  }
}

void describeModule(const jit::Module& module, NodeMeta& meta) {
  // __constants__ (in_features, stride, ...) are constants of the TorchScript class; listed in the
  // order the Python class declares them, as FxGraphDrawer prints them.
  const c10::ClassTypePtr& type = module.type();
  std::vector<std::string> order = moduleConstantNames(pythonTypeName(type));
  for (size_t i = 0; i < type->numConstants(); ++i)
    if (std::find(order.begin(), order.end(), type->getConstantName(i)) == order.end()) order.push_back(type->getConstantName(i));
  for (const std::string& name : order) {
    const auto slot = type->findConstantSlot(name);
    if (!slot) continue;
    auto arg = argumentFromIValue(type->getConstant(*slot));
    meta.moduleConstants.emplace_back(name, arg ? formatGraphArgument(*arg) : "?");
  }
  // Plain attributes, as extra_repr shows them (embed_dim, num_heads): what is not a constant, a
  // parameter, a buffer or a submodule, and not private.
  for (size_t i = 0; i < type->numAttributes(); ++i) {
    const std::string& name = type->getAttributeName(i);
    if (name.empty() || name[0] == '_' || name == "training" || type->is_parameter(i) || type->is_buffer(i)) continue;
    const c10::TypePtr& attrType = type->getAttribute(i);
    const auto kind = attrType->kind();
    if (kind != c10::TypeKind::IntType && kind != c10::TypeKind::FloatType && kind != c10::TypeKind::BoolType &&
        kind != c10::TypeKind::StringType && kind != c10::TypeKind::TupleType && kind != c10::TypeKind::ListType)
      continue;
    const c10::IValue value = module._ivalue()->getSlot(i);
    // TorchScript holds a torch.dtype attribute as its number: written as Python writes it
    // (a quantized LSTM's `dtype: 12` is torch.qint8; issue 57, I).
    if (kind == c10::TypeKind::IntType && name.size() >= 5 && name.compare(name.size() - 5, 5, "dtype") == 0 &&
        value.isInt() && value.toInt() >= 0 && value.toInt() < static_cast<int64_t>(c10::ScalarType::NumOptions)) {
      meta.moduleAttributes.emplace_back(name, "torch." + dtypeToString(static_cast<c10::ScalarType>(value.toInt())));
      continue;
    }
    if (auto arg = argumentFromIValue(value)) {
      std::string text = formatGraphArgument(*arg);
      if (text.size() <= 200) meta.moduleAttributes.emplace_back(name, std::move(text));  // not a long list
    }
  }
  for (const auto& p : module.named_parameters(/*recurse=*/true))
    meta.parameters.push_back({p.name, p.value.sizes().vec(), p.value.scalar_type(), false});
  for (const auto& b : module.named_buffers(/*recurse=*/true))
    meta.parameters.push_back({b.name, b.value.sizes().vec(), b.value.scalar_type(), true});
  // A quantized module's weights are packed objects, not parameters (the inspector showed a
  // quantized LSTM without weights; issue 57, I): listed as diff names them.
  for (const auto& sub : module.named_modules())
    for (const AttributeTensor& t : attributeTensors(sub.value)) {
      const std::string name = (sub.name.empty() ? "" : sub.name + ".") + t.attribute + t.place;
      ParameterInfo packed{name, t.value.sizes().vec(), t.value.scalar_type(), false};
      packed.isPacked = true;
      meta.parameters.push_back(std::move(packed));
    }
}

Node* createLeafCall(TraceContext& cx, jit::Node* node, Frame& frame, const ModuleRef& target, const std::string& method,
                                   const std::vector<SymValue>& args) {
  NodeMeta meta;
  const py::ExprPtr expr = describeSource(cx, node, frame, meta);
  std::vector<Argument> fxArgs;
  Kwargs fxKwargs;
  for (const SymValue& a : args) fxArgs.push_back(a.arg);
  // FX records the module call as written (`self.attn(q, k, v, need_weights=False)`), where
  // TorchScript passes every parameter.
  if (expr && expr->kind == py::Expr::Kind::Call) {
    std::vector<Argument> inputs{Argument()};  // self
    inputs.insert(inputs.end(), fxArgs.begin(), fxArgs.end());
    if (auto form = writtenCallArgs(*expr, target.module.get_method(method).function().getSchema(), inputs, true,
                                     attributeValues(frame))) {
      fxArgs.assign(form->args.begin() + 1, form->args.end());
      fxKwargs = std::move(form->kwargs);
    }
  }
  Node* fx = cx.builder.graph().createNode(OpKind::CallModule, target.path, std::move(fxArgs), std::move(fxKwargs));
  fx->meta() = std::move(meta);
  fx->meta().modulePath = target.path;
  fx->meta().moduleType = pythonTypeName(target.module.type());
  describeModule(target.module, fx->meta());
  cx.moduleTypes.emplace(target.path, fx->meta().moduleType);
  return fx;
}

void convertCallFunction(TraceContext& cx, jit::Node* node, Frame& frame) {
  auto fnType = node->input(0)->type()->cast<c10::FunctionType>();
  if (!fnType) fail(cx, node, frame, "call of a value that is not a function");
  jit::Function* fn = fnType->function();
  const std::string qualified = pythonQualifiedName(fn->qualname().qualifiedName());
  std::vector<SymValue> args;
  for (size_t i = 1; i < node->inputs().size(); ++i) {
    args.push_back(frame.get(node->input(i)));
    if (args.back().kind == SymValue::Kind::Module) fail(cx, node, frame, "passing modules as arguments is not supported");
  }
  const generated::CallableSpelling* callable = findCallable(qualified);
  if ((!callable && qualified.rfind("torch.", 0) != 0) || (callable && callable->kind == CallKind::TracedThrough)) {
    // A user's function, or a torch function written in Python that FX runs: FX traces through
    // it, so inline it. (Functions registered with torch.fx.wrap stay one call.)
    const PathStep step(cx.path, node);
    auto outputs = inlineGraph(cx, *jit::toGraphFunction(*fn).graph(), std::move(args), frame.scope, frame.depth + 1, fn);
    for (size_t i = 0; i < outputs.size(); ++i) frame.env[node->outputs()[i]] = outputs[i];
    return;
  }
  // A torch library function (torch.nn.functional.*) is one call_function node, as in FX.
  NodeMeta meta;
  const py::ExprPtr expr = describeSource(cx, node, frame, meta);
  // A scalar passed for a BroadcastingList parameter (`F.adaptive_max_pool2d(x, b)`, b an int):
  // TorchScript widens it to [b, b] at the call; Python passes the scalar, and FX records it. A
  // list the user wrote (`[b, b]`) is a list display in the call's text.
  // Without the call's text nothing tells the two apart, and the list stays.
  const py::Expr* call = expr && expr->kind == py::Expr::Kind::Call ? expr.get() : nullptr;
  const auto& parameters = fn->getSchema().arguments();
  for (size_t i = 1; call && i < node->inputs().size(); ++i) {
    jit::Node* list = node->input(i)->node();
    if (list->kind() != c10::prim::ListConstruct || list->inputs().size() < 2) continue;
    bool same = true;
    for (const jit::Value* item : list->inputs()) same = same && item == list->input(0);
    const py::Expr* written = i - 1 < call->positionalCount() ? call->items[i].get() : nullptr;
    for (size_t k = 0; !written && i - 1 < parameters.size() && k < call->keywords.size(); ++k)
      if (call->keywords[k] == parameters[i - 1].name()) written = call->items[1 + call->positionalCount() + k].get();
    if (!written || written->kind == py::Expr::Kind::List || written->kind == py::Expr::Kind::Tuple) continue;
    // The widened list is a value of no variable; `shape = [4, 4]; F.layer_norm(x, shape)` passes a
    // named list. (An archive's schema no longer says which parameter was a BroadcastingList: the
    // length, `int[2]`, is not saved.)
    const c10::TypePtr& type = i - 1 < parameters.size() ? parameters[i - 1].type() : nullptr;
    const bool broadcasting = type && type->kind() == c10::TypeKind::ListType &&
                              type->containedTypes().at(0)->kind() != c10::TypeKind::TensorType &&
                              (parameters[i - 1].N() ? static_cast<size_t>(*parameters[i - 1].N()) == list->inputs().size()
                                                     : !list->output()->hasDebugName());
    if (same && broadcasting) args[i - 1] = frame.get(list->input(0));
  }
  std::vector<Argument> inputs;
  std::vector<std::optional<c10::IValue>> constants;
  const auto& schemaArgs = fn->getSchema().arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    inputs.push_back(i < schemaArgs.size() ? coerceToSchemaType(args[i].arg, schemaArgs[i].real_type()) : args[i].arg);
    constants.push_back(args[i].constant);
  }
  std::vector<Argument> fxArgs = inputs;
  Kwargs fxKwargs;
  std::string target = qualified;
  if (callable && callable->kind == CallKind::Handled) {
    // FX records what the function hands to handle_torch_function: fixed args and kwargs,
    // defaults included.
    if (auto recorded = handledCallArgs(*callable, fn->getSchema(), inputs, expr, attributeValues(frame))) {
      target = callable->target;
      fxArgs = std::move(recorded->args);
      fxKwargs = std::move(recorded->kwargs);
    }
  } else if (auto written = writtenFunctionArgs(fn->getSchema(), expr, inputs, attributeValues(frame))) {
    fxArgs = std::move(written->args);
    fxKwargs = std::move(written->kwargs);
  }
  // Trailing arguments equal to their defaults were not written by the user.
  if (target == qualified && fxKwargs.empty() && fxArgs.size() == inputs.size()) {
    size_t keep = fxArgs.size();
    while (keep > 1 && keep - 1 < schemaArgs.size() && schemaArgs[keep - 1].default_value() && constants[keep - 1] &&
           *constants[keep - 1] == *schemaArgs[keep - 1].default_value())
      --keep;
    fxArgs.resize(keep);
  }
  Node* fx = cx.builder.graph().createNode(OpKind::CallFunction, target, std::move(fxArgs), std::move(fxKwargs));
  fx->meta() = meta;
  fx->meta().schema = fn->getSchema().operator_name().name;
  setOutputs(cx, node, fx, node->outputs().size(), frame);
}

}  // namespace tdfx::trace
