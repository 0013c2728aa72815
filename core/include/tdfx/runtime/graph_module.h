#pragma once
// GraphModule: a traced graph that runs on TensorDicts, after tensordict's TDGraphModule.
#include <memory>
#include <string>
#include <vector>

#include "tdfx/codegen/python_code.h"
#include "tdfx/nn/td_module.h"
#include "tdfx/trace/symbolic_trace.h"

namespace tdfx {

/// What one node did in a recorded run: the tensors it produced (shape and dtype) and its time.
struct NodeRunRecord {
  std::vector<TensorMeta> outputs;
  double seconds = 0.0;
};

/// Executes a traced graph: leaf modules through their TorchScript forward, every other node
/// through the exact operator it was traced from, so outputs are bitwise equal to the eager module.
/// Owns the TracedGraph (its Graph is shared with other copies of that TracedGraph) and the code
/// generated on construction. Kernels refer to the traced module's TorchScript objects: keep the
/// source module (the ModelFile) alive while the GraphModule runs.
class GraphModule : public TensorDictModuleBase {
 public:
  GraphModule(TracedGraph traced, std::vector<NestedKey> inKeys);

  std::vector<NestedKey> inKeys() const override { return inKeys_; }
  std::vector<NestedKey> outKeys() const override { return traced_.outKeys; }
  /// Runs the graph on `td`; writes the out keys to `*tdOut`, or to `td` when tdOut is null.
  /// Throws tdfx::KeyError for a missing in key or an output that does not fit the destination,
  /// tdfx::RuntimeError naming the failing node and its source location otherwise.
  void forward(TensorDict& td, TensorDict* tdOut = nullptr) const override;
  /// Like forward, and returns what every node produced and how long it took, indexed by
  /// Node::index(). Reads the graph only, so it may run on a worker thread. Throws like forward.
  std::vector<NodeRunRecord> forwardRecorded(TensorDict& td, TensorDict* tdOut = nullptr) const;
  /// Like forwardRecorded, and stores the records in the nodes' metadata (outputs, seconds; written into
  /// the shared Graph, so every holder of it sees them; not safe while another thread reads them).
  void forwardAndRecordShapes(TensorDict& td, TensorDict* tdOut = nullptr);

  /// Like forward, and returns the values the given nodes computed (for diagnosing differences).
  /// `nodes` must belong to this graph. Throws like forward.
  std::vector<c10::IValue> forwardCapturing(TensorDict& td, TensorDict* tdOut, const std::vector<const Node*>& nodes) const;

  const Graph& graph() const { return *traced_.graph; }
  const TracedGraph& traced() const { return traced_; }
  /// `print(graph_module.graph)`.
  std::string graphText() const;
  /// `graph_module.code`.
  const PythonCode& code() const { return code_; }

 private:
  void run(TensorDict& td, TensorDict* tdOut, std::vector<NodeRunRecord>* records,
           const std::vector<const Node*>* capture = nullptr,
           std::vector<c10::IValue>* captured = nullptr) const;

  TracedGraph traced_;
  std::vector<NestedKey> inKeys_;
  PythonCode code_;
  std::vector<std::vector<size_t>> freeAfter_;  // values whose last reader is node i
};

/// tensordict.prototype.fx.symbolic_trace: traces the module (see traceGraph) into a GraphModule.
/// `module` is only read, but the result's kernels share its TorchScript objects (see GraphModule).
/// Throws tdfx::TraceError.
GraphModule symbolicTrace(const TensorDictModuleBase& module);

/// Stores `records` (from forwardRecorded on a GraphModule of `graph`) in the nodes' metadata.
/// Throws tdfx::Error when the record count does not match the graph.
void applyRunRecords(Graph& graph, const std::vector<NodeRunRecord>& records);

}  // namespace tdfx
