#pragma once
// Node: one operation of a Graph, after torch.fx.Node.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>

#include "tdfx/ir/argument.h"
#include "tdfx/tensordict/nested_key.h"

namespace torch::jit {
struct Node;
struct Value;
}  // namespace torch::jit

namespace tdfx {

class Graph;

/// Which value of the model's own TorchScript code a node stands for, recorded by the tracer so
/// that verify can compare the node with what the eager model computed there. Points into the
/// archive's method graphs: valid while the traced module lives (as TracedGraph::moduleRoots), and
/// never dereferenced outside the process that traced.
struct EagerValueRef {
  /// One step on the way to the value: a prim::CallMethod / prim::CallFunction the tracer inlined,
  /// the block of a prim::If it took (`block`: 0 when the condition was true), or an iteration of
  /// a prim::Loop it unrolled (`block`: the iteration, from 0).
  struct Step {
    const torch::jit::Node* node = nullptr;
    size_t block = 0;
    bool operator<(const Step& o) const { return node != o.node ? node < o.node : block < o.block; }
    bool operator==(const Step& o) const { return node == o.node && block == o.block; }
  };
  /// Outermost first; the first step lies in the forward graph of the TensorDictModule that
  /// NodeMeta::tdModule names, and `value` in the graph or block the last step leads to.
  std::vector<Step> path;
  const torch::jit::Value* value = nullptr;
  /// The value is the tuple of all the outputs of `value`'s node (`torch.max(w, 1)`: aten::max has
  /// two outputs, FX one node holding both).
  bool allOutputs = false;
};

/// The FX opcodes.
enum class OpKind { Placeholder, GetAttr, CallFunction, CallMethod, CallModule, Output };

/// FX's name of the opcode: "placeholder", "call_function", ... (a static string; never null).
const char* opKindName(OpKind op);

/// Shape and dtype of one output value, filled in by a run of the graph.
struct TensorMeta {
  std::vector<int64_t> shape;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
};

/// A parameter or buffer of a leaf module.
struct ParameterInfo {
  std::string name;  ///< relative to the module: "weight", "bn.running_mean"
  std::vector<int64_t> shape;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  bool isBuffer = false;
  /// A quantized module's packed weight (read through its C++ class's state: attributeTensors),
  /// not a parameter: torch.fx's drawing has no node for it.
  bool isPacked = false;
  /// Summary of the values, filled by the model worker for the inspector (the parent never holds
  /// the tensors): min, max and mean. hasStats is false for non-numeric or empty tensors.
  bool hasStats = false;
  double min = 0.0, max = 0.0, mean = 0.0;
};

/// What tdfx knows about where a node came from and what it produced. Owned by its Node; all
/// values are copies, so metadata stays valid after the TorchScript module is gone.
struct NodeMeta {
  std::string modulePath;  ///< qualified path of the module whose code produced the node ("" = root)
  std::string moduleType;  ///< e.g. "torch.nn.modules.linear.Linear"
  /// Position of the TensorDictModule that produced the node inside a sequential: "" for a lone
  /// module, "1" for the second child, "0.2" when nested.
  std::string tdModule;
  /// call_module: the module's constants as Python prints them ({"in_features", "100"}, ...).
  std::vector<std::pair<std::string, std::string>> moduleConstants;
  /// call_module: the module's other plain attributes (ints, floats, bools, strings and tuples of
  /// them; not private ones nor `training`), as Python prints them: MultiheadAttention's embed_dim
  /// and num_heads. Shown by the inspector; FxGraphDrawer's labels show the constants only.
  std::vector<std::pair<std::string, std::string>> moduleAttributes;
  /// call_module: the module's parameters and buffers.
  std::vector<ParameterInfo> parameters;
  std::string sourceFile;  ///< from the TorchScript debug info, empty when the archive has none
  int sourceLine = 0;
  std::string sourceText;  ///< the user's Python text that generated the node
  std::string schema;      ///< the exact TorchScript operator schema the node executes
  std::optional<NestedKey> tensordictKey;  ///< key read (getitem nodes)
  /// Why a submodule that FX would trace through was kept as one call_module node
  /// (e.g. control flow that depends on tensor data); empty otherwise.
  std::string leafReason;
  /// The output node: where the printed graph knowingly follows code that torch.fx does not run
  /// (the TorchScript side of a branch on `torch.jit.is_scripting()` whose Python side the archive
  /// does not hold), one line each; empty when it is FX's graph throughout.
  std::string fxDifference;
  /// The node draws random numbers (TorchScript marks its operator nondeterministic: rand_like,
  /// dropout, bernoulli, ...); verify names such nodes when outputs differ.
  bool random = false;
  /// The value of the model's own code this node computes; none for nodes that stand for no single
  /// value there (the TensorDict placeholder, the output, values inside unrolled loops).
  std::optional<EagerValueRef> eagerValue;
  std::vector<TensorMeta> outputs;         ///< filled by a run
  double seconds = -1.0;                   ///< time of the node in the last recorded run; < 0: none
};

/// An operation in a Graph. Nodes are owned by their Graph and referenced by raw pointer; they are
/// created only through Graph::createNode (or insertBefore), which keeps `users` consistent with
/// args and kwargs. Only the type annotation and the metadata can be changed directly; the graph
/// edits target, arguments and position (Graph::setTarget, setArguments, replaceAllUsesWith,
/// eraseNode), keeping users and indices right. A placeholder's args are
/// empty, or hold its default value (FX's `placeholder[target=k](default=2)`).
class Node {
 public:
  const std::string& name() const { return name_; }
  OpKind op() const { return op_; }
  /// Module path (call_module, get_attr), method name (call_method), qualified Python function
  /// name (call_function: "torch.relu", "operator.mul"), or placeholder name.
  const std::string& target() const { return target_; }
  const std::vector<Argument>& args() const { return args_; }
  const Kwargs& kwargs() const { return kwargs_; }
  /// Nodes that use this node, in graph order.
  const std::vector<Node*>& users() const { return users_; }
  /// Position in the graph's node list.
  size_t index() const { return index_; }
  /// The Python type annotation FX records as node.type (`torch.Tensor`, `int`,
  /// `Tuple[torch.Tensor, torch.Tensor]`); empty when the source had none. Placeholders print it
  /// and the code's signature carries it; the output node's type is the return annotation.
  const std::string& type() const { return type_; }
  void setType(std::string type) { type_ = std::move(type); }

  NodeMeta& meta() { return meta_; }
  const NodeMeta& meta() const { return meta_; }


 private:
  friend class Graph;
  Node(std::string name, OpKind op, std::string target, std::vector<Argument> args, Kwargs kwargs, size_t index)
      : name_(std::move(name)), op_(op), target_(std::move(target)), args_(std::move(args)),
        kwargs_(std::move(kwargs)), index_(index) {}

  std::string name_;
  OpKind op_;
  std::string target_;
  std::string type_;
  std::vector<Argument> args_;
  Kwargs kwargs_;
  std::vector<Node*> users_;
  size_t index_;
  NodeMeta meta_;
};

}  // namespace tdfx
