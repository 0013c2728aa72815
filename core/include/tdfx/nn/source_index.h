#pragma once
// Where TorchScript nodes came from in the user's Python source.
#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

namespace tdfx {

/// The user's source behind one TorchScript node.
struct SourceLocation {
  std::string file;
  int line = 0;
  std::string window;       ///< the source from the node's range onwards (a bounded window)
  size_t rangeLength = 0;   ///< how much of `window` the recorded range covers
  size_t start = 0;         ///< offset of the range in its function's source (ranges of one function compare)
  /// For code of TorchScript's own builtin functions (file "<string>", e.g. its `def sub(a : int,
  /// b : Tensor) -> Tensor` behind `1 - x`): the header of the enclosing def. Empty for user code.
  std::string builtinDef;
};

/// The location of an original (user-written) source range: file, line, and a window of the
/// source from the range's start, long enough to complete a call's argument list. The one place
/// that decides what a location holds, for both the isolated loader and the in-process tracer.
/// How far to move a range's start to the left so that it takes in the opening brackets of the
/// closing ones it holds without them. TorchScript drops brackets: `(x + y).transpose(0, 1)` gives
/// aten::transpose the range `x + y).transpose`, which is no expression; `(x + y).transpose` is.
template <typename Text>  // std::string, or TorchScript's StringCordView of a source
size_t unmatchedOpeningBrackets(const Text& text, size_t start, size_t end) {
  int open = 0, unmatched = 0;
  char quote = 0;
  for (size_t i = start; i < end && i < text.size(); ++i) {
    const char c = text.at(i);
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(') {
      ++open;
    } else if (c == ')') {
      open > 0 ? --open : ++unmatched;
    }
  }
  size_t first = start;
  for (; unmatched > 0; --unmatched) {
    size_t i = first;
    while (i > 0 && (text.at(i - 1) == ' ' || text.at(i - 1) == '\t' || text.at(i - 1) == '\n')) --i;
    if (i == 0 || text.at(i - 1) != '(') break;
    first = i - 1;
  }
  return start - first;
}

/// The text of `source` as one string. A source read back from an archive is a cord of many
/// pieces, and each text_str() copies them: per node of a 20,000-line function that made loading
/// quadratic (40 s). The last source asked for is kept, per thread: a function's nodes share it.
inline const std::string& flatSourceText(const std::shared_ptr<torch::jit::Source>& source) {
  thread_local std::shared_ptr<torch::jit::Source> cached;
  thread_local std::string text;
  if (cached != source) {
    text = source->text_str().str();
    cached = source;
  }
  return text;
}

/// Where the text a TorchScript range stands for ends. A range that ends with a literal is not
/// its text: torch/jit/frontend.py makes a number's range `len(str(value))` long and a string's
/// `len(value) + 1`, so the range of `x * 2.5e3` in `x * 2.5e3 + 1e-3` takes in one character more
/// and the one of `(acts > 1e-3)` its closing bracket (torch 1.13). `end` when no literal ends it.
size_t writtenRangeEnd(const std::string& text, size_t start, size_t end);

inline SourceLocation sourceLocationOf(const torch::jit::SourceRange& original) {
  // The source of a scripted function is its own text (from its `def`), so offsets compare within it.
  SourceLocation loc;
  const std::string& text = flatSourceText(original.source());
  const size_t rangeEnd = writtenRangeEnd(text, original.start(), original.end());
  const size_t start = original.start() - unmatchedOpeningBrackets(text, original.start(), rangeEnd);
  const size_t end = std::min(text.size(), rangeEnd + size_t(512));
  loc.window = text.substr(start, end - start);
  loc.rangeLength = rangeEnd - start;
  loc.start = start;
  if (auto flc = original.file_line_col()) {
    loc.file = std::get<0>(*flc);
    loc.line = static_cast<int>(std::get<1>(*flc));
  }
  if (loc.file.empty() || loc.file == "<string>") {
    const size_t def = text.rfind("def ", original.start());
    if (def != std::string::npos && (def == 0 || text[def - 1] == '\n'))
      loc.builtinDef = text.substr(def, text.find('\n', def) - def);
  }
  return loc;
}

/// Source locations of the nodes of a loaded archive. LibTorch decodes an archive's debug info
/// lazily and can crash on a damaged one, so the model loader decodes it in an isolated child
/// process and hands the result to the tracer through this index; the tracer then never touches
/// the debug info itself. Keys are non-owning pointers to the nodes of one loaded module's
/// TorchScript graphs: the index is meaningful only with that module, and is shared (as
/// std::shared_ptr<const SourceIndex>) by the TensorDictModules built from it.
class SourceIndex {
 public:
  void add(const torch::jit::Node* node, SourceLocation location) { map_[node] = std::move(location); }
  const SourceLocation* find(const torch::jit::Node* node) const {
    auto it = map_.find(node);
    return it == map_.end() ? nullptr : &it->second;
  }
  /// The user's source of a TorchScript function (its `def` and body), by qualified name.
  void addFunctionSource(const std::string& qualifiedName, std::string text) { functions_[qualifiedName] = std::move(text); }
  const std::string* functionSource(const std::string& qualifiedName) const {
    auto it = functions_.find(qualifiedName);
    return it == functions_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<const torch::jit::Node*, SourceLocation> map_;
  std::unordered_map<std::string, std::string> functions_;
};

}  // namespace tdfx

namespace tdfx {

/// The user's source text of a TorchScript function, read from its nodes' original ranges: the
/// text of the source that holds `def NAME(`; empty when the archive has no such debug info.
/// Bounded to 256 KiB. Reads debug info: call it only where that is safe (the isolated loader, or
/// a module that did not come from a file).
inline std::string functionSourceOf(torch::jit::Block* block, const std::string& name) {
  // A function's nodes share a few sources: each is looked at once, and one over the bound is
  // never copied (copying a 20,000-line source per node made loading it take 10 s).
  std::vector<const torch::jit::Source*> seen;
  for (torch::jit::Node* node : block->nodes()) {
    const auto& range = node->sourceRange();
    if (!range.source()) continue;
    auto original = range.findSourceRangeThatGenerated();
    if (!original || !original->source()) continue;
    const torch::jit::Source* source = original->source().get();
    if (std::find(seen.begin(), seen.end(), source) != seen.end()) continue;
    seen.push_back(source);
    if (source->size() > (256u << 10)) continue;
    const std::string& text = flatSourceText(original->source());
    if (text.find("def " + name + "(") != std::string::npos) return text;
  }
  return "";
}

}  // namespace tdfx
