#include "composed_layout.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace tdfx {
namespace {

constexpr double kMargin = 8, kTitleHeight = 16;

struct Block {
  double width = 0, height = 0;
  std::vector<LayoutResult::NodeBox> nodes;
  std::vector<LayoutResult::ClusterBox> clusters;
  std::vector<LayoutResult::EdgePath> edges;
};

class Composer {
 public:
  Composer(const ViewGraph& view, const TextMeasure& measure) : view_(view), measure_(measure) {
    for (const ViewCluster& c : view.clusters) {
      parentOf_[c.id] = c.parent;
      subclusters_[c.parent].push_back(c.id);
      titles_[c.id] = c.title;
    }
    for (size_t i = 0; i < view.nodes.size(); ++i) {
      directNodes_[view.nodes[i].cluster].push_back(i);
      clusterOf_[view.nodes[i].id] = view.nodes[i].cluster;
    }
    // Each edge belongs to one level: the innermost cluster holding both ends, where it joins the
    // two children (nodes or sub-clusters) that contain them.
    for (const ViewEdge& e : view.edges) {
      const auto a = pathTo(e.from), b = pathTo(e.to);
      size_t common = 0;
      while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
      if (common == a.size() || common == b.size()) continue;  // one end contains the other: not drawn
      const std::string level = common == 0 ? "" : a[common - 1];
      edgesAt_[level].push_back({a[common], b[common], &e});
    }
  }

  LayoutResult run() {
    Block root = layoutCluster("");
    LayoutResult out;
    out.width = root.width;
    out.height = root.height;
    out.nodes = std::move(root.nodes);
    out.clusters = std::move(root.clusters);
    out.edges = std::move(root.edges);
    addCrossingEdges(out);
    return out;
  }

 private:
  struct LevelEdge {
    std::string from, to;  ///< children of the level: node ids or sub-cluster ids
    const ViewEdge* edge;
  };

  // The clusters around node `id`, outermost first, then the node itself.
  std::vector<std::string> pathTo(const std::string& id) const {
    std::vector<std::string> path{id};
    for (std::string c = clusterOf_.at(id); !c.empty(); c = parentOf_.at(c)) path.push_back(c);
    std::reverse(path.begin(), path.end());
    return path;
  }

  Block layoutCluster(const std::string& cluster) {
    ViewGraph level;
    level.rankdir = view_.rankdir;
    level.style = view_.style;
    std::map<std::string, Block> blocks;
    for (const std::string& sub : subclusters_[cluster]) {
      Block b = layoutCluster(sub);
      ViewNode box;
      box.id = sub;
      box.shape = "box";
      box.fixedWidth = b.width + 2 * kMargin;
      box.fixedHeight = b.height + 2 * kMargin + kTitleHeight;
      level.nodes.push_back(box);
      blocks.emplace(sub, std::move(b));
    }
    for (size_t i : directNodes_[cluster]) {
      ViewNode n = view_.nodes[i];
      n.cluster.clear();
      level.nodes.push_back(std::move(n));
    }
    std::set<std::pair<std::string, std::string>> seen;
    for (const LevelEdge& e : edgesAt_[cluster]) {
      if (!seen.insert({e.from, e.to}).second) continue;
      level.edges.push_back({e.from, e.to, blocks.count(e.from) || blocks.count(e.to) ? "" : e.edge->label});
    }
    const LayoutResult local = layoutWithDot(level, measure_);

    Block out;
    out.width = local.width;
    out.height = local.height;
    for (const auto& box : local.nodes) {
      auto it = blocks.find(box.id);
      if (it == blocks.end()) {
        out.nodes.push_back(box);
        continue;
      }
      // The sub-cluster's own layout, moved into its box; its frame is the box.
      const double left = box.x - box.width / 2, top = box.y - box.height / 2;
      out.clusters.push_back({box.id, titles_[box.id], left, top, box.width, box.height});
      const double dx = left + kMargin, dy = top + kMargin + kTitleHeight;
      for (auto n : it->second.nodes) {
        n.x += dx;
        n.y += dy;
        out.nodes.push_back(n);
      }
      for (auto c : it->second.clusters) {
        c.x += dx;
        c.y += dy;
        out.clusters.push_back(c);
      }
      for (auto e : it->second.edges) {
        for (auto& p : e.points) p.x += dx, p.y += dy;
        if (e.arrowTip) e.arrowTip->x += dx, e.arrowTip->y += dy;
        e.labelPos.x += dx;
        e.labelPos.y += dy;
        out.edges.push_back(e);
      }
    }
    // Splines between two plain nodes of this level are final.
    for (const auto& e : local.edges)
      if (!blocks.count(e.from) && !blocks.count(e.to)) out.edges.push_back(e);
    return out;
  }

  // Edges that cross a cluster frame: a curve from the tail's exit side to the head's entry side.
  void addCrossingEdges(LayoutResult& out) const {
    std::unordered_map<std::string, const LayoutResult::NodeBox*> boxes;
    for (const auto& b : out.nodes) boxes[b.id] = &b;
    std::set<std::pair<std::string, std::string>> drawn;
    for (const auto& e : out.edges) drawn.insert({e.from, e.to});
    const bool lr = view_.rankdir == "LR";
    std::vector<LayoutResult::EdgePath> extra;
    for (const ViewEdge& e : view_.edges) {
      if (drawn.count({e.from, e.to})) continue;
      const auto* a = boxes.at(e.from);
      const auto* b = boxes.at(e.to);
      LayoutResult::Point p0 = lr ? LayoutResult::Point{a->x + a->width / 2, a->y} : LayoutResult::Point{a->x, a->y + a->height / 2};
      LayoutResult::Point p3 = lr ? LayoutResult::Point{b->x - b->width / 2, b->y} : LayoutResult::Point{b->x, b->y - b->height / 2};
      const double bend = lr ? (p3.x - p0.x) / 2 : (p3.y - p0.y) / 2;
      LayoutResult::Point c1 = lr ? LayoutResult::Point{p0.x + bend, p0.y} : LayoutResult::Point{p0.x, p0.y + bend};
      LayoutResult::Point c2 = lr ? LayoutResult::Point{p3.x - bend, p3.y} : LayoutResult::Point{p3.x, p3.y - bend};
      LayoutResult::EdgePath path;
      path.from = e.from;
      path.to = e.to;
      path.points = {p0, c1, c2, p3};
      path.arrowTip = p3;
      path.label = e.label;
      path.labelPos = {(p0.x + p3.x) / 2, (p0.y + p3.y) / 2};
      extra.push_back(std::move(path));
    }
    for (auto& e : extra) out.edges.push_back(std::move(e));
  }

  const ViewGraph& view_;
  const TextMeasure& measure_;
  std::map<std::string, std::string> parentOf_, clusterOf_, titles_;
  std::map<std::string, std::vector<std::string>> subclusters_;
  std::map<std::string, std::vector<size_t>> directNodes_;
  std::map<std::string, std::vector<LevelEdge>> edgesAt_;
};

}  // namespace

LayoutResult layoutComposed(const ViewGraph& view, const TextMeasure& measure) { return Composer(view, measure).run(); }

}  // namespace tdfx
