#pragma once
// Compares two traced models: nodes matched by FX name, then by op, target and call order; what
// was added, removed or changed (op, target, args, module constants and attributes, parameter
// shapes); and every parameter and buffer by value, with the nodes that use it.
#include <optional>
#include <string>
#include <vector>

#include "tdfx/worker/graph_format.h"

namespace tdfx {

/// A parameter or buffer of a model's root as the model worker read it: values as doubles (exact
/// for every float32 and integer tensor), none for complex or empty tensors.
struct ParameterValues {
  std::string name;  ///< qualified: "layer1.0.conv1.weight"
  std::vector<int64_t> shape;
  std::string dtype;
  bool isBuffer = false;
  /// Floating values (complex: real and imaginary parts, interleaved); empty for integer dtypes.
  std::vector<double> values;
  /// Integer and bool values, exactly (a double rounds int64 past 2^53); empty otherwise.
  std::vector<int64_t> integers;
  /// When asked for: tensorDigest of its bytes under the caller's key. Two parameters with equal
  /// digests (same key) are equal without their values.
  std::optional<uint64_t> digest;
};

/// One difference of a matched node: what differs, and its text in A and in B.
struct NodeDifference {
  std::string what;  ///< "op", "target", "args", "module type", "constants", "attributes", "parameter shapes"
  std::string a, b;
};

/// A node of one model, as the diff names it: its FX name and, for a call_module, its module path.
struct DiffNode {
  std::string name;    ///< FX name: "layer1_0_relu_1"
  std::string module;  ///< call_module target ("layer1.0.relu"), else empty
  std::string label() const { return module.empty() ? name : name + " (module " + module + ")"; }
};

/// One matched node that differs: its names in A and B (usually the same) and what changed.
struct NodeChange {
  DiffNode a, b;
  std::vector<NodeDifference> changes;
};

/// A parameter or buffer compared by name.
struct ParameterChange {
  enum class Kind { Equal, Differs, ShapeChanged, Added, Removed, NotCompared };
  std::string name;
  Kind kind = Kind::Equal;
  bool isBuffer = false;
  double maxAbsDiff = 0;  ///< Differs: over the elements; NaN against NaN counts as equal
  std::string detail;     ///< ShapeChanged / NotCompared: what, in words
  std::vector<std::string> usedBy;  ///< not Equal: the nodes that use it (A's; B's for Added)
};

/// The view ids (IR node names) of one side's nodes, by what the diff found.
struct DiffMarks {
  std::vector<std::string> added;    ///< B only: nodes A does not have
  std::vector<std::string> removed;  ///< A only: nodes B does not have
  std::vector<std::string> changed;  ///< matched nodes whose op, target, args or module differ
  std::vector<std::string> weights;  ///< nodes that use a parameter or buffer whose values or shape differ
};

struct ModelDiff {
  std::vector<DiffNode> added, removed;  ///< nodes only in B / only in A
  std::vector<NodeChange> changed;
  std::vector<ParameterChange> parameters;  ///< every parameter and buffer, by name
  DiffMarks marksA, marksB;
  /// Every matched pair of nodes: (name in A, name in B).
  std::vector<std::pair<std::string, std::string>> matched;
  /// A's marked nodes (removed, changed and changed weights), sorted, without repeats.
  std::vector<std::string> changedInA() const;
  bool identical() const;
};

/// Compares `a` with `b` (structure) and `pa` with `pb` (values, matched by name). Nodes match by
/// FX name first (unique and stable: the second call of a module is `relu_1` in both), the rest by
/// op, target and call order. An argument that refers to a node only one side has counts as part
/// of that addition or removal, not as a change: a block inserted between two layers does not
/// also report the layer after it as rewired.
ModelDiff diffModels(const TracedModel& a, const TracedModel& b, const std::vector<ParameterValues>& pa,
                     const std::vector<ParameterValues>& pb);

/// The report as text, one finding per line, "identical" when there is none; `nameA` and `nameB`
/// name the two models in it.
std::string formatModelDiff(const ModelDiff& diff, const std::string& nameA, const std::string& nameB);

/// The report as JSON text (docs/cli.md, "diff --json").
std::string modelDiffToJson(const ModelDiff& diff, const std::string& nameA, const std::string& nameB);

}  // namespace tdfx
