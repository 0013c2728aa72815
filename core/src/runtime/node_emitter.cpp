#include "node_emitter.h"

#include <cctype>
#include <sstream>

#include <torch/csrc/jit/frontend/schema_matching.h>
#include <torch/csrc/jit/frontend/sugared_value.h>

#include "tdfx/error.h"
#include "tdfx/runtime/graph_module.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx::runtime {

namespace jit = torch::jit;

namespace {

// A Python identifier for a target prefix or path: "0.module." -> "module_0_module".
std::string attributeName(const std::string& path) {
  std::string name = path.empty() ? "module" : "module_";
  for (char c : path) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  while (name.back() == '_') name.pop_back();
  return name;
}

// A Python identifier for a dotted target: "1.module._tensor_constant0" -> "_1_module__tensor_constant0".
std::string identifier(const std::string& target) {
  std::string name;
  for (char c : target) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
  return name;
}

// Python source of one subscript item: `1:`, `...`, `None`, a node's name.
std::string indexItemSource(const Argument& item) {
  if (const auto* slice = std::get_if<ArgumentSlice>(&item.value)) {
    const auto bound = [&](size_t i) { return slice->items.at(i).isNone() ? "" : formatCodeArgument(slice->items[i]); };
    std::string s = bound(0) + ":" + bound(1);
    if (!slice->items.at(2).isNone()) s += ":" + bound(2);
    return s;
  }
  if (std::holds_alternative<ArgumentEllipsis>(item.value)) return "...";
  return formatCodeArgument(item);
}

// The index of `container[index]` as Python source: a tuple index is written as its items.
std::string indexSource(const Argument& index) {
  const auto* tuple = std::get_if<ArgumentTuple>(&index.value);
  if (!tuple) return indexItemSource(index);
  if (tuple->items.empty()) return "()";
  std::string s;
  for (const Argument& item : tuple->items) s += (s.empty() ? "" : ", ") + indexItemSource(item);
  return tuple->items.size() == 1 ? s + "," : s;
}

// `def f(a: __t0, b: __t1):` with the nodes `node` reads as parameters, named as printed.
std::string scriptHeader(const std::vector<const Node*>& params) {
  std::string s = "def f(";
  for (size_t i = 0; i < params.size(); ++i) s += (i ? ", " : "") + params[i]->name() + ": __t" + std::to_string(i);
  return s + "):\n";
}

}  // namespace

std::vector<const Node*> referencedNodes(const Node& node) {
  std::vector<const Node*> out;
  const auto add = [&out](const Node* n) {
    for (const Node* seen : out)
      if (seen == n) return;
    out.push_back(n);
  };
  for (const Argument& a : node.args()) forEachNode(a, add);
  for (const auto& kv : node.kwargs()) forEachNode(kv.second, add);
  return out;
}

NestedKey tensordictKey(const Argument& key) {
  if (const auto* s = std::get_if<std::string>(&key.value)) return NestedKey(*s);
  std::vector<std::string> parts;
  if (const auto* items = key.items()) {
    for (const Argument& part : *items) {
      const auto* s = std::get_if<std::string>(&part.value);
      if (!s) throw RuntimeError("a TensorDict key part must be a string");
      parts.push_back(*s);
    }
  }
  if (parts.empty()) throw RuntimeError("a TensorDict is read with a string or a tuple of strings");
  return NestedKey(std::move(parts));
}

ModuleHolder makeModuleHolder(const TracedGraph& traced) {
  if (traced.moduleRoots.empty()) throw RuntimeError("the traced graph has no module to run");
  auto cu = traced.moduleRoots.front().second._ivalue()->compilation_unit();
  ModuleHolder holder{jit::Module(c10::QualifiedName("__torch__.tdfx.TracedGraphModule"), cu, /*shouldMangle=*/true), {}};
  for (const auto& [prefix, root] : traced.moduleRoots) holder.module.register_module(attributeName(prefix), root);
  // The graph's own tensors, as buffers named after their targets (`_1_module__tensor_constant0`).
  for (const auto& [target, tensor] : traced.tensorConstants) {
    std::string name = identifier(target);
    while (holder.module.type()->hasAttribute(name)) name += "_";
    holder.constantNames[target] = name;
    holder.module.register_buffer(name, tensor);
  }
  return holder;
}

NodeEmitter::NodeEmitter(jit::GraphFunction& function, const TracedGraph& traced, const ModuleHolder& holder,
                         jit::Value* self, const Node* tensordict, KeyName keyName)
    : graph_(*function.graph()), traced_(traced), holder_(holder), self_(self), tensordict_(tensordict),
      keyName_(std::move(keyName)),
      calls_(function, traced.moduleRoots.front().second._ivalue()->compilation_unit().get()) {}

jit::Value* NodeEmitter::emit(const Node& node) {
  switch (node.op()) {
    case OpKind::Placeholder:
      if (node.args().empty()) throw RuntimeError("forward's parameter '" + node.target() + "' has no value and no default");
      return calls_.value(node.args().front());
    case OpKind::GetAttr: return attribute(node.target());
    case OpKind::CallModule: return callModule(node);
    case OpKind::Output: return output(node);
    case OpKind::CallFunction:
      if (fx_target::names(node.target(), fx_target::kGetItem) && node.args().size() == 2) return subscript(node);
      if (fx_target::names(node.target(), fx_target::kAssert)) {
        assertion(node);
        return nullptr;
      }
      [[fallthrough]];
    case OpKind::CallMethod:
      // `b.__getitem__((idx,))`: FX's record of indexing a plain tensor with a Proxy; the same subscript.
      if (node.op() == OpKind::CallMethod && node.target() == "__getitem__" && node.args().size() == 2)
        return subscript(node);
      return calls_.emitCall(node);
  }
  return nullptr;
}

// get_attr: a tensor constant of the graph, or the attribute path under the longest module root
// prefix the target starts with.
jit::Value* NodeEmitter::attribute(const std::string& target) {
  if (auto it = holder_.constantNames.find(target); it != holder_.constantNames.end())
    return graph_.insertGetAttr(self_, it->second);
  const auto& root = moduleRootOf(traced_, target);
  jit::Value* v = graph_.insertGetAttr(self_, attributeName(root.first));
  std::stringstream rest(target.substr(root.first.size()));
  for (std::string part; std::getline(rest, part, '.');) {
    auto cls = v->type()->cast<c10::ClassType>();
    if (!cls || !cls->hasAttribute(part)) throw RuntimeError("the module has no attribute '" + part + "' (in '" + target + "')");
    v = graph_.insertGetAttr(v, part);
  }
  return v;
}

// `module(*args, **kwargs)`: its forward, or the first of the methods Python's forward chooses
// from whose schema takes the arguments: TorchScript compiles an @overload-ed forward (nn.GRU's) as
// forward__0, forward__1, ...; the dynamic quantized RNNs' forward picks forward_tensor or
// forward_packed by the input's type.
jit::Value* NodeEmitter::callModule(const Node& node) {
  jit::Value* module = attribute(node.target());
  auto cls = module->type()->cast<c10::ClassType>();
  if (!cls) throw RuntimeError("'" + node.target() + "' is not a module");
  std::vector<std::string> candidates{"forward"};
  for (int k = 0; cls->findMethod("forward__" + std::to_string(k)); ++k) candidates.push_back("forward__" + std::to_string(k));
  candidates.emplace_back("forward_tensor");
  candidates.emplace_back("forward_packed");
  std::vector<jit::NamedValue> args;
  for (const Argument& a : node.args()) args.emplace_back(calls_.value(a));
  std::vector<jit::NamedValue> kwargs;
  for (const auto& [name, a] : node.kwargs()) kwargs.emplace_back(name, calls_.value(a));
  std::string tried;
  for (const std::string& name : candidates) {
    jit::Function* method = cls->findMethod(name);
    if (!method) continue;
    std::vector<jit::NamedValue> withSelf{jit::NamedValue(module)};
    withSelf.insert(withSelf.end(), args.begin(), args.end());
    try {
      // A schema that does not match leaves at most dead conversions behind (removed at the end).
      return graph_.insertMethodCall(name, jit::matchSchema(method->getSchema(), {}, graph_, withSelf, kwargs));
    } catch (const std::exception& e) {
      tried += std::string("\n") + e.what();
    }
  }
  throw RuntimeError("the module has no forward that takes these arguments" + tried);
}

// `container[index]`: a TensorDict read on the TensorDict placeholder (its flat dict by the key's
// name), else Python's subscript as TorchScript compiles it.
jit::Value* NodeEmitter::subscript(const Node& node) {
  const Argument& container = node.args()[0];
  if (tensordict_ && container.isNode() && container.node() == tensordict_) {
    const std::string key = keyName_(tensordictKey(node.args()[1]));
    return jit::emitBuiltinCall({}, graph_, c10::Symbol::fromQualString("aten::__getitem__"),
                                {calls_.valueOf(tensordict_), graph_.insertConstant(key)}, {});
  }
  const auto params = referencedNodes(node);
  const std::string source =
      scriptHeader(params) + "    return " + formatCodeArgument(container) + "[" + indexSource(node.args()[1]) + "]\n";
  return script(source, params).at(0);
}

void NodeEmitter::assertion(const Node& node) {
  if (node.args().empty()) throw RuntimeError("torch._assert needs a condition");
  const auto params = referencedNodes(node);
  std::string source = scriptHeader(params) + "    assert " + formatCodeArgument(node.args()[0]);
  if (node.args().size() > 1) source += ", " + formatCodeArgument(node.args()[1]);
  script(source + "\n", params);
}

std::vector<jit::Value*> NodeEmitter::script(const std::string& source, const std::vector<const Node*>& params) {
  std::vector<jit::Value*> inputs;
  for (const Node* p : params) inputs.push_back(calls_.valueOf(p));
  return calls_.emitScript(source, inputs);
}

jit::Value* NodeEmitter::output(const Node& node) {
  const Argument& result = node.args().at(0);
  if (!traced_.readsTensorDict) return calls_.value(result);
  // The values zipped with the out keys: the printed tuple's items, or a tuple value's elements.
  std::vector<jit::Value*> values;
  if (const auto* items = result.items(); items && !result.isNode()) {
    for (const Argument& item : *items) values.push_back(calls_.value(item));
  } else {
    jit::Value* v = calls_.value(result);
    if (v->type()->cast<c10::TupleType>()) {
      for (jit::Value* e : graph_.insertNode(graph_.createTupleUnpack(v))->outputs()) values.push_back(e);
    } else {
      values.push_back(v);
    }
  }
  const auto& keys = traced_.outKeys;
  if (values.size() < keys.size())
    throw RuntimeError("the graph produces " + std::to_string(values.size()) + " value(s) but out_keys has " +
                       std::to_string(keys.size()) + " (" + keysToString(keys) + ")");
  return graph_.insertNode(graph_.createTuple(values))->output();
}

}  // namespace tdfx::runtime
