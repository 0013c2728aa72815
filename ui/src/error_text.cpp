#include "error_text.h"

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

}  // namespace tdfx::ui
