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
// Such a statement is found in the function's source: one at the body's own level (it always
// runs), `NAME = NAME[INT]`, where no node of the graph comes from. It is recorded where it
// stands, before the first node that comes from source after it.
#include <algorithm>
#include <functional>
#include <regex>
#include <sstream>

#include "module_tracer.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

size_t indentOf(const std::string& line) { return line.find_first_not_of(" \t"); }

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
  if (source.empty() || source.find('[') == std::string::npos) return found;
  // Lines with their offsets; the body's level is the indentation of the first line after the
  // header (which ends at the first line ending with ':').
  std::vector<std::pair<size_t, std::string>> lines;
  for (size_t at = 0; at < source.size();) {
    size_t end = source.find('\n', at);
    if (end == std::string::npos) end = source.size();
    lines.emplace_back(at, source.substr(at, end - at));
    at = end + 1;
  }
  size_t i = 0;
  while (i < lines.size()) {
    std::string s = lines[i].second;
    const size_t hash = s.find('#');
    if (hash != std::string::npos) s.erase(hash);
    s.erase(s.find_last_not_of(" \t\r") + 1);
    ++i;
    if (!s.empty() && s.back() == ':') break;
  }
  size_t bodyIndent = std::string::npos;
  static const std::regex read(R"(^([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\[\s*(-?\d{1,9})\s*\]\s*(#.*)?$)");
  for (; i < lines.size(); ++i) {
    const std::string& line = lines[i].second;
    const size_t indent = indentOf(line);
    if (indent == std::string::npos || line[indent] == '#') continue;
    if (bodyIndent == std::string::npos) bodyIndent = indent;
    if (indent != bodyIndent) continue;
    std::smatch m;
    const std::string text = line.substr(indent);
    if (std::regex_match(text, m, read) && m[1].str() != m[2].str())
      found.push_back({lines[i].first + indent, lines[i].first + line.size(), m[2].str(), std::stoll(m[3].str())});
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
    Node* item = builder_.getItem(container->arg.node(), dead.index);
    item->meta().modulePath = frame.scope.path;
    item->meta().moduleType = pythonTypeName(frame.scope.module.type());
  }
}

}  // namespace tdfx::trace
