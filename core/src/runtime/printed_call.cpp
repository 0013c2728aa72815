#include "printed_call.h"

#include <sstream>
#include <unordered_map>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include "call_emitter.h"
#include "tdfx/error.h"

namespace tdfx::runtime {

namespace jit = torch::jit;

c10::TypePtr valueType(const c10::IValue& value) {
  if (value.isTensor()) return c10::TensorType::get();
  return c10::unshapedType(value.type());
}

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

c10::IValue argumentValue(const Argument& arg, const std::function<c10::IValue(const Node*)>& valueOf) {
  struct Visitor {
    const std::function<c10::IValue(const Node*)>& valueOf;
    c10::IValue operator()(std::monostate) const { return {}; }
    c10::IValue operator()(bool b) const { return b; }
    c10::IValue operator()(int64_t v) const { return v; }
    c10::IValue operator()(double v) const { return v; }
    c10::IValue operator()(const std::string& s) const { return s; }
    c10::IValue operator()(Node* n) const {
      if (!valueOf) throw RuntimeError("internal error: a node value is needed here");
      return valueOf(n);
    }
    c10::IValue operator()(const ArgumentList& l) const {
      std::vector<c10::IValue> items;
      std::vector<c10::TypePtr> types;
      for (const Argument& a : l.items) {
        items.push_back(argumentValue(a, valueOf));
        types.push_back(valueType(items.back()));
      }
      c10::TypePtr element = c10::TensorType::get();
      if (!types.empty()) {
        std::ostringstream whyNot;
        auto unified = c10::unifyTypeList(types, whyNot);
        element = unified ? *unified : c10::AnyType::get();
      }
      c10::impl::GenericList list(element);
      for (auto& v : items) list.push_back(std::move(v));
      return list;
    }
    c10::IValue operator()(const ArgumentTuple& t) const {
      std::vector<c10::IValue> items;
      for (const Argument& a : t.items) items.push_back(argumentValue(a, valueOf));
      return c10::ivalue::Tuple::create(std::move(items));
    }
    c10::IValue operator()(const ArgumentDict& d) const {
      if (d.keys.empty()) return c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get());
      std::vector<c10::IValue> keys, values;
      for (const Argument& a : d.keys) keys.push_back(argumentValue(a, valueOf));
      for (const Argument& a : d.values) values.push_back(argumentValue(a, valueOf));
      c10::impl::GenericDict dict(valueType(keys[0]), valueType(values[0]));
      for (size_t i = 0; i < keys.size(); ++i) dict.insert_or_assign(keys[i], values[i]);
      return dict;
    }
    c10::IValue operator()(c10::ScalarType t) const { return t; }
    c10::IValue operator()(c10::Device d) const { return d; }
    c10::IValue operator()(c10::Layout l) const { return l; }
    c10::IValue operator()(c10::MemoryFormat m) const { return m; }
    c10::IValue operator()(const ArgumentSlice&) const {
      throw RuntimeError("a slice is only valid inside a subscript");
    }
    c10::IValue operator()(ArgumentEllipsis) const { throw RuntimeError("Ellipsis is only valid inside a subscript"); }
  };
  return std::visit(Visitor{valueOf}, arg.value);
}

PrintedCalls::PrintedCalls(size_t numNodes, std::shared_ptr<jit::CompilationUnit> functions)
    : functions_(std::move(functions)), calls_(numNodes) {}

c10::IValue PrintedCalls::run(const Node& node, std::vector<c10::IValue> inputs) const {
  const auto call = compiled(node, inputs);
  jit::InterpreterState state(*call->code);
  state.run(inputs);
  if (call->namedResult && inputs.back().isTuple())
    return c10::ivalue::Tuple::createNamed(inputs.back().toTupleRef().elements().vec(), call->namedResult);
  return inputs.back();
}

std::shared_ptr<const CompiledCall> PrintedCalls::compiled(const Node& node, const std::vector<c10::IValue>& inputs) const {
  std::vector<c10::TypePtr> types;
  types.reserve(inputs.size());
  for (const c10::IValue& v : inputs) types.push_back(valueType(v));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto& cached = calls_.at(node.index());
    if (cached && cached->inputTypes.size() == types.size()) {
      bool same = true;
      for (size_t i = 0; i < types.size() && same; ++i) same = *cached->inputTypes[i] == *types[i];
      if (same) return cached;
    }
  }
  auto call = compile(node, std::move(types));
  std::lock_guard<std::mutex> lock(mutex_);
  calls_.at(node.index()) = call;
  return call;
}

std::shared_ptr<const CompiledCall> PrintedCalls::compile(const Node& node, std::vector<c10::TypePtr> types) const {
  auto graph = std::make_shared<jit::Graph>();
  jit::GraphFunction function(c10::QualifiedName("tdfx_printed." + node.name()), graph, nullptr);
  CallEmitter emitter(function, functions_.get());
  const auto refs = referencedNodes(node);
  for (size_t i = 0; i < refs.size(); ++i) emitter.bind(refs[i], graph->addInput()->setType(types[i]));
  jit::Value* out = emitter.emitCall(node);
  auto call = std::make_shared<CompiledCall>();
  call->inputTypes = std::move(types);
  if (auto tuple = out->type()->cast<c10::TupleType>(); tuple && tuple->schema()) call->namedResult = tuple;
  graph->registerOutput(out);
  call->code = std::make_shared<jit::Code>(graph, node.name());
  return call;
}

}  // namespace tdfx::runtime
