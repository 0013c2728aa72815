#include "tdfx/ui/python_highlighter.h"

namespace tdfx::ui {

namespace {
QTextCharFormat charFormat(const char* color, bool bold = false) {
  QTextCharFormat f;
  f.setForeground(QColor(color));
  if (bold) f.setFontWeight(QFont::Bold);
  return f;
}
}  // namespace

PythonHighlighter::PythonHighlighter(QTextDocument* document, bool dark) : QSyntaxHighlighter(document) { setDark(dark); }

void PythonHighlighter::setDark(bool dark) {
  // Later rules win where they overlap: strings and comments come last.
  rules_ = {
      {QRegularExpression(QStringLiteral("\\b(def|return|None|True|False|import|from|as|if|else|for|in|not|and|or|lambda|class|pass)\\b")),
       charFormat(dark ? "#FF7B72" : "#A626A4", true)},
      {QRegularExpression(QStringLiteral("\\b(self|torch|operator|tensordict)\\b")), charFormat(dark ? "#79C0FF" : "#0550AE")},
      {QRegularExpression(QStringLiteral("\\bdef\\s+(\\w+)")), charFormat(dark ? "#D2A8FF" : "#4078F2", true), 1},
      {QRegularExpression(QStringLiteral("\\b\\d+(\\.\\d*)?([eE][-+]?\\d+)?\\b")), charFormat(dark ? "#79C0FF" : "#986801")},
      {QRegularExpression(QStringLiteral("'[^'\\\\]*(\\\\.[^'\\\\]*)*'|\"[^\"\\\\]*(\\\\.[^\"\\\\]*)*\"")),
       charFormat(dark ? "#A5D6FF" : "#50A14F")},
      {QRegularExpression(QStringLiteral("#[^\\n]*")), charFormat(dark ? "#8B949E" : "#A0A1A7")},
  };
  rehighlight();
}

void PythonHighlighter::highlightBlock(const QString& text) {
  for (const Rule& rule : rules_) {
    for (auto it = rule.pattern.globalMatch(text); it.hasNext();) {
      const QRegularExpressionMatch m = it.next();
      setFormat(int(m.capturedStart(rule.group)), int(m.capturedLength(rule.group)), rule.format);
    }
  }
}

}  // namespace tdfx::ui
