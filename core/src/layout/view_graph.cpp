#include "tdfx/layout/view_graph.h"

#include <cctype>
#include <algorithm>
#include <unordered_map>

#include "tdfx/ir/graph_printer.h"
#include "tdfx/util/dtype.h"
#include "tdfx/ir/fx_target.h"
#include "md5_prefix.h"
#include "shape_folding.h"

namespace tdfx {

const ViewNode* ViewGraph::findNode(const std::string& id) const {
  for (const ViewNode& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

namespace {

std::string tdScopePath(const std::string& tdModule) {
  // "0.1" -> "0.module.1.module", as the call_module targets of nested sequentials are prefixed.
  std::string out;
  size_t start = 0;
  while (!tdModule.empty()) {
    const size_t dot = tdModule.find('.', start);
    out += (out.empty() ? "" : ".") + tdModule.substr(start, dot == std::string::npos ? std::string::npos : dot - start) +
           ".module";
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

std::string lastPart(const std::string& dotted) {
  const size_t dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

bool isKeyRead(const Node& n) { return n.meta().tensordictKey.has_value(); }

// FxGraphDrawer's colour of a node.
std::string fxColor(const Node& n) {
  switch (n.op()) {
    case OpKind::Placeholder: return "AliceBlue";
    case OpKind::CallModule: return "LemonChiffon1";
    case OpKind::GetAttr: return "LightGrey";
    case OpKind::Output: return "PowderBlue";
    default: break;
  }
  static const char* colors[] = {"CadetBlue1",   "Coral",      "DarkOliveGreen1", "DarkSeaGreen1", "GhostWhite", "Khaki1",
                                 "LavenderBlush1", "LightSkyBlue", "MistyRose1",  "MistyRose2",    "PaleTurquoise2",
                                 "PeachPuff1",   "Salmon",     "Thistle1",        "Thistle3",      "Wheat1"};
  return colors[md5Prefix32(printedTarget(n)) % 16];
}

// Record labels treat {}|<> as structure and backslash as an escape: user text must escape them.
// (Quotes are DOT's business: cgraph escapes them when writing.)
std::string recordEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '{' || c == '}' || c == '|' || c == '<' || c == '>' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// FxGraphDrawer formats each argument with _format_arg(a, max_list_len=8): a list or tuple of more
// than 8 items shows 8 and `...[total_len=N]`.
std::string fxArgument(const Argument& a) {
  const auto* items = a.items();
  if (!items || items->size() <= 8) return formatGraphArgument(a);
  const bool list = std::holds_alternative<ArgumentList>(a.value);
  std::string out = list ? "[" : "(";
  for (size_t i = 0; i < 8; ++i) out += (i ? ", " : "") + formatGraphArgument((*items)[i]);
  return out + ", ...[total_len=" + std::to_string(items->size()) + "]" + (list ? "]" : ")");
}

std::string fxArgs(const std::vector<Argument>& args, const Kwargs& kwargs) {
  // FxGraphDrawer with skip_node_names_in_args leaves out every formatted argument with a `%` in
  // it (the arguments that mention nodes).
  std::string out;
  std::vector<std::string> items;
  for (const Argument& a : args)
    if (std::string f = fxArgument(a); f.find('%') == std::string::npos) items.push_back(f);
  if (!items.empty()) {
    out += "|args=(\\l";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\\n" : "") + recordEscape(items[i]);
    out += ",\\n)\\l";
  }
  items.clear();
  for (const auto& [k, v] : kwargs)
    if (std::string f = k + ": " + fxArgument(v); f.find('%') == std::string::npos) items.push_back(f);
  if (!items.empty()) {
    out += "|kwargs=\\{\\l";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\\n" : "") + recordEscape(items[i]);
    out += ",\\n\\}\\l";
  }
  return out;
}

std::string fxLabel(const Node& n, bool shapes, const RunOverlay* run) {
  std::string label = "{name=%" + recordEscape(n.name()) + "|op_code=" + opKindName(n.op()) + "\\n";
  if (n.op() == OpKind::CallModule) {
    label += "\\n" + recordEscape(n.meta().moduleType) + "\\n|";
    std::string extra;
    for (size_t i = 0; i < n.meta().moduleConstants.size(); ++i) {
      const auto& [k, v] = n.meta().moduleConstants[i];
      extra += (i ? "\\n" : "") + recordEscape(k + ": " + v);
    }
    label += extra + "\\n";
  } else {
    std::string target = printedTarget(n);
    // FxGraphDrawer shows _get_qualified_name: `_operator.mul`, and a builtin's bare name (`getattr`).
    if (fx_target::operatorName(target)) target = "_" + target;
    if (const auto builtin = fx_target::builtinName(target)) target = *builtin;
    label += "|target=" + recordEscape(target) + "\\n";
    label += fxArgs(n.args(), n.kwargs());
    label += "|num_users=" + std::to_string(n.users().size()) + "\\n";
  }
  if (shapes)
    for (const TensorMeta& t : recordedOutputs(n, run)) label += "|" + recordEscape(formatTensorMeta(t)) + "\\n";
  return label + "}";
}



// tdfx's short label: "Linear 100→50", "Conv2d 3→64 (7, 7)", "relu", ".view".
std::string shortLabel(const Node& n) {
  switch (n.op()) {
    case OpKind::CallModule: {
      std::string label = lastPart(n.meta().moduleType);
      std::map<std::string, std::string> c(n.meta().moduleConstants.begin(), n.meta().moduleConstants.end());
      if (c.count("in_features") && c.count("out_features"))
        label += " " + c["in_features"] + "\u2192" + c["out_features"];
      else if (c.count("in_channels") && c.count("out_channels"))
        label += " " + c["in_channels"] + "\u2192" + c["out_channels"] + (c.count("kernel_size") ? " " + c["kernel_size"] : "");
      else if (c.count("num_features"))
        label += " " + c["num_features"];
      // A quantized module says so (issue 57, I: a dynamically quantized LSTM was labelled as a
      // float one): torch.ao.nn.quantized[.dynamic] and torch.nn.quantized modules.
      const std::string& type = n.meta().moduleType;
      if (type.find(".quantized.dynamic.") != std::string::npos) label += " (dynamic quantized)";
      else if (type.find(".quantized.") != std::string::npos) label += " (quantized)";
      return label;
    }
    case OpKind::CallMethod: return "." + n.target();
    case OpKind::GetAttr: return n.target();
    case OpKind::CallFunction: {
      if (fx_target::isCallTo(n, fx_target::kGetItem) && n.args().size() == 2) return "getitem " + shape_folding::subscriptText(n.args()[1]);
      if (fx_target::isCallTo(n, fx_target::kGetAttr) && n.args().size() == 2)
        if (const auto* attr = std::get_if<std::string>(&n.args()[1].value)) return "getattr ." + *attr;
      return lastPart(n.target());
    }
    default: return n.name();
  }
}

// Where FX's count of a repeated name starts ("_1" of "relu_1"); the name's size when it has none.
size_t countSuffix(const std::string& name) {
  const size_t cut = name.find_last_not_of("0123456789");
  return cut != std::string::npos && cut + 1 < name.size() && name[cut] == '_' ? cut : name.size();
}

// A node's lines: its short label over its name, or one line when the name only repeats the label's
// op ("getitem 0" over "getitem", ".reshape" over "reshape_1", issue 36): the name, with what the
// label adds ("getitem[0]", "getattr_1 .shape").
std::vector<std::string> labelLines(const Node& n, const std::string& name) {
  const std::string label = shortLabel(n);
  if (label == name) return {label};
  if (n.op() == OpKind::CallModule || n.op() == OpKind::GetAttr) return {label, name};
  const size_t cut = countSuffix(name);
  const std::string bare = name.substr(0, cut);
  const size_t from = label[0] == '.' ? 1 : 0, space = label.find(' ');
  const std::string op = label.substr(from, space == std::string::npos ? std::string::npos : space - from);
  if (op != bare) return {label, name};
  const std::string rest = space == std::string::npos ? std::string() : label.substr(space + 1);
  if (rest.empty()) return {name};
  if (fx_target::isCallTo(n, fx_target::kGetItem)) return {name + "[" + rest + "]"};
  return {name + " " + rest};
}

// A node's name inside its frame: "mlp_0" for "encoder_layers_encoder_layer_5_mlp_0" in the frame
// of encoder.layers.encoder_layer_5, which already names the rest. A module's FX name comes from its
// target ("0.module.stages.0.fc1" gives "_0_stages_0_fc1"), so the target says which end is local.
// Unchanged when the name does not end with that part.
std::string nameInFrame(const Node& n, const std::string& scope) {
  const std::string& name = n.name();
  if (scope.empty()) return name;
  const auto mangled = [](std::string path) {
    for (char& c : path)
      if (c == '.') c = '_';
    return path;
  };
  std::string local;
  if ((n.op() == OpKind::CallModule || n.op() == OpKind::GetAttr) && n.target().size() > scope.size() + 1 &&
      n.target().compare(0, scope.size() + 1, scope + ".") == 0)
    local = mangled(n.target().substr(scope.size() + 1));
  else if (const std::string prefix = mangled(scope) + "_"; name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0)
    local = name.substr(prefix.size());
  const bool endsWithLocal = !local.empty() && local.size() < name.size() &&
                             name.compare(name.size() - local.size(), local.size(), local) == 0;
  if (endsWithLocal) return local;
  // A module called again is named with a count: `layer1_0_relu_1` for layer1.0.relu reads
  // "relu_1", and in a TensorDict pipeline `_0__0_fc_1` for 0.module.0.module.fc reads "fc_1"
  // (FX names those modules by another mangling, so the local part is matched from the end).
  if (n.op() == OpKind::CallModule && !local.empty()) {
    if (const size_t digits = countSuffix(name); digits != name.size()) {
      const std::string base = name.substr(0, digits);
      if (base.size() > local.size() && base.compare(base.size() - local.size(), local.size(), local) == 0 &&
          !std::isalnum(static_cast<unsigned char>(base[base.size() - local.size() - 1])))
        return local + name.substr(digits);
    }
  }
  return name;
}

const char* tdfxColor(OpKind op) {
  switch (op) {
    case OpKind::CallModule: return "#FFE9A8";
    case OpKind::CallFunction: return "#CFE3F7";
    case OpKind::CallMethod: return "#D4F0DC";
    case OpKind::GetAttr: return "#E3E5E8";
    default: return "#FFFFFF";
  }
}
constexpr const char* kKeyReadColor = "#9CCBF0";
constexpr const char* kKeyWriteColor = "#F4B6AE";
constexpr const char* kCollapsedColor = "#F7D9B5";
constexpr const char* kShapeColor = "#EEEAF6";

}  // namespace

std::vector<std::string> scopesOf(const Node& node) {
  std::vector<std::string> scopes;
  const std::string td = tdScopePath(node.meta().tdModule);
  if (!td.empty()) {
    std::string prefix;
    size_t start = 0;
    while (true) {
      const size_t dot = td.find(".module", start);
      if (dot == std::string::npos) break;
      prefix = td.substr(0, dot + 7);
      scopes.push_back(prefix);
      start = dot + 8;
    }
  }
  if (isKeyRead(node) || node.op() == OpKind::Placeholder || node.op() == OpKind::Output) return scopes;
  std::string path = node.meta().modulePath;
  if (node.op() == OpKind::CallModule) {
    const size_t dot = path.rfind('.');
    path = dot == std::string::npos ? "" : path.substr(0, dot);
  }
  size_t start = 0;
  while (!path.empty()) {
    const size_t dot = path.find('.', start);
    const std::string prefix = path.substr(0, dot);
    scopes.push_back(td.empty() ? prefix : td + "." + prefix);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return scopes;
}

std::map<std::string, int> allScopes(const Graph& graph) {
  std::map<std::string, int> scopes;
  for (const auto& n : graph.nodes()) {
    const auto chain = scopesOf(*n);
    for (size_t i = 0; i < chain.size(); ++i) scopes.emplace(chain[i], static_cast<int>(i) + 1);
  }
  return scopes;
}

namespace {

// The scope a node is folded into at this hierarchy state, or "" when it is visible itself.
std::string collapsedScope(const std::vector<std::string>& chain, int depth, const HierarchyState& h) {
  for (size_t i = 0; i < chain.size(); ++i) {
    const int level = static_cast<int>(i) + 1;
    bool expanded = h.expandAll || level <= depth;
    if (h.expanded.count(chain[i])) expanded = true;
    if (h.collapsed.count(chain[i])) expanded = false;
    if (!expanded) return chain[i];
  }
  return "";
}

size_t countVisible(const std::vector<std::vector<std::string>>& chains, int depth) {
  const HierarchyState h;
  std::set<std::string> seen;
  size_t visible = 0;
  for (const auto& chain : chains) {
    const std::string scope = collapsedScope(chain, depth, h);
    if (scope.empty()) ++visible;
    else if (seen.insert(scope).second) ++visible;
  }
  return visible;
}

// Every node's scope chain, by node index.
std::vector<std::vector<std::string>> scopeChains(const Graph& graph) {
  std::vector<std::vector<std::string>> chains(graph.size());
  for (const auto& n : graph.nodes()) chains[n->index()] = scopesOf(*n);
  return chains;
}

// Which call of each scope of its chain a node belongs to (1 for the first). A module called twice
// (swin's `stochastic_depth`, once after the attention and once after the MLP) is one path but two
// runs of code with the rest of the block between them; drawn as one frame, the frame must hold
// both, and every edge from the first run to the second goes up through it (torchvision's swin_t
// was laid out as a staircase, right to left). A call ends when a call node outside the scope runs;
// a later node of the scope begins the next one. Attribute reads neither end a call nor are ended.
std::vector<std::vector<int>> scopeCalls(const Graph& graph, const std::vector<std::vector<std::string>>& chains) {
  std::vector<std::vector<int>> calls(graph.size());
  std::map<std::string, int> count;   // calls of a scope so far
  std::set<std::string> running, ended;  // scopes of the calls in progress; scopes whose last call ended
  for (const auto& n : graph.nodes()) {
    const std::vector<std::string>& chain = chains[n->index()];
    const OpKind op = n->op();
    if (op == OpKind::Placeholder || op == OpKind::Output) continue;
    if (op == OpKind::CallFunction || op == OpKind::CallMethod || op == OpKind::CallModule) {
      for (auto it = running.begin(); it != running.end();) {
        if (std::find(chain.begin(), chain.end(), *it) != chain.end()) {
          ++it;
          continue;
        }
        ended.insert(*it);
        it = running.erase(it);
      }
    }
    std::vector<int>& mine = calls[n->index()];
    for (const std::string& scope : chain) {
      int& c = count[scope];
      if (c == 0 || ended.erase(scope)) ++c;
      running.insert(scope);
      mine.push_back(c);
    }
  }
  return calls;
}

// The largest depth showing at most `maxVisibleNodes` nodes, one count per candidate depth.
int autoDepth(const std::vector<std::vector<std::string>>& chains, int maxVisibleNodes) {
  size_t maxDepth = 0;
  for (const auto& chain : chains) maxDepth = std::max(maxDepth, chain.size());
  int best = 0;
  for (int d = 0; d <= static_cast<int>(maxDepth); ++d) {
    if (countVisible(chains, d) > static_cast<size_t>(maxVisibleNodes)) break;
    best = d;
  }
  return best;
}

// By node index: whether the node is an input check. Checks are torch._assert calls, values no one
// uses (the f-string of an assert's message), and the nodes whose every user is a check (size ->
// getitem -> eq -> _assert). A node that mutates an argument (its TorchScript schema marks it `!`,
// as aten::append's list) or whose schema is unknown (a module call) is never folded when unused:
// its effect may be what the graph needs.
std::vector<bool> inputChecks(const Graph& graph) {
  std::vector<bool> check(graph.size(), false);
  const auto& nodes = graph.nodes();
  // Users come after their producers: one pass from the end sees every user decided.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node& n = **it;
    if (n.op() == OpKind::Placeholder || n.op() == OpKind::Output) continue;
    const std::string& schema = n.meta().schema;
    if (schema.find('!') != std::string::npos) continue;  // mutates: never folded
    if (fx_target::isCallTo(n, fx_target::kAssert)) {
      check[n.index()] = true;
    } else if (n.users().empty()) {
      check[n.index()] = !schema.empty();
    } else {
      check[n.index()] = std::all_of(n.users().begin(), n.users().end(), [&](const Node* u) { return check[u->index()]; });
    }
  }
  return check;
}

}  // namespace

int autoDepth(const Graph& graph, int maxVisibleNodes) { return autoDepth(scopeChains(graph), maxVisibleNodes); }

ViewGraph buildView(const TracedGraph& traced, const ViewOptions& options) {
  const Graph& graph = *traced.graph;
  const HierarchyState& h = options.hierarchy;
  ViewGraph view;
  view.rankdir = options.rankdir;
  view.style = options.style;
  const std::vector<std::vector<std::string>> chains = scopeChains(graph);  // once, for depth and folding
  view.depth = h.expandAll ? 1000 : h.depth ? *h.depth : autoDepth(chains, h.maxVisibleNodes);
  const bool fx = options.style == ViewStyle::Fx;

  // Scope metadata: module types by path, TensorDictModule titles.
  std::map<std::string, std::string> scopeTypes = traced.scopeTypes;
  std::map<std::string, std::string> tdTitles;
  for (const auto& m : traced.modules) {
    if (m.position.empty()) continue;
    std::string title = m.position + ": ";
    for (size_t i = 0; i < m.inKeys.size(); ++i) title += (i ? ", " : "") + keyToString(m.inKeys[i]);
    title += " \u2192 ";
    for (size_t i = 0; i < m.outKeys.size(); ++i) title += (i ? ", " : "") + keyToString(m.outKeys[i]);
    tdTitles[tdScopePath(m.position)] = title;
  }
  auto clusterId = [](const std::string& scope) { return "cluster_" + scope; };
  // A frame per call of a scope (scopeCalls): the first keeps the scope's own id.
  const std::vector<std::vector<int>> calls = fx ? std::vector<std::vector<int>>() : scopeCalls(graph, chains);
  const auto callClusterId = [&clusterId](const std::string& scope, int call) {
    return call <= 1 ? clusterId(scope) : clusterId(scope) + " (call " + std::to_string(call) + ")";
  };
  struct UsedCluster {
    std::string scope, parent;  // parent: the enclosing frame's id, "" at the top
    int call = 1;
  };
  std::map<std::string, UsedCluster> usedClusters;  // by id
  auto innermostCluster = [&](const Node& n, const std::string& stopAt) {
    // Clusters are the expanded scopes around a visible node (up to, not including, a collapsed one).
    // FxGraphDrawer's picture has none.
    if (fx) return std::string();
    const std::vector<std::string>& chain = chains[n.index()];
    std::string inner;
    for (size_t i = 0; i < chain.size(); ++i) {
      if (chain[i] == stopAt) break;
      const int call = i < calls[n.index()].size() ? calls[n.index()][i] : 1;
      const std::string id = callClusterId(chain[i], call);
      usedClusters.emplace(id, UsedCluster{chain[i], inner, call});
      inner = id;
    }
    return inner;
  };

  std::vector<std::string> viewId(graph.size());
  std::map<std::string, size_t> collapsedIndex;
  const bool foldChecks = !fx && !options.checks;
  const std::vector<bool> isCheck = foldChecks ? inputChecks(graph) : std::vector<bool>();
  std::vector<const Node*> checkNodes;  // input checks folded away, in graph order
  // By node index: the collapsed scope it is drawn in, "" when drawn itself (once, for the folds too).
  std::vector<std::string> collapsedIn(graph.size());
  for (const auto& n : graph.nodes()) collapsedIn[n->index()] = collapsedScope(chains[n->index()], view.depth, h);
  using shape_folding::ShapeFolds;
  const ShapeFolds shapeFolds =
      !fx && !options.shapeArithmetic
          ? shape_folding::foldShapes(
                graph, isCheck, options.shapesExpanded,
                [&](const Node& n) { return collapsedIn[n.index()].empty() ? n.name() : "scope:" + collapsedIn[n.index()]; },
                [&](const Node& n) { return collapsedIn[n.index()].empty(); })
          : ShapeFolds();
  for (const auto& nodePtr : graph.nodes()) {
    const Node& n = *nodePtr;
    // Key reads (a plain module's parameters too) are drawn as keys; the tensordict placeholder is not drawn.
    if (!fx && ((n.op() == OpKind::Placeholder && !isKeyRead(n)) || n.op() == OpKind::Output)) continue;
    const auto& chain = chains[n.index()];
    const std::string& folded = collapsedIn[n.index()];
    if (!folded.empty()) {
      auto it = collapsedIndex.find(folded);
      if (it == collapsedIndex.end()) {
        ViewNode v;
        v.id = "scope:" + folded;
        v.kind = ViewNode::Kind::Collapsed;
        v.scope = folded;
        std::string type = scopeTypes.count(folded) ? lastPart(scopeTypes[folded]) : "";
        if (tdTitles.count(folded)) type = tdTitles[folded];
        v.cluster = innermostCluster(n, folded);
        // Named within the frame around it, as an expanded module's nodes are ("encoder_layer_0"
        // inside encoder.layers); FX's picture has no frames and keeps the path.
        const std::string parent = v.cluster.empty() ? std::string() : usedClusters.at(v.cluster).scope;
        const bool inFrame = !fx && !parent.empty() && folded.compare(0, parent.size() + 1, parent + ".") == 0;
        v.lines = {inFrame ? folded.substr(parent.size() + 1) : folded, type};
        v.fillColor = fx ? "LemonChiffon1" : kCollapsedColor;
        v.shape = fx ? "record" : "box3d";
        if (fx) v.recordLabel = "{" + recordEscape(folded) + "|" + recordEscape(type) + "\\n}";
        collapsedIndex[folded] = view.nodes.size();
        view.nodes.push_back(v);
        it = collapsedIndex.find(folded);
      }
      view.nodes[it->second].irNodes.push_back(n.name());
      viewId[n.index()] = view.nodes[it->second].id;
      continue;
    }
    if (foldChecks && isCheck[n.index()]) {
      checkNodes.push_back(&n);
      continue;
    }
    if (!shapeFolds.folded.empty() && shapeFolds.folded[n.index()]) continue;  // drawn in its shape node
    ViewNode v;
    v.irNodes = {n.name()};
    v.cluster = innermostCluster(n, "");
    v.fxDifference = n.meta().fxDifference;
    if (!fx && isKeyRead(n)) {
      v.id = n.name();
      v.kind = ViewNode::Kind::Key;
      v.lines = {keyToString(*n.meta().tensordictKey)};
      v.shape = "ellipse";
      v.fillColor = kKeyReadColor;
    } else {
      v.id = n.name();
      if (fx) {
        v.shape = "record";
        v.recordLabel = fxLabel(n, options.shapes, options.run.get());
        v.fillColor = fxColor(n);
      } else {
        v.lines = labelLines(n, nameInFrame(n, chain.empty() ? std::string() : chain.back()));
        v.fillColor = tdfxColor(n.op());
      }
    }
    viewId[n.index()] = v.id;
    view.nodes.push_back(std::move(v));
    // FxGraphDrawer draws a leaf module's parameters and buffers as their own nodes.
    if (fx && n.op() == OpKind::CallModule) {
      for (const ParameterInfo& p : n.meta().parameters) {
        if (p.isPacked) continue;  // FxGraphDrawer draws named_parameters() and buffers only
        ViewNode w;
        w.id = n.name() + "." + p.name;
        w.kind = ViewNode::Kind::Parameter;
        w.shape = "record";
        w.fillColor = "Salmon";
        // FxGraphDrawer 1.13's label, operator precedence included: `name|op_code=get_parameter`
        // for a parameter, but only `buffer\l` for a buffer.
        w.recordLabel = "{" + (p.isBuffer ? std::string("buffer\\l") : recordEscape(w.id) + "|op_code=get_parameter") +
                        dtypeRepr(p.dtype) + recordEscape(formatShape(p.shape)) + "\\n}";
        w.cluster = view.nodes.back().cluster;
        view.edges.push_back({w.id, n.name(), ""});
        view.nodes.push_back(std::move(w));
      }
    }
  }

  shape_folding::addShapeNodes(view, shapeFolds, viewId, kShapeColor);

  // A drawn node's badge holds the folded checks that read its value, directly or through other
  // folded nodes (x -> size -> getitem -> eq -> _assert), in graph order.
  if (!checkNodes.empty()) {
    std::map<std::string, size_t> indexOf;
    for (size_t i = 0; i < view.nodes.size(); ++i) indexOf[view.nodes[i].id] = i;
    for (const auto& nodePtr : graph.nodes()) {
      const std::string& id = viewId[nodePtr->index()];
      if (id.empty()) continue;
      std::set<const Node*> reached;
      std::vector<const Node*> stack(nodePtr->users().begin(), nodePtr->users().end());
      while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (!viewId[n->index()].empty() || !isCheck[n->index()] || !reached.insert(n).second) continue;
        for (const Node* u : n->users()) stack.push_back(u);
      }
      if (reached.empty()) continue;
      ViewNode& guarded = view.nodes[indexOf.at(id)];
      for (const Node* n : checkNodes)
        if (reached.count(n) && std::find(guarded.checks.begin(), guarded.checks.end(), n->name()) == guarded.checks.end()) {
          guarded.checks.push_back(n->name());
          guarded.checkAsserts += fx_target::isCallTo(*n, fx_target::kAssert);
        }
    }
    for (const Node* n : checkNodes) view.foldedChecks.push_back(n->name());
  }

  // Edges: producer -> user, once per pair of visible nodes, none inside a collapsed scope. A shape
  // is written on the first edge of its value only: the same text on each of a producer's edges
  // would pile up where they leave it.
  std::set<std::pair<std::string, std::string>> seen;
  std::set<std::string> labelled;
  for (const auto& nodePtr : graph.nodes()) {
    const Node& n = *nodePtr;
    const std::string& from = viewId[n.index()];
    if (from.empty()) continue;
    for (const Node* user : n.users()) {
      if (shapeFolds.isFolded(*user)) continue;  // the shape node's own edges, below
      const std::string& to = viewId[user->index()];
      // A folded size's use by its shape node's user is that node's edge, below; another use (a
      // check inside a collapsed module) keeps its own edge from the shape node.
      if (shapeFolds.isFolded(n) && shapeFolds.covers(n, to)) continue;
      if (to.empty() || to == from || !seen.insert({from, to}).second) continue;
      std::string label;
      if (options.shapes && !fx && !recordedOutputs(n, options.run.get()).empty() && labelled.insert(n.name()).second)
        label = formatTensorMeta(recordedOutputs(n, options.run.get())[0]);
      view.edges.push_back({from, to, label});
    }
  }

  for (const shape_folding::ShapeFold& fold : shapeFolds.folds) {
    for (const Node* source : fold.sources)
      if (const std::string& from = viewId[source->index()]; !from.empty() && seen.insert({from, fold.id}).second)
        view.edges.push_back({from, fold.id, ""});
    if (const std::string& to = viewId[fold.user->index()]; !to.empty() && seen.insert({fold.id, to}).second)
      view.edges.push_back({fold.id, to, ""});
  }

  // tdfx style: the keys the graph writes, as their own nodes.
  if (!fx) {
    const Node* output = graph.outputNode();
    std::vector<const Node*> values;
    if (output && !output->args().empty()) {
      const Argument& result = output->args()[0];
      if (const auto* items = result.items(); items && !result.isNode()) {
        for (const Argument& a : *items) values.push_back(a.isNode() ? a.node() : nullptr);
      } else if (result.isNode()) {
        values.push_back(result.node());
      }
    }
    for (size_t i = 0; i < traced.outKeys.size(); ++i) {
      ViewNode k;
      k.id = "out:" + keyToString(traced.outKeys[i]);
      k.kind = ViewNode::Kind::Key;
      k.lines = {keyToString(traced.outKeys[i])};
      k.shape = "ellipse";
      k.fillColor = kKeyWriteColor;
      if (output) k.fxDifference = output->meta().fxDifference;  // the output is drawn as its keys
      const Node* producer = values.size() == traced.outKeys.size() ? values[i] : (values.empty() ? nullptr : values[0]);
      if (producer && !viewId[producer->index()].empty()) {
        std::string label;
        if (options.shapes && !recordedOutputs(*producer, options.run.get()).empty() &&
            labelled.insert(producer->name()).second)
          label = formatTensorMeta(recordedOutputs(*producer, options.run.get())[0]);
        view.edges.push_back({viewId[producer->index()], k.id, label});
      }
      view.nodes.push_back(std::move(k));
    }
    // A plain module's forward reads arguments and returns a value: no tensordict to name.
    const bool td = traced.readsTensorDict;
    view.legend = {{td ? "tensordict read" : "input", kKeyReadColor}, {td ? "tensordict write" : "output", kKeyWriteColor},
                   {"module", tdfxColor(OpKind::CallModule)}, {"function", tdfxColor(OpKind::CallFunction)},
                   {"method", tdfxColor(OpKind::CallMethod)}, {"attribute", tdfxColor(OpKind::GetAttr)},
                   {"collapsed scope", kCollapsedColor}, {"shape arithmetic", kShapeColor}};
    // Only the colours the picture has (an export's legend as the window's, issue 36).
    std::set<std::string> used;
    for (const ViewNode& v : view.nodes) used.insert(v.fillColor);
    view.legend.erase(std::remove_if(view.legend.begin(), view.legend.end(), [&](const auto& entry) { return !used.count(entry.second); }),
                      view.legend.end());
  }

  // Clusters for the expanded scopes that hold visible nodes, parents before children.
  for (const auto& [id, used] : usedClusters) {
    ViewCluster c;
    c.id = id;
    const std::string& scope = used.scope;
    c.title = tdTitles.count(scope) ? tdTitles[scope]
                                    : scope + (scopeTypes.count(scope) ? " (" + lastPart(scopeTypes[scope]) + ")" : "");
    if (used.call > 1) c.title += ", call " + std::to_string(used.call);
    c.parent = used.parent;
    view.clusters.push_back(std::move(c));
  }
  // Parents before children: by depth (a later call's id is longer than its children's ids), then
  // as before, by id length and id.
  const auto depthOf = [&usedClusters](const std::string& id) {
    int depth = 0;
    for (std::string at = usedClusters.at(id).parent; !at.empty(); at = usedClusters.at(at).parent) ++depth;
    return depth;
  };
  std::map<std::string, int> depths;
  for (const auto& [id, used] : usedClusters) depths[id] = depthOf(id);
  std::sort(view.clusters.begin(), view.clusters.end(), [&depths](const ViewCluster& a, const ViewCluster& b) {
    return std::make_tuple(depths.at(a.id), a.id.size(), a.id) < std::make_tuple(depths.at(b.id), b.id.size(), b.id);
  });
  return view;
}

}  // namespace tdfx
