#pragma once
// Tracing TensorDict modules into one FX graph, after tensordict.prototype.fx.symbolic_trace.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tdfx/ir/graph.h"
#include "tdfx/nn/td_module.h"

namespace tdfx {

/// A traced module: the graph (one `tensordict` placeholder, getitem reads, an output node) and
/// the keys its output writes. The output's argument is a tuple with one value per out key, or
/// (for a single TensorDictModule) the module's own return value, as in tensordict.
/// Copies share one Graph (std::shared_ptr); the Node pointers in `writes` point into it.
struct TracedGraph {
  std::shared_ptr<Graph> graph;
  std::vector<NestedKey> outKeys;

  /// Where each TensorDictModule's result for each of its out keys lives in the graph, in
  /// execution order; lets verification compare the graph with the eager modules one module at a
  /// time. `module` is the module's position ("" for a lone module, "1", "0.2" when nested).
  struct KeyWrite {
    std::string module;
    NestedKey key;
    Node* node = nullptr;
    int tupleIndex = -1;  ///< >= 0 when `node` yields a tuple and the value is one element
  };
  std::vector<KeyWrite> writes;

  /// Every TensorDictModule of the traced module, with its position ("" for a lone module, "1",
  /// "0.2"; the same positions as NodeMeta::tdModule) and keys.
  struct ModuleInfo {
    std::string position;
    std::vector<NestedKey> inKeys, outKeys;
  };
  std::vector<ModuleInfo> modules;

  /// Python type of every module whose code was inlined or called, by scope path as scopesOf()
  /// names it ("0.module.stages.0" -> "__main__.Stage").
  std::map<std::string, std::string> scopeTypes;

  /// What the printed get_attr and call_module targets name, as an FX GraphModule owns its
  /// submodules: the TorchScript module behind each target prefix ("" for a lone module,
  /// "0.module." and "0.module.1.module." in sequentials). A target resolves under the longest
  /// prefix it starts with, attribute by attribute.
  std::vector<std::pair<std::string, torch::jit::Module>> moduleRoots;
  /// Tensors the graph itself owns, by get_attr target (`_tensor_constant0`, `1.module._tensor_constant0`):
  /// values FX computes while tracing and stores on the GraphModule.
  std::map<std::string, at::Tensor> tensorConstants;
  /// The first placeholder is the TensorDict and keys are read with `tensordict[key]`; false for a
  /// plain archive, whose placeholders are forward's parameters, each read from the key of its name.
  bool readsTensorDict = true;
};

/// Converts the module's TorchScript code to a graph without running it. Sequentials become one
/// graph: keys written by one module and read by a later one are wired directly, call_module and
/// get_attr nodes of the i-th module get the `_{i}_` name and `{i}.module.` target prefixes.
/// Throws tdfx::TraceError naming the module, the operation and its source location; LibTorch
/// failures while reading the TorchScript code are rethrown as TraceError too. `module` is only
/// read; the result's module roots are handles to its TorchScript objects.
TracedGraph traceGraph(const TensorDictModuleBase& module);

}  // namespace tdfx
