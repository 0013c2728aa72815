#pragma once
// Verification: run the eager module and the traced graph on the same inputs and compare, key by
// key. This is tdfx's promise that tracing is faithful.
#include <map>
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
  /// Time the eager module and the traced graph (tdfx-cli verify --time): each runs twice more,
  /// and the faster run is reported. Off, each side runs once, and no time is reported.
  bool time = false;
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
  /// A kind of value verify cannot compare (a Generator, a script object): neither a match nor a
  /// difference, so the verdict is NOT PROVEN at best.
  bool notComparable = false;
};

/// Verify's three verdicts (docs/cli.md "Verdicts"; tdfx-cli verify exits 0, 3 and 4).
/// - Passed: every out key matches, and every printed node was compared with the eager value it
///   stands for and matched, or is excused by one of the reasons of kExcuses.
/// - NotProven: nothing was found to differ, but something was not shown to agree: a node neither
///   compared nor excused, the node comparison itself failed, or a value of a kind verify cannot
///   compare.
/// - Failed: an out key or a node differs.
enum class Verdict { Passed, NotProven, Failed };
/// "PASSED", "NOT PROVEN", "FAILED".
const char* verdictName(Verdict verdict);

/// A printed node left without its proof, and why.
struct UnprovenNode {
  std::string node;
  std::string reason;
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
  /// Nodes without an eager value, each excused by a reason of the closed list kExcuses (a
  /// placeholder: the inputs are the same on both sides; a get_attr: the archive's own tensor, read
  /// by name; a node nothing reads: no output depends on it): how many per reason.
  std::map<std::string, int64_t> nodesExcused;
  /// Nodes without an eager value and without an excuse, in graph order: each makes the verdict NOT PROVEN.
  std::vector<UnprovenNode> unproven;
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
  /// Whether the passes were timed (VerifyOptions::time): eagerSeconds and tracedSeconds are 0 otherwise.
  bool timed = false;
  Verdict verdict() const;
  bool passed() const { return verdict() == Verdict::Passed; }
  /// Nodes without an eager value, excused or not.
  int64_t nodesWithoutEagerValue() const;
};

/// The reasons a node may go without an eager value and still count as proven (the closed list).
extern const char* const kExcuses[5];

/// Builds the inputs: the file's example inputs, then `overrides` (replacing or adding keys), all
/// drawn from a generator seeded with `seed`; then each key of `values` is its given tensor (a
/// copy), values included. With `traced`, an integer input its graph uses as an index into a
/// tensor of known size (`t[a, b]`, index_select, gather, an embedding) is drawn in range: the
/// drawn values are taken modulo that size (runtime/index_bounds.h). Throws tdfx::Error naming
/// every in key that has no shape, and the --input flag that would give one, or when a shape does
/// not fit the batch size.
TensorDict verificationInputs(const ModelFile& model, const std::vector<InputSpec>& overrides, uint64_t seed,
                              const InputValues& values = {}, const GraphModule* traced = nullptr);

/// Runs `eager` and `traced` on copies of `inputs`, each once, and compares every out key, and
/// every node with the eager value it stands for: the eager side is the model's own code recording
/// each node's value (its fingerprint) as it runs; the traced side is the interpreter
/// (runtime/interpreter.h), whose observers compare each node as it runs and, with `records`, keep
/// the GUI's records of the same run. Nodes whose fingerprints differ are compared in full (the
/// eager side once more); options.time runs each side twice more, timed. Each pass gets its own
/// deep copy of the inputs and starts from the random state and module state taken before the
/// first (runtime/pass_state.h); the model is left as it was. When a key differs and the node
/// comparison found nothing, runs both module by module to find the first differing write.
/// Throws tdfx::Error when either pass fails (e.g. wrong input shapes), naming the pass; the
/// original error's message is kept, its type (KeyError, RuntimeError) is not.
VerifyReport verify(const TensorDictModuleBase& eager, const GraphModule& traced, const TensorDict& inputs,
                    const VerifyOptions& options = {}, std::vector<NodeRunRecord>* records = nullptr);

/// Human-readable table of the report.
std::string formatReport(const VerifyReport& report);
/// The report as JSON (one object; see docs/cli.md), and back (runtime/report_codec.cpp). Throws
/// tdfx::Error / nlohmann's errors on text that is not such a report.
std::string reportToJson(const VerifyReport& report);
VerifyReport reportFromJson(const std::string& text);

/// Parses `KEY=DIMxDIM...[:DTYPE]` (KEY parts separated by '.', e.g. `input.x=32x100:float32`).
/// Throws tdfx::Error saying what part is malformed (or that the dtype is unknown).
InputSpec parseInputSpec(const std::string& text);

}  // namespace tdfx
