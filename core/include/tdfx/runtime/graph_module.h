#pragma once
// GraphModule: a traced graph that runs on TensorDicts, after tensordict's TDGraphModule.
#include <functional>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include "tdfx/codegen/python_code.h"
#include "tdfx/nn/td_module.h"
#include "tdfx/trace/symbolic_trace.h"

namespace tdfx {

namespace runtime {
class NodeFunctions;
}

/// What one node did in a recorded run: the tensors it produced (shape and dtype) and its time.
struct NodeRunRecord {
  std::vector<TensorMeta> outputs;
  double seconds = 0.0;
};

/// Executes a traced graph from what it prints, as an FX GraphModule's forward is its code: each
/// node runs from its op, target, args and kwargs alone. One emitter (runtime/node_emitter.h) knows
/// how every node kind runs; forward runs the nodes it emits compiled into one TorchScript function
/// (as saved by toTorchScript: as fast as the eager archive), and the interpreter (the recorded,
/// observing and capturing runs, and forward where TorchScript cannot express the whole) runs each
/// node as a small function the same emitter made, with per-node hooks. Owns the TracedGraph (its
/// Graph is shared with other copies of that TracedGraph) and the code generated when compiled.
/// Editing the graph afterwards (Graph::revision changes) makes every run throw until recompile().
/// The TracedGraph's module roots are handles to the traced module's TorchScript objects: keep the
/// source module (the ModelFile) alive while the GraphModule runs.
class GraphModule : public TensorDictModuleBase {
 public:
  GraphModule(TracedGraph traced, std::vector<NestedKey> inKeys);

  std::vector<NestedKey> inKeys() const override { return inKeys_; }
  std::vector<NestedKey> outKeys() const override { return traced_.outKeys; }
  /// Runs the graph on `td`; writes the out keys to `*tdOut`, or to `td` when tdOut is null.
  /// Throws tdfx::KeyError for a missing in key or an output that does not fit the destination,
  /// tdfx::RuntimeError naming the failing node, its source location and its printed statement
  /// otherwise (a printed call that resolves to no function or overload is such an error).
  void forward(TensorDict& td, TensorDict* tdOut = nullptr) const override;
  /// Runs the graph on `td` and returns the values its output zips with the out keys (a plain
  /// archive's: the elements of the returned tuple, or the one value), whatever their structure;
  /// writes nothing. When the whole forward fails, nothing is rerun for a result: the graph runs
  /// node by node once more, from a copy of the inputs and the random state taken before, only to
  /// name the failing node, and the error says so. Throws like forward.
  std::vector<c10::IValue> call(TensorDict& td) const;
  /// The tensors its modules hold that running the graph may change in place (verify copies only
  /// these before its passes): the whole forward's TorchScript analysed; nullopt when that cannot
  /// tell, or the graph runs node by node.
  std::optional<std::vector<at::Tensor>> tensorsForwardMayWrite() const;
  /// Why forward runs node by node instead of as one TorchScript function ("" when it runs whole):
  /// TorchScript cannot express some node, or the keys flatten ambiguously.
  std::string nodeByNodeReason() const;
  /// Like forward, and returns what every node produced and how long it took, indexed by
  /// Node::index(). Reads the graph only, so it may run on a worker thread. Throws like forward.
  std::vector<NodeRunRecord> forwardRecorded(TensorDict& td, TensorDict* tdOut = nullptr) const;
  /// Like forwardRecorded, and stores the records in the nodes' metadata (outputs, seconds; written into
  /// the shared Graph, so every holder of it sees them; not safe while another thread reads them).
  void forwardAndRecordShapes(TensorDict& td, TensorDict* tdOut = nullptr);

  /// Like forward, and returns the values the given nodes computed (for diagnosing differences).
  /// `nodes` must belong to this graph. Throws like forward.
  std::vector<c10::IValue> forwardCapturing(TensorDict& td, TensorDict* tdOut, const std::vector<const Node*>& nodes) const;
  /// Runs node by node, calling `onValue` with each node's value as soon as the node has run, and
  /// returns the outputs as call() does. Throws like forward.
  using ValueObserver = std::function<void(const Node&, const c10::IValue&)>;
  std::vector<c10::IValue> callObserving(TensorDict& td, const ValueObserver& onValue) const;

  /// Writes the graph's outputs, as call() and Interpreter::run return them, to their out keys (in
  /// `*tdOut`, or `td`), as forward does. Throws like forward.
  void writeOutputs(const std::vector<c10::IValue>& outputs, TensorDict& td, TensorDict* tdOut) const;

  /// FX's `graph_module.recompile()`: compiles the graph as it is now (its code, the whole forward,
  /// the nodes' functions), after edits. Not safe while another thread runs this GraphModule.
  void recompile();

  const Graph& graph() const { return *traced_.graph; }
  const TracedGraph& traced() const { return traced_; }
  /// `print(graph_module.graph)`.
  std::string graphText() const;
  /// `graph_module.code`.
  const PythonCode& code() const { return code_; }
  /// The node's statement in code() (`relu = torch.relu(x)`), without FX's frees; "" for none.
  std::string printedLine(const Node& node) const;

 private:
  friend class Interpreter;  // runs the nodes (runtime/interpreter.h)

  /// Throws tdfx::RuntimeError when the graph was edited after it was compiled.
  void checkRevision() const;
  /// The flat dict the TensorDict placeholder stands for in the interpreter: every key the graph reads.
  c10::IValue readsOf(const TensorDict& td) const;

  /// The whole printed forward as one TorchScript function (toTorchScript), built at the first
  /// forward and shared by copies; null when TorchScript cannot express the graph or its keys
  /// are ambiguous flattened. forward runs it; a failure reruns node by node, which names the node.
  struct WholeForward;
  struct WholeState;
  std::shared_ptr<const WholeForward> wholeForward() const;
  /// The whole forward's arguments from `td`; false when the TensorDict has a form the whole
  /// forward does not take (a read key holding a TensorDict, a plain parameter left to its default).
  bool wholeArguments(const WholeForward& whole, const TensorDict& td, std::vector<c10::IValue>& args) const;
  std::vector<c10::IValue> wholeOutputs(const c10::IValue& result) const;

  TracedGraph traced_;
  std::vector<NestedKey> inKeys_;
  PythonCode code_;
  uint64_t revision_ = 0;                        // the graph's revision when compiled
  std::vector<std::vector<size_t>> freeAfter_;  // values whose last reader is node i
  std::shared_ptr<runtime::NodeFunctions> nodeFunctions_;  // shared by copies; thread-safe
  std::vector<std::pair<NestedKey, std::string>> reads_;  // keys read from the TensorDict, named in the flat dict
  std::vector<std::vector<const Node*>> callInputs_;  // per node: the nodes its args and kwargs read, in order
  const Node* tensordict_ = nullptr;              // the TensorDict placeholder; null for a plain archive
  std::shared_ptr<WholeState> whole_;             // the compiled whole forward, once tried
};

/// tensordict.prototype.fx.symbolic_trace: traces the module (see traceGraph) into a GraphModule.
/// `module` is only read, but the result's module roots share its TorchScript objects (see GraphModule).
/// Throws tdfx::TraceError.
GraphModule symbolicTrace(const TensorDictModuleBase& module);

/// FX's `get_submodule` / `get_parameter` for passes that edit a graph (docs/editing.md): the value
/// a get_attr or call_module target names in `traced`, a tensor constant of the graph
/// (TracedGraph::tensorConstants) or the attribute path under the longest module root prefix the
/// target starts with (a submodule is a TorchScript object: `torch::jit::Module(v.toObject())`).
/// A lookup, not how a node runs: GraphModule runs get_attr as runtime/node_emitter.h emits it.
/// Throws tdfx::RuntimeError when nothing owns the target or an attribute is missing.
c10::IValue attributeValue(const TracedGraph& traced, const std::string& target);

/// The module root a get_attr / call_module target lives under: the longest prefix of
/// TracedGraph::moduleRoots it starts with. Throws tdfx::RuntimeError when none owns it.
const std::pair<std::string, torch::jit::Module>& moduleRootOf(const TracedGraph& traced, const std::string& target);

/// A nested key flattened with "." as tensordict's flatten_keys() writes it: ("input", "x") is
/// "input.x" (the keys of a saved TorchScript forward, torchscript_export.h).
std::string flattenedKey(const NestedKey& key);

/// Stores `records` (from forwardRecorded on a GraphModule of `graph`) in the nodes' metadata.
/// Throws tdfx::Error when the record count does not match the graph.
void applyRunRecords(Graph& graph, const std::vector<NodeRunRecord>& records);

}  // namespace tdfx
