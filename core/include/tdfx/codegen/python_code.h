#pragma once
// Python code generation for a Graph, as torch.fx 1.13's GraphModule.code.
#include <map>
#include <string>

#include "tdfx/ir/graph.h"

namespace tdfx {

/// Generated source and where each node's statement is. Plain data: it keeps no reference to the
/// graph it was generated from.
struct PythonCode {
  std::string text;                       ///< byte-identical to torch.fx's `graph_module.code`
  std::map<std::string, int> nodeLines;   ///< node name -> 1-based line of its statement in `text`
};

/// The text of the node's statement in `code` (`relu = torch.relu(x);  x = None`), without its
/// indentation; "" when the node has no statement there.
std::string statementText(const PythonCode& code, const std::string& nodeName);

/// Generates `def forward(self, tensordict): ...` for `graph`, with FX's frees (`;  a = None`).
/// Only reads `graph`; throws no tdfx errors. GraphModule calls it once, on construction.
PythonCode pythonCode(const Graph& graph);

/// `base.a.b`, with `getattr(x, "0")` for path atoms that are not identifiers (FX's _format_target).
std::string formatTargetPath(const std::string& base, const std::string& dottedPath);

}  // namespace tdfx
