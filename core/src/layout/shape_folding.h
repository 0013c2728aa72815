#pragma once
// Shape arithmetic in tdfx's picture. torch.fx records every int it computes from a tensor's size
// as a Proxy like any other value (`x.shape`, `getitem 0`, `floordiv`, `mul`), so its graph has a
// node for each: ViT's first screen is nothing else (issue 36, defect 12). tdfx's picture folds the
// size computations that each drawn node uses into one small "shape" node beside it.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tdfx/ir/graph.h"
#include "tdfx/layout/view_graph.h"

namespace tdfx::shape_folding {

/// By node index: whether the node computes a size from a tensor: a size query (`getattr(x,
/// "shape")`, `x.size(...)`, `x.dim()`, `x.numel()`) or getitem / arithmetic whose every node
/// argument is a size. A node the graph returns, or one `excluded` (an input check), is not one.
std::vector<bool> sizeValues(const Graph& graph, const std::vector<bool>& excluded);

/// One use of shape arithmetic: the size nodes a node's arguments reach through size nodes.
struct ShapeUse {
  std::vector<const Node*> chain;        ///< the size nodes, in graph order
  std::vector<std::string> expressions;  ///< what the user receives, one per size argument, as Python
};

/// The size nodes behind `user`'s arguments (none when it takes no size), and each size argument
/// as Python text (`x.shape[2] // 16 * (x.shape[3] // 16)`).
ShapeUse useOf(const Node& user, const std::vector<bool>& isSize);

/// An index as Python writes it between a subscript's brackets (`:, 0`, `1:`, `-1`).
std::string subscriptText(const Argument& index);

/// One shape node of the picture: the size nodes folded into it and the node that uses them.
struct ShapeFold {
  std::string id;                        ///< "shape:" and the user's view id
  const Node* user = nullptr;            ///< the first node using them (its view node gets the edge)
  std::vector<const Node*> members;      ///< the size nodes folded here, in graph order
  std::vector<const Node*> sources;      ///< the nodes whose values they read (drawn elsewhere)
  std::vector<std::string> expressions;  ///< what the user receives, as Python
};

struct ShapeFolds {
  std::vector<ShapeFold> folds;
  std::map<std::string, size_t> index;  ///< fold id -> its place in `folds`
  std::vector<bool> folded;  ///< by node index: drawn inside a shape node
  bool isFolded(const Node& n) const { return n.index() < folded.size() && folded[n.index()]; }
  /// Whether the shape node beside view node `userViewId` holds `member` (its edge to the user
  /// then stands for member's).
  bool covers(const Node& member, const std::string& userViewId) const;
};

/// The shape nodes of a tdfx picture. `checks` (by index, may be empty) are never folded here;
/// `viewIdOf` names the view node a node is drawn in (itself, or its collapsed scope), `visible`
/// whether it is drawn itself. A fold whose id is in `expanded` is drawn as its nodes.
ShapeFolds foldShapes(const Graph& graph, const std::vector<bool>& checks, const std::set<std::string>& expanded,
                      const std::function<std::string(const Node&)>& viewIdOf,
                      const std::function<bool(const Node&)>& visible);

/// Adds a view node per fold (its label: "shape" over the expressions), in the frame of its user's
/// view node, and records it as the view id of its members that have none yet.
void addShapeNodes(ViewGraph& view, const ShapeFolds& folds, std::vector<std::string>& viewId, const std::string& color);

}  // namespace tdfx::shape_folding
