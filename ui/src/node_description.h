#pragma once
// The Inspector's text for one IR node.
#include <string>

#include "tdfx/codegen/python_code.h"
#include "tdfx/ir/node.h"

namespace tdfx::ui {

/// Name, op, target, args, kwargs, users, tensordict key, module (path, type, constants),
/// parameters and buffers (shape, dtype, count and the min / max / mean the model worker read), the
/// source location and line, the schema, recorded output shapes and time, and the line of code.
std::string describeNode(const Node& node, const PythonCode& code);

}  // namespace tdfx::ui
