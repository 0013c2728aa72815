// The part of ModuleTracer for statements TorchScript compiled away. TorchScript removes pure code
// whose value is never used (dead code elimination), so the archive holds no node for it; torch.fx
// runs the Python, and every operation on a Proxy is recorded, used or not. timm's Res2Net:
//
//     spx = torch.split(out, self.width, 1)
//     sp = spx[0]  # redundant, for torchscript       <- FX: `getitem = split[0]`, 0 users
//     for i, (conv, bn) in enumerate(zip(self.convs, self.bns)):
//         if i == 0 or self.is_first:
//             sp = spx[i]
//
// Such a statement is found in the function's source, parsed with TorchScript's own parser: an
// assignment at the body's own level (it always runs) of `NAME[INT]` or `NAME.shape[INT]` to one
// name, where no node of the graph comes from. It is recorded where
// it stands, before the first node that comes from source after it:
//
//     c = x.shape[1]     <- FX: `getattr_1 = x.shape`, `getitem = getattr_1[1]`, 0 users
//     c = x.shape[0]
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <functional>

#include <torch/csrc/jit/frontend/parser.h>
#include <torch/csrc/jit/frontend/tree_views.h>

#include "trace_context.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

// The function's text for TorchScript's parser, at the same offsets: decorator lines blanked (the
// parser reads from `def`), then what py::lexable blanks; only the statements' shapes matter here.
std::string parsableText(const std::string& source) {
  std::string text = source;
  const size_t def = text.compare(0, 4, "def ") == 0 ? 0 : text.find("\ndef ");
  if (def != std::string::npos)
    for (size_t i = 0; i < def; ++i)
      if (text[i] != '\n') text[i] = ' ';
  return py::lexable(std::move(text));
}

// Whether some line ends with `[INT]` (a comment after it aside): only then can the source hold a
// dead read, and only then is it parsed (parsing every inlined function made tracing swin_t 12 %
// slower).
bool mayHoldDeadRead(const std::string& source) {
  for (size_t close = source.find(']'); close != std::string::npos; close = source.find(']', close + 1)) {
    size_t after = close + 1;
    while (after < source.size() && (source[after] == ' ' || source[after] == '\t' || source[after] == '\r')) ++after;
    if (after < source.size() && source[after] != '\n' && source[after] != '#') continue;
    size_t open = close;
    while (open > 0 && (std::isdigit(static_cast<unsigned char>(source[open - 1])) || source[open - 1] == ' ')) --open;
    if (open > 0 && source[open - 1] == '-') --open;
    if (open > 0 && open < close && source[open - 1] == '[') return true;
  }
  return false;
}

// `x[INT]`, `x.shape[INT]`: the dead reads FX records of a Proxy named `x`, or nullopt.
std::optional<std::pair<std::string, std::pair<std::string, int64_t>>> readOfName(const jit::Expr& e) {
  using namespace torch::jit;
  const auto intOf = [](const Expr& i) -> std::optional<int64_t> {
    if (i.kind() == TK_CONST && Const(i).isIntegral()) return Const(i).asIntegral();
    if (i.kind() == TK_UNARY_MINUS) {
      const Expr operand(i.tree()->trees()[0]);
      if (operand.kind() == TK_CONST && Const(operand).isIntegral()) return -Const(operand).asIntegral();
    }
    return std::nullopt;
  };
  if (e.kind() != TK_SUBSCRIPT) return std::nullopt;
  const Subscript subscript(e);
  if (subscript.subscript_exprs().size() != 1) return std::nullopt;
  const auto index = intOf(subscript.subscript_exprs()[0]);
  if (!index) return std::nullopt;
  const Expr object = subscript.value();
  if (object.kind() == TK_VAR) return std::make_pair(Var(object).name().name(), std::make_pair(std::string(), *index));
  if (object.kind() == '.' && Select(object).value().kind() == TK_VAR && Select(object).selector().name() == "shape")
    return std::make_pair(Var(Select(object).value()).name().name(), std::make_pair(std::string("shape"), *index));
  return std::nullopt;
}

// Every node of `block` and its sub-blocks.
void forEachNode(jit::Block* block, const std::function<void(jit::Node*)>& fn) {
  for (jit::Node* node : block->nodes()) {
    fn(node);
    for (jit::Block* sub : node->blocks()) forEachNode(sub, fn);
  }
}

// Where in the user's source a node was made: its own range, or for a node TorchScript made without
// one (`v = self.gru(x)[0]` indexes the call's tuple with a prim::TupleIndex that has no range)
// the latest of its inputs' nodes, the expression it continues. nullopt when neither has one.
std::optional<size_t> madeAt(TraceContext& cx, const jit::Node* node) {
  if (const auto loc = cx.source.userSource(const_cast<jit::Node*>(node)))
    return loc->builtinDef.empty() ? std::optional<size_t>(loc->start) : std::nullopt;
  if (node->kind() != c10::prim::TupleIndex && node->kind() != c10::prim::TupleUnpack) return std::nullopt;
  std::optional<size_t> latest;
  for (const jit::Value* in : node->inputs()) {
    const c10::Symbol kind = in->node()->kind();
    if (kind == c10::prim::Constant || kind == c10::prim::Param) continue;
    const auto loc = cx.source.userSource(const_cast<jit::Node*>(in->node()));
    if (loc && loc->builtinDef.empty() && (!latest || loc->start > *latest)) latest = loc->start;
  }
  return latest;
}

// A TorchScript value's name as written: "spx" for "spx.1".
std::string writtenName(const jit::Value* v) {
  if (!v->hasDebugName()) return "";
  const std::string& name = v->debugName();
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos && name.find_first_not_of("0123456789", dot + 1) == std::string::npos)
    return name.substr(0, dot);
  return name;
}

// The value named `name` (as written: "spx" for "spx.1", or numbered where a statement assigning
// `name` made it) defined last before the dead read.
const jit::Value* lastValueNamed(TraceContext& cx, const DeadRead& dead, const std::string& name, const Frame& frame) {
  const jit::Value* found = nullptr;
  size_t definedAt = 0;
  for (const auto& [value, held] : frame.env) {
    (void)held;
    const std::string written = writtenName(value);
    const bool numbered = written.size() > name.size() && written.compare(0, name.size(), name) == 0 &&
                          written.find_first_not_of("0123456789", name.size()) == std::string::npos;
    if (written != name && !numbered) continue;
    size_t at = 0;
    if (value->node()->kind() != c10::prim::Param) {
      const auto start = madeAt(cx, value->node());
      if (!start || *start >= dead.begin) continue;
      if (numbered && std::none_of(dead.assignedAt.begin(), dead.assignedAt.end(), [&](const auto& a) {
            return a.first == name && *start >= a.second.first && *start < a.second.second;
          }))
        continue;
      at = *start + 1;
    } else if (numbered) {
      continue;
    }
    // Values of one statement run more than once (a loop unrolled over a ModuleList) share its
    // location: the last in the graph is the one defined last.
    if (!found || at > definedAt || (at == definedAt && value->node()->isAfter(found->node()))) {
      found = value;
      definedAt = at;
    }
  }
  return found;
}

// The value the statement `NAME = ...` that defines a dead read's container assigned, when
// TorchScript kept no name for it (`v = torch.sort(x).values` is an output of aten::sort, not
// named `v`): the one value made in that statement's text that code after it reads.
const jit::Value* assignedValue(TraceContext& cx, const DeadRead& dead, const Frame& frame) {
  const auto [begin, end] = dead.containerDefinition;
  if (begin == end) return nullptr;
  const auto inStatement = [&, begin = begin, end = end](const jit::Node* node) {
    const auto start = madeAt(cx, node);
    return start && *start >= begin && *start < end;
  };
  const jit::Value* found = nullptr;
  for (const auto& [value, held] : frame.env) {
    (void)held;
    // Constants are shared between statements (`-1` here and in a later `x.shape[-1]`): not it.
    const c10::Symbol kind = value->node()->kind();
    if (kind == c10::prim::Param || kind == c10::prim::Constant || !inStatement(value->node())) continue;
    const auto& uses = value->uses();
    if (std::none_of(uses.begin(), uses.end(), [&](const jit::Use& use) { return !inStatement(use.user); })) continue;
    if (found) return nullptr;  // more than one: not known which
    found = value;
  }
  return found;
}

}  // namespace

const std::vector<DeadRead>& deadReads(TraceContext& cx, const jit::Function& fn, jit::Graph& g) {
  if (auto known = cx.deadReadsOf.find(&fn); known != cx.deadReadsOf.end()) return known->second;
  std::vector<DeadRead>& found = cx.deadReadsOf[&fn];
  const std::string source = cx.source.functionSource(fn);
  if (source.empty() || !mayHoldDeadRead(source)) return found;
  try {
    torch::jit::Parser parser(std::make_shared<torch::jit::Source>(parsableText(source)));
    const torch::jit::Def def(parser.parseFunction(/*is_method=*/true));
    const auto statements = def.statements();
    // Where each name is assigned, at any depth (a loop's body too): TorchScript's value names are
    // made unique on load (`h` assigned in an unrolled loop is `h0.1`, `h1.1`), so a value whose
    // name is the written one and more digits is that name's only where such a statement made it.
    std::map<std::string, std::vector<std::pair<size_t, size_t>>> assignments;
    std::function<void(const torch::jit::List<torch::jit::Stmt>&)> collect = [&](const auto& list) {
      for (size_t i = 0; i < list.size(); ++i) {
        const torch::jit::Stmt st = list[i];
        const size_t stEnd = i + 1 < list.size() ? list[i + 1].range().start() : st.range().end();
        if (st.kind() == torch::jit::TK_ASSIGN || st.kind() == torch::jit::TK_AUG_ASSIGN) {
          const torch::jit::Expr lhs = st.kind() == torch::jit::TK_ASSIGN ? torch::jit::Assign(st).lhs()
                                                                          : torch::jit::AugAssign(st).lhs();
          if (lhs.kind() == torch::jit::TK_VAR) assignments[torch::jit::Var(lhs).name().name()].push_back({st.range().start(), stEnd});
        } else if (st.kind() == torch::jit::TK_FOR) {
          collect(torch::jit::For(st).body());
        } else if (st.kind() == torch::jit::TK_WHILE) {
          collect(torch::jit::While(st).body());
        } else if (st.kind() == torch::jit::TK_IF) {
          collect(torch::jit::If(st).trueBranch());
          collect(torch::jit::If(st).falseBranch());
        }
      }
    };
    collect(statements);
    std::map<std::string, std::pair<size_t, size_t>> assigned;  // each name's last assignment so far
    // `v = h` makes no node: TorchScript's value keeps the name `h`, which a read of `v` then looks up.
    std::map<std::string, std::string> aliasOf;
    const auto resolve = [&](const std::string& name) {
      auto it = aliasOf.find(name);
      return it == aliasOf.end() ? name : it->second;
    };
    for (size_t i = 0; i < statements.size(); ++i) {
      const torch::jit::Stmt stmt = statements[i];
      if (stmt.kind() != torch::jit::TK_ASSIGN) {
        // A loop or branch that assigns a name inside ends what was known of it (`h = v`, then
        // `for ...: h = layer(h)`: `h` is no longer `v`).
        const size_t stmtEnd = i + 1 < statements.size() ? statements[i + 1].range().start() : source.size();
        for (const auto& [name, ranges] : assignments)
          if (std::any_of(ranges.begin(), ranges.end(),
                          [&](const auto& r) { return r.first >= stmt.range().start() && r.first < stmtEnd; })) {
            aliasOf.erase(name);
            assigned.erase(name);
          }
        continue;
      }
      const torch::jit::Assign assign(stmt);
      if (assign.lhs_list().size() != 1 || assign.lhs().kind() != torch::jit::TK_VAR || !assign.rhs().present())
        continue;
      // The statement's text runs to the next statement (TorchScript's ranges of a subscript are
      // its bracket's, not the whole expression's).
      const size_t end = i + 1 < statements.size() ? statements[i + 1].range().start() : source.size();
      const auto read = readOfName(assign.rhs().get());
      const std::string target = torch::jit::Var(assign.lhs()).name().name();
      if (read && read->first != target) {
        DeadRead dead;
        dead.begin = stmt.range().start();
        dead.end = end;
        dead.container = read->first;
        dead.index = read->second.second;
        dead.attribute = read->second.first;
        dead.containerAlias = resolve(read->first);
        for (const std::string& name : {dead.container, dead.containerAlias})
          if (auto it = assignments.find(name); it != assignments.end())
            for (const auto& range : it->second) dead.assignedAt.push_back({name, range});
        if (auto it = assigned.find(dead.containerAlias); it != assigned.end()) dead.containerDefinition = it->second;
        found.push_back(dead);
      }
      const torch::jit::Expr rhs = assign.rhs().get();
      if (rhs.kind() == torch::jit::TK_VAR && resolve(torch::jit::Var(rhs).name().name()) != target)
        aliasOf[target] = resolve(torch::jit::Var(rhs).name().name());
      else
        aliasOf.erase(target);
      // A list, tuple or dict display is a Python value (indexing it records nothing), and
      // TorchScript may fold it away: its items are no container to look for.
      const int kind = rhs.kind();
      if (kind == torch::jit::TK_LIST_LITERAL || kind == torch::jit::TK_TUPLE_LITERAL ||
          kind == torch::jit::TK_DICT_LITERAL || kind == torch::jit::TK_LIST_COMP || kind == torch::jit::TK_DICT_COMP)
        assigned.erase(target);
      else if (kind != torch::jit::TK_VAR)
        assigned[target] = {stmt.range().start(), end};
    }
  } catch (const std::exception&) {
    return found;  // source TorchScript's parser does not take: no dead statement is read from it
  }
  if (found.empty()) return found;
  // A statement some node comes from is alive (constants are shared and hoisted: not counted).
  forEachNode(g.block(), [&](jit::Node* node) {
    if (node->kind() == c10::prim::Constant) return;
    const auto loc = cx.source.userSource(node);
    if (!loc || !loc->builtinDef.empty()) return;
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const DeadRead& d) { return loc->start >= d.begin && loc->start < d.end; }),
                found.end());
  });
  return found;
}

void recordDeadReadsBefore(TraceContext& cx, jit::Node* node, Frame& frame) {
  if (frame.deadReads.empty()) return;
  size_t before = std::string::npos;  // the end of the block: every one left
  if (node) {
    if (node->kind() == c10::prim::Constant) return;
    const auto loc = cx.source.userSource(node);
    if (!loc || !loc->builtinDef.empty()) return;
    before = loc->start;
  }
  while (!frame.deadReads.empty() && frame.deadReads.front().begin < before) {
    const DeadRead dead = frame.deadReads.front();
    frame.deadReads.erase(frame.deadReads.begin());
    // The container: the value of that name defined last before the statement; else of the name
    // it was assigned from (`v = h`); else the value its defining statement made.
    const jit::Value* containerValue = lastValueNamed(cx, dead, dead.container, frame);
    if (!containerValue && dead.containerAlias != dead.container)
      containerValue = lastValueNamed(cx, dead, dead.containerAlias, frame);
    if (!containerValue) containerValue = assignedValue(cx, dead, frame);
    if (!containerValue) continue;
    // A field not yet in the graph (`v = x.sort(-1).values`) is a Proxy FX already holds: made now.
    materializePendingField(cx, containerValue, frame);
    const SymValue* container = &frame.env.at(containerValue);
    // Only a Proxy is recorded: a Python list or tuple is indexed while FX traces.
    if (container->kind != SymValue::Kind::Value || !container->arg.isNode() ||
        container->input.kind != ValueParts::Kind::NodeValue)
      continue;
    Node* object = container->arg.node();
    if (!dead.attribute.empty()) {
      object = cx.builder.getItem(object, 0, dead.attribute);  // `x.shape`: the getattr first
      object->meta().modulePath = frame.scope.path;
      object->meta().moduleType = pythonTypeName(frame.scope.module.type());
    }
    Node* item = cx.builder.getItem(object, dead.index);
    item->meta().modulePath = frame.scope.path;
    item->meta().moduleType = pythonTypeName(frame.scope.module.type());
  }
}

}  // namespace tdfx::trace
