#pragma once
// ViewGraph: what a picture of a traced graph shows (nodes, edges, clusters, labels, colours) as
// plain data, independent of Graphviz and Qt. Built from the IR for a style and a hierarchy state.
// A ViewGraph holds copies (names, labels, ids), never pointers into the IR, so it may outlive the
// Graph it was built from and be handed between threads.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tdfx/ir/graph.h"
#include "tdfx/trace/symbolic_trace.h"

namespace tdfx {

/// The two picture styles (docs/export.md).
enum class ViewStyle {
  Fx,    ///< FxGraphDrawer's picture: record labels, its colours, parameter nodes
  Tdfx,  ///< tdfx's: tensordict keys as nodes, short op labels, module clusters, shapes on edges
};

/// Which module scopes are shown collapsed into one node.
struct HierarchyState {
  /// Scopes shown expanded down to this depth (0: every top-level scope collapsed). Unset with
  /// expandAll false: the depth that keeps at most `maxVisibleNodes` nodes (see autoDepth).
  std::optional<int> depth;
  bool expandAll = false;
  int maxVisibleNodes = 300;
  std::set<std::string> expanded;   ///< scopes expanded beyond `depth`
  std::set<std::string> collapsed;  ///< scopes collapsed above `depth`
};

/// What one recorded run of a traced graph measured, by node index, kept beside the graph rather
/// than written into its metadata: the GUI never writes a graph once it is shown, so the jobs that
/// read it (layouts, compares) never have to be waited for.
struct RunOverlay {
  std::vector<std::vector<TensorMeta>> outputs;  ///< each node's outputs in the run
  std::vector<double> seconds;                   ///< each node's time in the run
  /// The node's outputs in the run; null when the run did not reach it.
  const std::vector<TensorMeta>* outputsOf(const Node& n) const {
    return n.index() < outputs.size() ? &outputs[n.index()] : nullptr;
  }
  /// The node's time in the run; < 0 when the run did not reach it.
  double secondsOf(const Node& n) const { return n.index() < seconds.size() ? seconds[n.index()] : -1.0; }
};

/// A node's recorded outputs: those of `run` when given, else those in the graph's metadata (a
/// run recorded into the graph itself, as tdfx-cli's export does).
inline const std::vector<TensorMeta>& recordedOutputs(const Node& n, const RunOverlay* run) {
  static const std::vector<TensorMeta> none;
  if (!run) return n.meta().outputs;
  const std::vector<TensorMeta>* outputs = run->outputsOf(n);
  return outputs ? *outputs : none;
}

/// What buildView draws: style, direction, shapes on edges, and which scopes are collapsed.
struct ViewOptions {
  ViewStyle style = ViewStyle::Tdfx;
  std::string rankdir = "TB";  ///< "TB" or "LR"
  bool shapes = false;         ///< show recorded output shapes (edges in tdfx style, labels in fx)
  /// tdfx style: draw input checks (torch._assert, the nodes that only feed it, and other values
  /// no output depends on). Off: they are folded into a badge on the node whose value they check.
  /// The fx style always draws every node, as FxGraphDrawer does.
  bool checks = false;
  /// tdfx style: draw size computations (`x.shape`, getitem, `//`, `*` on sizes) as nodes. Off: the
  /// ones each drawn node uses are folded into one "shape" node beside it (id "shape:" and that
  /// node's view id). The fx style always draws them, as FxGraphDrawer does.
  bool shapeArithmetic = false;
  /// Folded shape nodes (their ids) drawn as their nodes all the same: a double-click expands one.
  std::set<std::string> shapesExpanded;
  HierarchyState hierarchy;
  /// The run whose shapes are drawn; null: the shapes recorded in the graph's metadata.
  std::shared_ptr<const RunOverlay> run;
};

/// One visible node: an IR node, a collapsed module scope, a tensordict key, a parameter, or the
/// size computations one node uses, folded (ViewOptions::shapeArithmetic).
struct ViewNode {
  enum class Kind { Op, Collapsed, Key, Parameter, Shape };
  std::string id;                  ///< unique; the IR node name for ops (used as the SVG element id)
  Kind kind = Kind::Op;
  std::vector<std::string> lines;  ///< label lines (tdfx style)
  std::string recordLabel;         ///< Graphviz record label (fx style), empty otherwise
  std::string fillColor;           ///< an X11 colour name or #rrggbb
  std::string shape = "box";       ///< Graphviz shape
  std::string cluster;             ///< innermost cluster id, "" for none
  std::vector<std::string> irNodes;  ///< IR nodes this view node stands for
  std::string scope;                 ///< Collapsed: the scope path
  std::vector<std::string> checks;   ///< IR nodes of the input checks folded onto this node (its badge)
  int checkAsserts = 0;              ///< how many of `checks` are torch._assert calls
  /// The output node: where the graph follows code torch.fx does not run (NodeMeta::fxDifference).
  std::string fxDifference;
  double fixedWidth = 0, fixedHeight = 0;  ///< points; when set, used instead of measured text
};

/// An edge between two view node ids (after collapsing: edges attach to the collapsed node).
struct ViewEdge {
  std::string from, to;
  std::string label;  ///< e.g. "float32[32, 50]"
};

/// A cluster: a TensorDictModule of a sequential, or a module scope (`layer1.0`).
struct ViewCluster {
  std::string id;      ///< "cluster_..." (Graphviz draws subgraphs named cluster* as boxes)
  std::string title;
  std::string parent;  ///< enclosing cluster id, "" for top level
};

/// The whole picture, ready for layoutView / renderView / exportView. A value type.
struct ViewGraph {
  std::string name = "tdfx";
  std::string rankdir = "TB";
  ViewStyle style = ViewStyle::Tdfx;
  std::vector<ViewNode> nodes;
  std::vector<ViewEdge> edges;
  std::vector<ViewCluster> clusters;
  std::vector<std::pair<std::string, std::string>> legend;  ///< (label, colour) pairs, tdfx style
  int depth = 0;                                            ///< the hierarchy depth shown
  std::vector<std::string> foldedChecks;  ///< every IR node folded away as an input check

  const ViewNode* findNode(const std::string& id) const;
};

/// The module scopes a node lives in, outermost first: ["layer1", "layer1.0"] for both
/// `layer1.0.conv1` (a call_module) and an op inlined from `layer1.0`'s forward. In a sequential,
/// the TensorDictModules are scopes too, named like call_module targets: "0.module",
/// "0.module.layer1".
std::vector<std::string> scopesOf(const Node& node);

/// Every scope of the graph and its depth (1 for top-level scopes).
std::map<std::string, int> allScopes(const Graph& graph);

/// The largest depth at which at most `maxVisibleNodes` nodes are visible (0 when even depth 0 has more).
int autoDepth(const Graph& graph, int maxVisibleNodes);

/// "#rrggbb" for a view colour: the X11 names FxGraphDrawer uses, or #rrggbb unchanged.
std::string colorToHex(const std::string& color);

/// Builds the picture. Every IR edge between visible nodes appears once; edges inside a
/// collapsed scope disappear, edges crossing it attach to the collapsed node.
/// Only reads `traced` and keeps nothing of it.
ViewGraph buildView(const TracedGraph& traced, const ViewOptions& options);

}  // namespace tdfx
