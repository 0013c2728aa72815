#pragma once
// torch.fx 1.13's own targets, typed and spelled once: the call_function targets tdfx's code makes
// or looks for, and the Python modules whose functions FX records for operators (`operator.add`)
// and builtins (`builtins.getattr`, printed `getattr`). The targets of operators and library
// functions themselves are not here: they come from the tables generated from torch's own
// definitions (core/src/trace/fx_tables.cpp, make_fx_tables.py).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tdfx/ir/graph.h"
#include "tdfx/ir/node.h"

namespace tdfx::fx_target {

/// A node's op kind with its target's qualified name, as FX prints it in `graph.print_tabular`.
struct Target {
  OpKind kind;
  const char* qualifiedName;
};

/// `x[i]`, a TensorDict read `tensordict['x']`, an item of a multi-output call.
inline constexpr Target kGetItem{OpKind::CallFunction, "operator.getitem"};
/// A named tuple's field or a tensor's attribute read as a value (`getattr(sort, 'values')`).
inline constexpr Target kGetAttr{OpKind::CallFunction, "builtins.getattr"};
/// An assertion on a traced value (`torch._assert(ok, message)`), checked on every run.
inline constexpr Target kAssert{OpKind::CallFunction, "torch._assert"};
/// `not x` on a traced value, where FX records it (a negated assert condition).
inline constexpr Target kNot{OpKind::CallFunction, "operator.not_"};

/// Whether `node` is a node of `target`.
inline bool isCallTo(const Node& node, const Target& target) {
  return node.op() == target.kind && node.target() == target.qualifiedName;
}
/// Whether a call_function's target string names `target`.
inline bool names(const std::string& qualifiedName, const Target& target) {
  return qualifiedName == target.qualifiedName;
}
/// A new node of `target`, appended to `graph`.
inline Node* create(Graph& graph, const Target& target, std::vector<Argument> args, Kwargs kwargs = {}) {
  return graph.createNode(target.kind, target.qualifiedName, std::move(args), std::move(kwargs));
}

/// The module of Python's operator functions (`operator.add` for `a + b`), which FX's code names
/// with a leading underscore as a global (`_operator.add`).
inline constexpr std::string_view kOperatorModule = "operator.";
/// The module of Python's builtins (`builtins.getattr`), which FX's code calls by their bare name.
inline constexpr std::string_view kBuiltinsModule = "builtins.";

/// `operator.NAME`.
inline std::string operatorTarget(std::string_view name) { return std::string(kOperatorModule) + std::string(name); }
/// NAME of `operator.NAME`, nullopt for any other target.
inline std::optional<std::string> operatorName(const std::string& target) {
  if (target.compare(0, kOperatorModule.size(), kOperatorModule) != 0) return std::nullopt;
  return target.substr(kOperatorModule.size());
}
/// NAME of `builtins.NAME`, nullopt for any other target.
inline std::optional<std::string> builtinName(const std::string& target) {
  if (target.compare(0, kBuiltinsModule.size(), kBuiltinsModule) != 0) return std::nullopt;
  return target.substr(kBuiltinsModule.size());
}

}  // namespace tdfx::fx_target
