#include "tdfx/runtime/interpreter.h"

#include <chrono>

#include <torch/csrc/autograd/grad_mode.h>

#include "tdfx/error.h"
#include "node_functions.h"

namespace tdfx {
namespace {

std::string describe(const Node& node, const std::string& printed) {
  std::string s = "node '" + node.name() + "' (" + opKindName(node.op()) + " " + node.target();
  if (!node.meta().sourceFile.empty())
    s += ", " + node.meta().sourceFile + ":" + std::to_string(node.meta().sourceLine);
  s += ")";
  if (!printed.empty()) s += ", printed `" + printed + "`,";
  return s;
}

std::vector<TensorMeta> tensorMetas(const c10::IValue& value) {
  std::vector<TensorMeta> outs;
  const auto add = [&](const c10::IValue& v) {
    if (v.isTensor()) outs.push_back(TensorMeta{v.toTensor().sizes().vec(), v.toTensor().scalar_type()});
  };
  if (value.isTuple()) {
    for (const auto& v : value.toTupleRef().elements()) add(v);
  } else if (value.isList()) {
    for (const auto& v : value.toListRef()) add(v);
  } else {
    add(value);
  }
  return outs;
}

}  // namespace

void RecordingObserver::onNode(const Node& node, const c10::IValue& value, double seconds) {
  if (node.op() == OpKind::Placeholder) return;  // an input: not something the graph computed
  records_.at(node.index()).seconds = seconds;
  records_.at(node.index()).outputs = tensorMetas(value);
}

CapturingObserver::CapturingObserver(const Graph& graph, const std::vector<const Node*>& nodes)
    : nodes_(nodes), wanted_(graph.size(), false), byIndex_(graph.size()) {
  for (const Node* n : nodes_) wanted_.at(n->index()) = true;
}

void CapturingObserver::onNode(const Node& node, const c10::IValue& value, double) {
  if (wanted_[node.index()]) byIndex_[node.index()] = value;
}

bool CapturingObserver::keeps(const Node& node) const { return wanted_[node.index()]; }

std::vector<c10::IValue> CapturingObserver::values() const {
  std::vector<c10::IValue> out;
  for (const Node* n : nodes_) out.push_back(byIndex_[n->index()]);
  return out;
}

c10::IValue Interpreter::placeholder(const Node& node, const TensorDict& td) const {
  if (&node == module_.tensordict_) return module_.readsOf(td);  // the flat dict of the keys read, as the whole forward takes it
  // A plain module's parameter reads the key of its name; one that is not given takes its default
  // (a node function, as a call is).
  if (td.contains(NestedKey(node.target())) || node.args().empty()) return td.get(NestedKey(node.target()));
  return module_.nodeFunctions_->run(node, {});
}

c10::IValue Interpreter::call(const Node& node, const std::vector<c10::IValue>& env) const {
  const auto& reads = module_.callInputs_[node.index()];
  std::vector<c10::IValue> inputs;
  inputs.reserve(reads.size());
  for (const Node* n : reads) inputs.push_back(env[n->index()]);
  return module_.nodeFunctions_->run(node, std::move(inputs));
}

std::vector<c10::IValue> Interpreter::output(const c10::IValue& value) {
  // A TensorDict module's values zipped with its out keys, or a plain archive's result.
  if (value.isTuple()) return value.toTupleRef().elements().vec();
  return {value};
}

std::vector<c10::IValue> Interpreter::run(TensorDict& td) const {
  module_.checkRevision();
  if (!module_.nodeFunctions_) throw RuntimeError("the traced graph has no module to run");
  torch::NoGradGuard noGrad;
  const auto& nodes = module_.graph().nodes();
  std::vector<c10::IValue> env(nodes.size());
  std::vector<bool> keep(nodes.size(), false);
  for (const RunObserver* o : observers_)
    for (const auto& n : nodes) keep[n->index()] = keep[n->index()] || o->keeps(*n);
  std::vector<c10::IValue> outputs;
  for (const auto& nodePtr : nodes) {
    const Node& node = *nodePtr;
    const size_t i = node.index();
    const auto started = std::chrono::steady_clock::now();
    try {
      switch (node.op()) {
        case OpKind::Placeholder:
          env[i] = placeholder(node, td);
          break;
        case OpKind::Output:
          env[i] = call(node, env);
          outputs = output(env[i]);
          break;
        default:
          env[i] = call(node, env);
      }
    } catch (const KeyError&) {
      throw;
    } catch (const c10::Error& e) {
      throw RuntimeError("running " + describe(node, module_.printedLine(node)) + " failed: " + e.what_without_backtrace());
    } catch (const std::exception& e) {
      throw RuntimeError("running " + describe(node, module_.printedLine(node)) + " failed: " + e.what());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (node.op() != OpKind::Output)
      for (RunObserver* o : observers_) o->onNode(node, env[i], seconds);  // their errors are their own
    // Free values after their last use, like the `x = None` lines of FX code.
    for (size_t used : module_.freeAfter_[i])
      if (!keep[used]) env[used] = c10::IValue();
  }
  return outputs;
}

}  // namespace tdfx
