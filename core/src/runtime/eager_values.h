#pragma once
// The eager value behind each printed node: the model's own TorchScript code, inlined along the
// calls the tracer inlined, run with the values the nodes stand for (NodeMeta::eagerValue) as extra
// outputs. Verify compares every node with it, not only the out keys.
#include <vector>

#include <ATen/core/ivalue.h>

#include "tdfx/ir/graph.h"
#include "tdfx/nn/td_module.h"

namespace tdfx::runtime {

struct EagerNodeValues {
  /// By Node::index(): the value's fingerprint (fingerprint.h), or for the nodes the recording
  /// wants in full the value itself, a tensor copied where the code made it.
  std::vector<c10::IValue> values;
  std::vector<bool> found;  ///< the node's eager value was read
  /// A plain archive's outputs (TensorDictModule::outputsOf its result), whatever their structure;
  /// a TensorDict module's are written to the TensorDict instead.
  std::vector<c10::IValue> plainOutputs;
};

struct EagerRecording {
  uint64_t fingerprintKey = 0;
  /// Empty: every node's fingerprint. Otherwise, by Node::index(): the nodes whose values are
  /// recorded, in full; no other node's.
  std::vector<bool> fullValues;
};

/// Runs `eager` on `td` as forward(td, tdOut) does (its out keys are written to `*tdOut`, or to
/// `td` when it is null), each TensorDictModule
/// through a copy of its forward graph that also returns the values `graph`'s nodes stand for, or
/// their fingerprints.
/// A value inside a loop or a branch, or behind a call that cannot be inlined, is not found.
/// Throws tdfx::Error when a graph cannot be built or run.
EagerNodeValues runRecordingEagerValues(const TensorDictModuleBase& eager, const Graph& graph, TensorDict& td,
                                        const EagerRecording& recording, TensorDict* tdOut = nullptr);

}  // namespace tdfx::runtime
