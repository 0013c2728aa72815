#include "call_form.h"

#include <map>
#include <set>

#include "call_text.h"
#include "tdfx/util/python_repr.h"

namespace tdfx::trace {
namespace {

// aten operator name -> Python operator module function that FX prints with operator syntax.
const std::map<std::string, std::string>& binaryOperators() {
  static const std::map<std::string, std::string> ops = {
      {"add", "add"},       {"sub", "sub"},         {"mul", "mul"},           {"div", "truediv"},
      {"true_divide", "truediv"}, {"floor_divide", "floordiv"}, {"floordiv", "floordiv"},
      {"remainder", "mod"}, {"pow", "pow"},         {"matmul", "matmul"},     {"eq", "eq"},
      {"ne", "ne"},         {"lt", "lt"},           {"gt", "gt"},             {"le", "le"},
      {"ge", "ge"},         {"__and__", "and_"},    {"bitwise_and", "and_"},  {"__or__", "or_"},
      {"bitwise_or", "or_"}, {"__xor__", "xor"},    {"bitwise_xor", "xor"},   {"__lshift__", "lshift"},
      {"__rshift__", "rshift"}, {"__getitem__", "getitem"}};
  return ops;
}

const std::map<std::string, std::string>& unaryOperators() {
  static const std::map<std::string, std::string> ops = {
      {"neg", "neg"}, {"bitwise_not", "invert"}};
  return ops;
}

// Callee prefixes that name a function namespace rather than an object (so `torch.relu(x)` is a
// function and `x.relu()` a method). `F` and `nn.functional` are the usual aliases.
std::optional<std::string> functionNamespace(const std::string& prefix) {
  static const std::map<std::string, std::string> namespaces = {
      {"torch", "torch"},
      {"torch.nn.functional", "torch.nn.functional"},
      {"nn.functional", "torch.nn.functional"},
      {"F", "torch.nn.functional"},
      {"torch.special", "torch.special"},
      {"torch.linalg", "torch.linalg"},
      {"torch.fft", "torch.fft"},
      {"math", "math"}};
  auto it = namespaces.find(prefix);
  if (it == namespaces.end()) return std::nullopt;
  return it->second;
}

bool isListType(c10::TypePtr t) {
  if (t && t->kind() == c10::TypeKind::OptionalType) t = t->expectRef<c10::OptionalType>().getElementType();
  return t && t->kind() == c10::TypeKind::ListType;
}

// Maps a written call's arguments onto schema inputs. `offset` is 1 for methods (self is args[0]).
bool mapWrittenArguments(const CallText& call, const c10::FunctionSchema& schema, size_t offset,
                         const std::vector<Argument>& inputs, CallForm& form) {
  const auto& sargs = schema.arguments();
  size_t positionalSlots = 0;
  while (positionalSlots < sargs.size() && !sargs[positionalSlots].kwarg_only()) ++positionalSlots;
  if (positionalSlots < offset || inputs.size() != sargs.size()) return false;
  const size_t written = call.positionalCount;
  const size_t available = positionalSlots - offset;
  for (size_t i = 0; i < offset; ++i) form.args.push_back(inputs[i]);
  if (written <= available) {
    for (size_t i = 0; i < written; ++i) {
      // `x.sum(0)` for an int[1] parameter: TorchScript wrapped the scalar in a list, the user did not.
      const Argument& in = inputs[offset + i];
      const std::string& text = call.positionalTexts[i];
      const auto* items = in.items();
      const bool wrapped = isListType(sargs[offset + i].type()) && items && items->size() == 1 &&
                           std::holds_alternative<ArgumentList>(in.value) && !text.empty() && text[0] != '[' &&
                           text[0] != '(';
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
  for (const std::string& name : call.keywordNames) {
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

std::string fallbackTarget(const std::string& ns, const std::string& name) {
  if (ns == "aten" && !name.empty() && name[0] != '_') return "torch." + name;
  return "torch.ops." + ns + "." + name;
}

}  // namespace

std::optional<CallForm> writtenFunctionArgs(const c10::FunctionSchema& schema, const std::string& sourceText,
                                            const std::vector<Argument>& inputs) {
  auto call = parseCallText(sourceText);
  if (!call || call->hasStarArgs || calleeName(call->callee) != schema.name().substr(schema.name().rfind('.') + 1))
    return std::nullopt;
  CallForm form;
  if (!mapWrittenArguments(*call, schema, 0, inputs, form)) return std::nullopt;
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

CallForm callFormFor(const torch::jit::Node& node, const std::string& text, const std::vector<Argument>& inputs,
                     const std::vector<std::optional<c10::IValue>>& constants) {
  const std::string ns = node.kind().ns().toUnqualString();
  const std::string name = node.kind().toUnqualString();
  const c10::FunctionSchema* schema = node.maybeSchema();
  const bool inplace = name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_';
  const std::string base = inplace ? name.substr(0, name.size() - 1) : name;
  CallForm form;

  // Attribute reads: x.dtype, x.device, x.shape (also when the range covers a subscript: x.shape[-1]).
  if (auto attr = parseAttributeText(withoutTrailingSubscripts(text)); attr && inputs.size() == 1) {
    const bool matches = (ns == "prim" && (name == *attr)) || (name == "size" && *attr == "shape");
    if (matches) {
      form.target = "builtins.getattr";
      form.args = {inputs[0], Argument(*attr)};
      return form;
    }
  }

  // The call as the user wrote it.
  auto call = parseCallText(text);
  if (call && schema && !call->hasStarArgs) {
    const std::string written = calleeName(call->callee);
    if (written == base || written == name) {
      const std::string prefix = calleePrefix(call->callee);
      CallForm written_form;
      bool ok = false;
      if (prefix.empty()) {
        written_form.target = isPythonBuiltin(written) ? "builtins." + written : fallbackTarget(ns, written);
        ok = mapWrittenArguments(*call, *schema, 0, inputs, written_form);
      } else if (auto fnNs = functionNamespace(prefix)) {
        written_form.target = *fnNs + "." + written;
        ok = mapWrittenArguments(*call, *schema, 0, inputs, written_form);
      } else {
        written_form.op = OpKind::CallMethod;
        written_form.target = written;
        ok = mapWrittenArguments(*call, *schema, 1, inputs, written_form);
      }
      if (ok) return written_form;
    }
  }

  // Python operators: `a * b`, `-x`, `x[i]`.
  const auto& binary = binaryOperators();
  if (auto it = binary.find(base); it != binary.end() && inputs.size() >= 2) {
    // aten::add/sub carry alpha; only alpha == 1 is the plain operator.
    const bool plainAlpha = inputs.size() < 3 || (constants.size() > 2 && constants[2] && constants[2]->isInt() &&
                                                  constants[2]->toInt() == 1);
    if (plainAlpha && (inputs.size() <= 2 || base == "add" || base == "sub")) {
      form.target = "operator." + it->second;
      form.args = {inputs[0], inputs[1]};
      return form;
    }
  }
  if (base == "rsub" && inputs.size() == 3 && constants[2] && constants[2]->isInt() && constants[2]->toInt() == 1) {
    form.target = "operator.sub";
    form.args = {inputs[1], inputs[0]};
    return form;
  }
  if (auto it = unaryOperators().find(base); it != unaryOperators().end() && inputs.size() == 1) {
    form.target = "operator." + it->second;
    form.args = {inputs[0]};
    return form;
  }

  // No usable source text: a function call with the schema's arguments, defaults left out.
  form.target = fallbackTarget(ns, name);
  if (!schema) {
    form.args = inputs;
    return form;
  }
  const auto& sargs = schema->arguments();
  size_t lastPositional = 0;
  for (size_t i = 0; i < sargs.size() && i < inputs.size(); ++i) {
    if (sargs[i].kwarg_only()) {
      if (!equalsDefault(constants[i], sargs[i])) form.kwargs.emplace_back(sargs[i].name(), inputs[i]);
    } else if (!equalsDefault(constants[i], sargs[i])) {
      lastPositional = i + 1;
    }
  }
  for (size_t i = 0; i < lastPositional; ++i) form.args.push_back(inputs[i]);
  return form;
}

}  // namespace tdfx::trace
