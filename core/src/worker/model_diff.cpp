#include "tdfx/worker/model_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "tdfx/ir/graph_printer.h"

namespace tdfx {

namespace {

std::string pairsText(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string s;
  for (const auto& [k, v] : pairs) s += (s.empty() ? "" : ", ") + k + "=" + v;
  return s.empty() ? "(none)" : s;
}

std::string parameterShapes(const NodeMeta& m) {
  std::string s;
  for (const ParameterInfo& p : m.parameters) s += (s.empty() ? "" : ", ") + p.name + " " + formatShape(p.shape);
  return s.empty() ? "(none)" : s;
}

// Args as printed, with node references by match key (a renamed producer is not a change here).
std::string argsText(const Node& n) {
  std::string s = formatGraphArgument(ArgumentTuple{n.args()});
  for (const auto& [k, v] : n.kwargs()) s += " " + k + "=" + formatGraphArgument(v);
  return s;
}

void compare(const std::string& what, const std::string& a, const std::string& b, std::vector<std::string>& out) {
  if (a != b) out.push_back(what + ": " + a + " -> " + b);
}

ParameterChange compareValues(const ParameterValues& a, const ParameterValues& b) {
  ParameterChange c;
  c.name = a.name;
  if (a.shape != b.shape) {
    c.kind = ParameterChange::Kind::ShapeChanged;
    c.detail = formatShape(a.shape) + " -> " + formatShape(b.shape);
    return c;
  }
  if (a.values.size() != b.values.size() || (a.values.empty() && !a.shape.empty() && a.shape != std::vector<int64_t>{0})) {
    c.kind = ParameterChange::Kind::NotCompared;
    c.detail = "values not read (" + a.dtype + ")";
    return c;
  }
  bool equal = a.dtype == b.dtype;
  for (size_t i = 0; i < a.values.size(); ++i) {
    const double x = a.values[i], y = b.values[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    equal = false;
    const double d = std::isfinite(x) && std::isfinite(y) ? std::abs(x - y) : INFINITY;
    c.maxAbsDiff = std::max(c.maxAbsDiff, d);
  }
  if (!equal) {
    c.kind = ParameterChange::Kind::Differs;
    if (a.dtype != b.dtype) c.detail = "dtype " + a.dtype + " -> " + b.dtype;
  }
  return c;
}

}  // namespace

bool ModelDiff::identical() const {
  return added.empty() && removed.empty() && changed.empty() &&
         std::all_of(parameters.begin(), parameters.end(),
                     [](const ParameterChange& p) { return p.kind == ParameterChange::Kind::Equal; });
}

std::string diffKey(const Node& node) {
  return node.op() == OpKind::CallModule ? "module " + node.target() : node.name();
}

ModelDiff diffModels(const TracedModel& a, const TracedModel& b, const std::vector<ParameterValues>& pa,
                     const std::vector<ParameterValues>& pb) {
  ModelDiff diff;
  std::unordered_map<std::string, const Node*> inB;
  for (const auto& n : b.traced.graph->nodes()) inB.emplace(diffKey(*n), n.get());
  std::unordered_map<std::string, bool> seenInA;
  for (const auto& na : a.traced.graph->nodes()) {
    const std::string key = diffKey(*na);
    seenInA[key] = true;
    const auto it = inB.find(key);
    if (it == inB.end()) {
      diff.removed.push_back(key);
      diff.changedInA.push_back(na->name());
      continue;
    }
    const Node& nb = *it->second;
    NodeChange change{key, {}};
    compare("op", opKindName(na->op()), opKindName(nb.op()), change.changes);
    compare("target", printedTarget(*na), printedTarget(nb), change.changes);
    compare("args", argsText(*na), argsText(nb), change.changes);
    compare("module type", na->meta().moduleType, nb.meta().moduleType, change.changes);
    compare("constants", pairsText(na->meta().moduleConstants), pairsText(nb.meta().moduleConstants), change.changes);
    compare("attributes", pairsText(na->meta().moduleAttributes), pairsText(nb.meta().moduleAttributes), change.changes);
    compare("parameter shapes", parameterShapes(na->meta()), parameterShapes(nb.meta()), change.changes);
    if (!change.changes.empty()) {
      diff.changed.push_back(std::move(change));
      diff.changedInA.push_back(na->name());
    }
  }
  for (const auto& nb : b.traced.graph->nodes())
    if (!seenInA.count(diffKey(*nb))) diff.added.push_back(diffKey(*nb));

  std::map<std::string, const ParameterValues*> byName;
  for (const ParameterValues& p : pb) byName[p.name] = &p;
  std::map<std::string, bool> inA;
  for (const ParameterValues& p : pa) {
    inA[p.name] = true;
    const auto it = byName.find(p.name);
    if (it == byName.end()) diff.parameters.push_back({p.name, ParameterChange::Kind::Removed, 0, {}});
    else diff.parameters.push_back(compareValues(p, *it->second));
  }
  for (const ParameterValues& p : pb)
    if (!inA.count(p.name)) diff.parameters.push_back({p.name, ParameterChange::Kind::Added, 0, {}});
  return diff;
}

std::string formatModelDiff(const ModelDiff& diff, const std::string& nameA, const std::string& nameB) {
  std::string out = "--- " + nameA + "\n+++ " + nameB + "\n";
  size_t equalParameters = 0;
  for (const std::string& k : diff.removed) out += "- node " + k + "\n";
  for (const std::string& k : diff.added) out += "+ node " + k + "\n";
  for (const NodeChange& c : diff.changed)
    for (const std::string& what : c.changes) out += "~ node " + c.key + ": " + what + "\n";
  for (const ParameterChange& p : diff.parameters) {
    char buf[64];
    switch (p.kind) {
      case ParameterChange::Kind::Equal: ++equalParameters; break;
      case ParameterChange::Kind::Removed: out += "- parameter " + p.name + "\n"; break;
      case ParameterChange::Kind::Added: out += "+ parameter " + p.name + "\n"; break;
      case ParameterChange::Kind::ShapeChanged: out += "~ parameter " + p.name + ": shape " + p.detail + "\n"; break;
      case ParameterChange::Kind::NotCompared: out += "? parameter " + p.name + ": " + p.detail + "\n"; break;
      case ParameterChange::Kind::Differs:
        std::snprintf(buf, sizeof buf, "%.6g", p.maxAbsDiff);
        out += "~ parameter " + p.name + ": values differ, max |delta| " + buf + (p.detail.empty() ? "" : ", " + p.detail) + "\n";
        break;
    }
  }
  out += std::to_string(diff.removed.size()) + " node(s) removed, " + std::to_string(diff.added.size()) + " added, " +
         std::to_string(diff.changed.size()) + " changed; " + std::to_string(equalParameters) + " of " +
         std::to_string(diff.parameters.size()) + " parameters and buffers equal\n";
  if (diff.identical()) out += "identical\n";
  return out;
}

}  // namespace tdfx
