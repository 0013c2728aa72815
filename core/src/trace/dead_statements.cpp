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
#include <optional>
#include <functional>

#include <torch/csrc/jit/frontend/parser.h>
#include <torch/csrc/jit/frontend/tree_views.h>

#include "module_tracer.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

// The function's text for TorchScript's parser, at the same offsets: decorator lines blanked (the
// parser reads from `def`), and string prefixes (f"...", r'...') turned to spaces, which its
// lexer does not take (TorchScript's Python frontend did); only the statements' shapes matter here.
std::string parsableText(const std::string& source) {
  std::string text = source;
  const size_t def = text.compare(0, 4, "def ") == 0 ? 0 : text.find("\ndef ");
  if (def != std::string::npos)
    for (size_t i = 0; i < def; ++i)
      if (text[i] != '\n') text[i] = ' ';
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] != '\'' && text[i] != '"') continue;
    size_t p = i;
    while (p > 0 && p + 2 > i && std::strchr("rRbBuUfF", text[p - 1]) && text[p - 1] != '\0') --p;
    if (p < i && (p == 0 || !(std::isalnum(static_cast<unsigned char>(text[p - 1])) || text[p - 1] == '_')))
      for (size_t k = p; k < i; ++k) text[k] = ' ';
  }
  return text;
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

// A TorchScript value's name as written: "spx" for "spx.1".
std::string writtenName(const jit::Value* v) {
  if (!v->hasDebugName()) return "";
  const std::string& name = v->debugName();
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos && name.find_first_not_of("0123456789", dot + 1) == std::string::npos)
    return name.substr(0, dot);
  return name;
}

}  // namespace

const std::vector<ModuleTracer::DeadRead>& ModuleTracer::deadReads(const jit::Function& fn, jit::Graph& g) {
  if (auto known = deadReadsOf_.find(&fn); known != deadReadsOf_.end()) return known->second;
  std::vector<DeadRead>& found = deadReadsOf_[&fn];
  const std::string source = source_.functionSource(fn);
  if (source.empty() || !mayHoldDeadRead(source)) return found;
  try {
    torch::jit::Parser parser(std::make_shared<torch::jit::Source>(parsableText(source)));
    const torch::jit::Def def(parser.parseFunction(/*is_method=*/true));
    const auto statements = def.statements();
    for (size_t i = 0; i < statements.size(); ++i) {
      const torch::jit::Stmt stmt = statements[i];
      if (stmt.kind() != torch::jit::TK_ASSIGN) continue;
      const torch::jit::Assign assign(stmt);
      if (assign.lhs_list().size() != 1 || assign.lhs().kind() != torch::jit::TK_VAR || !assign.rhs().present())
        continue;
      const auto read = readOfName(assign.rhs().get());
      const std::string target = torch::jit::Var(assign.lhs()).name().name();
      if (!read || read->first == target) continue;
      // The statement's text runs to the next statement (TorchScript's ranges of a subscript are
      // its bracket's, not the whole expression's).
      const size_t end = i + 1 < statements.size() ? statements[i + 1].range().start() : source.size();
      found.push_back({stmt.range().start(), end, read->first, read->second.second, read->second.first});
    }
  } catch (const std::exception&) {
    return found;  // source TorchScript's parser does not take: no dead statement is read from it
  }
  if (found.empty()) return found;
  // A statement some node comes from is alive (constants are shared and hoisted: not counted).
  forEachNode(g.block(), [&](jit::Node* node) {
    if (node->kind() == c10::prim::Constant) return;
    const auto loc = source_.userSource(node);
    if (!loc || !loc->builtinDef.empty()) return;
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const DeadRead& d) { return loc->start >= d.begin && loc->start < d.end; }),
                found.end());
  });
  return found;
}

void ModuleTracer::recordDeadReadsBefore(jit::Node* node, Frame& frame) {
  if (frame.deadReads.empty()) return;
  size_t before = std::string::npos;  // the end of the block: every one left
  if (node) {
    if (node->kind() == c10::prim::Constant) return;
    const auto loc = source_.userSource(node);
    if (!loc || !loc->builtinDef.empty()) return;
    before = loc->start;
  }
  while (!frame.deadReads.empty() && frame.deadReads.front().begin < before) {
    const DeadRead dead = frame.deadReads.front();
    frame.deadReads.erase(frame.deadReads.begin());
    // The container: the value of that name defined last before the statement.
    const SymValue* container = nullptr;
    size_t definedAt = 0;
    for (const auto& [value, held] : frame.env) {
      if (writtenName(value) != dead.container) continue;
      size_t at = 0;
      if (value->node()->kind() != c10::prim::Param) {
        const auto loc = source_.userSource(const_cast<jit::Node*>(value->node()));
        if (!loc || loc->start >= dead.begin) continue;
        at = loc->start + 1;
      }
      if (!container || at > definedAt) {
        container = &held;
        definedAt = at;
      }
    }
    // Only a Proxy is recorded: a Python list or tuple is indexed while FX traces.
    if (!container || container->kind != SymValue::Kind::Value || !container->arg.isNode() ||
        container->input.kind != ValueParts::Kind::NodeValue)
      continue;
    Node* object = container->arg.node();
    if (!dead.attribute.empty()) {
      object = builder_.getItem(object, 0, dead.attribute);  // `x.shape`: the getattr first
      object->meta().modulePath = frame.scope.path;
      object->meta().moduleType = pythonTypeName(frame.scope.module.type());
    }
    Node* item = builder_.getItem(object, dead.index);
    item->meta().modulePath = frame.scope.path;
    item->meta().moduleType = pythonTypeName(frame.scope.module.type());
  }
}

}  // namespace tdfx::trace
