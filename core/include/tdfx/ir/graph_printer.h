#pragma once
// FX-exact text of a Graph: print(graph) and its parts (node lines, printed targets, shapes).
// All functions only read the graph and throw no tdfx errors.
#include <string>

#include "tdfx/ir/graph.h"

namespace tdfx {

/// The graph as torch.fx 1.13 prints it (`print(graph_module.graph)`), byte for byte:
/// "graph():\n    %name : [#users=N] = op[target=T](args = (...), kwargs = {...})\n    return ...".
std::string printGraph(const Graph& graph);

/// printGraph with each node's recorded output shapes appended as a comment:
/// `%relu : [#users=1] = ...  # float32[32, 50]`. Nodes without recorded shapes print as usual.
std::string printGraphWithShapes(const Graph& graph);

/// "[32, 50]": a shape as tdfx prints it everywhere (tables, labels, inspector).
std::string formatShape(const std::vector<int64_t>& shape);

/// "float32[32, 50]" for one recorded output.
std::string formatTensorMeta(const TensorMeta& meta);

/// FX's printed form of a node's target: module paths and method names as they are, Python
/// operators as `operator.mul`, builtins as `builtins.getattr`, torch functions by qualified name.
std::string printedTarget(const Node& node);

/// One line of printGraph for `node` (without indentation).
std::string formatNode(const Node& node);

}  // namespace tdfx
