#include "shape_folding.h"

#include <algorithm>
#include <map>
#include <set>

#include "tdfx/ir/fx_target.h"
#include "tdfx/tensordict/nested_key.h"

namespace tdfx::shape_folding {
namespace {

// Python's operator for FX's `operator.NAME` targets on ints, and its precedence (higher binds
// tighter), for the ones size arithmetic uses.
struct BinaryOp {
  const char* symbol;
  int precedence;
};
const std::map<std::string, BinaryOp>& binaryOps() {
  static const std::map<std::string, BinaryOp> ops = {
      {"add", {"+", 1}}, {"sub", {"-", 1}}, {"mul", {"*", 2}}, {"floordiv", {"//", 2}},
      {"truediv", {"/", 2}}, {"mod", {"%", 2}}, {"pow", {"**", 4}}};
  return ops;
}

bool isSizeQuery(const Node& n) {
  if (fx_target::isCallTo(n, fx_target::kGetAttr) && n.args().size() == 2) {
    const auto* attr = std::get_if<std::string>(&n.args()[1].value);
    return attr && (*attr == "shape" || *attr == "ndim");
  }
  return n.op() == OpKind::CallMethod && !n.args().empty() && n.args()[0].isNode() &&
         (n.target() == "size" || n.target() == "dim" || n.target() == "numel" || n.target() == "ndimension");
}

bool isArithmeticOnSizes(const Node& n) {
  if (n.op() != OpKind::CallFunction) return false;
  const auto op = fx_target::operatorName(n.target());
  return op && (*op == "getitem" || *op == "neg" || binaryOps().count(*op));
}

std::string constantText(const Argument& a) { return formatCodeArgument(a); }

std::string expression(const Argument& a, const std::vector<bool>& isSize, int context, int depth = 0);

// What Python writes between a subscript's brackets: a tuple without its own (`x[:, 0]`).
std::string subscript(const Argument& index, const std::vector<bool>& isSize, int depth = 0) {
  if (!std::holds_alternative<ArgumentTuple>(index.value) || index.items()->empty()) return expression(index, isSize, 0, depth);
  std::string out;
  for (const Argument& a : *index.items()) out += (out.empty() ? "" : ", ") + expression(a, isSize, 0, depth);
  return out;
}

// `n` as Python, in an expression whose operator binds with `context` (0: none). Past kDeepest
// nested size nodes a node is named instead: sizes built from shared parts (s2 = s1 * s1, ...) would
// otherwise grow the text exponentially, and only the label's first characters are shown.
constexpr int kDeepest = 8;
std::string nodeExpression(const Node& n, const std::vector<bool>& isSize, int context, int depth) {
  if (n.index() >= isSize.size() || !isSize[n.index()] || depth > kDeepest) {
    // A tensordict read is drawn as its key, so the text names the key too.
    const auto& key = n.meta().tensordictKey;
    return key ? keyToString(*key) : n.name();
  }
  const auto& args = n.args();
  const auto at = [&](size_t i, int c) { return expression(args[i], isSize, c, depth + 1); };
  if (fx_target::isCallTo(n, fx_target::kGetAttr)) return at(0, 6) + "." + std::get<std::string>(args[1].value);
  if (n.op() == OpKind::CallMethod) {
    std::string out = at(0, 6) + "." + n.target() + "(";
    std::string sep;
    for (size_t i = 1; i < args.size(); ++i, sep = ", ") out += sep + at(i, 0);
    for (const auto& [name, value] : n.kwargs()) {
      out += sep + name + "=" + expression(value, isSize, 0, depth + 1);
      sep = ", ";
    }
    return out + ")";
  }
  const std::string op = *fx_target::operatorName(n.target());
  if (op == "getitem" && args.size() == 2) return at(0, 6) + "[" + subscript(args[1], isSize, depth + 1) + "]";
  if (op == "neg" && args.size() == 1) {
    const std::string text = "-" + at(0, 3);
    return context > 3 ? "(" + text + ")" : text;
  }
  const auto bin = binaryOps().find(op);
  if (bin == binaryOps().end() || args.size() != 2) return n.name();
  const int p = bin->second.precedence;
  // Left-associative, so the right operand of an operator of the same precedence needs brackets;
  // ** is right-associative: its left operand does.
  const bool right = op == "pow";
  const std::string text = at(0, right ? p + 1 : p) + " " + bin->second.symbol + " " + at(1, right ? p : p + 1);
  return context > p ? "(" + text + ")" : text;
}

std::string expression(const Argument& a, const std::vector<bool>& isSize, int context, int depth) {
  if (a.isNode()) return nodeExpression(*a.node(), isSize, context, depth);
  if (const auto* slice = std::get_if<ArgumentSlice>(&a.value); slice && slice->items.size() == 3) {
    // x.shape[1:] rather than slice(1, None, None)
    const auto bound = [&](const Argument& b) { return b.isNone() ? std::string() : expression(b, isSize, 0, depth); };
    std::string out = bound(slice->items[0]) + ":" + bound(slice->items[1]);
    return slice->items[2].isNone() ? out : out + ":" + bound(slice->items[2]);
  }
  if (const auto* items = a.items()) {
    const bool list = std::holds_alternative<ArgumentList>(a.value);
    std::string out = list ? "[" : "(";
    for (size_t i = 0; i < items->size(); ++i) out += (i ? ", " : "") + expression((*items)[i], isSize, 0, depth);
    if (!list && items->size() == 1) out += ",";
    return out + (list ? "]" : ")");
  }
  const std::string text = constantText(a);
  return context > 3 && !text.empty() && text[0] == '-' ? "(" + text + ")" : text;  // (-2) ** n
}

}  // namespace

std::string subscriptText(const Argument& index) { return subscript(index, {}); }

std::vector<bool> sizeValues(const Graph& graph, const std::vector<bool>& excluded) {
  std::vector<bool> size(graph.size(), false);
  for (const auto& nodePtr : graph.nodes()) {
    const Node& n = *nodePtr;
    if (n.index() < excluded.size() && excluded[n.index()]) continue;
    if (std::any_of(n.users().begin(), n.users().end(), [](const Node* u) { return u->op() == OpKind::Output; })) continue;
    if (isSizeQuery(n)) {
      size[n.index()] = true;
    } else if (isArithmeticOnSizes(n)) {
      bool allSizes = true, any = false;
      for (const Argument& a : n.args())
        forEachNode(a, [&](const Node* in) {
          any = true;
          allSizes = allSizes && size[in->index()];
        });
      for (const auto& kv : n.kwargs())
        forEachNode(kv.second, [&](const Node*) { allSizes = false; });
      size[n.index()] = any && allSizes;
    }
  }
  return size;
}

ShapeUse useOf(const Node& user, const std::vector<bool>& isSize) {
  ShapeUse use;
  std::set<const Node*> chain;
  std::vector<const Node*> stack;
  const auto visit = [&](const Argument& a) {
    bool sized = false;
    forEachNode(a, [&](const Node* in) {
      if (isSize[in->index()]) {
        stack.push_back(in);
        sized = true;
      }
    });
    // The argument as the user receives it: a size, or a list of them (`x.view((b, -1))`).
    if (sized) use.expressions.push_back(expression(a, isSize, 0));
  };
  for (const Argument& a : user.args()) visit(a);
  for (const auto& kv : user.kwargs()) visit(kv.second);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!chain.insert(n).second) continue;
    for (const Argument& a : n->args())
      forEachNode(a, [&](const Node* in) {
        if (isSize[in->index()]) stack.push_back(in);
      });
  }
  const auto inGraphOrder = [](const std::set<const Node*>& nodes) {
    std::vector<const Node*> out(nodes.begin(), nodes.end());
    std::sort(out.begin(), out.end(), [](const Node* a, const Node* b) { return a->index() < b->index(); });
    return out;
  };
  use.chain = inGraphOrder(chain);
  return use;
}

bool ShapeFolds::covers(const Node& member, const std::string& userViewId) const {
  const auto it = index.find("shape:" + userViewId);
  if (it == index.end()) return false;
  const auto& members = folds[it->second].members;
  return std::find(members.begin(), members.end(), &member) != members.end();
}

ShapeFolds foldShapes(const Graph& graph, const std::vector<bool>& checks, const std::set<std::string>& expanded,
                      const std::function<std::string(const Node&)>& viewIdOf,
                      const std::function<bool(const Node&)>& visible) {
  ShapeFolds out;
  const std::vector<bool> isSize = sizeValues(graph, checks);
  struct Use {
    std::string id;
    const Node* user;
    ShapeUse use;
  };
  std::vector<Use> uses;
  std::set<const Node*> drawn;  // size nodes of an expanded fold: ordinary nodes
  for (const auto& n : graph.nodes()) {
    if (isSize[n->index()] || (n->index() < checks.size() && checks[n->index()])) continue;
    ShapeUse use = useOf(*n, isSize);
    if (use.chain.empty()) continue;
    Use u{"shape:" + viewIdOf(*n), n.get(), std::move(use)};
    if (expanded.count(u.id)) drawn.insert(u.use.chain.begin(), u.use.chain.end());
    else uses.push_back(std::move(u));
  }
  out.folded.assign(graph.size(), false);
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> home(graph.size(), kNone);  // by node index: the first fold holding it
  for (Use& u : uses) {
    std::vector<const Node*> members;
    for (const Node* n : u.use.chain)
      if (!drawn.count(n) && visible(*n)) members.push_back(n);
    if (members.empty()) continue;
    auto [it, added] = out.index.emplace(u.id, out.folds.size());
    if (added) out.folds.push_back({u.id, u.user, {}, {}, {}});
    ShapeFold& fold = out.folds[it->second];
    for (const Node* m : members) {
      if (std::find(fold.members.begin(), fold.members.end(), m) == fold.members.end()) fold.members.push_back(m);
      out.folded[m->index()] = true;
      if (home[m->index()] == kNone) home[m->index()] = it->second;
    }
    fold.expressions.insert(fold.expressions.end(), u.use.expressions.begin(), u.use.expressions.end());
  }
  // Sizes nobody uses (`_, c, h, w = x.shape` keeps `c`; `a = h * w; b = a + 1`, both unused) join
  // the shape node of what they read, in graph order, so a chain of them joins link by link.
  std::vector<bool> unused(graph.size(), false);
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend(); ++it) {
    const Node& n = **it;
    unused[n.index()] = isSize[n.index()] && std::all_of(n.users().begin(), n.users().end(),
                                                         [&](const Node* u) { return unused[u->index()]; });
  }
  for (const auto& n : graph.nodes()) {
    if (!unused[n->index()] || out.folded[n->index()] || drawn.count(n.get()) || !visible(*n)) continue;
    size_t joins = kNone;  // the earliest fold holding one of its arguments
    for (const Argument& a : n->args()) forEachNode(a, [&](const Node* in) { joins = std::min(joins, home[in->index()]); });
    if (joins == kNone) continue;
    out.folds[joins].members.push_back(n.get());
    out.folded[n->index()] = true;
    home[n->index()] = joins;
  }
  for (ShapeFold& fold : out.folds) {
    std::sort(fold.members.begin(), fold.members.end(), [](const Node* a, const Node* b) { return a->index() < b->index(); });
    const std::set<const Node*> inFold(fold.members.begin(), fold.members.end());
    std::set<const Node*> sources;
    for (const Node* m : fold.members)
      for (const Argument& a : m->args())
        forEachNode(a, [&](const Node* in) {
          if (!inFold.count(in)) sources.insert(in);
        });
    fold.sources.assign(sources.begin(), sources.end());
    std::sort(fold.sources.begin(), fold.sources.end(), [](const Node* a, const Node* b) { return a->index() < b->index(); });
  }
  return out;
}

void addShapeNodes(ViewGraph& view, const ShapeFolds& folds, std::vector<std::string>& viewId, const std::string& color) {
  // A label stays small: three expressions of at most 40 characters, then how many more there are.
  constexpr size_t kShown = 3, kWidth = 40;
  for (const ShapeFold& fold : folds.folds) {
    ViewNode v;
    v.id = fold.id;
    v.kind = ViewNode::Kind::Shape;
    v.shape = "box";
    v.fillColor = color;
    v.lines = {"shape"};
    for (size_t i = 0; i < fold.expressions.size() && i < kShown; ++i) {
      const std::string& e = fold.expressions[i];
      size_t cut = kWidth - 1;
      while (cut > 0 && (static_cast<unsigned char>(e[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
      v.lines.push_back(e.size() <= kWidth ? e : e.substr(0, cut) + "\u2026");
    }
    if (fold.expressions.size() > kShown) v.lines.push_back("+" + std::to_string(fold.expressions.size() - kShown) + " more");
    for (const Node* m : fold.members) {
      v.irNodes.push_back(m->name());
      if (viewId[m->index()].empty()) viewId[m->index()] = fold.id;
    }
    if (const ViewNode* user = view.findNode(viewId[fold.user->index()])) v.cluster = user->cluster;
    view.nodes.push_back(std::move(v));
  }
}

}  // namespace tdfx::shape_folding
