#pragma once
// The call_function targets tdfx's own code makes or looks for, spelled once, as torch.fx 1.13
// names them. The targets of operators and library functions are not here: they come from the
// tables generated from torch's own definitions (core/src/trace/fx_tables.cpp, make_fx_tables.py).
#include "tdfx/ir/node.h"

namespace tdfx::fx_target {

/// `x[i]`, a TensorDict read `tensordict['x']`, an item of a multi-output call.
inline constexpr const char kGetItem[] = "operator.getitem";
/// A named tuple's field or a tensor's attribute read as a value (`getattr(sort, 'values')`).
inline constexpr const char kGetAttr[] = "builtins.getattr";
/// An assertion on a traced value (`torch._assert(ok, message)`), checked on every run.
inline constexpr const char kAssert[] = "torch._assert";

/// Whether `node` is a call_function of `target`.
inline bool isCallTo(const Node& node, const char* target) {
  return node.op() == OpKind::CallFunction && node.target() == target;
}

}  // namespace tdfx::fx_target
