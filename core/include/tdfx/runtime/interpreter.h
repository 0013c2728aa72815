#pragma once
// The interpreter: runs a GraphModule's graph node by node, as torch.fx.Interpreter does, one
// run_node per op kind, and tells its observers each node's value as soon as the node has run.
// Everything that watches a run is an observer: verify's fingerprints, the GUI's records (shapes,
// dtypes, times), the values a diagnosis captures. One run serves them all, so verify runs the
// traced graph once.
#include <functional>
#include <vector>

#include <ATen/core/ivalue.h>

#include "tdfx/runtime/graph_module.h"

namespace tdfx {

/// Watches an interpreter run.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// Called once per node, the output node aside, as soon as it has run: its value and how long
  /// it took. An exception thrown here ends the run and reaches the caller as it is.
  virtual void onNode(const Node& node, const c10::IValue& value, double seconds) = 0;
  /// Whether the run must keep `node`'s value after its last reader has run (the interpreter frees
  /// values there, as FX's code does with `x = None`).
  virtual bool keeps(const Node& node) const {
    (void)node;
    return false;
  }
};

/// Records what every node produced (the shapes and dtypes of its tensors) and its time, by
/// Node::index(): GraphModule::forwardRecorded's records, the GUI's.
class RecordingObserver : public RunObserver {
 public:
  explicit RecordingObserver(const Graph& graph) : records_(graph.size()) {}
  void onNode(const Node& node, const c10::IValue& value, double seconds) override;
  const std::vector<NodeRunRecord>& records() const { return records_; }
  std::vector<NodeRunRecord> take() { return std::move(records_); }

 private:
  std::vector<NodeRunRecord> records_;
};

/// Keeps the values of the given nodes (GraphModule::forwardCapturing).
class CapturingObserver : public RunObserver {
 public:
  CapturingObserver(const Graph& graph, const std::vector<const Node*>& nodes);
  void onNode(const Node& node, const c10::IValue& value, double seconds) override;
  bool keeps(const Node& node) const override;
  /// The values, in the order the nodes were given.
  std::vector<c10::IValue> values() const;

 private:
  std::vector<const Node*> nodes_;
  std::vector<bool> wanted_;
  std::vector<c10::IValue> byIndex_;
};

/// Calls a function with each node's value (GraphModule::callObserving).
class FunctionObserver : public RunObserver {
 public:
  explicit FunctionObserver(GraphModule::ValueObserver fn) : fn_(std::move(fn)) {}
  void onNode(const Node& node, const c10::IValue& value, double) override { fn_(node, value); }

 private:
  GraphModule::ValueObserver fn_;
};

/// Runs `module`'s graph node by node. Holds references: the module and the observers must outlive it.
class Interpreter {
 public:
  explicit Interpreter(const GraphModule& module) : module_(module) {}
  /// Adds an observer; each sees every node, in the order they were added.
  Interpreter& observe(RunObserver& observer) {
    observers_.push_back(&observer);
    return *this;
  }
  /// Runs the graph on `td` and returns the values its output zips with the out keys (a plain
  /// archive's: the elements of the returned tuple, or the one value); writes nothing. Throws
  /// tdfx::KeyError for a missing in key, tdfx::RuntimeError naming the failing node, its source
  /// location and its printed statement otherwise.
  std::vector<c10::IValue> run(TensorDict& td) const;

 private:
  // One per op kind, as torch.fx.Interpreter's placeholder / get_attr / call_* / output.
  c10::IValue placeholder(const Node& node, const TensorDict& td) const;
  c10::IValue call(const Node& node, const std::vector<c10::IValue>& env) const;  // get_attr and call_*
  static std::vector<c10::IValue> output(const c10::IValue& value);

  const GraphModule& module_;
  std::vector<RunObserver*> observers_;
};

}  // namespace tdfx
