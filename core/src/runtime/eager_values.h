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
  std::vector<c10::IValue> values;  ///< by Node::index(); a tensor copied where the code made it
  std::vector<bool> found;          ///< the node's eager value was read
};

/// Runs `eager` on `td` as forward does (its out keys are written to `td`), each TensorDictModule
/// through a copy of its forward graph that also returns the values `graph`'s nodes stand for.
/// A value inside a loop or a branch, or behind a call that cannot be inlined, is not found.
/// Throws tdfx::Error when a graph cannot be built or run.
EagerNodeValues runRecordingEagerValues(const TensorDictModuleBase& eager, const Graph& graph, TensorDict& td);

}  // namespace tdfx::runtime
