#pragma once
// Long errors (a TorchScript traceback ends with the real message, twenty lines down) shown as a
// one-line cause first, with the whole text kept as the detail.
#include <QString>

namespace tdfx::ui {

struct ErrorText {
  QString cause;   ///< one line: where it failed and the exception's own message
  QString detail;  ///< the whole message; empty when the cause already says everything
};

/// Splits `message`: the cause is its first clause ("the eager module failed on these inputs")
/// joined with the last "SomethingError: message" line, its type prefixes dropped.
ErrorText splitError(const QString& message);

}  // namespace tdfx::ui
