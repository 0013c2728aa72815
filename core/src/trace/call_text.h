#pragma once
// Reading how a call was written from the user's source text, so a traced node can be printed the
// way the user wrote it: `x * mask` vs `torch.mul(x, mask)`, `dim=1` vs `1`.
#include <optional>
#include <string>
#include <vector>

namespace tdfx::trace {

/// A call expression `callee(arg, ..., name=value, ...)` split at its top level.
struct CallText {
  std::string callee;                    ///< "torch.softmax", "x.view", "F.relu"
  size_t positionalCount = 0;            ///< arguments written without a name
  std::vector<std::string> positionalTexts;  ///< their source text
  std::vector<std::string> keywordNames;  ///< names of keyword arguments, in the order written
  bool hasStarArgs = false;              ///< `*args` / `**kwargs` were used: counts are unreliable
};

/// TorchScript's debug info often records only the callee of a call (`torch.softmax`) and sometimes
/// cuts its last character (`x.contiguou`). Given the source from the range's start (`window`)
/// and the range's length, returns the range completed to the end of the identifier and, when an
/// argument list follows, through its closing parenthesis.
std::string extendToCall(const std::string& window, size_t rangeLength);

/// Parses `text` when the whole text is one call expression; nullopt otherwise (`a * b`, `x.shape`).
std::optional<CallText> parseCallText(const std::string& text);

/// For `expr.name` (an attribute access, not a call), the attribute name; nullopt otherwise.
std::optional<std::string> parseAttributeText(const std::string& text);

/// `text` without subscripts at its end: "x.shape[-1]" -> "x.shape".
std::string withoutTrailingSubscripts(const std::string& text);

/// The part of a callee before its last dot ("torch.nn.functional" for "torch.nn.functional.relu"),
/// empty when there is none.
std::string calleePrefix(const std::string& callee);
/// The last dotted part of a callee ("relu").
std::string calleeName(const std::string& callee);

/// Whether `text` uses `op` as an augmented assignment (`x += 1` for op "+").
bool isAugmentedAssignment(const std::string& text);

}  // namespace tdfx::trace
