#pragma once
// Syntax colours for the generated Python code: keywords, builtins, strings, numbers, comments.
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace tdfx::ui {

class PythonHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
 public:
  explicit PythonHighlighter(QTextDocument* document, bool dark = false);
  /// Switches between colours for light and dark backgrounds and re-highlights.
  void setDark(bool dark);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
    int group = 0;  ///< the capture group coloured (0: the whole match)
  };
  std::vector<Rule> rules_;
};

}  // namespace tdfx::ui
