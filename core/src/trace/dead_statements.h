#pragma once
// What dead_statements.cpp (finding the statements TorchScript removed whole),
// dead_statement_recording.cpp (recording them) and kept_call_statements.cpp (statements it
// removed around a call it kept) share: the function's parsed statements, where a node was made
// in them, and the values names hold there.
#include <optional>
#include <string>

#include "source_evaluator.h"
#include "trace_context.h"

namespace tdfx::trace {

/// `fn`'s source parsed by TorchScript's parser, with its assignments at any depth; once per trace.
const FunctionStatements& statementsOf(TraceContext& cx, const torch::jit::Function& fn);

/// Where in the user's source a node was made (see dead_statements.cpp); nullopt when not known.
std::optional<size_t> madeAt(TraceContext& cx, const torch::jit::Node* node);

/// A TorchScript value's name as written: "spx" for "spx.1"; empty when it has none.
std::string writtenName(const torch::jit::Value* v);

/// Whether `written` is `name` numbered on load (`h0` for `h`).
bool isNumberedFrom(const std::string& written, const std::string& name);

/// The one value the statement `dead.containerDefinition` made that code after it reads (where
/// TorchScript kept no name for a statement's value); null when none or more than one.
const torch::jit::Value* assignedValue(TraceContext& cx, const DeadRead& dead, const Frame& frame);

/// What a value TorchScript kept holds for the evaluator: a node (a Proxy) or a constant; nullopt
/// for a module, a pending tensor, or a value not known.
std::optional<Argument> heldArgument(TraceContext& cx, const torch::jit::Value* value, Frame& frame);

/// Runs `rhs` (whose text is `text`) with the evaluator; on anything it cannot run, the graph is as
/// before and nullopt is returned.
std::optional<Argument> runDead(TraceContext& cx, const py::Expr& rhs, SourceScope& scope, Frame& frame,
                                const std::string& text);

/// Records a statement TorchScript removed around a kept call (kept_call_statements.cpp).
void recordPartlyDead(TraceContext& cx, PartlyDeadStatement& statement, Frame& frame);

}  // namespace tdfx::trace
