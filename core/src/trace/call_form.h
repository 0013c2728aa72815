#pragma once
// Choosing how a TorchScript operator call appears in the FX graph: which Python target
// (`torch.relu`, `operator.mul`, method `view`) and which args and kwargs, from the user's source
// text when the archive has debug info, from the operator schema otherwise.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/ir/ir.h>

#include "source_expr.h"
#include "tdfx/ir/argument.h"
#include "tdfx/ir/fx_tables.h"
#include "tdfx/ir/node.h"

namespace tdfx::trace {

// The tracer reads FX's generated tables (findCallable, CallKind, ...) as its own vocabulary.
using namespace ::tdfx::fx;

/// The value a module attribute written in the source holds (`self.normalized_shape` ->
/// (96,)), or nullopt when the expression is not such an attribute. May be empty.
using AttributeValues = std::function<std::optional<Argument>(const py::Expr&)>;

struct CallForm {
  OpKind op = OpKind::CallFunction;
  std::string target;
  std::vector<Argument> args;
  Kwargs kwargs;
};

/// `expr` is the user's expression behind the node (null without debug info); `inputs` are the
/// FX views of the node's inputs in schema order; `constants` holds the value of each input that
/// is a compile-time constant (to drop arguments equal to their defaults, and to tell `1 - x`
/// from `x - 1`); `inputNames` are the inputs' TorchScript variable names (without `.N`).
/// Without usable text the generated tables choose the spelling; the target printed always
/// exists in torch.
/// The torch namespace a written callee prefix names (`F` -> torch.nn.functional), or nullopt.
std::optional<std::string> writtenNamespace(const std::string& prefix);

/// Whether prim::NAME reads a tensor property Python spells as an attribute (`x.dtype`, `x.device`).
bool isTensorProperty(const std::string& primName);

CallForm callFormFor(const torch::jit::Node& node, const py::ExprPtr& expr, const std::vector<Argument>& inputs,
                     const std::vector<std::optional<c10::IValue>>& constants,
                     const std::vector<std::string>& inputNames, const AttributeValues& attributes = {});

/// The args and kwargs of a call to a TorchScript function (`F.relu(x, inplace=True)`) as the user
/// wrote it in `expr`; nullopt when the expression is not such a call.
std::optional<CallForm> writtenFunctionArgs(const c10::FunctionSchema& schema, const py::ExprPtr& expr,
                                            const std::vector<Argument>& inputs, const AttributeValues& attributes = {});

/// The args and kwargs FX records for a call of a Handled torch function (`F.softmax`): the
/// parameters the table names, with the values the user wrote in `written` (the call's text; may
/// be null) and the function's declared defaults for the others, else the call's schema-ordered
/// `inputs`; nullopt when the schema lacks one of them.
std::optional<CallForm> handledCallArgs(const generated::CallableSpelling& callable, const c10::FunctionSchema& schema,
                                        const std::vector<Argument>& inputs, const py::ExprPtr& written,
                                        const AttributeValues& attributes = {});

/// A written call's arguments mapped onto `schema`'s `inputs` (for a method, args[0] is the
/// receiver, the schema's `self`); nullopt when the text does not fit the schema.
std::optional<CallForm> writtenCallArgs(const py::Expr& call, const c10::FunctionSchema& schema,
                                        const std::vector<Argument>& inputs, bool method,
                                        const AttributeValues& attributes = {});

/// The value of a Python literal (number, string, None/True/False, tuples and lists of them).
std::optional<Argument> literalArgument(const py::Expr& e);

/// The FX view of a constant: None, bool, int, float, str, device and (nested) lists and tuples.
/// Returns nullopt for values FX args cannot hold (tensors, objects).
std::optional<Argument> argumentFromIValue(const c10::IValue& value);

/// Reinterprets an int constant as the enum the schema expects (dtype, layout, memory format), so
/// `x.to(torch.float16)` prints as written rather than `x.to(5)`.
Argument coerceToSchemaType(const Argument& arg, const c10::TypePtr& schemaType);

}  // namespace tdfx::trace
