#include "tdfx/ui/code_panel.h"

#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTextBlock>

#include "tdfx/ui/python_highlighter.h"

namespace tdfx::ui {
namespace {

QPlainTextEdit* monospaceText(QWidget* parent) {
  auto* edit = new QPlainTextEdit(parent);
  edit->setReadOnly(true);
  edit->setLineWrapMode(QPlainTextEdit::NoWrap);
  edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  return edit;
}

}  // namespace

CodePanel::CodePanel(QWidget* parent)
    : QTabWidget(parent), code_(monospaceText(this)), graphText_(monospaceText(this)),
      highlighter_(new PythonHighlighter(code_->document())) {
  setDark(palette().color(QPalette::Window).lightness() < 128);  // a dark desktop with the System theme
  addTab(code_, tr("Python code"));
  addTab(graphText_, tr("FX graph"));
  connect(code_, &QPlainTextEdit::cursorPositionChanged, this, [this] {
    if (moving_) return;
    const int line = code_->textCursor().blockNumber() + 1;
    for (const auto& [name, l] : nodeLines_)
      if (l == line) return Q_EMIT nodeChosen(QString::fromStdString(name));
  });
}

void CodePanel::moveCursor(int blockNumber, bool center) {
  moving_ = true;
  code_->setTextCursor(QTextCursor(code_->document()->findBlockByNumber(blockNumber)));
  moving_ = false;
  if (center) code_->centerCursor();
}

void CodePanel::setCode(const QString& text, const std::map<std::string, int>& nodeLines) {
  nodeLines_ = nodeLines;
  moving_ = true;
  code_->setPlainText(text);
  // FX's code starts with blank lines (its imports' place): hidden, so short code and the code
  // after a depth change start at `def forward` (issue 57, N). Hidden, not removed: the lines keep
  // their numbers, which the node map, the inspector's links and FX's own text use.
  int hiddenEnd = 0;
  for (QTextBlock block = code_->document()->firstBlock(); block.isValid() && block.text().trimmed().isEmpty();
       block = block.next()) {
    if (!block.next().isValid()) break;  // all blank: nothing to show either way
    block.setVisible(false);
    block.setLineCount(0);
    hiddenEnd = block.position() + block.length();
  }
  if (hiddenEnd > 0) code_->document()->markContentsDirty(0, hiddenEnd);
  moving_ = false;
  code_->setExtraSelections({});
}

void CodePanel::setGraphText(const QString& text) { graphText_->setPlainText(text); }

void CodePanel::highlight(const std::vector<std::string>& irNodes) {
  QList<QTextEdit::ExtraSelection> marked;
  int first = -1;
  constexpr int kMostLines = 5000;  // a collapsed encoder of a huge net: its start is enough
  for (const std::string& name : irNodes) {
    auto it = nodeLines_.find(name);
    if (it == nodeLines_.end() || marked.size() >= kMostLines) continue;
    const QTextBlock block = code_->document()->findBlockByNumber(it->second - 1);
    if (!block.isValid()) continue;  // a line map that does not fit the text
    QTextEdit::ExtraSelection line;
    line.format.setBackground(dark_ ? QColor("#5A4A14") : QColor("#FFF3C4"));
    line.format.setProperty(QTextFormat::FullWidthSelection, true);
    line.cursor = QTextCursor(block);
    if (first < 0 || it->second - 1 < first) first = it->second - 1;
    marked << line;
  }
  code_->setExtraSelections(marked);
  if (first >= 0) moveCursor(first, true);  // scroll the code to the (first) statement
}

void CodePanel::showStart() {
  QTextBlock block = code_->document()->firstBlock();
  while (block.isValid() && block.text().trimmed().isEmpty()) block = block.next();
  if (!block.isValid()) return;
  moveCursor(block.blockNumber(), false);
  code_->verticalScrollBar()->setValue(0);  // the blank lines before it are hidden (setCode)
}

void CodePanel::showLine(int line) {
  setCurrentWidget(code_);
  const QTextBlock block = code_->document()->findBlockByNumber(line - 1);
  if (!block.isValid()) return;
  code_->setTextCursor(QTextCursor(block));  // chooses the node of that line, as a click does
  code_->centerCursor();
}

QString CodePanel::lineOf(const std::string& node) const {
  const auto it = nodeLines_.find(node);
  return it == nodeLines_.end() ? QString() : code_->document()->findBlockByNumber(it->second - 1).text().trimmed();
}

void CodePanel::setDark(bool dark) {
  dark_ = dark;
  highlighter_->setDark(dark);
}

}  // namespace tdfx::ui
