#include "call_emitter.h"

#include <sstream>
#include <unordered_map>

#include <torch/csrc/jit/frontend/builtin_functions.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/schema_matching.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "tdfx/error.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx::runtime {

namespace jit = torch::jit;

namespace {

// The Python operators FX records as operator.* and the TorchScript builtin each compiles to
// (torch/csrc/jit/frontend/ir_emitter.cpp, getNodeKind).
const std::unordered_map<std::string, std::string>& operatorBuiltins() {
  static const std::unordered_map<std::string, std::string> table = {
      {"add", "aten::add"},        {"sub", "aten::sub"},          {"mul", "aten::mul"},
      {"truediv", "aten::div"},    {"floordiv", "aten::floordiv"}, {"mod", "aten::remainder"},
      {"pow", "aten::pow"},        {"matmul", "aten::matmul"},    {"neg", "aten::neg"},
      {"eq", "aten::eq"},          {"ne", "aten::ne"},            {"lt", "aten::lt"},
      {"le", "aten::le"},          {"gt", "aten::gt"},            {"ge", "aten::ge"},
      {"and_", "aten::__and__"},   {"or_", "aten::__or__"},       {"xor", "aten::__xor__"},
      {"lshift", "aten::__lshift__"}, {"rshift", "aten::__rshift__"}, {"invert", "aten::bitwise_not"},
      {"not_", "aten::__not__"},   {"is_", "aten::__is__"},       {"is_not", "aten::__isnot__"},
      {"contains", "aten::__contains__"}, {"abs", "aten::abs"},
  };
  return table;
}

// Where torch keeps builtins under other names: `torch._C._nn.linear` is aten::linear.
const char* const kBuiltinNamespaces[] = {"torch._C._nn.", "torch._C._special.", "torch._C._linalg.",
                                          "torch._C._fft.", "torch.nn.functional.", "torch.functional.",
                                          "torch.", "math."};

bool startsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// The builtin a call_function target names, or "" when it names none.
std::string builtinSymbol(const std::string& target) {
  if (const auto name = fx_target::operatorName(target)) {
    const auto& table = operatorBuiltins();
    auto it = table.find(*name);
    return it == table.end() ? "" : it->second;
  }
  if (startsWith(target, "torch.ops.")) {  // torch.ops.aten.einsum
    const std::string rest = target.substr(10);
    const size_t dot = rest.find('.');
    if (dot == std::string::npos || rest.find('.', dot + 1) != std::string::npos) return "";
    return rest.substr(0, dot) + "::" + rest.substr(dot + 1);
  }
  for (const char* ns : kBuiltinNamespaces) {
    if (!startsWith(target, ns)) continue;
    const std::string name = target.substr(std::string(ns).size());
    if (name.empty() || name.find('.') != std::string::npos) return "";
    return "aten::" + name;
  }
  return "";
}

// torch.nn.functional's boolean_dispatch functions: which function Python calls depends on a
// bool argument (F.max_pool2d is _max_pool2d, or max_pool2d_with_indices with return_indices=True).
struct BooleanDispatch {
  const char* name;
  const char* argument;
  size_t position;
  const char* ifTrue;
  const char* ifFalse;
};
const BooleanDispatch kBooleanDispatches[] = {
    {"max_pool1d", "return_indices", 6, "max_pool1d_with_indices", "_max_pool1d"},
    {"max_pool2d", "return_indices", 6, "max_pool2d_with_indices", "_max_pool2d"},
    {"max_pool3d", "return_indices", 6, "max_pool3d_with_indices", "_max_pool3d"},
    {"adaptive_max_pool1d", "return_indices", 2, "adaptive_max_pool1d_with_indices", "_adaptive_max_pool1d"},
    {"adaptive_max_pool2d", "return_indices", 2, "adaptive_max_pool2d_with_indices", "_adaptive_max_pool2d"},
    {"adaptive_max_pool3d", "return_indices", 2, "adaptive_max_pool3d_with_indices", "_adaptive_max_pool3d"},
    {"fractional_max_pool2d", "return_indices", 4, "fractional_max_pool2d_with_indices", "_fractional_max_pool2d"},
    {"fractional_max_pool3d", "return_indices", 4, "fractional_max_pool3d_with_indices", "_fractional_max_pool3d"},
};

// The function a boolean_dispatch target calls with these arguments; `target` when it is none.
std::string dispatchedTarget(const Node& node) {
  const std::string prefix = "torch.nn.functional.";
  const std::string& target = node.target();
  if (!startsWith(target, prefix)) return target;
  for (const BooleanDispatch& d : kBooleanDispatches) {
    if (target.compare(prefix.size(), std::string::npos, d.name) != 0) continue;
    const Argument* flag = node.args().size() > d.position ? &node.args()[d.position] : nullptr;
    for (const auto& [name, arg] : node.kwargs())
      if (name == d.argument) flag = &arg;
    const bool on = flag && std::holds_alternative<bool>(flag->value) && std::get<bool>(flag->value);
    return prefix + (on ? d.ifTrue : d.ifFalse);
  }
  return target;
}

// How many ints a BroadcastingListN[int] parameter of this torch.nn.functional function takes:
// N for the N-d functions (`max_pool2d`, `_adaptive_max_pool3d`), 2 for fold and unfold; 0: none.
size_t broadcastLength(const std::string& name) {
  if (name == "fold" || name == "unfold") return 2;
  size_t n = 0;
  for (size_t i = 0; i + 1 < name.size(); ++i)
    if (name[i] >= '1' && name[i] <= '3' && name[i + 1] == 'd' && (i + 2 == name.size() || name[i + 2] == '_'))
      n = static_cast<size_t>(name[i] - '0');
  return n;
}

// Python's own argument conversions for a function the archive holds compiled, which its saved
// schema no longer allows: an int for a float parameter (`margin=0`), and an int for a size that
// torch.nn.functional declares BroadcastingListN[int] (F.max_pool2d takes `3` for `[3, 3]`), which
// an archive saves as List[int]; the int is repeated N times, as TorchScript did when it compiled the call.
void convertPythonArguments(const c10::FunctionSchema& schema, jit::Graph& graph, std::vector<jit::NamedValue>& args,
                            std::vector<jit::NamedValue>& kwargs) {
  const size_t n = broadcastLength(schema.name());
  const auto convert = [&](jit::NamedValue& v, const c10::Argument& param, bool named) {
    c10::TypePtr type = param.type();
    if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
    jit::Value* value = v.value(graph);
    if (!value->type()->isSubtypeOf(*c10::IntType::get())) return;
    jit::Value* converted = nullptr;
    if (type->kind() == c10::TypeKind::FloatType) {
      converted = graph.insert(c10::Symbol::fromQualString("aten::Float"), {value});
    } else if (n > 0 && type->isSubtypeOf(*c10::ListType::ofInts())) {
      converted = graph.insertNode(graph.createList(c10::IntType::get(), std::vector<jit::Value*>(n, value)))->output();
    }
    if (converted) v = named ? jit::NamedValue(v.name(), converted) : jit::NamedValue(converted);
  };
  const auto& params = schema.arguments();
  for (size_t i = 0; i < args.size() && i < params.size(); ++i) convert(args[i], params[i], false);
  for (auto& kw : kwargs)
    for (const auto& param : params)
      if (param.name() == kw.name()) convert(kw, param, true);
}

std::string stringArgument(const Node& node, size_t i) {
  if (node.args().size() <= i || !std::holds_alternative<std::string>(node.args()[i].value))
    throw RuntimeError("argument " + std::to_string(i) + " must be a string");
  return std::get<std::string>(node.args()[i].value);
}


// A constant argument as a value: None, bool, int, float, str, dtype (TorchScript's int), device,
// layout, memory format. Lists, tuples, dicts and nodes are values built by CallEmitter::value.
c10::IValue constantValue(const Argument& arg) {
  struct Visitor {
    c10::IValue operator()(std::monostate) const { return {}; }
    c10::IValue operator()(bool b) const { return b; }
    c10::IValue operator()(int64_t v) const { return v; }
    c10::IValue operator()(double v) const { return v; }
    c10::IValue operator()(const std::string& s) const { return s; }
    c10::IValue operator()(c10::ScalarType t) const { return t; }
    c10::IValue operator()(c10::Device d) const { return d; }
    c10::IValue operator()(c10::Layout l) const { return l; }
    c10::IValue operator()(c10::MemoryFormat m) const { return m; }
    c10::IValue operator()(const ArgumentSlice&) const { throw RuntimeError("a slice is only valid inside a subscript"); }
    c10::IValue operator()(ArgumentEllipsis) const { throw RuntimeError("Ellipsis is only valid inside a subscript"); }
    c10::IValue operator()(Node*) const { throw RuntimeError("internal error: a node is not a constant"); }
    c10::IValue operator()(const ArgumentList&) const { throw RuntimeError("internal error: a list is not a constant"); }
    c10::IValue operator()(const ArgumentTuple&) const { throw RuntimeError("internal error: a tuple is not a constant"); }
    c10::IValue operator()(const ArgumentDict&) const { throw RuntimeError("internal error: a dict is not a constant"); }
  };
  return std::visit(Visitor{}, arg.value);
}

// Resolves the parameter types of an emitted script (`__t0`, ...) and `torch`.
struct ScriptResolver : jit::NativeResolver {
  std::vector<c10::TypePtr> types;
  c10::TypePtr resolveType(const std::string& name, const jit::SourceRange&) override {
    if (name.rfind("__t", 0) != 0) return nullptr;
    const size_t i = std::stoul(name.substr(3));
    return i < types.size() ? types[i] : nullptr;
  }
};

}  // namespace

CallEmitter::CallEmitter(jit::GraphFunction& function, jit::CompilationUnit* functions)
    : function_(function), functions_(functions) {}

jit::Value* CallEmitter::valueOf(const Node* node) const {
  auto it = values_.find(node);
  if (it == values_.end()) throw RuntimeError("node '" + node->name() + "' is used before it is computed");
  return it->second;
}

jit::Value* CallEmitter::value(const Argument& a) {
  jit::Graph& g = graph();
  if (a.isNode()) return valueOf(a.node());
  if (const auto* l = std::get_if<ArgumentList>(&a.value)) {
    if (l->items.empty()) {
      // An empty list literal takes the list type the schema asks for, as in TorchScript.
      return g.insertNode(g.create(jit::prim::EmptyListLiteral))->output()->setType(c10::ListType::ofTensors());
    }
    std::vector<jit::Value*> items;
    std::vector<c10::TypePtr> types;
    for (const Argument& item : l->items) {
      items.push_back(value(item));
      types.push_back(items.back()->type());
    }
    std::ostringstream whyNot;
    auto unified = c10::unifyTypeList(types, whyNot);
    if (!unified) throw RuntimeError("the items of a list argument have no common type");
    return g.insertNode(g.createList(*unified, items))->output();
  }
  if (const auto* t = std::get_if<ArgumentTuple>(&a.value)) {
    std::vector<jit::Value*> items;
    for (const Argument& item : t->items) items.push_back(value(item));
    return g.insertNode(g.createTuple(items))->output();
  }
  if (const auto* d = std::get_if<ArgumentDict>(&a.value)) {
    std::vector<jit::Value*> keys, values;
    for (const Argument& k : d->keys) keys.push_back(value(k));
    for (const Argument& v : d->values) values.push_back(value(v));
    if (keys.empty()) throw RuntimeError("an empty dict argument has no type");
    return g.insertNode(g.createDict(keys[0]->type(), values[0]->type(), keys, values))->output();
  }
  return g.insertConstant(constantValue(a));
}

std::vector<jit::NamedValue> CallEmitter::positional(const Node& node, size_t from) {
  std::vector<jit::NamedValue> out;
  for (size_t i = from; i < node.args().size(); ++i) out.emplace_back(value(node.args()[i]));
  return out;
}

std::vector<jit::NamedValue> CallEmitter::keywords(const Node& node) {
  std::vector<jit::NamedValue> out;
  for (const auto& [name, arg] : node.kwargs()) out.emplace_back(name, value(arg));
  return out;
}

jit::Value* CallEmitter::emitCall(const Node& node) {
  try {
    return emitResolved(node);
  } catch (const RuntimeError&) {
    throw;
  } catch (const std::exception& e) {
    // TorchScript's schema matching explains which overloads it tried and why each failed.
    throw RuntimeError(std::string("no overload of '") + node.target() + "' takes these arguments: " + e.what());
  }
}

jit::Value* CallEmitter::emitResolved(const Node& node) {
  const jit::SourceRange loc;
  const std::string& target = node.target();
  if (node.op() == OpKind::CallMethod) {
    if (node.args().empty()) throw RuntimeError("a method call needs its self as the first argument");
    if (target == "tolist" && node.args().size() == 1 && node.kwargs().empty()) return toList(node);
    auto self = std::make_shared<jit::SimpleValue>(value(node.args()[0]));
    auto method = self->attr(loc, function_, target);
    return method->call(loc, function_, positional(node, 1), keywords(node), 1)->asValue(loc, function_);
  }
  if (fx_target::names(target, fx_target::kGetAttr)) {
    if (node.args().size() != 2 || !node.kwargs().empty()) throw RuntimeError("getattr takes an object and a name");
    auto object = std::make_shared<jit::SimpleValue>(value(node.args()[0]));
    return object->attr(loc, function_, stringArgument(node, 1))->asValue(loc, function_);
  }
  const c10::QualifiedName compiled("__torch__." + dispatchedTarget(node));
  if (jit::Function* fn = functions_ ? functions_->find_function(compiled) : nullptr) {
    // A Python function the archive holds compiled: torch.nn.functional.relu, a torchvision helper.
    auto args = positional(node, 0);
    auto kwargs = keywords(node);
    convertPythonArguments(fn->getSchema(), graph(), args, kwargs);
    jit::MatchedSchema matched = jit::matchSchema(fn->getSchema(), loc, graph(), args, kwargs);
    return graph().insertFunctionCall(fn, matched);
  }
  if (std::string symbol = builtinSymbol(target); !symbol.empty()) {
    // TorchScript's builtin for a Python function of the same name may be `__name`
    // (torch.nn.functional.interpolate is aten::__interpolate).
    const std::string hidden = symbol.substr(0, symbol.find("::") + 2) + "__" + symbol.substr(symbol.find("::") + 2);
    if (jit::getAllOperatorsFor(c10::Symbol::fromQualString(symbol)).empty() &&
        !jit::getAllOperatorsFor(c10::Symbol::fromQualString(hidden)).empty())
      symbol = hidden;
    const c10::Symbol op = c10::Symbol::fromQualString(symbol);
    if (jit::getAllOperatorsFor(op).empty() && jit::getAllBuiltinFunctionsFor(op).empty())
      throw RuntimeError("no function '" + target + "': neither a torch builtin (" + symbol +
                         ") nor a function the archive holds");
    auto args = positional(node, 0);
    auto kwargs = keywords(node);
    return jit::emitBuiltinCall(loc, graph(), op, args, kwargs);
  }
  throw RuntimeError("no function '" + target + "': neither a torch builtin nor a function the archive holds");
}

// TorchScript compiles `x.tolist()` only with the list's type annotated; the tracer kept the type
// the model's code gave it in the node's schema ("prim::tolist(Tensor self) -> List[float]").
jit::Value* CallEmitter::toList(const Node& node) {
  static const std::string kPrefix = "prim::tolist(Tensor self) -> ";
  const std::string& schema = node.meta().schema;
  if (schema.compare(0, kPrefix.size(), kPrefix) != 0)
    throw RuntimeError("x.tolist() needs the list's type, which the node does not record (its schema is '" + schema + "')");
  const std::string type = schema.substr(kPrefix.size());
  return emitScript("def f(x: __t0) -> " + type + ":\n    r: " + type + " = x.tolist()\n    return r\n",
                    {value(node.args()[0])})
      .at(0);
}

std::vector<jit::Value*> CallEmitter::emitScript(const std::string& source, const std::vector<jit::Value*>& inputs) {
  auto resolver = std::make_shared<ScriptResolver>();
  for (jit::Value* v : inputs) resolver->types.push_back(v->type());
  jit::CompilationUnit unit;
  std::vector<jit::Function*> defined;
  try {
    defined = unit.define(c10::nullopt, source, resolver, nullptr);
  } catch (const std::exception& e) {
    throw RuntimeError("TorchScript does not compile `" + source + "`: " + e.what());
  }
  std::shared_ptr<jit::Graph> callee = jit::toGraphFunction(*defined.at(0)).graph()->copy();
  return jit::insertGraph(graph(), *callee, inputs);
}

}  // namespace tdfx::runtime
