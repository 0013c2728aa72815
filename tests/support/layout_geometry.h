#pragma once
// Checks a layout's geometry against its view: every node placed, inside its clusters, no two
// nodes overlapping, every edge drawn from its tail to its head.
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "tdfx/layout/graphviz_layout.h"

namespace tdfx::testing {

inline ::testing::AssertionResult geometryIsSane(const ViewGraph& view, const LayoutResult& layout) {
  std::map<std::string, const LayoutResult::NodeBox*> boxes;
  for (const auto& b : layout.nodes) boxes[b.id] = &b;
  std::map<std::string, const LayoutResult::ClusterBox*> clusters;
  for (const auto& c : layout.clusters) clusters[c.id] = &c;
  if (boxes.size() != view.nodes.size())
    return ::testing::AssertionFailure() << boxes.size() << " boxes for " << view.nodes.size() << " nodes";
  const double eps = 1.0;
  for (const ViewNode& v : view.nodes) {
    const auto* b = boxes.at(v.id);
    // Inside every enclosing cluster.
    for (std::string c = v.cluster; !c.empty();) {
      const auto* box = clusters.at(c);
      if (b->x - b->width / 2 < box->x - eps || b->x + b->width / 2 > box->x + box->width + eps ||
          b->y - b->height / 2 < box->y - eps || b->y + b->height / 2 > box->y + box->height + eps)
        return ::testing::AssertionFailure() << "node " << v.id << " is outside cluster " << c;
      std::string parent;
      for (const auto& vc : view.clusters)
        if (vc.id == c) parent = vc.parent;
      c = parent;
    }
  }
  // No two node boxes overlap.
  for (size_t i = 0; i < layout.nodes.size(); ++i)
    for (size_t j = i + 1; j < layout.nodes.size(); ++j) {
      const auto &a = layout.nodes[i], &b = layout.nodes[j];
      if (std::abs(a.x - b.x) * 2 < a.width + b.width - eps && std::abs(a.y - b.y) * 2 < a.height + b.height - eps)
        return ::testing::AssertionFailure() << "nodes " << a.id << " and " << b.id << " overlap";
    }
  // Edges start at their tail's box and end (arrow tip) at their head's box.
  const auto near = [&](const LayoutResult::Point& p, const LayoutResult::NodeBox& b) {
    return p.x >= b.x - b.width / 2 - 3 && p.x <= b.x + b.width / 2 + 3 && p.y >= b.y - b.height / 2 - 3 &&
           p.y <= b.y + b.height / 2 + 3;
  };
  if (layout.edges.size() != view.edges.size())
    return ::testing::AssertionFailure() << layout.edges.size() << " paths for " << view.edges.size() << " edges";
  for (const auto& e : layout.edges) {
    if (e.points.empty() || !e.arrowTip) return ::testing::AssertionFailure() << "edge " << e.from << "->" << e.to << " has no path";
    if (!near(e.points.front(), *boxes.at(e.from)) || !near(*e.arrowTip, *boxes.at(e.to)))
      return ::testing::AssertionFailure() << "edge " << e.from << "->" << e.to << " does not connect its nodes";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tdfx::testing
