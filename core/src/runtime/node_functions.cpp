#include "node_functions.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include "tdfx/error.h"

namespace tdfx::runtime {

namespace jit = torch::jit;

namespace {
bool holdsUndefinedTensor(const c10::IValue& value) {
  if (value.isTensor()) return !value.toTensor().defined();
  if (value.isTuple())
    for (const c10::IValue& e : value.toTupleRef().elements())
      if (holdsUndefinedTensor(e)) return true;
  return false;
}
}  // namespace

c10::TypePtr valueType(const c10::IValue& value) {
  if (value.isTensor()) return c10::TensorType::get();
  // IValue::type() asks an undefined tensor for its strides (nn.MultiheadAttention returns one as
  // its weights when they are not needed): a tuple holding one is typed element by element.
  if (value.isTuple() && holdsUndefinedTensor(value)) {
    std::vector<c10::TypePtr> elements;
    for (const c10::IValue& e : value.toTupleRef().elements()) elements.push_back(valueType(e));
    return c10::TupleType::create(std::move(elements));
  }
  return c10::unshapedType(value.type());
}

NodeFunctions::NodeFunctions(TracedGraph traced, const Node* tensordict, KeyName keyName)
    : traced_(std::move(traced)), tensordict_(tensordict), keyName_(std::move(keyName)), nodes_(traced_.graph->size()) {}

const ModuleHolder& NodeFunctions::holder() const {
  std::call_once(holderOnce_, [this] { holder_ = std::make_unique<ModuleHolder>(makeModuleHolder(traced_)); });
  return *holder_;
}

c10::IValue NodeFunctions::run(const Node& node, std::vector<c10::IValue> inputs) const {
  const auto call = compiled(node, inputs);
  inputs.insert(inputs.begin(), holder().module._ivalue());
  jit::InterpreterState state(*call->code);
  state.run(inputs);
  if (call->namedResult && inputs.back().isTuple())
    return c10::ivalue::Tuple::createNamed(inputs.back().toTupleRef().elements().vec(), call->namedResult);
  return inputs.back();
}

std::shared_ptr<const CompiledNode> NodeFunctions::compiled(const Node& node, const std::vector<c10::IValue>& inputs) const {
  std::vector<c10::TypePtr> types;
  types.reserve(inputs.size());
  for (const c10::IValue& v : inputs) types.push_back(valueType(v));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto& cached = nodes_.at(node.index());
    if (cached && cached->inputTypes.size() == types.size()) {
      bool same = true;
      for (size_t i = 0; i < types.size() && same; ++i) same = *cached->inputTypes[i] == *types[i];
      if (same) return cached;
    }
  }
  auto call = compile(node, std::move(types));
  std::lock_guard<std::mutex> lock(mutex_);
  nodes_.at(node.index()) = call;
  return call;
}

std::shared_ptr<const CompiledNode> NodeFunctions::compile(const Node& node, std::vector<c10::TypePtr> types) const {
  auto graph = std::make_shared<jit::Graph>();
  jit::GraphFunction function(c10::QualifiedName("tdfx_node." + node.name()), graph, nullptr);
  const ModuleHolder& h = holder();
  jit::Value* self = graph->addInput("self")->setType(h.module.type());
  NodeEmitter emitter(function, traced_, h, self, tensordict_, keyName_);
  const auto refs = referencedNodes(node);
  for (size_t i = 0; i < refs.size(); ++i) emitter.bind(refs[i], graph->addInput()->setType(types[i]));
  jit::Value* out = emitter.emit(node);
  if (!out) out = graph->insertConstant(c10::IValue());  // an assertion has no value
  auto call = std::make_shared<CompiledNode>();
  call->inputTypes = std::move(types);
  if (auto tuple = out->type()->cast<c10::TupleType>(); tuple && tuple->schema()) call->namedResult = tuple;
  graph->registerOutput(out);
  call->code = std::make_shared<jit::Code>(graph, node.name());
  return call;
}

}  // namespace tdfx::runtime
