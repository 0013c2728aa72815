#pragma once
// NodeFunctions: the node-by-node interpreter's code. Each node is emitted by NodeEmitter (the
// same emitter the whole forward is built with) into a small TorchScript function of its own,
// compiled for the types of the values the node reads and kept per node.
#include <memory>
#include <mutex>
#include <vector>

#include <ATen/core/ivalue.h>

#include "node_emitter.h"

namespace torch::jit {
struct Code;
}

namespace tdfx::runtime {

/// A node's function, compiled for the types of the values it read.
struct CompiledNode {
  std::vector<c10::TypePtr> inputTypes;
  std::shared_ptr<torch::jit::Code> code;
  /// The result type when it is a named tuple (`torch.sort` gives values, indices): the
  /// interpreter builds a plain tuple, which is given the names again so that `sort.values` reads.
  c10::TupleTypePtr namedResult;
};

/// Compiles and runs single nodes of `traced`'s graph. Thread-safe: runs may share one NodeFunctions.
class NodeFunctions {
 public:
  /// `tensordict`: the graph's TensorDict placeholder (null for a plain archive), whose value is
  /// the flat dict whose keys `keyName` gives.
  NodeFunctions(TracedGraph traced, const Node* tensordict, KeyName keyName);

  /// Runs `node` on `inputs`, the values of the nodes its args and kwargs refer to, in the order
  /// referencedNodes() lists them. Returns its value (None for an assertion; for output, see
  /// NodeEmitter::emit). Throws tdfx::RuntimeError when TorchScript cannot express the node; the
  /// node's own errors propagate as LibTorch throws them.
  c10::IValue run(const Node& node, std::vector<c10::IValue> inputs) const;

 private:
  std::shared_ptr<const CompiledNode> compiled(const Node& node, const std::vector<c10::IValue>& inputs) const;
  std::shared_ptr<const CompiledNode> compile(const Node& node, std::vector<c10::TypePtr> types) const;
  const ModuleHolder& holder() const;

  TracedGraph traced_;
  const Node* tensordict_;
  KeyName keyName_;
  mutable std::once_flag holderOnce_;
  mutable std::unique_ptr<ModuleHolder> holder_;
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const CompiledNode>> nodes_;
};

/// TorchScript's type of a runtime value, without shapes.
c10::TypePtr valueType(const c10::IValue& value);

}  // namespace tdfx::runtime
