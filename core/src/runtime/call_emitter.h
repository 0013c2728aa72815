#pragma once
// CallEmitter: emits printed nodes into a TorchScript graph, the way TorchScript compiles the same
// Python line. One emitter serves both the interpreter (a small graph per node, runtime/node_functions.h)
// and the TorchScript export (every node of the printed graph in one forward,
// tdfx/runtime/torchscript_export.h), so the two resolve targets and overloads alike.
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include "tdfx/ir/node.h"

namespace tdfx::runtime {

class CallEmitter {
 public:
  /// Emits into `function`'s graph. `functions` is the archive's compilation unit, where Python
  /// functions it holds compiled live (`__torch__.torch.nn.functional.relu`); may be null.
  CallEmitter(torch::jit::GraphFunction& function, torch::jit::CompilationUnit* functions);

  /// Makes `value` the value of `node` in what is emitted from now on.
  void bind(const Node* node, torch::jit::Value* value) { values_[node] = value; }
  /// The value bound to `node`; throws tdfx::RuntimeError when none is.
  torch::jit::Value* valueOf(const Node* node) const;
  /// An argument as a value: a bound node, a constant, or a list, tuple or dict built of them.
  torch::jit::Value* value(const Argument& argument);

  /// Emits a call_function or call_method node, resolving its target as Python would: a Tensor
  /// method or property on its self, `builtins.getattr`, a function the archive holds compiled
  /// (with Python's boolean dispatch and argument conversions), or a torch / operator / math
  /// builtin with the overload TorchScript's schema matching picks. Returns the call's result.
  /// Throws tdfx::RuntimeError when the target resolves to nothing or no overload takes the arguments.
  torch::jit::Value* emitCall(const Node& node);

  /// Compiles `source`, one TorchScript function whose parameters are typed `__t0`, `__t1`, ...,
  /// and inlines it here on `inputs` (the types of the inputs give the parameters' types). For
  /// Python that has no builtin of its own: a subscript, an assert, a conditional store.
  /// Returns the function's outputs. Throws tdfx::RuntimeError when TorchScript rejects it.
  std::vector<torch::jit::Value*> emitScript(const std::string& source, const std::vector<torch::jit::Value*>& inputs);

  torch::jit::Graph& graph() { return *function_.graph(); }
  torch::jit::GraphFunction& function() { return function_; }

 private:
  torch::jit::Value* toList(const Node& node);
  std::vector<torch::jit::NamedValue> positional(const Node& node, size_t from);
  std::vector<torch::jit::NamedValue> keywords(const Node& node);
  torch::jit::Value* emitResolved(const Node& node);

  torch::jit::GraphFunction& function_;
  torch::jit::CompilationUnit* functions_;
  std::unordered_map<const Node*, torch::jit::Value*> values_;
};

}  // namespace tdfx::runtime
