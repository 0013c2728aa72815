#include "node_description.h"

#include <QRegularExpression>
#include <QStringList>
#include <c10/core/ScalarType.h>
#include <cstdio>
#include <set>
#include <unordered_map>

#include <QObject>

#include "tdfx/ir/graph_printer.h"

namespace tdfx::ui {

namespace {

std::string statsOf(const Node& n, const ParameterInfo& p, const ParameterStatsMap* stats) {
  double min = p.min, max = p.max, mean = p.mean;
  bool known = p.hasStats;
  if (stats)
    if (auto it = stats->find({n.name(), p.name}); it != stats->end()) {
      min = it->second.min, max = it->second.max, mean = it->second.mean;
      known = true;
    }
  if (!known) return {};
  char buf[128];
  std::snprintf(buf, sizeof buf, " min %.4g, max %.4g, mean %.4g", min, max, mean);
  return buf;
}

QString firstShape(const Node& n, const RunOverlay* run) {
  const std::vector<TensorMeta>& outputs = recordedOutputs(n, run);
  return outputs.empty() ? QStringLiteral("shape after a run") : QString::fromStdString(formatTensorMeta(outputs[0]));
}

}  // namespace

std::string describeNode(const Node& n, const PythonCode& code, const RunOverlay* run, const ParameterStatsMap* stats) {
  std::string s = "name: " + n.name() + "\nop: " + opKindName(n.op()) + "\ntarget: " + printedTarget(n) + "\n";
  if (!n.args().empty()) s += "args: " + formatGraphArgument(ArgumentTuple{n.args()}) + "\n";
  if (!n.kwargs().empty()) {
    s += "kwargs:";
    for (const auto& [k, v] : n.kwargs()) s += " " + k + "=" + formatGraphArgument(v);
    s += "\n";
  }
  s += "users:";
  for (const Node* u : n.users()) s += " " + u->name();
  s += "\n";
  const NodeMeta& m = n.meta();
  if (m.tensordictKey) s += "tensordict key: " + keyToString(*m.tensordictKey) + "\n";
  if (!m.modulePath.empty()) s += "module: " + m.modulePath + " (" + m.moduleType + ")\n";
  for (const auto& [k, v] : m.moduleConstants) s += "  " + k + ": " + v + "\n";
  for (const auto& [k, v] : m.moduleAttributes) s += "  " + k + ": " + v + "\n";
  for (const ParameterInfo& p : m.parameters) {
    int64_t count = 1;
    for (int64_t d : p.shape) count *= d;
    s += std::string("  ") + (p.isBuffer ? "buffer " : p.isPacked ? "packed weight " : "parameter ") + p.name + ": " +
         formatTensorMeta(TensorMeta{p.shape, p.dtype}) + " (" + std::to_string(count) + " values)";
    s += statsOf(n, p, stats) + "\n";  // computed by the model worker, which holds the tensors
  }
  if (!m.leafReason.empty()) {
    s += "kept whole: " + m.leafReason + "\n";
  } else if (n.op() == OpKind::CallModule) {
    // Why a block is one box with nothing inside, and why Depth cannot open it (issue 57, J).
    s += "a leaf: torch.fx calls this module whole, as a torch.nn module, and does not trace into it; "
         "its insides are not part of the graph\n";
  }
  if (!m.fxDifference.empty()) s += "not torch.fx's graph here: " + m.fxDifference + "\n";
  if (!m.sourceFile.empty()) s += "source: " + m.sourceFile + ":" + std::to_string(m.sourceLine) + "\n";
  if (!m.sourceText.empty()) s += "  " + m.sourceText + "\n";
  if (!m.schema.empty()) s += "schema: " + m.schema + "\n";
  for (const TensorMeta& t : recordedOutputs(n, run)) s += "output: " + formatTensorMeta(t) + "\n";
  if (const double seconds = run ? run->secondsOf(n) : m.seconds; seconds >= 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "time in the last run: %.3f ms\n", seconds * 1e3);
    s += buf;
  }
  if (auto line = code.nodeLines.find(n.name()); line != code.nodeLines.end())
    s += "code line " + std::to_string(line->second) + ": " + statementText(code, n.name()) + "\n";
  return s;
}

namespace {

QString link(const QString& href, const QString& text) {
  return QStringLiteral("<a href=\"%1\">%2</a>").arg(href.toHtmlEscaped(), text.toHtmlEscaped());
}

// "%name" references in printed args, each a link to its node.
QString linkNodeRefs(const QString& text) {
  static const QRegularExpression ref(QStringLiteral("%([A-Za-z_][A-Za-z0-9_]*)"));
  QString out;
  qsizetype at = 0;
  for (auto it = ref.globalMatch(text); it.hasNext();) {
    const auto m = it.next();
    out += text.mid(at, m.capturedStart() - at).toHtmlEscaped();
    out += link(QStringLiteral("node:") + m.captured(1), m.captured(0));
    at = m.capturedEnd();
  }
  return out + text.mid(at).toHtmlEscaped();
}

QString bytesText(double bytes) {
  if (bytes >= 1 << 20) return QStringLiteral("%1 MiB").arg(bytes / (1 << 20), 0, 'f', 1);
  if (bytes >= 1 << 10) return QStringLiteral("%1 KiB").arg(bytes / (1 << 10), 0, 'f', 1);
  return QStringLiteral("%1 bytes").arg(bytes);
}

}  // namespace

QString describeNodeHtml(const Node& node, const PythonCode& code, const RunOverlay* run, const ParameterStatsMap* stats) {
  const auto line = code.nodeLines.find(node.name());
  const QString codeLine = line == code.nodeLines.end() ? QString() : QStringLiteral("code:%1").arg(line->second);
  QStringList out;
  for (const QString& text : QString::fromStdString(describeNode(node, code, run, stats)).split('\n', Qt::SkipEmptyParts)) {
    if (text.startsWith(QStringLiteral("args: ")) || text.startsWith(QStringLiteral("kwargs:"))) {
      out << linkNodeRefs(text);
    } else if (text.startsWith(QStringLiteral("users:"))) {
      QString users = QStringLiteral("users:");
      for (const Node* u : node.users()) users += " " + link(QStringLiteral("node:") + QString::fromStdString(u->name()), QString::fromStdString(u->name()));
      out << users;
    } else if (text.startsWith(QStringLiteral("module: ")) && !node.meta().modulePath.empty()) {
      const QString path = QString::fromStdString(node.meta().modulePath);
      out << QStringLiteral("module: ") + link(QStringLiteral("scope:") + path, path) +
                 text.mid(8 + path.size()).toHtmlEscaped();
    } else if ((text.startsWith(QStringLiteral("code line ")) || text.startsWith(QStringLiteral("source: "))) &&
               !codeLine.isEmpty()) {
      const qsizetype colon = text.indexOf(QStringLiteral(": "));
      out << link(codeLine, text.left(colon)) + text.mid(colon).toHtmlEscaped();
    } else {
      out << text.toHtmlEscaped();
    }
  }
  return QStringLiteral("<div style=\"white-space: pre-wrap\">") + out.join(QStringLiteral("<br>")) + QStringLiteral("</div>");
}

QString describeScope(const ViewNode& scope, const Graph& graph, const std::map<std::string, std::string>& scopeTypes,
                      const RunOverlay* run) {
  std::unordered_map<std::string, const Node*> byName;
  for (const auto& n : graph.nodes()) byName.emplace(n->name(), n.get());
  std::set<const Node*> inside;
  for (const std::string& name : scope.irNodes)
    if (auto it = byName.find(name); it != byName.end()) inside.insert(it->second);
  int64_t values = 0;
  double bytes = 0;
  std::map<std::string, int> types;
  std::set<const Node*> entering;
  QStringList outputs;
  for (const Node* n : inside) {
    for (const ParameterInfo& p : n->meta().parameters) {
      int64_t count = 1;
      for (int64_t d : p.shape) count *= d;
      values += count;
      if (p.dtype != c10::ScalarType::Undefined) bytes += static_cast<double>(count) * static_cast<double>(c10::elementSize(p.dtype));
    }
    if (n->op() == OpKind::CallModule) {
      const std::string& type = n->meta().moduleType;
      ++types[type.substr(type.rfind('.') + 1)];
    }
    for (const Node* u : n->users())
      if (!inside.count(u)) {  // a value leaving the scope
        outputs << QString::fromStdString(n->name()) + ": " + firstShape(*n, run);
        break;
      }
  }
  for (const auto& other : graph.nodes())
    if (!inside.count(other.get()))
      for (const Node* u : other->users())
        if (inside.count(u)) entering.insert(other.get());
  QStringList inputs;
  for (const Node* n : entering)
    inputs << QString::fromStdString(n->name()) + ": " + firstShape(*n, run);
  QStringList children;
  for (const auto& [type, count] : types) children << QStringLiteral("%1 \u00d7%2").arg(QString::fromStdString(type)).arg(count);
  const auto type = scopeTypes.find(scope.scope);
  QString text = QObject::tr("module scope %1 (collapsed; double-click to expand)\n").arg(QString::fromStdString(scope.scope));
  if (type != scopeTypes.end()) text += QObject::tr("type: %1\n").arg(QString::fromStdString(type->second));
  text += QObject::tr("%1 node(s) inside\n").arg(scope.irNodes.size());
  text += QObject::tr("parameters and buffers: %1 values, %2\n").arg(values).arg(bytesText(bytes));
  if (!inputs.isEmpty()) text += QObject::tr("inputs:\n  %1\n").arg(inputs.join(QStringLiteral("\n  ")));
  if (!outputs.isEmpty()) text += QObject::tr("outputs:\n  %1\n").arg(outputs.join(QStringLiteral("\n  ")));
  if (!children.isEmpty()) text += QObject::tr("modules inside: %1\n").arg(children.join(QStringLiteral(", ")));
  return text;
}

namespace {

QString shapesText(const std::vector<TensorMeta>& metas) {
  QStringList parts;
  for (const TensorMeta& t : metas) parts << QString::fromStdString(formatTensorMeta(t));
  return parts.join(QStringLiteral(", "));
}

// The IR nodes a shape node folds: "getattr_1, getitem, floordiv, mul".
QString shapeNodeList(const ViewNode& v) {
  QStringList names;
  for (const std::string& n : v.irNodes) names << QString::fromStdString(n);
  return names.join(QStringLiteral(", "));
}

QString cardRow(const QString& label, const QString& text) {
  return QStringLiteral("<tr><td style=\"color:gray; padding-right:8px\">%1</td><td>%2</td></tr>").arg(label, text.toHtmlEscaped());
}

}  // namespace

QString hoverCardHtml(const ModelSession& session, const QString& id) {
  const Graph& g = session.graph();
  const RunOverlay* run = session.run.get();
  QString rows;
  QString title = id.toHtmlEscaped();
  if (const Node* node = g.findNode(id.toStdString())) {
    rows += cardRow(QObject::tr("op"), QStringLiteral("%1 %2").arg(opKindName(node->op()), QString::fromStdString(printedTarget(*node))));
    QStringList in;
    std::set<const Node*> seen;
    for (const Argument& a : node->args())
      forEachNode(a, [&](const Node* producer) {
        if (!seen.insert(producer).second) return;
        const QString shapes = shapesText(recordedOutputs(*producer, run));
        const QString name = QString::fromStdString(producer->name());
        in << (shapes.isEmpty() ? name : QStringLiteral("%1: %2").arg(name, shapes));  // shapes known after a run
      });
    if (!in.isEmpty()) rows += cardRow(QObject::tr("in"), in.join(QStringLiteral("; ")));
    const QString out = shapesText(recordedOutputs(*node, run));
    rows += cardRow(QObject::tr("out"), out.isEmpty() ? QObject::tr("shapes after a run (Verify)") : out);
    const NodeMeta& m = node->meta();
    if (!m.modulePath.empty()) rows += cardRow(QObject::tr("module"), QString::fromStdString(m.modulePath + " (" + m.moduleType + ")"));
    for (const ParameterInfo& p : m.parameters)
      rows += cardRow(QObject::tr(p.isBuffer ? "buffer" : p.isPacked ? "packed weight" : "parameter"),
                      QString::fromStdString(p.name + ": " + formatTensorMeta(TensorMeta{p.shape, p.dtype})));
    if (!m.sourceFile.empty()) {
      QString source = QStringLiteral("%1:%2").arg(QString::fromStdString(m.sourceFile)).arg(m.sourceLine);
      if (!m.sourceText.empty()) source += QStringLiteral("  ") + QString::fromStdString(m.sourceText).trimmed();
      rows += cardRow(QObject::tr("source"), source);
    }
  } else if (const ViewNode* v = session.view.findNode(id.toStdString())) {
    if (v->kind == ViewNode::Kind::Collapsed) {
      const auto type = session.traced.traced.scopeTypes.find(v->scope);
      title = QString::fromStdString(v->scope).toHtmlEscaped();
      if (type != session.traced.traced.scopeTypes.end()) rows += cardRow(QObject::tr("module"), QString::fromStdString(type->second));
      rows += cardRow(QObject::tr("inside"), QObject::tr("%1 node(s); double-click to expand").arg(v->irNodes.size()));
    } else if (v->kind == ViewNode::Kind::Key) {
      rows += cardRow(QObject::tr("key"), QString::fromStdString(v->lines.empty() ? v->id : v->lines[0]));
    } else if (v->kind == ViewNode::Kind::Shape) {
      title = QObject::tr("shape arithmetic");
      rows += cardRow(QObject::tr("inside"), QObject::tr("%1; double-click to expand").arg(shapeNodeList(*v)));
    }
  } else {
    return {};
  }
  return QStringLiteral("<b>%1</b><table cellspacing=0 cellpadding=0>%2</table>").arg(title, rows);
}

void inspectViewNode(QTextBrowser* inspector, const ModelSession& session, const QString& id) {
  const Graph& g = session.graph();
  if (const Node* node = g.findNode(id.toStdString())) {
    inspector->setHtml(describeNodeHtml(*node, session.traced.code, session.run.get(), &session.stats));
    return;
  }
  const ViewNode* v = session.view.findNode(id.toStdString());
  QString text = id;
  if (v && v->kind == ViewNode::Kind::Collapsed)
    text = describeScope(*v, g, session.traced.traced.scopeTypes, session.run.get());
  else if (v && v->kind == ViewNode::Kind::Shape)
    text = QObject::tr("Shape arithmetic: the size computations this node's user reads, folded (%1). Double-click, or "
                       "right-click > Expand shape arithmetic, to draw them; View > Show shape arithmetic draws them all.")
               .arg(shapeNodeList(*v));
  else if (v && v->kind == ViewNode::Kind::Key)
    text = QObject::tr("tensordict key %1 (written by the module)").arg(QString::fromStdString(v->lines.empty() ? v->id : v->lines[0]));
  inspector->setPlainText(text);
}

}  // namespace tdfx::ui
