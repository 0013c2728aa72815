#include "node_description.h"

#include <cstdio>

#include <ATen/ATen.h>

#include "tdfx/ir/graph_printer.h"

namespace tdfx::ui {

namespace {

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

/// The tensor `module.name` of the loaded TorchScript root, or an undefined tensor when the path
/// does not lead to one (e.g. a module folded away by tracing).
at::Tensor findTensor(const torch::jit::Module& root, const std::string& modulePath, const std::string& name) {
  std::vector<std::string> parts = modulePath.empty() ? std::vector<std::string>{} : split(modulePath);
  for (const std::string& p : split(name)) parts.push_back(p);
  torch::jit::Module m = root;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!m.hasattr(parts[i])) return {};
    const c10::IValue v = m.attr(parts[i]);
    if (i + 1 == parts.size()) return v.isTensor() ? v.toTensor() : at::Tensor();
    if (!v.isModule()) return {};
    m = v.toModule();
  }
  return {};
}

std::string statsOf(const at::Tensor& t) {
  if (!t.defined() || t.numel() == 0 || !(t.is_floating_point() || t.dtype() == at::kLong || t.dtype() == at::kInt))
    return {};
  // One pass for min and max, the mean accumulated in double; no double copy of the tensor.
  const auto [lo, hi] = at::aminmax(t.detach());
  const double mean = t.is_floating_point() ? t.detach().mean(at::kDouble).item<double>()
                                            : t.detach().sum(at::kDouble).item<double>() / static_cast<double>(t.numel());
  char buf[128];
  std::snprintf(buf, sizeof buf, " min %.4g, max %.4g, mean %.4g", lo.item<double>(), hi.item<double>(), mean);
  return buf;
}

}  // namespace

std::string describeNode(const Node& n, const PythonCode& code, const ModelFile& model) {
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
  for (const ParameterInfo& p : m.parameters) {
    int64_t count = 1;
    for (int64_t d : p.shape) count *= d;
    s += std::string("  ") + (p.isBuffer ? "buffer " : "parameter ") + p.name + ": " +
         formatTensorMeta(TensorMeta{p.shape, p.dtype}) + " (" + std::to_string(count) + " values)";
    // The parameters live in the call_module's module: the node's target is its path.
    s += statsOf(findTensor(model.root, n.op() == OpKind::CallModule ? n.target() : m.modulePath, p.name)) + "\n";
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
