#pragma once
// Where a TorchScript node came from in the user's Python source: the tracer's one way to read
// the code TorchScript compiled (a call's written expression, a function's text, a location for
// errors). It reads; it never changes the graph.
#include <optional>
#include <unordered_map>
#include <string>
#include <utility>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include "source_expr.h"
#include "tdfx/nn/source_index.h"

namespace tdfx::trace {

class SourceLookup {
 public:
  /// `sources`: source locations decoded by the loader (may be null: the debug info is then read
  /// directly, which is safe only for archives that are trusted).
  explicit SourceLookup(const SourceIndex* sources) : sources_(sources) {}

  /// The user's source for a node, or nullopt (no debug info, or code TorchScript generated).
  std::optional<SourceLocation> userSource(const torch::jit::Node* node) const;
  /// The user's source of `fn` (its `def` and body); empty when the archive has no debug info.
  std::string functionSource(const torch::jit::Function& fn) const;
  /// The user's expression behind `node` (nulls without user source): the whole expression parsed
  /// from the node's range on, and the part TorchScript's range covers.
  std::pair<py::ExprPtr, py::ExprPtr> writtenExpression(const torch::jit::Node* node) const;
  /// " at FILE:LINE" for an error about `node`: the user's source, else the archive's code; "" when
  /// neither is known.
  std::string where(const torch::jit::Node* node) const;
  /// py::parseExpressionPrefix(window), parsed once per trace: the tracer asks for a node's
  /// expression several times (its form, its outputs, its inputs, its expression group), and
  /// TorchScript's parser costs far more than a lookup.
  py::ExprPtr parsed(const std::string& window) const;

 private:
  const SourceIndex* sources_;
  mutable std::unordered_map<std::string, py::ExprPtr> parsed_;
};

}  // namespace tdfx::trace
