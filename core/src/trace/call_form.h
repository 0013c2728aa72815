#pragma once
// Choosing how a TorchScript operator call appears in the FX graph: which Python target
// (`torch.relu`, `operator.mul`, method `view`) and which args and kwargs, from the user's source
// text when the archive has debug info, from the operator schema otherwise.
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/ir/ir.h>

#include "tdfx/ir/argument.h"
#include "tdfx/ir/node.h"

namespace tdfx::trace {

struct CallForm {
  OpKind op = OpKind::CallFunction;
  std::string target;
  std::vector<Argument> args;
  Kwargs kwargs;
};

/// `inputs` are the FX views of the node's inputs in schema order; `constants` holds the value of
/// each input that is a compile-time constant (used to drop arguments equal to their defaults).
CallForm callFormFor(const torch::jit::Node& node, const std::string& sourceText, const std::vector<Argument>& inputs,
                     const std::vector<std::optional<c10::IValue>>& constants);

/// The args and kwargs of a call to a TorchScript function (`F.relu(x, inplace=True)`) as the user
/// wrote it in `sourceText`; nullopt when the text is not such a call.
std::optional<CallForm> writtenFunctionArgs(const c10::FunctionSchema& schema, const std::string& sourceText,
                                            const std::vector<Argument>& inputs);

/// The FX view of a constant: None, bool, int, float, str, device and (nested) lists and tuples.
/// Returns nullopt for values FX args cannot hold (tensors, objects).
std::optional<Argument> argumentFromIValue(const c10::IValue& value);

/// Reinterprets an int constant as the enum the schema expects (dtype, layout, memory format), so
/// `x.to(torch.float16)` prints as written rather than `x.to(5)`.
Argument coerceToSchemaType(const Argument& arg, const c10::TypePtr& schemaType);

}  // namespace tdfx::trace
