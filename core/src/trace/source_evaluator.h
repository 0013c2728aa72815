#pragma once
// Runs an expression of the user's source with torch.fx's Proxy semantics (torch/fx/proxy.py): an
// operation with a Proxy among its operands is recorded as the node FX records (operator.add for
// `a + b`, the method for `x.view(-1)`, the callable FX names for `torch.relu(x)`), an attribute of
// a Proxy becomes a node only where it is first used (FX's Attribute), and operations on concrete
// values are Python's, recording nothing. The tracer runs it where the compiled graph holds no node
// for what the source runs: statements TorchScript removed as dead code (dead_statements.cpp).
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "graph_builder.h"
#include "source_expr.h"
#include "tdfx/ir/argument.h"
#include "tdfx/ir/node.h"

namespace tdfx::trace {

struct SourceScope {
  /// A name's value: a node (a Proxy) or a concrete argument; nullopt when it is not known.
  std::function<std::optional<Argument>(const std::string&)> name;
  /// Values of sub-expressions the compiled graph did compute (a call TorchScript kept, whose
  /// result the dead statement around it used), by the expression.
  std::map<const py::Expr*, Argument> computed;
  /// What every node made is described by: its module and the user's source.
  NodeMeta meta;
};

/// The value of `e`, its operations on Proxies recorded in `builder`'s graph. nullopt when some part
/// is beyond what it runs (a call FX traces through, an operation in place, a name not known, a
/// `not` of a Proxy): the caller rolls the graph back.
std::optional<Argument> evaluateSource(GraphBuilder& builder, const py::Expr& e, const SourceScope& scope);

/// The innermost call among `root` and its sub-expressions that starts at `offset`, or null.
const py::Expr* callStartingAt(const py::Expr& root, size_t offset);

}  // namespace tdfx::trace
