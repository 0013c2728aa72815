#pragma once
// Kernel: how the runtime executes a node, kept beside the node's FX-level args. FX args show how
// the user wrote a call (`torch.softmax(mul, dim = 1)`); the kernel holds the exact TorchScript
// operator and its full, schema-ordered inputs (`aten::softmax(mul, 1, None)`).
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/core/jit_type.h>
#include <ATen/core/stack.h>

namespace tdfx {

class Node;

/// One input of a kernel: a constant, the value of a node, or a list/tuple built from inputs.
/// `node` is non-owning and points into the same Graph as the node that owns the kernel.
struct KernelInput {
  enum class Kind { Constant, NodeValue, List, Tuple };
  Kind kind = Kind::Constant;
  c10::IValue constant;
  Node* node = nullptr;
  c10::TypePtr elementType;  ///< element type of a List
  std::vector<KernelInput> items;

  static KernelInput ofConstant(c10::IValue v) {
    KernelInput k;
    k.constant = std::move(v);
    return k;
  }
  static KernelInput ofNode(Node* n) {
    KernelInput k;
    k.kind = Kind::NodeValue;
    k.node = n;
    return k;
  }
};

/// An executable operation: pops its inputs from the stack and pushes `numOutputs` values.
/// Immutable once set on a node (std::shared_ptr<const Kernel>); a node copied into another graph
/// gets its own copy with remapped inputs. `run` may hold handles to the traced archive's
/// TorchScript objects (a leaf module, a compiled function owned by the archive's compilation
/// unit), so the loaded module must outlive the graph that runs it. `run` throws LibTorch's
/// errors; GraphModule turns them into tdfx::RuntimeError.
struct Kernel {
  std::string description;  ///< the operator schema or the callee, for metadata and errors
  std::function<void(torch::jit::Stack&)> run;
  std::vector<KernelInput> inputs;
  size_t numOutputs = 1;
};

}  // namespace tdfx
