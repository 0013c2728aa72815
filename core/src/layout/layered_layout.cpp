// The fallback layout: layers by longest path, one barycentre sweep for the order in each layer,
// straight edges. Linear in nodes and edges (and a sort per layer), so it places 20,000 nodes and
// 60,000 edges in well under a second where dot may take minutes; the picture is plainer.
#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include "svg_writer.h"
#include "tdfx/layout/layout_process.h"

namespace tdfx {
namespace {

constexpr double kNodeSep = 18, kRankSep = 42, kPadX = 16, kPadY = 10, kClusterPad = 10;

struct Box {
  double width = 0, height = 0;
  std::vector<std::string> recordText;  // fx style: the record's lines, drawn as one field
};

Box measureNode(const ViewNode& n, const TextMeasure& measure) {
  Box box;
  const std::vector<std::string> lines = n.recordLabel.empty() ? n.lines : recordLines(n.recordLabel);
  for (const std::string& line : lines) {
    const TextSize s = measure(line);
    box.width = std::max(box.width, s.width);
    box.height += s.height;
  }
  box.width += kPadX;
  box.height += kPadY;
  if (n.fixedWidth > 0) box.width = n.fixedWidth;
  if (n.fixedHeight > 0) box.height = n.fixedHeight;
  box.width = std::max(box.width, 40.0);
  box.height = std::max(box.height, 24.0);
  if (!n.recordLabel.empty()) box.recordText = lines;
  return box;
}

}  // namespace

LayoutResult layeredLayout(const ViewGraph& view, const TextMeasure& measure) {
  const size_t n = view.nodes.size();
  std::unordered_map<std::string, size_t> index;
  index.reserve(n);
  for (size_t i = 0; i < n; ++i) index.emplace(view.nodes[i].id, i);
  std::vector<std::vector<size_t>> preds(n), succs(n);
  std::vector<std::pair<size_t, size_t>> edges;  // per view edge, or (n, n) when it names no node
  for (const ViewEdge& e : view.edges) {
    const auto a = index.find(e.from), b = index.find(e.to);
    if (a == index.end() || b == index.end()) {
      edges.emplace_back(n, n);
      continue;
    }
    edges.emplace_back(a->second, b->second);
    if (a->second == b->second) continue;
    succs[a->second].push_back(b->second);
    preds[b->second].push_back(a->second);
  }
  // Kahn's order; nodes on a cycle (a collapsed scope can make one) follow in view order.
  std::vector<size_t> indegree(n), order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) indegree[i] = preds[i].size();
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) order.push_back(i);
  std::vector<bool> placed(n);
  for (size_t k = 0; k < n; ++k) {
    if (k == order.size()) {  // a cycle: take the first node not yet placed
      size_t next = 0;
      while (next < n && (placed[next] || indegree[next] == 0)) ++next;
      if (next == n) break;
      indegree[next] = 0;
      order.push_back(next);
    }
    const size_t v = order[k];
    placed[v] = true;
    for (size_t s : succs[v])
      if (indegree[s] > 0 && --indegree[s] == 0) order.push_back(s);
  }
  std::vector<size_t> rankOf(n, 0), position(n, 0);
  std::vector<std::vector<size_t>> ranks;
  std::vector<size_t> orderIndex(n);
  for (size_t k = 0; k < order.size(); ++k) orderIndex[order[k]] = k;
  for (size_t v : order) {
    for (size_t p : preds[v])
      if (orderIndex[p] < orderIndex[v]) rankOf[v] = std::max(rankOf[v], rankOf[p] + 1);
    if (rankOf[v] >= ranks.size()) ranks.resize(rankOf[v] + 1);
    ranks[rankOf[v]].push_back(v);
  }
  // One sweep down: each node at the mean position of its predecessors in earlier ranks.
  for (auto& rank : ranks) {
    std::vector<std::pair<double, size_t>> keyed;
    keyed.reserve(rank.size());
    for (size_t i = 0; i < rank.size(); ++i) {
      double sum = 0;
      size_t count = 0;
      for (size_t p : preds[rank[i]])
        if (rankOf[p] < rankOf[rank[i]]) sum += static_cast<double>(position[p]), ++count;
      keyed.emplace_back(count ? sum / static_cast<double>(count) : static_cast<double>(i), rank[i]);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keyed.size(); ++i) {
      rank[i] = keyed[i].second;
      position[rank[i]] = i;
    }
  }
  // Geometry: along the rank axis, ranks one after another; across it, nodes side by side,
  // each rank centred on the widest.
  const bool lr = view.rankdir == "LR";
  std::vector<Box> boxes(n);
  for (size_t i = 0; i < n; ++i) boxes[i] = measureNode(view.nodes[i], measure);
  const auto across = [&](size_t v) { return lr ? boxes[v].height : boxes[v].width; };
  const auto along = [&](size_t v) { return lr ? boxes[v].width : boxes[v].height; };
  std::vector<double> rankLength(ranks.size()), rankDepth(ranks.size());
  double widest = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (size_t v : ranks[r]) {
      rankLength[r] += across(v) + kNodeSep;
      rankDepth[r] = std::max(rankDepth[r], along(v));
    }
    widest = std::max(widest, rankLength[r]);
  }
  LayoutResult out;
  std::vector<LayoutResult::Point> centre(n);
  double at = kRankSep / 2;
  for (size_t r = 0; r < ranks.size(); ++r) {
    double cursor = (widest - rankLength[r]) / 2 + kNodeSep / 2;
    for (size_t v : ranks[r]) {
      const double a = cursor + across(v) / 2, b = at + rankDepth[r] / 2;
      centre[v] = lr ? LayoutResult::Point{b, a} : LayoutResult::Point{a, b};
      cursor += across(v) + kNodeSep;
    }
    at += rankDepth[r] + kRankSep;
  }
  out.width = lr ? at : widest;
  out.height = lr ? widest : at;
  out.nodes.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    LayoutResult::NodeBox box{view.nodes[i].id, centre[i].x, centre[i].y, boxes[i].width, boxes[i].height, {}, 0};
    if (!boxes[i].recordText.empty()) {
      box.fields.push_back({-boxes[i].width / 2, -boxes[i].height / 2, boxes[i].width, boxes[i].height,
                            boxes[i].recordText, std::string(boxes[i].recordText.size(), 'l')});
      box.fontSize = 10;
    }
    out.nodes.push_back(std::move(box));
  }
  // Straight edges from the tail's far side to the head's near side, as a cubic bezier.
  for (size_t k = 0; k < view.edges.size(); ++k) {
    const auto [a, b] = edges[k];
    if (a == n) continue;
    LayoutResult::EdgePath path;
    path.from = view.edges[k].from;
    path.to = view.edges[k].to;
    const LayoutResult::Point p0 = lr ? LayoutResult::Point{centre[a].x + boxes[a].width / 2, centre[a].y}
                                      : LayoutResult::Point{centre[a].x, centre[a].y + boxes[a].height / 2};
    const LayoutResult::Point tip = lr ? LayoutResult::Point{centre[b].x - boxes[b].width / 2, centre[b].y}
                                       : LayoutResult::Point{centre[b].x, centre[b].y - boxes[b].height / 2};
    const double dx = tip.x - p0.x, dy = tip.y - p0.y, length = std::max(std::hypot(dx, dy), 1.0);
    const LayoutResult::Point p3{tip.x - dx / length * 8, tip.y - dy / length * 8};  // the arrowhead's base
    // An edge past the next rank bows out sideways (alternating sides), so it does not run straight
    // through the nodes between its ends.
    const size_t span = rankOf[b] > rankOf[a] ? rankOf[b] - rankOf[a] : 1;
    const double bow = span > 1 ? std::min(30.0 + 6.0 * static_cast<double>(span), 240.0) * (k % 2 ? 1 : -1) : 0;
    const double bx = lr ? 0 : bow, by = lr ? bow : 0;
    path.points = {p0, {p0.x + (p3.x - p0.x) / 3 + bx, p0.y + (p3.y - p0.y) / 3 + by},
                   {p0.x + 2 * (p3.x - p0.x) / 3 + bx, p0.y + 2 * (p3.y - p0.y) / 3 + by}, p3};
    path.arrowTip = tip;
    path.label = view.edges[k].label;
    path.labelPos = {(p0.x + tip.x) / 2 + bx * 0.75, (p0.y + tip.y) / 2 + by * 0.75};
    out.edges.push_back(std::move(path));
  }
  // Clusters: the box around their nodes and inner clusters (they may overlap: this layout does
  // not keep a cluster's nodes together).
  std::map<std::string, size_t> clusterIndex;
  for (size_t c = 0; c < view.clusters.size(); ++c) clusterIndex.emplace(view.clusters[c].id, c);
  struct Extent {
    double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
    int depth = 0;
  };
  std::vector<Extent> extent(view.clusters.size());
  for (size_t i = 0; i < n; ++i) {
    std::string c = view.nodes[i].cluster;
    for (int guard = 0; !c.empty() && guard < 1000; ++guard) {  // up the parents (a bad parent chain ends)
      const auto it = clusterIndex.find(c);
      if (it == clusterIndex.end()) break;
      Extent& e = extent[it->second];
      e.x0 = std::min(e.x0, centre[i].x - boxes[i].width / 2);
      e.y0 = std::min(e.y0, centre[i].y - boxes[i].height / 2);
      e.x1 = std::max(e.x1, centre[i].x + boxes[i].width / 2);
      e.y1 = std::max(e.y1, centre[i].y + boxes[i].height / 2);
      c = view.clusters[it->second].parent;
    }
  }
  for (size_t c = 0; c < view.clusters.size(); ++c) {
    const Extent& e = extent[c];
    if (e.x0 > e.x1) continue;
    out.clusters.push_back({view.clusters[c].id, view.clusters[c].title, e.x0 - kClusterPad, e.y0 - kClusterPad - 14,
                            e.x1 - e.x0 + 2 * kClusterPad, e.y1 - e.y0 + 2 * kClusterPad + 14});
  }
  return out;
}

}  // namespace tdfx
