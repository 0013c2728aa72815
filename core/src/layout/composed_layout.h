#pragma once
// Layouts of large graphs composed from one small `dot` layout per cluster.
#include "tdfx/layout/graphviz_layout.h"

namespace tdfx {

/// Graphs with more visible nodes than this (and clusters to split them by) are laid out per cluster.
/// One dot call grows faster than linearly with nested clusters: maxvit_t's 1,369 nodes in 280
/// clusters took 320 ms in one call and 75 ms composed (efficientnet_v2_s's 548 nodes: 85 and 27 ms).
constexpr size_t kComposeAbove = 1000;

/// One `dot` call on the whole view (behind the Graphviz lock).
LayoutResult layoutWithDot(const ViewGraph& view, const TextMeasure& measure);

/// Lays out every cluster on its own, innermost first, each as one fixed-size box in its parent's
/// layout, and composes the results. Edges inside one cluster level keep dot's splines; edges that
/// cross cluster boundaries are drawn as direct curves between their nodes.
LayoutResult layoutComposed(const ViewGraph& view, const TextMeasure& measure);

}  // namespace tdfx
