#include "node_description.h"

#include <cstdio>

#include "tdfx/ir/graph_printer.h"

namespace tdfx::ui {

namespace {

std::string statsOf(const ParameterInfo& p) {
  if (!p.hasStats) return {};
  char buf[128];
  std::snprintf(buf, sizeof buf, " min %.4g, max %.4g, mean %.4g", p.min, p.max, p.mean);
  return buf;
}

}  // namespace

std::string describeNode(const Node& n, const PythonCode& code) {
  std::string s = "name: " + n.name() + "\nop: " + opKindName(n.op()) + "\ntarget: " + printedTarget(n) + "\n";
  if (!n.args().empty()) s += "args: " + formatGraphArgument(ArgumentTuple{n.args()}) + "\n";
  if (!n.kwargs().empty()) {
    s += "kwargs:";
    for (const auto& [k, v] : n.kwargs()) s += " " + k + "=" + formatGraphArgument(v);
    s += "\n";
  }
  s += "users:";
  for (const Node* u : n.users()) s += " " + u->name();
  s += "\n";
  const NodeMeta& m = n.meta();
  if (m.tensordictKey) s += "tensordict key: " + keyToString(*m.tensordictKey) + "\n";
  if (!m.modulePath.empty()) s += "module: " + m.modulePath + " (" + m.moduleType + ")\n";
  for (const auto& [k, v] : m.moduleConstants) s += "  " + k + ": " + v + "\n";
  for (const auto& [k, v] : m.moduleAttributes) s += "  " + k + ": " + v + "\n";
  for (const ParameterInfo& p : m.parameters) {
    int64_t count = 1;
    for (int64_t d : p.shape) count *= d;
    s += std::string("  ") + (p.isBuffer ? "buffer " : "parameter ") + p.name + ": " +
         formatTensorMeta(TensorMeta{p.shape, p.dtype}) + " (" + std::to_string(count) + " values)";
    s += statsOf(p) + "\n";  // computed by the model worker, which holds the tensors
  }
  if (!m.leafReason.empty()) s += "kept whole: " + m.leafReason + "\n";
  if (!m.sourceFile.empty()) s += "source: " + m.sourceFile + ":" + std::to_string(m.sourceLine) + "\n";
  if (!m.sourceText.empty()) s += "  " + m.sourceText + "\n";
  if (!m.schema.empty()) s += "schema: " + m.schema + "\n";
  for (const TensorMeta& t : m.outputs) s += "output: " + formatTensorMeta(t) + "\n";
  if (m.seconds >= 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "time in the last run: %.3f ms\n", m.seconds * 1e3);
    s += buf;
  }
  auto line = code.nodeLines.find(n.name());
  if (line != code.nodeLines.end()) {
    size_t start = 0;
    for (int i = 1; i < line->second && start != std::string::npos; ++i) {
      start = code.text.find('\n', start);
      if (start != std::string::npos) ++start;
    }
    if (start != std::string::npos) {
      const size_t end = code.text.find('\n', start);
      std::string text = code.text.substr(start, end == std::string::npos ? std::string::npos : end - start);
      text.erase(0, text.find_first_not_of(' '));
      s += "code line " + std::to_string(line->second) + ": " + text + "\n";
    }
  }
  return s;
}

}  // namespace tdfx::ui
