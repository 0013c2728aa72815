#pragma once
// Graph: an ordered list of nodes with FX naming rules, after torch.fx.Graph.
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tdfx/ir/node.h"

namespace tdfx {

/// Allocates unique Python-identifier names exactly like torch.fx's _Namespace.create_name.
/// Each Graph owns one; it only stores names (copies), never nodes.
class NameSpace {
 public:
  /// Sanitises `candidate` (runs of characters outside [0-9A-Za-z_] become `_`, a leading digit
  /// gets `_`), then appends `_1`, `_2`, ... while the name is taken, a keyword or a builtin.
  /// O(1) amortised: FX scans base_1, base_2, ... from the start each time (quadratic in a long
  /// unrolled loop); this remembers per base how far every suffix is taken and gives the same name.
  std::string create(const std::string& candidate);
  bool contains(const std::string& name) const { return used_.count(name) > 0; }
  /// Makes `name` available again (used when nodes are erased).
  void release(const std::string& name);

 private:
  std::unordered_set<std::string> used_;
  /// base -> n: base_1 ... base_n are all taken (a hint; lowered when one of them is released).
  std::unordered_map<std::string, long long> takenThrough_;
};

/// FX's default name for a target: the last part of a function name, a module path as written,
/// CamelCase turned into snake_case, dunder methods without underscores.
std::string nameForTarget(OpKind op, const std::string& target);

/// An ordered list of nodes. Owns its nodes; node pointers stay valid for the graph's lifetime
/// (or until Graph::truncate erases them). Not copyable: TracedGraph and GraphModule share one
/// Graph through a std::shared_ptr. Not synchronised: one writer at a time.
class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  /// Appends a node. `nameCandidate` empty: derived from the target as FX does. The final name is
  /// made unique in this graph. Every node referenced by args/kwargs must belong to this graph.
  /// Returns a pointer owned by the graph. Does not validate its arguments and throws no tdfx errors.
  Node* createNode(OpKind op, std::string target, std::vector<Argument> args = {}, Kwargs kwargs = {},
                   const std::string& nameCandidate = "");

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  /// The names taken in this graph (code generation draws its global names from a copy, as FX's
  /// code generator draws them from the graph's namespace).
  const NameSpace& names() const { return names_; }
  size_t size() const { return nodes_.size(); }
  /// Bumped by every edit (a node created, inserted, erased, retargeted, given other arguments or
  /// renamed): a GraphModule compiled from an earlier revision refuses to run until it is recompiled.
  uint64_t revision() const { return revision_; }
  /// The output node, or null before it is created.
  Node* outputNode() const;
  /// The node with `name`, or null.
  Node* findNode(const std::string& name) const;
  /// Erases the nodes at positions >= `size` (newest first), releasing their names and their
  /// entries in other nodes' users. Lets the tracer undo an attempt that could not be completed.
  void truncate(size_t size);

  /// Names nodes in two steps from now on, as tensordict does when it copies a traced module's
  /// graph into its own with node_copy: a node's name is first made unique in `local` (the graph FX
  /// traced the wrapped module into, where the forward's parameters took their names first), and
  /// that name is the candidate here. Null: one step. Each node keeps its local name (localName()).
  void setLocalNames(std::shared_ptr<NameSpace> local) { localNames_ = std::move(local); }
  /// The node's name in the local namespace it was created under, or its name.
  const std::string& localName(const Node& node) const;
  /// Editing, as torch.fx's `node.target = ...` and `node.args = ...`: the node keeps its name
  /// and position; `users` of the nodes it stops or starts referring to are updated. Every node in
  /// `args` / `kwargs` must belong to this graph and come before `node`. Code generated earlier
  /// (a GraphModule's) does not change: recompile the GraphModule (or build a new one) to run the edited graph.
  void setTarget(Node& node, std::string target);
  void setArguments(Node& node, std::vector<Argument> args, Kwargs kwargs);

  /// Graph editing, as torch.fx offers it (docs/editing.md has a whole pass):
  ///
  /// Inserts a node just before `before` (FX: `with graph.inserting_before(before):
  /// graph.create_node(...)`), named as createNode names it. The nodes from `before` on move one
  /// position down (their index() changes). Every node in `args` / `kwargs` must belong to this graph.
  Node* insertBefore(const Node& before, OpKind op, std::string target, std::vector<Argument> args = {},
                     Kwargs kwargs = {}, const std::string& nameCandidate = "");
  /// FX's `node.replace_all_uses_with(replacement)`: every node that refers to `node` refers to
  /// `replacement` instead, except `replacement` itself (so a node built on `node` can take its
  /// place). Returns the nodes changed, in graph order.
  std::vector<Node*> replaceAllUsesWith(Node& node, Node& replacement);
  /// FX's `graph.erase_node(node)`: removes a node nothing uses any more and releases its name.
  /// Throws tdfx::Error naming the node and its users when it still has some.
  void eraseNode(Node& node);
  /// FX's `graph.lint()`: checks that names are unique, that every node refers only to nodes of
  /// this graph that come before it, that users match the references, that indices are positions,
  /// and that there is at most one output node, the last. Throws tdfx::Error naming the first
  /// problem found.
  void lint() const;

  /// Renames `node` to `prefix` + its name, leaving the namespace as it is: tensordict renames a
  /// copied call_module / get_attr node (`_1_weight`) after the graph took its name (`weight`),
  /// so later nodes still count the unprefixed name.
  void prefixName(Node& node, const std::string& prefix);

 private:
  /// Gives the nodes from `from` on their positions as indices.
  void renumber(size_t from);
  /// Releases the names `node` holds in this graph's namespaces.
  void releaseNames(const Node& node);
  /// Adds `node` to the users of every node its arguments refer to, in graph order; removes it.
  void linkUses(Node& node);
  void unlinkUses(Node& node);

  NameSpace names_;
  std::shared_ptr<NameSpace> localNames_;
  std::unordered_map<const Node*, std::string> localNameOf_;  // node -> its local name
  std::unordered_map<const Node*, std::string> takenNameOf_;  // node -> the name it took, when renamed
  std::vector<std::unique_ptr<Node>> nodes_;
  uint64_t revision_ = 0;
};

}  // namespace tdfx
