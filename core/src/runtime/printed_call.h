#pragma once
// PrintedCall: runs a call_function or call_method node from what the graph prints of it (target,
// args, kwargs) and nothing captured while tracing. The call is compiled the way TorchScript
// compiles the same Python line: its schema matching picks the overload from the argument values'
// types (with TorchScript's own conversions and builtin variants, so `2 * x` is `aten::mul(x, 2)`
// as in the eager archive), names like `torch.nn.functional.relu` resolve to the function the
// archive holds, Tensor methods and properties resolve on their self. The compiled call is kept
// per node for the input types it was compiled for.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/compilation_unit.h>

#include "tdfx/ir/node.h"

namespace torch::jit {
struct Code;
}

namespace tdfx::runtime {

/// A node's call, compiled for the types of the values it read.
struct CompiledCall {
  std::vector<c10::TypePtr> inputTypes;
  std::shared_ptr<torch::jit::Code> code;
  /// The call's result type when it is a named tuple (`torch.sort` gives values, indices): the
  /// interpreter builds a plain tuple, which is given the names again so that `sort.values` reads.
  c10::TupleTypePtr namedResult;
};

/// Compiles and runs printed calls. `functions` is the archive's compilation unit (where
/// `__torch__.torch.nn.functional.relu` lives); may be null for a graph without such calls.
/// Thread-safe: runs may share one PrintedCalls.
class PrintedCalls {
 public:
  PrintedCalls(size_t numNodes, std::shared_ptr<torch::jit::CompilationUnit> functions);

  /// Runs `node` (call_function or call_method) on `inputs`, the values of the nodes its args and
  /// kwargs refer to, in the order referencedNodes() lists them. Throws tdfx::RuntimeError when the
  /// printed call cannot be resolved (unknown target, no overload takes these arguments); the
  /// call's own errors propagate as LibTorch throws them.
  c10::IValue run(const Node& node, std::vector<c10::IValue> inputs) const;

 private:
  std::shared_ptr<const CompiledCall> compiled(const Node& node, const std::vector<c10::IValue>& inputs) const;
  std::shared_ptr<const CompiledCall> compile(const Node& node, std::vector<c10::TypePtr> types) const;

  std::shared_ptr<torch::jit::CompilationUnit> functions_;
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const CompiledCall>> calls_;
};

/// The distinct nodes `node`'s args and kwargs refer to, in order of first reference.
std::vector<const Node*> referencedNodes(const Node& node);

/// The value of an argument that refers to no nodes, or whose nodes `valueOf` gives: None, bool,
/// int, float, str, dtype (as TorchScript's int), device, a list (typed by its items), a tuple or
/// a dict. Throws tdfx::RuntimeError for a slice or Ellipsis outside a subscript.
c10::IValue argumentValue(const Argument& arg, const std::function<c10::IValue(const Node*)>& valueOf);

/// TorchScript's type of a runtime value, without shapes.
c10::TypePtr valueType(const c10::IValue& value);

}  // namespace tdfx::runtime
