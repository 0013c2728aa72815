#pragma once
// NodeEmitter: the one place that knows how a printed node runs. It emits any node kind
// (placeholder default, get_attr, call_module, call_function with getitem and torch._assert,
// call_method, output) into a TorchScript graph, the way TorchScript compiles the same Python
// line. The whole forward (tdfx/runtime/torchscript_export.h) emits every node into one function;
// the interpreter (GraphModule's node-by-node run, runtime/node_functions.h) emits each node into a
// small function of its own. Both therefore run the same code for a node.
#include <functional>
#include <map>
#include <string>

#include <torch/csrc/jit/api/module.h>

#include "call_emitter.h"
#include "tdfx/trace/symbolic_trace.h"

namespace tdfx::runtime {

/// The module a printed graph's code reads get_attr and call_module targets from: the traced
/// module roots as submodules (`module`, `module_0_module`, ... after their target prefixes) and
/// the graph's tensor constants as buffers. Shares the roots' TorchScript objects and tensors.
struct ModuleHolder {
  torch::jit::Module module;
  std::map<std::string, std::string> constantNames;  // get_attr target -> buffer name
};

/// A holder for `traced`, its class added to the traced archive's compilation unit. Throws
/// tdfx::RuntimeError when the graph has no module root.
ModuleHolder makeModuleHolder(const TracedGraph& traced);

/// The name a TensorDict key has in the flat `Dict[str, Tensor]` the emitted code reads.
using KeyName = std::function<std::string(const NestedKey&)>;

class NodeEmitter {
 public:
  /// Emits into `function`'s graph. `self` is a value of the holder's class; `tensordict` the
  /// graph's TensorDict placeholder (null for a plain archive), whose value is the flat dict.
  NodeEmitter(torch::jit::GraphFunction& function, const TracedGraph& traced, const ModuleHolder& holder,
              torch::jit::Value* self, const Node* tensordict, KeyName keyName);

  /// Makes `value` the value of `node` in what is emitted from now on.
  void bind(const Node* node, torch::jit::Value* value) { calls_.bind(node, value); }
  torch::jit::Value* valueOf(const Node* node) const { return calls_.valueOf(node); }

  /// Emits `node` and returns its value:
  /// - placeholder: its default (an argument not given); throws when it has none;
  /// - get_attr: the attribute; call_module: the submodule's forward (or the first overload that
  ///   takes the arguments, as Python's forward chooses), called on the arguments;
  /// - call_function / call_method: the call as TorchScript compiles it (CallEmitter), a subscript
  ///   (`operator.getitem`, a TensorDict read on the TensorDict placeholder), an assertion (null);
  /// - output: a plain archive's returned value; a TensorDict module's values zipped with its out
  ///   keys, as one tuple (a returned tuple value is unpacked).
  /// Throws tdfx::RuntimeError when TorchScript cannot express the node.
  torch::jit::Value* emit(const Node& node);

  CallEmitter& calls() { return calls_; }

 private:
  torch::jit::Value* attribute(const std::string& target);
  torch::jit::Value* callModule(const Node& node);
  torch::jit::Value* subscript(const Node& node);
  void assertion(const Node& node);
  torch::jit::Value* output(const Node& node);
  std::vector<torch::jit::Value*> script(const std::string& source, const std::vector<const Node*>& params);

  torch::jit::Graph& graph_;
  const TracedGraph& traced_;
  const ModuleHolder& holder_;
  torch::jit::Value* self_;
  const Node* tensordict_;
  KeyName keyName_;
  CallEmitter calls_;
};

/// The distinct nodes `node`'s args and kwargs refer to, in order of first reference.
std::vector<const Node*> referencedNodes(const Node& node);

/// The key of `tensordict[key]` as printed: a str, or a tuple of str. Throws tdfx::RuntimeError
/// for anything else.
NestedKey tensordictKey(const Argument& key);

}  // namespace tdfx::runtime
