#include "model_summary_text.h"

#include <QFileInfo>
#include <QLocale>
#include <QObject>
#include <c10/core/ScalarType.h>
#include <set>

#include "tdfx/ir/graph_printer.h"
#include "tdfx/util/dtype.h"

namespace tdfx::ui {

namespace {

QString sizeText(double bytes) {
  return QLocale(QLocale::English).formattedDataSize(static_cast<qint64>(bytes), 1, QLocale::DataSizeIecFormat);
}

QString row(const QString& name, const QString& value) {
  return QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(name.toHtmlEscaped(), value);
}

}  // namespace

QString modelSummaryHtml(const ModelSession& session, const VerifyReport* report) {
  const ModelSummary& model = session.traced.model;
  const QFileInfo file(QString::fromStdString(model.path));
  QString html = QStringLiteral("<table cellspacing=\"3\">");
  html += row(QObject::tr("file"), file.fileName().toHtmlEscaped() + " (" + sizeText(static_cast<double>(file.size())) + ")");
  html += row(QObject::tr("folder"), file.absolutePath().toHtmlEscaped());
  html += row(QObject::tr("format"),
              model.hasTensorDictMetadata
                  ? QObject::tr("tdfx archive (TorchScript with tensordict.json), saved with %1")
                        .arg(QString::fromStdString(model.exportedWith.empty() ? "an unrecorded method" : model.exportedWith))
                        .toHtmlEscaped()
                  : QObject::tr("plain TorchScript archive (no tensordict.json: one module, keys from forward's arguments)")
                        .toHtmlEscaped());
  html += row(QObject::tr("recorded by the producer"),
              model.formatVersion ? QObject::tr("TorchScript file format version %1").arg(model.formatVersion)
                                  : QObject::tr("no readable format version"));
  // Parameters and buffers of the leaf modules the graph calls (a module called twice counts once).
  int64_t counts[2] = {0, 0};
  double bytes[2] = {0, 0};
  int tensors[2] = {0, 0};
  std::set<std::string> seen;
  for (const auto& node : session.graph().nodes()) {
    if (node->op() != OpKind::CallModule || !seen.insert(node->target()).second) continue;
    for (const ParameterInfo& p : node->meta().parameters) {
      int64_t n = 1;
      for (int64_t d : p.shape) n *= d;
      const int k = p.isBuffer ? 1 : 0;
      counts[k] += n;
      ++tensors[k];
      if (p.dtype != c10::ScalarType::Undefined) bytes[k] += static_cast<double>(n) * static_cast<double>(c10::elementSize(p.dtype));
    }
  }
  const QLocale c(QLocale::English);  // 5,560: digits grouped
  for (int k = 0; k < 2; ++k)
    html += row(k ? QObject::tr("buffers") : QObject::tr("parameters"),
                QObject::tr("%1 values in %2 tensors, %3 (of the modules the graph calls)")
                    .arg(c.toString(static_cast<qlonglong>(counts[k])))
                    .arg(tensors[k])
                    .arg(sizeText(bytes[k])));
  // The shapes of the last run when there was one (a plain archive has no others), else the file's examples.
  QStringList inputs;
  bool fromRun = false;
  for (const NestedKey& key : model.inKeys) {
    QString text = QString::fromStdString(keyToString(key)).toHtmlEscaped();
    QString shape;
    for (const InputSpec& spec : model.exampleInputs)
      if (spec.key == key) shape = QString::fromStdString(formatShape(spec.shape) + " " + dtypeToString(spec.dtype));
    if (report)
      for (const VerifyReport::Input& in : report->inputs)
        if (in.key == key) {
          shape = QString::fromStdString(formatShape(in.shape) + " " + in.dtype);
          fromRun = true;
        }
    inputs << (shape.isEmpty() ? text : text + " " + shape.toHtmlEscaped());
  }
  const bool anyShape = fromRun || !model.exampleInputs.empty();
  html += row(QObject::tr("input keys"),
              inputs.join(QStringLiteral("<br>")) +
                  (fromRun ? QObject::tr("<br><i>as last run</i>")
                           : anyShape ? QString() : QObject::tr("<br><i>shapes after a run (F5)</i>")));
  QStringList outputs;
  for (const NestedKey& key : model.outKeys) {
    QString text = QString::fromStdString(keyToString(key)).toHtmlEscaped();
    if (report)
      for (const KeyComparison& k : report->keys)
        if (k.key == key) text += " " + QString::fromStdString(formatShape(k.eagerShape)) + " " + QString::fromStdString(k.eagerDtype);
    outputs << text;
  }
  html += row(QObject::tr("output keys"),
              outputs.join(QStringLiteral("<br>")) + (report ? QString() : QObject::tr("<br><i>shapes after a run (F5)</i>")));
  html += row(QObject::tr("graph"), QObject::tr("%1 nodes; traced in %2 ms")
                                        .arg(session.graph().size())
                                        .arg(session.traceSeconds * 1e3, 0, 'f', 1));
  return html + QStringLiteral("</table>");
}

}  // namespace tdfx::ui
