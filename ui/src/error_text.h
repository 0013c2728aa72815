#pragma once
// Long errors (a TorchScript traceback ends with the real message, twenty lines down) shown as a
// one-line cause first, with the whole text kept as the detail.
#include <QString>

class QWidget;

namespace tdfx::ui {

struct ErrorText {
  QString cause;   ///< one line: where it failed and the exception's own message
  QString detail;  ///< the whole message; empty when the cause already says everything
};

/// Splits `message`: the cause is its first clause ("the eager module failed on these inputs")
/// joined with the last "SomethingError: message" line, its type prefixes dropped.
ErrorText splitError(const QString& message);

/// `text` capped at kShownMessageBytes ("… [N more bytes]"), cut between characters.
QString capMessage(const QString& text);

/// A tooltip that shows `text` (capped) as plain text: Qt would render a tooltip that looks like
/// HTML as HTML, and a model's names and messages are not the window's markup.
QString plainToolTip(const QString& text);

/// The whole of a long message, asked for by the user: a read-only viewer of its first MiB, with
/// a button that saves all of it to a file.
void showWholeMessage(QWidget* parent, const QString& message);

}  // namespace tdfx::ui
