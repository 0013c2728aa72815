#include "call_form.h"

#include <algorithm>
#include <map>

#include "fx_tables.h"
#include "tdfx/util/python_repr.h"

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
      {"torch.functional", "torch.functional"}};
  auto it = namespaces.find(prefix);
  if (it == namespaces.end()) return std::nullopt;
  return it->second;
}

bool isListType(c10::TypePtr t) {
  if (t && t->kind() == c10::TypeKind::OptionalType) t = t->expectRef<c10::OptionalType>().getElementType();
  return t && t->kind() == c10::TypeKind::ListType;
}

// Maps a written call's arguments onto schema inputs. `offset` is 1 for methods (self is args[0]).
bool mapWrittenArguments(const py::Expr& call, const c10::FunctionSchema& schema, size_t offset,
                         const std::vector<Argument>& inputs, CallForm& form) {
  const auto& sargs = schema.arguments();
  size_t positionalSlots = 0;
  while (positionalSlots < sargs.size() && !sargs[positionalSlots].kwarg_only()) ++positionalSlots;
  if (positionalSlots < offset || inputs.size() != sargs.size()) return false;
  for (const py::ExprPtr& item : call.items)
    if (item->kind == py::Expr::Kind::Starred) return false;  // *args: counts say nothing
  const size_t written = call.positionalCount();
  const size_t available = positionalSlots - offset;
  for (size_t i = 0; i < offset; ++i) form.args.push_back(inputs[i]);
  if (written <= available) {
    for (size_t i = 0; i < written; ++i) {
      // `x.sum(0)` for an int[1] parameter: TorchScript wrapped the scalar in a list, the user did not.
      const Argument& in = inputs[offset + i];
      const py::Expr& text = *call.items[1 + i];
      const auto* items = in.items();
      const bool wrapped = isListType(sargs[offset + i].type()) && items && items->size() == 1 &&
                           std::holds_alternative<ArgumentList>(in.value) && text.kind != py::Expr::Kind::List &&
                           text.kind != py::Expr::Kind::Tuple;
      form.args.push_back(wrapped ? items->front() : in);
    }
  } else {
    // Varargs like x.view(2, 3) or x.permute(0, 2, 1): TorchScript packed them into the last list.
    if (available == 0 || !isListType(sargs[offset + available - 1].type())) return false;
    const std::vector<Argument>* items = inputs[offset + available - 1].items();
    if (!items || available - 1 + items->size() != written) return false;
    for (size_t i = 0; i + 1 < available; ++i) form.args.push_back(inputs[offset + i]);
    for (const Argument& a : *items) form.args.push_back(a);
  }
  for (const std::string& name : call.keywords) {
    bool found = false;
    for (size_t i = 0; i < sargs.size(); ++i) {
      if (sargs[i].name() == name) {
        form.kwargs.emplace_back(name, inputs[i]);
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
  form.target = "operator." + name;
  if (unary) {
    if (inputs.empty()) return std::nullopt;
    form.args = {inputs[0]};
    return form;
  }
  if (inputs.size() < 2) return std::nullopt;
  // aten::add/sub carry alpha; only alpha == 1 is the plain operator.
  if (inputs.size() > 2) {
    const std::string kind = node.kind().toUnqualString();
    const bool alphaOne = (kind == "add" || kind == "sub") && inputs.size() == 3 && constants[2] && constants[2]->isInt() &&
                          constants[2]->toInt() == 1;
    if (!alphaOne) return std::nullopt;
  }
  if (operandsSwapped(expr, constants, inputNames)) {
    form.args = {inputs[1], inputs[0]};
  } else {
    form.args = {inputs[0], inputs[1]};
  }
  return form;
}

// The call as the user wrote it: `torch.softmax(x, dim=1)`, `F.linear(x, w)`, `x.view(n, -1)`.
std::optional<CallForm> writtenCall(const py::Expr& call, const c10::FunctionSchema& schema,
                                    const std::vector<Argument>& inputs) {
  const py::Expr& callee = *call.items[0];
  if (callee.kind != py::Expr::Kind::Attribute) return std::nullopt;
  CallForm form;
  const auto prefix = py::dottedName(*callee.items[0]);
  if (prefix) {
    if (auto ns = functionNamespace(*prefix)) {
      const auto* callable = findCallable(*ns + "." + callee.text);
      if (!callable || callable->kind != CallKind::AsWritten) return std::nullopt;
      form.target = callable->target;
      if (!mapWrittenArguments(call, schema, 0, inputs, form)) return std::nullopt;
      return form;
    }
  }
  form.op = OpKind::CallMethod;
  form.target = callee.text;
  if (!mapWrittenArguments(call, schema, 1, inputs, form)) return std::nullopt;
  return form;
}

}  // namespace

std::optional<CallForm> writtenFunctionArgs(const c10::FunctionSchema& schema, const py::ExprPtr& expr,
                                            const std::vector<Argument>& inputs) {
  if (!expr || expr->kind != py::Expr::Kind::Call) return std::nullopt;
  const py::Expr& callee = *expr->items[0];
  const std::string name = callee.kind == py::Expr::Kind::Attribute || callee.kind == py::Expr::Kind::Name ? callee.text : "";
  if (name != schema.name().substr(schema.name().rfind('.') + 1)) return std::nullopt;
  CallForm form;
  if (!mapWrittenArguments(*expr, schema, 0, inputs, form)) return std::nullopt;
  return form;
}

std::optional<CallForm> handledCallArgs(const generated::CallableSpelling& callable, const c10::FunctionSchema& schema,
                                        const std::vector<Argument>& inputs) {
  const auto valueOf = [&](const std::string& name) -> std::optional<Argument> {
    const auto& sargs = schema.arguments();
    for (size_t i = 0; i < sargs.size() && i < inputs.size(); ++i)
      if (sargs[i].name() == name) return coerceToSchemaType(inputs[i], sargs[i].real_type());
    return std::nullopt;
  };
  const auto names = [](const char* list) {
    std::vector<std::string> out;
    std::string current;
    for (const char* p = list; *p; ++p) {
      if (*p == ',') {
        out.push_back(current);
        current.clear();
      } else {
        current += *p;
      }
    }
    if (!current.empty()) out.push_back(current);
    return out;
  };
  CallForm form;
  form.target = callable.target;
  for (const std::string& name : names(callable.args)) {
    auto v = valueOf(name);
    if (!v) return std::nullopt;
    form.args.push_back(std::move(*v));
  }
  for (const std::string& name : names(callable.kwargs)) {
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

CallForm callFormFor(const torch::jit::Node& node, const py::ExprPtr& expr, const std::vector<Argument>& inputs,
                     const std::vector<std::optional<c10::IValue>>& constants,
                     const std::vector<std::string>& inputNames) {
  const std::string ns = node.kind().ns().toUnqualString();
  const std::string name = node.kind().toUnqualString();
  const c10::FunctionSchema* schema = node.maybeSchema();

  if (expr) {
    using K = py::Expr::Kind;
    switch (expr->kind) {
      case K::Attribute:
        // Attribute reads: x.dtype, x.device, x.shape (aten::size), x.ndim (aten::dim).
        if (inputs.size() == 1 && ((ns == "prim" && name == expr->text) || (name == "size" && expr->text == "shape") ||
                                   (name == "dim" && expr->text == "ndim"))) {
          CallForm form;
          form.target = "builtins.getattr";
          form.args = {inputs[0], Argument(expr->text)};
          return form;
        }
        break;
      case K::Call:
        if (schema) {
          if (auto form = writtenCall(*expr, *schema, inputs)) return *form;
        }
        break;
      case K::BinOp:
      case K::UnaryOp:
      case K::Compare:
        if (auto form = operatorForm(*expr, node, inputs, constants, inputNames)) return *form;
        break;
      default: break;
    }
  }

  // No usable source text: the spelling torch's tables give the operator, defaults left out.
  CallForm form;
  const std::string qualified = ns + "::" + name;
  const size_t tensorInputs = std::count_if(constants.begin(), constants.end(), [](const auto& c) { return !c; });
  if (const auto* op = findOperatorForAten(qualified, inputs.size()); op && tensorInputs == inputs.size()) {
    form.target = std::string("operator.") + op->name;
    form.args = inputs;
    return form;
  }
  if (const auto* op = findOperatorForAten(qualified, 2); op && inputs.size() == 3 && constants[2] &&
                                                          constants[2]->isInt() && constants[2]->toInt() == 1) {
    form.target = std::string("operator.") + op->name;  // add/sub with alpha 1
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
  if (form.op == OpKind::CallMethod && form.args.empty()) form.args.push_back(inputs[0]);
  return form;
}

}  // namespace tdfx::trace
