#pragma once
// GraphModule: a traced graph that runs on TensorDicts, after tensordict's TDGraphModule.
#include <memory>
#include <string>
#include <vector>

#include "tdfx/codegen/python_code.h"
#include "tdfx/nn/td_module.h"
#include "tdfx/trace/symbolic_trace.h"

namespace tdfx {

/// Executes a traced graph: leaf modules through their TorchScript forward, every other node
/// through the exact operator it was traced from, so outputs are bitwise equal to the eager module.
class GraphModule : public TensorDictModuleBase {
 public:
  GraphModule(TracedGraph traced, std::vector<NestedKey> inKeys);

  std::vector<NestedKey> inKeys() const override { return inKeys_; }
  std::vector<NestedKey> outKeys() const override { return traced_.outKeys; }
  /// Runs the graph on `td`; writes the out keys to `*tdOut`, or to `td` when tdOut is null.
  /// Throws tdfx::RuntimeError naming the failing node and its source location.
  void forward(TensorDict& td, TensorDict* tdOut = nullptr) const override;
  /// Like forward, and records every node's output shapes and dtypes in its metadata.
  void forwardAndRecordShapes(TensorDict& td, TensorDict* tdOut = nullptr);

  /// Like forward, and returns the values the given nodes computed (for diagnosing differences).
  std::vector<c10::IValue> forwardCapturing(TensorDict& td, TensorDict* tdOut, const std::vector<const Node*>& nodes) const;

  const Graph& graph() const { return *traced_.graph; }
  const TracedGraph& traced() const { return traced_; }
  /// `print(graph_module.graph)`.
  std::string graphText() const;
  /// `graph_module.code`.
  const PythonCode& code() const { return code_; }

 private:
  void run(TensorDict& td, TensorDict* tdOut, bool recordShapes, const std::vector<const Node*>* capture = nullptr,
           std::vector<c10::IValue>* captured = nullptr) const;

  TracedGraph traced_;
  std::vector<NestedKey> inKeys_;
  PythonCode code_;
  std::vector<std::vector<size_t>> freeAfter_;  // values whose last reader is node i
};

/// tensordict.prototype.fx.symbolic_trace: traces the module (see traceGraph) into a GraphModule.
GraphModule symbolicTrace(const TensorDictModuleBase& module);

}  // namespace tdfx
