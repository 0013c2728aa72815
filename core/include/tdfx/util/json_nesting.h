#pragma once
// How deep a JSON text nests, counted before it is parsed: nlohmann's values are copied, dumped
// and destroyed recursively, so text from outside (a model's tensordict.json, a serve request)
// is refused past a depth before it can overflow the stack.
#include <string>

namespace tdfx {

/// The deepest nesting of `[` and `{` in `text`, outside strings; stops counting once it passes
/// `limit` (so a hostile text costs no more than its length).
int jsonNestingDepth(const std::string& text, int limit);

}  // namespace tdfx
