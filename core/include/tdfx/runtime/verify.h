#pragma once
// Verification: run the eager module and the traced graph on the same inputs and compare, key by
// key. This is tdfx's promise that tracing is faithful.
#include <optional>
#include <string>
#include <vector>

#include "tdfx/model/model_file.h"
#include "tdfx/runtime/input_values.h"
#include "tdfx/runtime/graph_module.h"

namespace tdfx {

/// Tolerances; both zero (the default) means outputs must be bitwise equal.
struct VerifyOptions {
  double atol = 0.0;
  double rtol = 0.0;
  /// torch's default generator is seeded with this before each eager and each traced pass, so
  /// random operations (rand_like, dropout in train mode) draw the same numbers when they run in
  /// the same order. nullopt: the generator is left as it is.
  std::optional<uint64_t> randomSeed = 0;
  bool bitwise() const { return atol == 0.0 && rtol == 0.0; }
};

/// How one out key compares (plain data). A plain archive's output that is not a tensor is
/// compared element by element, one row per leaf, keyed by its path (`output_1[0]`, `output['a']`);
/// an int, float or bool leaf has dtype "int", "float" or "bool" and no shape.
struct KeyComparison {
  NestedKey key;
  std::vector<int64_t> eagerShape, tracedShape;
  std::string eagerDtype, tracedDtype;
  double maxAbsDiff = 0.0;  ///< over positions where both values are finite
  double maxRelDiff = 0.0;  ///< |a-b| / |a|, over positions where both are finite and a != 0
  bool bitwiseEqual = false;
  bool matches = false;     ///< bitwise equal, or within tolerance with NaN/Inf in the same places
  int64_t eagerNaN = 0, tracedNaN = 0, eagerInf = 0, tracedInf = 0;
  std::string problem;      ///< e.g. "missing from the traced output", "shapes differ"
};

/// The first place where the traced graph stops agreeing with the eager modules.
struct Divergence {
  std::string node;    ///< graph node holding the first differing value
  std::string module;  ///< position of the TensorDictModule that wrote it ("" for a lone module)
  NestedKey key;       ///< the out key it writes; empty for a node found by the node comparison
  /// Node comparison: both values, as "float64 [2, 3]", and what differs ("dtypes differ").
  std::string eagerValue, tracedValue, problem;
};

/// The result of verify: one comparison per out key, every node compared, the time of each pass,
/// and the first differing node. Plain data; passed() when every key and every compared node
/// matches (no keys, nothing written, is a pass).
struct VerifyReport {
  /// An input the passes ran on: its key, shape and dtype ("float32").
  struct Input {
    NestedKey key;
    std::vector<int64_t> shape;
    std::string dtype;
  };
  std::vector<Input> inputs;  ///< every leaf of the input TensorDict, in its key order
  std::vector<KeyComparison> keys;
  /// Every printed node is compared with the value of the model's own code it stands for, run on
  /// the same inputs: how many were, how many produce a value that has no eager counterpart (inside
  /// an unrolled loop, say), and the nodes whose values differ, in graph order.
  int64_t nodesCompared = 0;
  int64_t nodesWithoutEagerValue = 0;
  std::vector<std::string> nodeMismatches;
  std::string nodeComparisonProblem;  ///< why nodes could not be compared; "" when they were
  /// Why the traced pass ran node by node instead of as one TorchScript forward; "" when whole.
  std::string nodeByNodeReason;
  double eagerSeconds = 0.0;
  double tracedSeconds = 0.0;
  VerifyOptions options;
  std::optional<Divergence> divergence;
  /// When some key differs: the graph's nodes that draw random numbers (the likely cause).
  std::vector<std::string> randomNodes;
  bool passed() const;
};

/// Builds the inputs: the file's example inputs, then `overrides` (replacing or adding keys), all
/// drawn from a generator seeded with `seed`; then each key of `values` is its given tensor (a
/// copy), values included. Throws tdfx::Error naming every in key that has no shape, and the
/// --input flag that would give one, or when a shape does not fit the batch size.
TensorDict verificationInputs(const ModelFile& model, const std::vector<InputSpec>& overrides, uint64_t seed,
                              const InputValues& values = {});

/// Runs `eager` and `traced` on copies of `inputs` and compares every out key, and every node with
/// the eager value it stands for. Each pass gets its own deep copy of the inputs and starts from
/// the random state and module state taken before the first (runtime/pass_state.h); the model is
/// left as it was. When the node comparison finds nothing, runs both module by module to find
/// the first differing write.
/// Throws tdfx::Error when either pass fails (e.g. wrong input shapes), naming the pass; the
/// original error's message is kept, its type (KeyError, RuntimeError) is not.
VerifyReport verify(const TensorDictModuleBase& eager, const GraphModule& traced, const TensorDict& inputs,
                    const VerifyOptions& options = {});

/// Human-readable table of the report.
std::string formatReport(const VerifyReport& report);
/// The report as JSON (one object; see docs/cli.md).
std::string reportToJson(const VerifyReport& report);

/// Parses `KEY=DIMxDIM...[:DTYPE]` (KEY parts separated by '.', e.g. `input.x=32x100:float32`).
/// Throws tdfx::Error saying what part is malformed (or that the dtype is unknown).
InputSpec parseInputSpec(const std::string& text);

}  // namespace tdfx
