#pragma once
// Python code generation for a Graph, as torch.fx 1.13's GraphModule.code.
#include <map>
#include <string>

#include "tdfx/ir/graph.h"

namespace tdfx {

/// Generated source and where each node's statement is.
struct PythonCode {
  std::string text;                       ///< byte-identical to torch.fx's `graph_module.code`
  std::map<std::string, int> nodeLines;   ///< node name -> 1-based line of its statement in `text`
};

/// Generates `def forward(self, tensordict): ...` for `graph`, with FX's frees (`;  a = None`).
PythonCode pythonCode(const Graph& graph);

/// `base.a.b`, with `getattr(x, "0")` for path atoms that are not identifiers (FX's _format_target).
std::string formatTargetPath(const std::string& base, const std::string& dottedPath);

}  // namespace tdfx
