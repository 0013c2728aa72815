#pragma once
// The FX graph being built, with the tracer's references into it (a parameter's one get_attr
// node, the fields given a getattr node, the `_tensor_constantN` tensors) kept consistent with it:
// a conversion that is undone (a submodule kept whole, an expression converted node by node)
// rolls all of them back together.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <ATen/core/Tensor.h>

#include "tdfx/ir/graph.h"

namespace tdfx::trace {

/// A named tuple's field read by name (`x.max(1).values`), or a tensor property (`x.dtype`), not
/// yet in the graph: FX's Attribute proxy makes its getattr node where the value is first used
/// by a recorded operation, and only once (shared by copies, and by the lists that hold it).
struct PendingField {
  Node* container = nullptr;
  std::string field;
  int64_t index = 0;
  Node* node = nullptr;  ///< the getattr node, once made
  size_t nodeIndex = 0;  ///< its position (compared without touching the node: it may be gone)
  /// The container is itself a field not yet in the graph (`sort.values.dtype`); made first.
  std::shared_ptr<PendingField> containerField;
  /// A field of a named tuple kept in a variable (`top = x.topk(2)`, then `top.values`): every
  /// read by name is its own Attribute proxy in FX, so an operation that reads `top.values`
  /// gets a getattr node of its own (a read bound to a name first, `v = top.values`, is shared).
  bool perRead = false;
  /// Where the read is in the user's code (a tensor property `w.shape`); null for a field of a
  /// named tuple, which takes its container's.
  std::shared_ptr<const NodeMeta> meta;
  /// The value of the model's code the field stands for, given to its node when it is made.
  std::optional<EagerValueRef> eager;
  /// This item read and assigned to names (`w = top[0]`, `i = top.indices`; TorchScript has no node
  /// for either): what an operation reading the name uses. FX made the getitem where the statement
  /// stands; the Attribute is made at its first use. Reads written as `top[0]` or `top.values`
  /// still get nodes of their own.
  std::map<std::string, std::shared_ptr<PendingField>> boundNames;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(Graph& graph) : graph_(graph) {}

  Graph& graph() { return graph_; }
  size_t size() const { return graph_.size(); }
  /// Whether `node`, last seen at position `index`, is still in the graph (a rollback may have
  /// erased it; the pointer is compared, never followed).
  bool holds(const Node* node, size_t index) const {
    return index < graph_.size() && graph_.nodes()[index].get() == node;
  }

  /// A point to roll back to.
  struct Mark {
    size_t nodes = 0;
    int tensorConstants = 0;
  };
  Mark mark() const { return {graph_.size(), tensorConstants_}; }
  /// Erases the nodes made since `mark`, and forgets every reference kept to them.
  void rollBackTo(const Mark& mark);

  /// operator.getitem(container, index), or builtins.getattr(container, field) when the code
  /// reads a named tuple's field by name; the container's module and source go with it.
  Node* getItem(Node* container, int64_t index, const std::string& field = "");
  /// The getattr / getitem node of a pending field, made now if it is not yet (its container first).
  Node* materializeField(const std::shared_ptr<PendingField>& field);

  /// A get_attr node for `attribute` ("" for a new `_tensor_constantN`, holding `t`). A parameter
  /// is a Proxy, one node per target (`shared`); a buffer or plain tensor is a Python tensor that
  /// FX puts into the graph anew at each recorded use. `made`: whether the node is new.
  Node* tensorAttribute(const std::string& attribute, const at::Tensor& t, bool shared, bool& made);
  /// Names the traced module already has (attributes, methods): FX's `_tensor_constantN` skips
  /// them (`_tensor_constant0` taken by a parameter makes the first constant `_tensor_constant1`).
  void setTakenNames(std::function<bool(const std::string&)> taken) { taken_ = std::move(taken); }
  /// Whether the traced module has a parameter of that name (of its own, not a submodule's).
  void setRootParameters(std::function<bool(const std::string&)> isParameter) { rootParameter_ = std::move(isParameter); }
  /// Whether `node` is a get_attr of a tensor FX holds as a plain Python tensor (not shared).
  bool isConcreteTensor(const Node* node) const { return concreteTensorNodes_.count(node) != 0; }
  /// The tensors behind `_tensor_constantN` get_attr nodes, by target.
  const std::map<std::string, at::Tensor>& tensorConstants() const { return tensorConstantValues_; }

 private:
  Graph& graph_;
  std::map<std::string, Node*> attrNodes_;  // get_attr nodes by target: one per parameter
  std::unordered_set<const Node*> concreteTensorNodes_;
  std::vector<std::weak_ptr<PendingField>> madeFields_;  // pending fields given a node
  /// The get_attr nodes in the order they were made (target, node, its position; "" target for a
  /// concrete tensor's): a rollback undoes the latest ones only, so one costs what it undoes, not
  /// every parameter's node (an unrolled loop over a ParameterList rolled back once per step was
  /// quadratic).
  struct MadeAttribute {
    std::string target;
    const Node* node;
    size_t index;
  };
  std::vector<MadeAttribute> madeAttributes_;
  void noteAttribute(const std::string& target, Node* node, bool shared);
  int tensorConstants_ = 0;
  std::map<std::string, at::Tensor> tensorConstantValues_;
  std::function<bool(const std::string&)> taken_;
  std::function<bool(const std::string&)> rootParameter_;
};

}  // namespace tdfx::trace
