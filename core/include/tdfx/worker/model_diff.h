#pragma once
// Compares two traced models: nodes matched by module path (call_module) or FX name, then what
// was added, removed or changed (op, target, args, module constants and attributes, parameter
// shapes), and every parameter and buffer by value.
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
  std::vector<double> values;
};

/// One matched node that differs: its match key and what changed ("target: a -> b").
struct NodeChange {
  std::string key;
  std::vector<std::string> changes;
};

/// A parameter or buffer compared by name.
struct ParameterChange {
  enum class Kind { Equal, Differs, ShapeChanged, Added, Removed, NotCompared };
  std::string name;
  Kind kind = Kind::Equal;
  double maxAbsDiff = 0;  ///< Differs: over the elements; NaN against NaN counts as equal
  std::string detail;     ///< ShapeChanged / NotCompared: what, in words
};

struct ModelDiff {
  std::vector<std::string> added, removed;  ///< match keys of nodes only in B / only in A
  std::vector<NodeChange> changed;
  std::vector<ParameterChange> parameters;  ///< every parameter and buffer, by name
  /// The graph view ids (IR node names in A) of changed and removed nodes, for marking A's picture.
  std::vector<std::string> changedInA;
  bool identical() const;
};

/// The key a node is matched by: "module PATH" for a call_module, else its FX name.
std::string diffKey(const Node& node);

/// Compares `a` with `b` (structure) and `pa` with `pb` (values, matched by name).
ModelDiff diffModels(const TracedModel& a, const TracedModel& b, const std::vector<ParameterValues>& pa,
                     const std::vector<ParameterValues>& pb);

/// The report as text, one finding per line, "identical" when there is none; `nameA` and `nameB`
/// name the two models in it.
std::string formatModelDiff(const ModelDiff& diff, const std::string& nameA, const std::string& nameB);

}  // namespace tdfx
