#pragma once
// The Code dock: the generated Python code (highlighted, the selected node's statements marked)
// and the FX graph as text, in two tabs. Moving the cursor in the code names the node of that
// line, so the window can select it; the panel's own moves (a highlight, a reload) do not.
#include <QTabWidget>
#include <map>
#include <string>
#include <vector>

class QPlainTextEdit;

namespace tdfx::ui {

class PythonHighlighter;

class CodePanel : public QTabWidget {
  Q_OBJECT
 public:
  explicit CodePanel(QWidget* parent = nullptr);

  QPlainTextEdit* code() const { return code_; }
  QPlainTextEdit* graphText() const { return graphText_; }
  /// A new listing and the line of each node's statement (1-based); nothing highlighted.
  void setCode(const QString& text, const std::map<std::string, int>& nodeLines);
  void setGraphText(const QString& text);
  /// Marks the statements of `irNodes` and scrolls to the first; none clears the marks.
  void highlight(const std::vector<std::string>& irNodes);
  /// The listing from `def` (FX's code starts with blank lines, and a small panel showed only those).
  void showStart();
  /// The Python tab, the cursor on `line` (1-based): the node of that line is chosen.
  void showLine(int line);
  /// The text of `node`'s statement, trimmed; "" when it has none.
  QString lineOf(const std::string& node) const;
  /// Colours for a dark background.
  void setDark(bool dark);

 Q_SIGNALS:
  /// The user moved the cursor onto the statement of IR node `name`.
  void nodeChosen(const QString& name);

 private:
  void moveCursor(int blockNumber, bool center);
  QPlainTextEdit* code_;
  QPlainTextEdit* graphText_;
  PythonHighlighter* highlighter_;
  std::map<std::string, int> nodeLines_;
  bool dark_ = false;
  bool moving_ = false;  ///< the panel moves the cursor itself: no node is chosen
};

}  // namespace tdfx::ui
