#pragma once
// A diff as rows a person reads: one per finding, each with the module it belongs to and the node
// it shows on each side. The compare window's list and the Changes panel are built from these.
#include <QString>
#include <vector>

#include "tdfx/ir/graph.h"
#include "tdfx/worker/model_diff.h"

namespace tdfx::ui {

struct DifferenceRow {
  enum class Kind { Node, Parameter, Buffer };
  Kind kind = Kind::Node;
  QString text;   ///< "~ node layer2_1_conv2: target: ...", "~ parameter fc.weight: values differ, ..."
  QString group;  ///< the module it belongs to ("layer2.1"); "" for the model's own top level
  QString irA, irB;  ///< the IR node to show on each side; "" where that side has none
};

/// The rows of `diff` between `a` and `b` (the graphs diffModels compared): removed, added and
/// changed nodes, then parameters and buffers that differ, in the diff's order.
std::vector<DifferenceRow> differenceRows(const ModelDiff& diff, const Graph& a, const Graph& b);

/// How a group is titled: its module path, or "(top level)".
QString groupTitle(const QString& group);

}  // namespace tdfx::ui
