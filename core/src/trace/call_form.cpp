#include "call_form.h"

#include <algorithm>
#include <set>
#include <map>

#include "tdfx/ir/fx_tables.h"
#include "tdfx/util/python_repr.h"
#include "tdfx/util/dtype.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx::trace {
namespace {

// Python module paths a call's prefix may spell (`F` and `nn.functional` are the usual aliases of
// torch.nn.functional); anything else before the last dot is an object, so the call is a method.
std::optional<std::string> functionNamespace(const std::string& prefix) {
  static const std::map<std::string, std::string> namespaces = {
      {"torch", "torch"},
      {"torch.nn.functional", "torch.nn.functional"},
      {"nn.functional", "torch.nn.functional"},
      {"functional", "torch.nn.functional"},
      {"F", "torch.nn.functional"},
      {"torch.special", "torch.special"},
      {"torch.linalg", "torch.linalg"},
      {"torch.fft", "torch.fft"},
      {"torch.functional", "torch.functional"},
      {"math", "math"}};
  auto it = namespaces.find(prefix);
  if (it == namespaces.end()) return std::nullopt;
  return it->second;
}

bool isListType(c10::TypePtr t) {
  if (t && t->kind() == c10::TypeKind::OptionalType) t = t->expectRef<c10::OptionalType>().getElementType();
  return t && t->kind() == c10::TypeKind::ListType;
}

// The value FX records for a written argument: the graph's value, in the form the user wrote it.
// TorchScript turns `(2, 3)` into a list and broadcasts `2` for an int[2] parameter to [2, 2]; a
// Python call passes the tuple or the int itself.
// A module attribute (`self.normalized_shape`) is what the module holds: FX sees the Python value.
Argument writtenValue(const py::Expr& text, const Argument& input, const c10::TypePtr& schemaType,
                      const AttributeValues& attributes) {
  if (auto literal = literalArgument(text)) return *literal;
  if (attributes) {
    if (auto held = attributes(text); held && !held->refersToNodes()) return *held;
  }
  // `dtype=torch.float32` where TorchScript's signature declares `dtype: Optional[int]` (as in
  // F.softmax): the graph holds the int, Python passes the dtype as written.
  if (std::holds_alternative<int64_t>(input.value)) {
    if (auto name = py::dottedName(text); name && name->rfind("torch.", 0) == 0) {
      const auto dtype = static_cast<c10::ScalarType>(std::get<int64_t>(input.value));
      if (std::get<int64_t>(input.value) >= 0 && std::get<int64_t>(input.value) < static_cast<int64_t>(c10::ScalarType::NumOptions))
        try {
          if (parseDtype(name->substr(6)) == dtype) return Argument(dtype);
        } catch (const std::exception&) {
          // Not a dtype's name (torch.strided, torch.channels_last): the value stays as the graph has it.
        }
    }
  }
  const auto* list = std::get_if<ArgumentList>(&input.value);
  if (!list) return input;
  if (text.kind == py::Expr::Kind::Tuple && text.items.size() == list->items.size()) return Argument(ArgumentTuple{list->items});
  // `x.sum(dim)` for an int[1] parameter: TorchScript wrapped the scalar in a list.
  c10::TypePtr t = schemaType;
  if (t && t->kind() == c10::TypeKind::OptionalType) t = t->expectRef<c10::OptionalType>().getElementType();
  const bool scalarList = t && t->kind() == c10::TypeKind::ListType &&
                          t->expectRef<c10::ListType>().getElementType()->kind() != c10::TypeKind::TensorType &&
                          t->expectRef<c10::ListType>().getElementType()->kind() != c10::TypeKind::OptionalType;
  if (scalarList && text.kind != py::Expr::Kind::List && text.kind != py::Expr::Kind::Tuple && list->items.size() == 1)
    return list->items.front();
  return input;
}

// Maps a written call's arguments onto schema inputs. For a method the receiver is the schema's
// `self` (not always its first argument: `x.where(cond, y)` is aten::where(condition, self, other)).
bool mapWrittenArguments(const py::Expr& call, const c10::FunctionSchema& schema, bool method,
                         const std::vector<Argument>& inputs, const AttributeValues& attributes, CallForm& form) {
  const auto& sargs = schema.arguments();
  if (inputs.size() != sargs.size()) return false;
  for (const py::ExprPtr& item : call.items)
    if (item->kind == py::Expr::Kind::Starred) return false;  // *args: counts say nothing
  std::vector<size_t> slots;  // schema positions the written positional arguments fill, in order
  size_t self = sargs.size();
  for (size_t i = 0; i < sargs.size() && !sargs[i].kwarg_only(); ++i) {
    if (method && self == sargs.size() && sargs[i].name() == "self") {
      self = i;
      continue;
    }
    slots.push_back(i);
  }
  if (method) {
    if (self == sargs.size()) {
      if (slots.empty()) return false;
      self = slots.front();
      slots.erase(slots.begin());
    }
    form.args.push_back(inputs[self]);
  }
  const size_t written = call.positionalCount();
  if (written <= slots.size()) {
    for (size_t i = 0; i < written; ++i) form.args.push_back(writtenValue(*call.items[1 + i], inputs[slots[i]], sargs[slots[i]].type(), attributes));
  } else {
    // Varargs like x.view(2, 3) or x.permute(0, 2, 1): TorchScript packed them into the last list.
    if (slots.empty() || !isListType(sargs[slots.back()].type())) return false;
    const std::vector<Argument>* items = inputs[slots.back()].items();
    if (!items || slots.size() - 1 + items->size() != written) return false;
    for (size_t i = 0; i + 1 < slots.size(); ++i) form.args.push_back(writtenValue(*call.items[1 + i], inputs[slots[i]], sargs[slots[i]].type(), attributes));
    for (const Argument& a : *items) form.args.push_back(a);
  }
  const size_t firstKeyword = 1 + written;
  for (size_t k = 0; k < call.keywords.size(); ++k) {
    const std::string& name = call.keywords[k];
    bool found = false;
    for (size_t i = 0; i < sargs.size(); ++i) {
      // torch's Python bindings call aten's `self` `input` (`torch.sum(input=x)`).
      if (sargs[i].name() == name || (name == "input" && sargs[i].name() == "self" && !method)) {
        form.kwargs.emplace_back(name, writtenValue(*call.items[firstKeyword + k], inputs[i], sargs[i].type(), attributes));
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

bool equalsDefault(const std::optional<c10::IValue>& value, const c10::Argument& schemaArg) {
  if (!value || !schemaArg.default_value()) return false;
  try {
    return *value == *schemaArg.default_value();
  } catch (const std::exception&) {
    return false;
  }
}

// The schema's arguments with trailing defaults left out (kwarg-only ones as kwargs when not default).
void schemaArguments(const c10::FunctionSchema& schema, const std::vector<Argument>& inputs,
                     const std::vector<std::optional<c10::IValue>>& constants, size_t first, CallForm& form) {
  const auto& sargs = schema.arguments();
  size_t lastPositional = first;
  for (size_t i = first; i < sargs.size() && i < inputs.size(); ++i) {
    if (sargs[i].kwarg_only()) {
      if (!equalsDefault(constants[i], sargs[i])) form.kwargs.emplace_back(sargs[i].name(), inputs[i]);
    } else if (!equalsDefault(constants[i], sargs[i])) {
      lastPositional = i + 1;
    }
  }
  for (size_t i = 0; i < lastPositional; ++i) form.args.push_back(inputs[i]);
}

// `1 + x` reaches TorchScript as aten::add(x, 1): which input is the operand written first.
bool operandsSwapped(const py::Expr& expr, const std::vector<std::optional<c10::IValue>>& constants,
                     const std::vector<std::string>& inputNames) {
  const py::Expr& lhs = *expr.items[0];
  const py::Expr& rhs = *expr.items[1];
  const bool lhsConst = py::isConstantExpression(lhs), rhsConst = py::isConstantExpression(rhs);
  const bool in0Const = constants[0].has_value(), in1Const = constants[1].has_value();
  if (lhsConst != rhsConst && in0Const != in1Const) return lhsConst == in1Const;
  if (inputNames.size() >= 2) {
    if (lhs.kind == py::Expr::Kind::Name && lhs.text == inputNames[1] && lhs.text != inputNames[0]) return true;
    if (rhs.kind == py::Expr::Kind::Name && rhs.text == inputNames[0] && rhs.text != inputNames[1]) return true;
  }
  return false;
}

std::optional<CallForm> operatorForm(const py::Expr& expr, const torch::jit::Node& node, const std::vector<Argument>& inputs,
                                     const std::vector<std::optional<c10::IValue>>& constants,
                                     const std::vector<std::string>& inputNames) {
  const bool unary = expr.kind == py::Expr::Kind::UnaryOp;
  const std::string name = py::Expr::Kind::BoolOp == expr.kind ? "" : operatorName(expr.text, unary);
  if (name.empty() || name == "not_") return std::nullopt;
  CallForm form;
  form.target = fx_target::operatorTarget(name);
  if (unary) {
    if (inputs.empty()) return std::nullopt;
    form.args = {inputs[0]};
    return form;
  }
  if (inputs.size() < 2) return std::nullopt;
  // aten::add/sub carry alpha; only alpha == 1 is the plain operator.
  if (inputs.size() > 2) {
    std::string kind = node.kind().toUnqualString();
    if (kind.size() > 1 && kind.back() == '_') kind.pop_back();  // `x += y` may reach TorchScript as add_
    const bool alphaOne = (kind == "add" || kind == "sub") && inputs.size() == 3 && constants[2] && constants[2]->isInt() &&
                          constants[2]->toInt() == 1;
    if (!alphaOne) return std::nullopt;
  }
  if (operandsSwapped(expr, constants, inputNames)) {
    form.args = {inputs[1], inputs[0]};
  } else {
    form.args = {inputs[0], inputs[1]};
  }
  // A number operand as written: TorchScript compiles `x * 1e10` with the int 10000000000, where
  // Python passes the float.
  for (size_t i = 0; i < 2; ++i) {
    const auto literal = literalArgument(*expr.items[i]);
    const auto* written = literal ? std::get_if<double>(&literal->value) : nullptr;
    const auto* compiled = std::get_if<int64_t>(&form.args[i].value);
    if (written && compiled && static_cast<double>(*compiled) == *written) form.args[i] = *literal;
  }
  return form;
}

// `fn.conv1d(x, w)` through an alias the model's file imported (`import torch.nn.functional as fn`):
// the source of a method holds no imports, but TorchScript resolved the callee, so the alias names
// the namespace whose function compiles to this node's operator.
std::optional<std::string> aliasedNamespace(const std::string& function, const c10::FunctionSchema& schema) {
  for (const char* ns : {"torch.nn.functional", "torch", "torch.special", "torch.linalg", "torch.fft"}) {
    const auto* callable = findCallable(std::string(ns) + "." + function);
    if (callable && callable->aten == schema.name()) return std::string(ns);
  }
  return std::nullopt;
}

// A Python function of torch that hands itself to handle_torch_function (`torch.split(x, 2, 1)`),
// compiled by TorchScript straight to its operator (aten::split): FX records the function with
// its own parameters, `torch.functional.split(x, 2, dim = 1)`. The operator's arguments are the
// function's, in order, under other names (self / tensor, split_size / split_size_or_sections).
std::optional<CallForm> handledOperatorCall(const generated::CallableSpelling& callable, const py::Expr& call,
                                            const c10::FunctionSchema& schema, const std::vector<Argument>& inputs,
                                            const AttributeValues& attributes) {
  std::vector<std::string> names = splitTableField(callable.args);
  for (const std::string& k : splitTableField(callable.kwargs)) names.push_back(k);
  const auto& sargs = schema.arguments();
  if (names.size() != sargs.size()) return std::nullopt;
  std::vector<c10::Argument> renamed;
  for (size_t i = 0; i < sargs.size(); ++i)
    renamed.emplace_back(names[i], sargs[i].type(), sargs[i].real_type(), sargs[i].N(), sargs[i].default_value(),
                         sargs[i].kwarg_only());
  const py::ExprPtr written(py::ExprPtr(), &call);  // not owned: the caller's expression outlives the call
  return handledCallArgs(callable, schema.cloneWithArguments(std::move(renamed)), inputs, written, attributes);
}

// The call as the user wrote it: `torch.softmax(x, dim=1)`, `F.linear(x, w)`, `x.view(n, -1)`.
std::optional<CallForm> writtenCall(const py::Expr& call, const c10::FunctionSchema& schema,
                                    const std::vector<Argument>& inputs, const std::vector<std::string>& inputNames,
                                    const AttributeValues& attributes) {
  const py::Expr& callee = *call.items[0];
  if (callee.kind != py::Expr::Kind::Attribute) return std::nullopt;
  CallForm form;
  const auto prefix = py::dottedName(*callee.items[0]);
  if (prefix) {
    std::optional<std::string> ns = functionNamespace(*prefix);
    // A bare name before a function torch.Tensor has no method of, and none of the node's inputs'
    // variables, can only be a module.
    const bool variable = std::find(inputNames.begin(), inputNames.end(), *prefix) != inputNames.end();
    if (!ns && !variable && callee.items[0]->kind == py::Expr::Kind::Name && !isTensorMethod(callee.text))
      ns = aliasedNamespace(callee.text, schema);
    if (ns) {
      const auto* callable = findCallable(*ns + "." + callee.text);
      if (callable && callable->kind == CallKind::Handled && callable->aten == schema.name())
        return handledOperatorCall(*callable, call, schema, inputs, attributes);
      if (!callable || callable->kind != CallKind::AsWritten) return std::nullopt;
      form.target = callable->target;
      if (!mapWrittenArguments(call, schema, false, inputs, attributes, form)) return std::nullopt;
      return form;
    }
  }
  // A method call only when torch.Tensor has that method: `fn.linear(x, w)` through an alias of
  // torch.nn.functional is no method of `fn` (the tables then spell the operator FX records).
  if (!isTensorMethod(callee.text)) return std::nullopt;
  form.op = OpKind::CallMethod;
  form.target = callee.text;
  if (!mapWrittenArguments(call, schema, true, inputs, attributes, form)) return std::nullopt;
  return form;
}

}  // namespace

std::optional<Argument> literalArgument(const py::Expr& e) {
  using K = py::Expr::Kind;
  switch (e.kind) {
    case K::Number: {
      const std::string& t = e.text;
      if (t.find_first_of("jJxXoObB_") != std::string::npos) return std::nullopt;
      try {
        if (t.find_first_of(".eE") == std::string::npos) return Argument(static_cast<int64_t>(std::stoll(t)));
        return Argument(std::stod(t));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    case K::UnaryOp: {
      if (e.text != "-" || e.items[0]->kind != K::Number) return std::nullopt;
      auto v = literalArgument(*e.items[0]);
      if (!v) return std::nullopt;
      if (const auto* i = std::get_if<int64_t>(&v->value)) return Argument(-*i);
      if (const auto* d = std::get_if<double>(&v->value)) return Argument(-*d);
      return std::nullopt;
    }
    case K::String: {
      // Plain one-line literals without escapes: 'mean', "nearest".
      const std::string& t = e.text;
      if (t.size() < 2 || (t[0] != '\'' && t[0] != '"') || t.back() != t[0] || t.find('\\') != std::string::npos)
        return std::nullopt;
      return Argument(t.substr(1, t.size() - 2));
    }
    case K::Name:
      if (e.text == "None") return Argument();
      if (e.text == "True") return Argument(true);
      if (e.text == "False") return Argument(false);
      return std::nullopt;
    case K::Tuple:
    case K::List: {
      std::vector<Argument> items;
      for (const auto& item : e.items) {
        auto v = literalArgument(*item);
        if (!v) return std::nullopt;
        items.push_back(std::move(*v));
      }
      if (e.kind == K::Tuple) return Argument(ArgumentTuple{std::move(items)});
      return Argument(ArgumentList{std::move(items)});
    }
    default: return std::nullopt;
  }
}

std::optional<CallForm> writtenCallArgs(const py::Expr& call, const c10::FunctionSchema& schema,
                                        const std::vector<Argument>& inputs, bool method,
                                        const AttributeValues& attributes) {
  CallForm form;
  if (!mapWrittenArguments(call, schema, method, inputs, attributes, form)) return std::nullopt;
  return form;
}

std::optional<CallForm> writtenFunctionArgs(const c10::FunctionSchema& schema, const py::ExprPtr& expr,
                                            const std::vector<Argument>& inputs, const AttributeValues& attributes) {
  if (!expr || expr->kind != py::Expr::Kind::Call) return std::nullopt;
  const py::Expr& callee = *expr->items[0];
  const std::string name = callee.kind == py::Expr::Kind::Attribute || callee.kind == py::Expr::Kind::Name ? callee.text : "";
  if (name != schema.name().substr(schema.name().rfind('.') + 1)) return std::nullopt;
  CallForm form;
  if (!mapWrittenArguments(*expr, schema, false, inputs, attributes, form)) return std::nullopt;
  return form;
}

std::optional<CallForm> handledCallArgs(const generated::CallableSpelling& callable, const c10::FunctionSchema& schema,
                                        const std::vector<Argument>& inputs, const py::ExprPtr& written,
                                        const AttributeValues& attributes) {
  const auto& sargs = schema.arguments();
  // The written call, when the text is a call of this function: what the user passed, as written.
  const py::Expr* call = written && written->kind == py::Expr::Kind::Call ? written.get() : nullptr;
  if (call) {
    for (const auto& item : call->items)
      if (item->kind == py::Expr::Kind::Starred) call = nullptr;
  }
  if (call && call->positionalCount() > sargs.size()) call = nullptr;
  std::map<std::string, std::string> defaults;
  for (const std::string& d : splitTableField(callable.defaults, '\t')) {
    const size_t eq = d.find('=');
    if (eq != std::string::npos) defaults[d.substr(0, eq)] = d.substr(eq + 1);
  }
  const auto valueOf = [&](const std::string& name) -> std::optional<Argument> {
    size_t index = sargs.size();
    for (size_t i = 0; i < sargs.size() && i < inputs.size(); ++i)
      if (sargs[i].name() == name) index = i;
    if (index == sargs.size()) return std::nullopt;
    const Argument value = coerceToSchemaType(inputs[index], sargs[index].real_type());
    if (!call) return value;
    const c10::TypePtr& type = sargs[index].type();
    if (index < call->positionalCount()) return writtenValue(*call->items[1 + index], value, type, attributes);
    for (size_t k = 0; k < call->keywords.size(); ++k)
      if (call->keywords[k] == name)
        return writtenValue(*call->items[1 + call->positionalCount() + k], value, type, attributes);
    // Not written: Python passes the function's default, as the function declares it.
    if (auto it = defaults.find(name); it != defaults.end()) {
      if (py::ExprPtr d = py::parseExpressionPrefix(it->second)) {
        if (auto literal = literalArgument(*d)) return literal;
      }
    }
    return value;
  };
  CallForm form;
  form.target = callable.target;
  for (const std::string& name : splitTableField(callable.args)) {
    auto v = valueOf(name);
    if (!v) return std::nullopt;
    form.args.push_back(std::move(*v));
  }
  for (const std::string& name : splitTableField(callable.kwargs)) {
    auto v = valueOf(name);
    if (!v) return std::nullopt;
    form.kwargs.emplace_back(name, std::move(*v));
  }
  return form;
}

std::optional<Argument> argumentFromIValue(const c10::IValue& v) {
  if (v.isNone()) return Argument();
  if (v.isBool()) return Argument(v.toBool());
  if (v.isInt()) return Argument(v.toInt());
  if (v.isDouble()) return Argument(v.toDouble());
  if (v.isString()) return Argument(v.toStringRef());
  if (v.isDevice()) return Argument(v.toDevice());
  if (v.isList()) {
    ArgumentList list;
    for (const c10::IValue& item : v.toListRef()) {
      auto a = argumentFromIValue(item);
      if (!a) return std::nullopt;
      list.items.push_back(std::move(*a));
    }
    return Argument(std::move(list));
  }
  if (v.isTuple()) {
    ArgumentTuple tuple;
    for (const c10::IValue& item : v.toTupleRef().elements()) {
      auto a = argumentFromIValue(item);
      if (!a) return std::nullopt;
      tuple.items.push_back(std::move(*a));
    }
    return Argument(std::move(tuple));
  }
  return std::nullopt;
}

Argument coerceToSchemaType(const Argument& arg, const c10::TypePtr& schemaType) {
  if (!schemaType || !std::holds_alternative<int64_t>(arg.value)) return arg;
  c10::TypePtr t = schemaType;
  if (auto opt = t->cast<c10::OptionalType>()) t = opt->getElementType();
  const int64_t v = std::get<int64_t>(arg.value);
  switch (t->kind()) {
    case c10::TypeKind::ScalarTypeType: return Argument(static_cast<c10::ScalarType>(v));
    case c10::TypeKind::LayoutType: return Argument(static_cast<c10::Layout>(v));
    case c10::TypeKind::MemoryFormatType: return Argument(static_cast<c10::MemoryFormat>(v));
    default: return arg;
  }
}

std::optional<std::string> writtenNamespace(const std::string& prefix) { return functionNamespace(prefix); }

namespace {
// `torch.einsum('ij,jk->ik', a, b)`: a Python function with *operands that hands its arguments
// as given to handle_torch_function, so FX records torch.functional.einsum with them; TorchScript
// packed the operands into aten::einsum's list. Operands written as one list are spread too:
// einsum's old interface recurses with `einsum(equation, *operands[0])` before FX sees the call.
std::optional<CallForm> einsumCall(const py::Expr& call, const torch::jit::Node& node, const std::vector<Argument>& inputs) {
  if (node.kind() != c10::aten::einsum || inputs.size() < 2) return std::nullopt;
  const auto callee = py::dottedName(*call.items[0]);
  if (!callee || (*callee != "torch.einsum" && *callee != "torch.functional.einsum") || !call.keywords.empty())
    return std::nullopt;
  const auto* operands = std::get_if<ArgumentList>(&inputs[1].value);
  if (!operands) return std::nullopt;
  CallForm form;
  form.target = "torch.functional.einsum";
  form.args = {inputs[0]};
  form.args.insert(form.args.end(), operands->items.begin(), operands->items.end());
  return form;
}
}  // namespace

bool isTensorProperty(const std::string& primName) {
  static const std::set<std::string> properties = {"dtype", "device", "layout", "requires_grad", "is_cuda",
                                                   "is_sparse", "is_quantized", "is_meta", "is_mkldnn", "data"};
  return properties.count(primName) > 0;
}

CallForm callFormFor(const torch::jit::Node& node, const py::ExprPtr& expr, const std::vector<Argument>& inputs,
                     const std::vector<std::optional<c10::IValue>>& constants,
                     const std::vector<std::string>& inputNames, const AttributeValues& attributes) {
  const std::string ns = node.kind().ns().toUnqualString();
  const std::string name = node.kind().toUnqualString();
  const c10::FunctionSchema* schema = node.maybeSchema();

  // The node may compute only the leftmost part of its expression: `x.shape[-1]` is aten::size
  // (the `x.shape` part) and then aten::__getitem__ (the subscript).
  using K = py::Expr::Kind;
  for (const py::Expr* e = expr.get(); e && e->begin == 0; e = e->items.empty() ? nullptr : e->items[0].get()) {
    bool indexingPart = false;
    switch (e->kind) {
      case K::Attribute:
        // Attribute reads: x.dtype, x.device, x.shape (aten::size), x.ndim (aten::dim).
        if (inputs.size() == 1 && ((ns == "prim" && name == e->text) || (name == "size" && e->text == "shape") ||
                                   (name == "dim" && e->text == "ndim"))) {
          CallForm form;
          form.target = fx_target::kGetAttr.qualifiedName;
          form.args = {inputs[0], Argument(e->text)};
          return form;
        }
        break;
      case K::Call:
        if (auto form = einsumCall(*e, node, inputs)) return *form;
        if (schema) {
          if (auto form = writtenCall(*e, *schema, inputs, inputNames, attributes)) return *form;
        }
        break;
      case K::BinOp:
      case K::UnaryOp:
      case K::Compare:
        if (auto form = operatorForm(*e, node, inputs, constants, inputNames)) return *form;
        break;
      case K::Subscript:
        // Indexing a list or tuple (tensor subscripts are folded by expression groups).
        if (inputs.size() == 2 && (name == "__getitem__" || node.kind() == c10::prim::TupleIndex)) {
          CallForm form;
          form.target = fx_target::kGetItem.qualifiedName;
          form.args = {inputs[0], inputs[1]};
          return form;
        }
        // An indexing operator left alone (its expression group did not fold) computes part of
        // this subscript, never the subscripted value: `x.abs()` in `x.abs()[:, self.t]` is
        // another node, so the written call below it must not name this one.
        indexingPart = ns == "aten" && (name == "slice" || name == "select" || name == "index" || name == "unsqueeze");
        break;
      default: break;
    }
    if (indexingPart || e->kind == K::Call) break;  // a callee alone computes nothing
  }

  // No usable source text: the spelling torch's tables give the operator, defaults left out.
  CallForm form;
  // A tensor property TorchScript compiles to a prim operator without a source range (`d = x.dtype`
  // is prim::dtype(x), its range dropped): Python read an attribute, which FX records as
  // builtins.getattr(x, 'dtype').
  // So is `y.real` (aten::real, its range dropped too; `torch.real(y)` keeps its range).
  const bool complexPart = ns == "aten" && (name == "real" || name == "imag") && !expr;
  if ((ns == "prim" || complexPart) && inputs.size() == 1 && (isTensorProperty(name) || complexPart)) {
    form.target = fx_target::kGetAttr.qualifiedName;
    form.args = {inputs[0], Argument(name)};
    return form;
  }
  const std::string qualified = ns + "::" + name;
  const size_t tensorInputs = std::count_if(constants.begin(), constants.end(), [](const auto& c) { return !c; });
  if (const auto* op = findOperatorForAten(qualified, inputs.size()); op && tensorInputs == inputs.size()) {
    form.target = fx_target::operatorTarget(op->name);
    form.args = inputs;
    return form;
  }
  if (const auto* op = findOperatorForAten(qualified, 2); op && inputs.size() == 3 && constants[2] &&
                                                          constants[2]->isInt() && constants[2]->toInt() == 1) {
    form.target = fx_target::operatorTarget(op->name);  // add/sub with alpha 1
    form.args = {inputs[0], inputs[1]};
    return form;
  }
  if (!schema) {
    form.target = "torch.ops." + ns + "." + name;
    form.args = inputs;
    return form;
  }
  if (const auto* callable = findCallableForAten(qualified)) {
    form.target = callable->target;
  } else if (ns == "aten" && isTensorMethod(name) && !inputs.empty()) {
    form.op = OpKind::CallMethod;
    form.target = name;
  } else {
    // torch.ops.NS.NAME exists for every registered operator.
    form.target = "torch.ops." + ns + "." + name;
  }
  schemaArguments(*schema, inputs, constants, 0, form);
  // A vararg operator (aten::format) takes the inputs past its schema's arguments positionally.
  if (schema->is_vararg() && form.kwargs.empty() && inputs.size() > schema->arguments().size()) {
    form.args.resize(std::min(form.args.size(), schema->arguments().size()));
    while (form.args.size() < schema->arguments().size()) form.args.push_back(inputs[form.args.size()]);
    form.args.insert(form.args.end(), inputs.begin() + schema->arguments().size(), inputs.end());
  }
  if (form.op == OpKind::CallMethod && form.args.empty()) form.args.push_back(inputs[0]);
  return form;
}

}  // namespace tdfx::trace
