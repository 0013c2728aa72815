#include "source_lookup.h"

#include <algorithm>
#include <tuple>

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {
// The user's source range behind a range of the archive's code. The debug info is unpickled
// lazily on first use; a damaged one means no source text, not a failed trace.
c10::optional<jit::SourceRange> originalRange(const jit::SourceRange& range) {
  try {
    return range.findSourceRangeThatGenerated();
  } catch (const std::exception&) {
    return c10::nullopt;
  }
}
}  // namespace

std::optional<SourceLocation> SourceLookup::userSource(const jit::Node* node) const {
  if (sources_) {
    if (const SourceLocation* loc = sources_->find(node)) return *loc;
    return std::nullopt;
  }
  const auto& range = node->sourceRange();
  if (!range.source()) return std::nullopt;
  auto original = originalRange(range);
  if (!original || !original->source()) return std::nullopt;
  return sourceLocationOf(*original);
}

std::string SourceLookup::functionSource(const jit::Function& fn) const {
  const std::string qualified = fn.qualname().qualifiedName();
  if (sources_) {
    const std::string* text = sources_->functionSource(qualified);
    return text ? *text : std::string();
  }
  if (!fn.isGraphFunction()) return "";
  return functionSourceOf(jit::toGraphFunction(const_cast<jit::Function&>(fn)).graph()->block(), fn.name());
}

std::pair<py::ExprPtr, py::ExprPtr> SourceLookup::writtenExpression(const jit::Node* node) const {
  auto loc = userSource(node);
  if (!loc || !loc->builtinDef.empty()) return {};
  py::ExprPtr root = parsed(loc->window);
  py::ExprPtr expr = py::expressionForRange(root, loc->rangeLength);
  return {std::move(root), std::move(expr)};
}

py::ExprPtr SourceLookup::parsed(const std::string& window) const {
  if (auto it = parsed_.find(window); it != parsed_.end()) return it->second;
  return parsed_.emplace(window, py::parseExpressionPrefix(window)).first->second;
}

std::string SourceLookup::where(const jit::Node* node) const {
  if (auto loc = userSource(node); loc && !loc->file.empty()) return " at " + loc->file + ":" + std::to_string(loc->line);
  if (auto flc = node->sourceRange().file_line_col())
    return " at " + std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc));
  return "";
}

}  // namespace tdfx::trace
