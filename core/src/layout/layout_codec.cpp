#include "layout_codec.h"

#include "tdfx/error.h"

namespace tdfx::layout {

using nlohmann::json;

namespace {

json pointJson(const LayoutResult::Point& p) { return json::array({p.x, p.y}); }
LayoutResult::Point pointFrom(const json& j) { return {j.at(0).get<double>(), j.at(1).get<double>()}; }

template <typename F>
auto guarded(const char* what, F&& read) {
  try {
    return read();
  } catch (const json::exception& e) {
    throw Error(std::string("the layout process sent a malformed ") + what + ": " + e.what());
  }
}

}  // namespace

json viewToJson(const ViewGraph& view) {
  json nodes = json::array(), edges = json::array(), clusters = json::array(), legend = json::array();
  for (const ViewNode& n : view.nodes)
    nodes.push_back({{"id", n.id},       {"kind", static_cast<int>(n.kind)}, {"lines", n.lines},
                     {"record", n.recordLabel}, {"fill", n.fillColor},        {"shape", n.shape},
                     {"cluster", n.cluster},    {"ir", n.irNodes},            {"scope", n.scope},
                     {"checks", n.checks},      {"asserts", n.checkAsserts},  {"w", n.fixedWidth},
                     {"h", n.fixedHeight}});
  for (const ViewEdge& e : view.edges) edges.push_back(json::array({e.from, e.to, e.label}));
  for (const ViewCluster& c : view.clusters) clusters.push_back(json::array({c.id, c.title, c.parent}));
  for (const auto& [label, colour] : view.legend) legend.push_back(json::array({label, colour}));
  return {{"name", view.name},   {"rankdir", view.rankdir}, {"style", static_cast<int>(view.style)},
          {"nodes", nodes},      {"edges", edges},          {"clusters", clusters},
          {"legend", legend},    {"depth", view.depth},     {"folded", view.foldedChecks}};
}

ViewGraph viewFromJson(const json& j) {
  return guarded("view", [&] {
    ViewGraph view;
    view.name = j.at("name").get<std::string>();
    view.rankdir = j.at("rankdir").get<std::string>();
    view.style = static_cast<ViewStyle>(j.at("style").get<int>());
    for (const json& n : j.at("nodes")) {
      ViewNode v;
      v.id = n.at("id").get<std::string>();
      v.kind = static_cast<ViewNode::Kind>(n.at("kind").get<int>());
      v.lines = n.at("lines").get<std::vector<std::string>>();
      v.recordLabel = n.at("record").get<std::string>();
      v.fillColor = n.at("fill").get<std::string>();
      v.shape = n.at("shape").get<std::string>();
      v.cluster = n.at("cluster").get<std::string>();
      v.irNodes = n.at("ir").get<std::vector<std::string>>();
      v.scope = n.at("scope").get<std::string>();
      v.checks = n.at("checks").get<std::vector<std::string>>();
      v.checkAsserts = n.at("asserts").get<int>();
      v.fixedWidth = n.at("w").get<double>();
      v.fixedHeight = n.at("h").get<double>();
      view.nodes.push_back(std::move(v));
    }
    for (const json& e : j.at("edges"))
      view.edges.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>(), e.at(2).get<std::string>()});
    for (const json& c : j.at("clusters"))
      view.clusters.push_back({c.at(0).get<std::string>(), c.at(1).get<std::string>(), c.at(2).get<std::string>()});
    for (const json& l : j.at("legend")) view.legend.emplace_back(l.at(0).get<std::string>(), l.at(1).get<std::string>());
    view.depth = j.at("depth").get<int>();
    view.foldedChecks = j.at("folded").get<std::vector<std::string>>();
    return view;
  });
}

json layoutToJson(const LayoutResult& layout) {
  json nodes = json::array(), edges = json::array(), clusters = json::array();
  for (const auto& n : layout.nodes) {
    json fields = json::array();
    for (const auto& f : n.fields) fields.push_back(json::array({f.x, f.y, f.width, f.height, f.lines, f.justify}));
    nodes.push_back(json::array({n.id, n.x, n.y, n.width, n.height, fields, n.fontSize}));
  }
  for (const auto& e : layout.edges) {
    json points = json::array();
    for (const auto& p : e.points) points.push_back(pointJson(p));
    edges.push_back(json::array({e.from, e.to, points, e.arrowTip ? pointJson(*e.arrowTip) : json(nullptr), e.label,
                                 pointJson(e.labelPos)}));
  }
  for (const auto& c : layout.clusters) clusters.push_back(json::array({c.id, c.title, c.x, c.y, c.width, c.height}));
  return {{"width", layout.width}, {"height", layout.height}, {"nodes", nodes}, {"edges", edges}, {"clusters", clusters}};
}

LayoutResult layoutFromJson(const json& j) {
  return guarded("layout", [&] {
    LayoutResult out;
    out.width = j.at("width").get<double>();
    out.height = j.at("height").get<double>();
    for (const json& n : j.at("nodes")) {
      LayoutResult::NodeBox box{n.at(0).get<std::string>(), n.at(1).get<double>(), n.at(2).get<double>(),
                                n.at(3).get<double>(), n.at(4).get<double>(), {}, n.at(6).get<double>()};
      for (const json& f : n.at(5))
        box.fields.push_back({f.at(0).get<double>(), f.at(1).get<double>(), f.at(2).get<double>(), f.at(3).get<double>(),
                              f.at(4).get<std::vector<std::string>>(), f.at(5).get<std::string>()});
      out.nodes.push_back(std::move(box));
    }
    for (const json& e : j.at("edges")) {
      LayoutResult::EdgePath path;
      path.from = e.at(0).get<std::string>();
      path.to = e.at(1).get<std::string>();
      for (const json& p : e.at(2)) path.points.push_back(pointFrom(p));
      if (!e.at(3).is_null()) path.arrowTip = pointFrom(e.at(3));
      path.label = e.at(4).get<std::string>();
      path.labelPos = pointFrom(e.at(5));
      out.edges.push_back(std::move(path));
    }
    for (const json& c : j.at("clusters"))
      out.clusters.push_back({c.at(0).get<std::string>(), c.at(1).get<std::string>(), c.at(2).get<double>(),
                              c.at(3).get<double>(), c.at(4).get<double>(), c.at(5).get<double>()});
    return out;
  });
}

}  // namespace tdfx::layout
