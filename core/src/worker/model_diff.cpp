#include "tdfx/worker/model_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "tdfx/ir/graph_printer.h"
#include "tdfx/util/display_text.h"

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

// Args as printed, each node reference first passed through `map` (which returns a node).
template <typename Map>
std::string argsText(const Node& n, Map&& map) {
  std::string s = formatGraphArgument(mapNodes(Argument(ArgumentTuple{n.args()}), map));
  for (const auto& [k, v] : n.kwargs()) s += " " + k + "=" + formatGraphArgument(mapNodes(v, map));
  return s;
}
std::string argsText(const Node& n) {
  return argsText(n, [](Node* x) { return x; });
}

void compare(const std::string& what, const std::string& a, const std::string& b, std::vector<NodeDifference>& out) {
  if (a != b) out.push_back({what, a, b});
}

DiffNode diffNode(const Node& n) { return {n.name(), n.op() == OpKind::CallModule ? n.target() : std::string()}; }

ParameterChange compareValues(const ParameterValues& a, const ParameterValues& b) {
  ParameterChange c;
  c.name = a.name;
  c.isBuffer = a.isBuffer;
  if (a.shape != b.shape) {
    c.kind = ParameterChange::Kind::ShapeChanged;
    c.detail = formatShape(a.shape) + " -> " + formatShape(b.shape);
    return c;
  }
  if (a.digest && b.digest && *a.digest == *b.digest && a.dtype == b.dtype) return c;  // bitwise the same
  const bool read = !a.values.empty() || !a.integers.empty();
  if (a.values.size() != b.values.size() || a.integers.size() != b.integers.size() ||
      (!read && !a.shape.empty() && a.shape != std::vector<int64_t>{0})) {
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
  for (size_t i = 0; i < a.integers.size(); ++i) {
    if (a.integers[i] == b.integers[i]) continue;
    equal = false;
    // Exact in unsigned arithmetic for any two int64s (their difference may not fit an int64).
    const auto x = static_cast<uint64_t>(a.integers[i]), y = static_cast<uint64_t>(b.integers[i]);
    const uint64_t d = a.integers[i] > b.integers[i] ? x - y : y - x;
    c.maxAbsDiff = std::max(c.maxAbsDiff, static_cast<double>(d));
  }
  if (!equal) {
    c.kind = ParameterChange::Kind::Differs;
    if (a.dtype != b.dtype) c.detail = "dtype " + a.dtype + " -> " + b.dtype;
  }
  return c;
}


// Which node of B each node of A is. Module calls and attribute reads are matched by target and
// call order (a module path is the most stable name a node has); placeholders and the output by
// name; functions and methods by op, target and matched inputs, so the residual `add` of layer2.0
// finds its partner even when an inserted block renumbered it (`add_2` in resnet18 is `add_3` in
// resnet34). What is left matches by FX name when op and target agree, then by name alone.
class NodeMatching {
 public:
  NodeMatching(const Graph& a, const Graph& b) {
    std::map<std::string, std::vector<const Node*>> byTargetB;
    std::unordered_map<std::string, std::pair<std::vector<const Node*>, size_t>> bySignatureB;
    // Graph::findNode walks the graph; a diff asks for every unmatched node's name.
    std::unordered_map<std::string, const Node*> byNameB;
    const auto findInB = [&byNameB](const std::string& name) -> const Node* {
      const auto it = byNameB.find(name);
      return it == byNameB.end() ? nullptr : it->second;
    };
    for (const auto& n : b.nodes()) {
      byNameB.emplace(n->name(), n.get());
      if (isByTarget(*n)) byTargetB[targetKey(*n)].push_back(n.get());
      if (isByInputs(*n)) bySignatureB[signature(*n, [](Node* x) { return x; })].first.push_back(n.get());
    }
    std::map<std::string, size_t> occurrence;
    for (const auto& n : a.nodes()) {
      const Node* partner = nullptr;
      if (isByTarget(*n)) {
        const auto it = byTargetB.find(targetKey(*n));
        const size_t k = occurrence[targetKey(*n)]++;
        if (it != byTargetB.end() && k < it->second.size()) partner = it->second[k];
      } else if (isByInputs(*n)) {
        // The first candidate not yet taken; a cursor per signature keeps many alike cheap.
        const auto it = bySignatureB.find(signature(*n, [this](Node* x) { return mapped(x); }));
        if (it != bySignatureB.end()) {
          auto& [candidates, next] = it->second;
          while (next < candidates.size() && bToA_.count(candidates[next])) ++next;
          if (next < candidates.size()) partner = candidates[next];
        }
      } else {
        partner = findInB(n->name());
        if (partner && partner->op() != n->op()) partner = nullptr;
      }
      if (partner && !bToA_.count(partner)) link(n.get(), partner);
    }
    // The rest by FX name: same op and target first, then same op (a changed target or args).
    for (const bool sameTarget : {true, false})
      for (const auto& n : a.nodes()) {
        if (aToB_.count(n.get())) continue;
        const Node* partner = findInB(n->name());
        if (!partner || bToA_.count(partner) || partner->op() != n->op()) continue;
        if (sameTarget && partner->target() != n->target()) continue;
        link(n.get(), partner);
      }
  }

  const Node* inB(const Node* a) const {
    const auto it = aToB_.find(a);
    return it == aToB_.end() ? nullptr : it->second;
  }
  bool matchedInB(const Node* b) const { return bToA_.count(b) > 0; }

  // An A node's inputs as B's nodes; a reference only one side has reads as `only`.
  Node* mapped(Node* a) const {
    const Node* b = inB(a);
    return const_cast<Node*>(b ? b : only_);  // NOLINT: only printed, never changed
  }
  Node* keptInB(Node* b) const { return matchedInB(b) ? b : const_cast<Node*>(only_); }  // NOLINT: only printed

  // Whether a matched pair takes the same arguments, references compared through the matching. A
  // reference to a node only one side has is part of that addition or removal and equals anything.
  bool sameArgs(const Node& a, const Node& b) const {
    if (a.args().size() != b.args().size() || a.kwargs().size() != b.kwargs().size()) return false;
    for (size_t i = 0; i < a.args().size(); ++i)
      if (!same(a.args()[i], b.args()[i])) return false;
    for (size_t i = 0; i < a.kwargs().size(); ++i)
      if (a.kwargs()[i].first != b.kwargs()[i].first || !same(a.kwargs()[i].second, b.kwargs()[i].second)) return false;
    return true;
  }

 private:
  static bool isByTarget(const Node& n) { return n.op() == OpKind::CallModule || n.op() == OpKind::GetAttr; }
  static bool isByInputs(const Node& n) { return n.op() == OpKind::CallFunction || n.op() == OpKind::CallMethod; }
  static std::string targetKey(const Node& n) { return std::string(opKindName(n.op())) + " " + n.target(); }
  template <typename Map>
  static std::string signature(const Node& n, Map&& map) {
    return targetKey(n) + " " + argsText(n, map);
  }
  bool same(const Argument& a, const Argument& b) const {
    if (a.isNode() && b.isNode()) {
      const Node* x = mapped(a.node());
      const Node* y = keptInB(b.node());
      return x == only_ || y == only_ || x == y;
    }
    const auto* ca = a.children();
    const auto* cb = b.children();
    if (ca && cb && a.value.index() == b.value.index() && !std::holds_alternative<ArgumentDict>(a.value)) {
      if (ca->size() != cb->size()) return false;
      for (size_t i = 0; i < ca->size(); ++i)
        if (!same((*ca)[i], (*cb)[i])) return false;
      return true;
    }
    return formatGraphArgument(mapNodes(a, [this](Node* x) { return mapped(x); })) ==
           formatGraphArgument(mapNodes(b, [this](Node* x) { return keptInB(x); }));
  }
  void link(const Node* a, const Node* b) {
    aToB_[a] = b;
    bToA_[b] = a;
  }

  std::unordered_map<const Node*, const Node*> aToB_, bToA_;
  Graph onlyGraph_;
  const Node* only_ = onlyGraph_.createNode(OpKind::Placeholder, "only_one_side", {}, {}, "only_one_side");
};

// The nodes of a graph that use a parameter or buffer: the module that owns it (any prefix of its
// path) or an attribute read of it. Indexed by target once, so a diff of two 100k-node models whose
// every weight differs asks one lookup per prefix, not one walk of the graph per parameter.
class NodesUsing {
 public:
  explicit NodesUsing(const TracedModel& model) {
    for (const auto& n : model.traced.graph->nodes())
      if (n->op() == OpKind::CallModule || n->op() == OpKind::GetAttr) byTarget_[n->target()].push_back(n.get());
    // A lone TensorDictModule's archive holds the user's module as its `module` attribute
    // ("module.fc.weight"), while the graph's targets are relative to it, as tensordict's
    // symbolic_trace makes them ("fc"): tdfx.show's changed weights marked no node (issue 57, F).
    // A sequential's names are its targets already ("0.module.fc1.weight").
    if (model.model.hasTensorDictMetadata) wrapperPrefix_ = "module.";
  }
  /// Appends the names of the nodes using parameter or buffer `name` (as the archive names it), in
  /// graph order.
  void add(const std::string& name, std::vector<std::string>& out) const {
    std::vector<const Node*> found = nodesOf(name);
    if (found.empty() && !wrapperPrefix_.empty() && name.compare(0, wrapperPrefix_.size(), wrapperPrefix_) == 0)
      found = nodesOf(name.substr(wrapperPrefix_.size()));
    std::sort(found.begin(), found.end(), [](const Node* x, const Node* y) { return x->index() < y->index(); });
    for (const Node* n : found) out.push_back(n->name());
  }

 private:
  // The call_module and get_attr nodes of `name`'s module or of any module holding it.
  std::vector<const Node*> nodesOf(const std::string& name) const {
    std::vector<const Node*> found;
    for (size_t end = name.size(); end != std::string::npos && end > 0; end = name.rfind('.', end - 1)) {
      const auto it = byTarget_.find(name.substr(0, end));
      if (it != byTarget_.end()) found.insert(found.end(), it->second.begin(), it->second.end());
    }
    return found;
  }
  std::unordered_map<std::string, std::vector<const Node*>> byTarget_;
  std::string wrapperPrefix_;
};

void sortUnique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

const char* valueKind(const ParameterChange& p) { return p.isBuffer ? "buffer" : "parameter"; }

const char* statusName(ParameterChange::Kind kind) {
  switch (kind) {
    case ParameterChange::Kind::Equal: return "equal";
    case ParameterChange::Kind::Differs: return "differs";
    case ParameterChange::Kind::ShapeChanged: return "shape_changed";
    case ParameterChange::Kind::Added: return "added";
    case ParameterChange::Kind::Removed: return "removed";
    case ParameterChange::Kind::NotCompared: return "not_compared";
  }
  return "";
}

std::string summaryLine(const ModelDiff& diff) {
  const size_t equal = std::count_if(diff.parameters.begin(), diff.parameters.end(),
                                     [](const ParameterChange& p) { return p.kind == ParameterChange::Kind::Equal; });
  return std::to_string(diff.removed.size()) + " node(s) removed, " + std::to_string(diff.added.size()) + " added, " +
         std::to_string(diff.changed.size()) + " changed; " + std::to_string(equal) + " of " +
         std::to_string(diff.parameters.size()) + " parameters and buffers equal";
}

}  // namespace

bool ModelDiff::identical() const {
  return added.empty() && removed.empty() && changed.empty() &&
         std::all_of(parameters.begin(), parameters.end(),
                     [](const ParameterChange& p) { return p.kind == ParameterChange::Kind::Equal; });
}

std::vector<std::string> ModelDiff::changedInA() const {
  std::vector<std::string> all = marksA.removed;
  all.insert(all.end(), marksA.changed.begin(), marksA.changed.end());
  all.insert(all.end(), marksA.weights.begin(), marksA.weights.end());
  sortUnique(all);
  return all;
}

ModelDiff diffModels(const TracedModel& a, const TracedModel& b, const std::vector<ParameterValues>& pa,
                     const std::vector<ParameterValues>& pb) {
  ModelDiff diff;
  const Graph& ga = *a.traced.graph;
  const Graph& gb = *b.traced.graph;
  const NodeMatching match(ga, gb);
  for (const auto& na : ga.nodes()) {
    const Node* nb = match.inB(na.get());
    if (!nb) {
      diff.removed.push_back(diffNode(*na));
      diff.marksA.removed.push_back(na->name());
      continue;
    }
    diff.matched.emplace_back(na->name(), nb->name());
    NodeChange change{diffNode(*na), diffNode(*nb), {}};
    compare("op", opKindName(na->op()), opKindName(nb->op()), change.changes);
    compare("target", printedTarget(*na), printedTarget(*nb), change.changes);
    if (!match.sameArgs(*na, *nb)) change.changes.push_back({"args", argsText(*na), argsText(*nb)});
    compare("module type", na->meta().moduleType, nb->meta().moduleType, change.changes);
    compare("constants", pairsText(na->meta().moduleConstants), pairsText(nb->meta().moduleConstants), change.changes);
    compare("attributes", pairsText(na->meta().moduleAttributes), pairsText(nb->meta().moduleAttributes), change.changes);
    compare("parameter shapes", parameterShapes(na->meta()), parameterShapes(nb->meta()), change.changes);
    if (!change.changes.empty()) {
      diff.marksA.changed.push_back(na->name());
      diff.marksB.changed.push_back(nb->name());
      diff.changed.push_back(std::move(change));
    }
  }
  for (const auto& nb : gb.nodes())
    if (!match.matchedInB(nb.get())) {
      diff.added.push_back(diffNode(*nb));
      diff.marksB.added.push_back(nb->name());
    }

  std::map<std::string, const ParameterValues*> byName;
  for (const ParameterValues& p : pb) byName[p.name] = &p;
  std::set<std::string> inA;
  for (const ParameterValues& p : pa) {
    inA.insert(p.name);
    const auto it = byName.find(p.name);
    if (it == byName.end()) diff.parameters.push_back({p.name, ParameterChange::Kind::Removed, p.isBuffer, 0, {}, {}});
    else diff.parameters.push_back(compareValues(p, *it->second));
  }
  for (const ParameterValues& p : pb)
    if (!inA.count(p.name)) diff.parameters.push_back({p.name, ParameterChange::Kind::Added, p.isBuffer, 0, {}, {}});
  const NodesUsing usingA(a), usingB(b);
  for (ParameterChange& p : diff.parameters) {
    if (p.kind == ParameterChange::Kind::Equal) continue;
    (p.kind == ParameterChange::Kind::Added ? usingB : usingA).add(p.name, p.usedBy);
    // A parameter only one side has belongs to a node only that side has: marked as added or removed.
    if (p.kind == ParameterChange::Kind::Added || p.kind == ParameterChange::Kind::Removed) continue;
    usingA.add(p.name, diff.marksA.weights);
    usingB.add(p.name, diff.marksB.weights);
  }
  for (DiffMarks* marks : {&diff.marksA, &diff.marksB}) {
    sortUnique(marks->weights);
    sortUnique(marks->changed);
  }
  return diff;
}

std::string formatModelDiff(const ModelDiff& diff, const std::string& nameA, const std::string& nameB) {
  std::string out = "--- " + nameA + "\n+++ " + nameB + "\n";
  for (const DiffNode& n : diff.removed) out += "- node " + n.label() + "\n";
  for (const DiffNode& n : diff.added) out += "+ node " + n.label() + "\n";
  for (const NodeChange& c : diff.changed) {
    const std::string name = c.a.name == c.b.name ? c.a.label() : c.a.label() + " -> " + c.b.label();
    for (const NodeDifference& d : c.changes) out += "~ node " + name + ": " + d.what + ": " + d.a + " -> " + d.b + "\n";
  }
  for (const ParameterChange& p : diff.parameters) {
    const std::string what = std::string(valueKind(p)) + " " + p.name;
    std::string nodes;
    for (const std::string& n : p.usedBy) nodes += (nodes.empty() ? " (node " : ", ") + n;
    if (!nodes.empty() && p.kind != ParameterChange::Kind::Added && p.kind != ParameterChange::Kind::Removed) nodes += ")";
    else nodes.clear();
    char buf[64];
    switch (p.kind) {
      case ParameterChange::Kind::Equal: break;
      case ParameterChange::Kind::Removed: out += "- " + what + "\n"; break;
      case ParameterChange::Kind::Added: out += "+ " + what + "\n"; break;
      case ParameterChange::Kind::ShapeChanged: out += "~ " + what + ": shape " + p.detail + nodes + "\n"; break;
      case ParameterChange::Kind::NotCompared: out += "? " + what + ": " + p.detail + "\n"; break;
      case ParameterChange::Kind::Differs:
        std::snprintf(buf, sizeof buf, "%.6g", p.maxAbsDiff);
        out += "~ " + what + ": values differ, max |delta| " + buf + (p.detail.empty() ? "" : ", " + p.detail) + nodes + "\n";
        break;
    }
  }
  out += summaryLine(diff) + "\n";
  if (diff.identical()) out += "identical\n";
  return out;
}

std::string modelDiffToJson(const ModelDiff& diff, const std::string& nameA, const std::string& nameB) {
  using json = nlohmann::ordered_json;  // the document's keys in the order docs/cli.md gives
  const auto node = [](const DiffNode& n) {
    json j = {{"name", n.name}};
    if (!n.module.empty()) j["module"] = n.module;
    return j;
  };
  json removed = json::array(), added = json::array(), changed = json::array(), parameters = json::array();
  for (const DiffNode& n : diff.removed) removed.push_back(node(n));
  for (const DiffNode& n : diff.added) added.push_back(node(n));
  for (const NodeChange& c : diff.changed) {
    json changes = json::array();
    for (const NodeDifference& d : c.changes) changes.push_back({{"what", d.what}, {"a", d.a}, {"b", d.b}});
    changed.push_back({{"a", node(c.a)}, {"b", node(c.b)}, {"changes", std::move(changes)}});
  }
  for (const ParameterChange& p : diff.parameters) {
    json j = {{"name", p.name}, {"kind", valueKind(p)}, {"status", statusName(p.kind)}};
    if (p.kind == ParameterChange::Kind::Differs)
      j["max_abs_delta"] = std::isfinite(p.maxAbsDiff) ? json(p.maxAbsDiff) : json("inf");
    if (!p.detail.empty()) j["detail"] = p.detail;
    if (!p.usedBy.empty()) j["nodes"] = p.usedBy;
    parameters.push_back(std::move(j));
  }
  const auto marks = [](const DiffMarks& m) {
    return json{{"added", m.added}, {"removed", m.removed}, {"changed", m.changed}, {"weights", m.weights}};
  };
  const json doc = {{"a", nameA},
                    {"b", nameB},
                    {"identical", diff.identical()},
                    {"nodes", {{"removed", removed}, {"added", added}, {"changed", changed}}},
                    {"parameters", parameters},
                    {"marks", {{"a", marks(diff.marksA)}, {"b", marks(diff.marksB)}}},
                    {"summary", summaryLine(diff)},
                    {"text", escapeControls(formatModelDiff(diff, nameA, nameB))}};  // as the command prints it
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace tdfx
