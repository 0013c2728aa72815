#include "error_text.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QTextDocument>
#include <QVBoxLayout>

#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/util/display_text.h"

#include <QRegularExpression>
#include <QStringList>

namespace tdfx::ui {

ErrorText splitError(const QString& message) {
  const QString trimmed = message.trimmed();
  QStringList lines = trimmed.split('\n');
  if (lines.size() <= 1) return {trimmed, {}};
  // Python's and TorchScript's exception lines: "RuntimeError: AssertionError: Wrong image height!"
  static const QRegularExpression exceptionLine(QStringLiteral("^(?:[A-Za-z_][\\w.]*(?:Error|Exception|Interrupt)): "));
  QString raised;
  for (auto it = lines.crbegin(); it != lines.crend() && raised.isEmpty(); ++it)
    if (exceptionLine.match(*it).hasMatch()) raised = *it;
  while (exceptionLine.match(raised).hasMatch()) raised.remove(exceptionLine);
  QString context = lines.first().trimmed();
  if (const qsizetype colon = context.indexOf(QStringLiteral(": ")); colon > 0) context.truncate(colon);
  if (raised.isEmpty()) return {context, trimmed};
  return {context + QStringLiteral(": ") + raised.trimmed(), trimmed};
}

namespace {
// The length of `text` in UTF-8, without converting it (a 30 MB message took 0.2 s to convert).
size_t utf8Length(const QString& text) {
  size_t bytes = 0;
  const qsizetype n = text.size();
  for (qsizetype i = 0; i < n; ++i) {
    const char16_t u = text[i].unicode();
    if (u < 0x80) bytes += 1;
    else if (u < 0x800) bytes += 2;
    else if (!QChar::isHighSurrogate(u) || i + 1 == n || !QChar::isLowSurrogate(text[i + 1].unicode())) bytes += 3;
    else {  // a surrogate pair: one character of four bytes
      bytes += 4;
      ++i;
    }
  }
  return bytes;
}
}  // namespace

QString capMessage(const QString& text) {
  if (static_cast<size_t>(text.size()) <= kShownMessageBytes / 3) return text;  // at most 3 UTF-8 bytes a unit
  // Only the head is converted: kShownMessageBytes units hold at least as many UTF-8 bytes.
  const std::string head = text.left(static_cast<qsizetype>(kShownMessageBytes)).toStdString();
  if (head.size() <= kShownMessageBytes && static_cast<size_t>(text.size()) <= kShownMessageBytes) return text;
  const std::string capped = capText(head);  // cut between characters, as capText cuts the whole
  const size_t kept = capped.find("\u2026 [") == std::string::npos ? head.size() : capped.find("\u2026 [");
  return QString::fromStdString(head.substr(0, kept) + "\u2026 [" + std::to_string(utf8Length(text) - kept) + " more bytes]");
}

QString plainToolTip(const QString& text) {
  if (text.isEmpty()) return text;
  return Qt::convertFromPlainText(capMessage(text), Qt::WhiteSpaceNormal);
}

void showWholeMessage(QWidget* parent, const QString& message) {
  QDialog dialog(parent);
  dialog.setWindowTitle(QObject::tr("The whole message (%1 bytes)").arg(message.toUtf8().size()));
  auto* text = new QPlainTextEdit(&dialog);
  text->setReadOnly(true);
  text->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  text->setWordWrapMode(QTextOption::WrapAnywhere);
  // The first MiB: a viewer of a 30 MB line would itself stall the window.
  text->setPlainText(QString::fromStdString(capText(message.toStdString(), size_t{1} << 20)));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Close, &dialog);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, [&dialog, &message] {
    const QString path = QFileDialog::getSaveFileName(&dialog, QObject::tr("Save the message"), QString(),
                                                      QObject::tr("Text (*.txt)"));
    if (path.isEmpty()) return;
    try {
      writeFileAtomically(path.toStdString(), message.toStdString());
    } catch (const std::exception& e) {
      QMessageBox box(QMessageBox::Warning, QObject::tr("tdfx"), QString::fromStdString(e.what()), QMessageBox::Ok, &dialog);
      box.setTextFormat(Qt::PlainText);
      box.exec();
    }
  });
  auto* layout = new QVBoxLayout(&dialog);
  layout->addWidget(text);
  layout->addWidget(buttons);
  dialog.resize(900, 600);
  dialog.exec();
}

}  // namespace tdfx::ui
