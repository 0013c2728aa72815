#pragma once
// The traced graph saved as TorchScript: a module whose forward is the printed FX graph, flat,
// with the traced module's submodules and parameters kept. torch.jit.load (Python) and
// torch::jit::load (C++) read it and run it without tdfx.
#include <string>

#include <torch/csrc/jit/api/module.h>

#include "tdfx/runtime/graph_module.h"

namespace tdfx {

/// Builds the TorchScript module of `module`'s printed graph. Its forward is every node of the
/// graph in order, each compiled as the runtime compiles it (runtime/call_emitter.h); get_attr and
/// call_module read the submodules, which the module holds as attributes (`module` for a lone
/// module, `module_0_module`, `module_1_module` for a sequential's, after their target prefixes).
///
/// The forward's signature:
/// - a TensorDict module: `forward(self, tensordict: Dict[str, Tensor]) -> Dict[str, Tensor]`.
///   Keys are the nested keys flattened with "." (tensordict's `flatten_keys()`: `("input", "x")`
///   is `"input.x"`). It returns a new dict: the input's entries, and every out key the graph
///   writes (a None output writes nothing; the discard key `_` is never written). Forward
///   parameters past the in keys take their defaults.
/// - a plain archive: the archive's own forward parameters, with their types and defaults, and the
///   printed output as it is (a Tensor, or a tuple).
///
/// The module's class is added to the traced archive's compilation unit (it calls the functions
/// the archive holds compiled), so keep the source ModelFile alive while it is used.
/// Throws tdfx::RuntimeError naming the node whose printed call TorchScript cannot express.
torch::jit::Module toTorchScript(const GraphModule& module);

/// A saved toTorchScript module.
struct TorchScriptArchive {
  std::string bytes;      ///< as torch.jit.save writes it (a zip archive)
  std::string signature;  ///< its forward as Python writes one: `forward(x: Tensor) -> Tensor`
};

/// toTorchScript, serialised in memory.
TorchScriptArchive saveTorchScript(const GraphModule& module);

}  // namespace tdfx
