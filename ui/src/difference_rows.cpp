#include "tdfx/ui/difference_rows.h"

#include <QHash>
#include <QObject>
#include <unordered_map>

namespace tdfx::ui {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// The module each node belongs to (a call_module node of layer2.1's conv2 belongs to layer2.1,
// beside the add and relu of that block), by node name.
class ModuleIndex {
 public:
  explicit ModuleIndex(const Graph& graph) {
    for (const auto& n : graph.nodes()) {
      std::string module = n->meta().modulePath;
      // A call_module node is its module's own: it belongs with its siblings, in the module calling it.
      if (n->op() == OpKind::CallModule && module == n->target()) {
        const size_t dot = module.rfind('.');
        module = dot == std::string::npos ? std::string() : module.substr(0, dot);
      }
      module_.emplace(n->name(), std::move(module));
    }
  }
  QString operator()(const std::string& name) const {
    const auto it = module_.find(name);
    return it == module_.end() ? QString() : q(it->second);
  }

 private:
  std::unordered_map<std::string, std::string> module_;
};

// A parameter's row belongs where the node using it does; one nobody uses, to its owner's parent
// ("layer2.1.conv2.weight" -> "layer2.1").
QString moduleOfParameter(const ModuleIndex& moduleOf, const ParameterChange& p) {
  if (!p.usedBy.empty()) return moduleOf(p.usedBy.front());
  QString path = q(p.name);
  for (int i = 0; i < 2 && !path.isEmpty(); ++i) path = path.contains('.') ? path.section('.', 0, -2) : QString();
  return path;
}

}  // namespace

QString groupTitle(const QString& group) { return group.isEmpty() ? QObject::tr("(top level)") : group; }

std::vector<DifferenceRow> differenceRows(const ModelDiff& diff, const Graph& a, const Graph& b) {
  using Kind = DifferenceRow::Kind;
  std::vector<DifferenceRow> rows;
  const ModuleIndex moduleOfA(a), moduleOfB(b);
  QHash<QString, QString> aToB, bToA;
  for (const auto& [x, y] : diff.matched) {
    aToB.insert(q(x), q(y));
    bToA.insert(q(y), q(x));
  }
  for (const DiffNode& n : diff.removed)
    rows.push_back({Kind::Node, QObject::tr("- node %1").arg(q(n.label())), moduleOfA(n.name), q(n.name), {}});
  for (const DiffNode& n : diff.added)
    rows.push_back({Kind::Node, QObject::tr("+ node %1").arg(q(n.label())), moduleOfB(n.name), {}, q(n.name)});
  for (const NodeChange& c : diff.changed)
    for (const NodeDifference& d : c.changes)
      rows.push_back({Kind::Node, QObject::tr("~ node %1: %2: %3 -> %4").arg(q(c.a.label()), q(d.what), q(d.a), q(d.b)),
                      moduleOfA(c.a.name), q(c.a.name), q(c.b.name)});
  for (const ParameterChange& p : diff.parameters) {
    if (p.kind == ParameterChange::Kind::Equal) continue;
    const QString kind = p.isBuffer ? QObject::tr("buffer") : QObject::tr("parameter");
    QString text;
    switch (p.kind) {
      case ParameterChange::Kind::Added: text = QObject::tr("+ %1 %2").arg(kind, q(p.name)); break;
      case ParameterChange::Kind::Removed: text = QObject::tr("- %1 %2").arg(kind, q(p.name)); break;
      case ParameterChange::Kind::ShapeChanged: text = QObject::tr("~ %1 %2: shape %3").arg(kind, q(p.name), q(p.detail)); break;
      case ParameterChange::Kind::NotCompared: text = QObject::tr("? %1 %2: %3").arg(kind, q(p.name), q(p.detail)); break;
      default:
        text = QObject::tr("~ %1 %2: values differ, max |delta| %3").arg(kind, q(p.name)).arg(p.maxAbsDiff, 0, 'g', 6);
    }
    // usedBy names B's nodes for an added parameter, A's otherwise.
    const bool onB = p.kind == ParameterChange::Kind::Added;
    const QString node = p.usedBy.empty() ? QString() : q(p.usedBy.front());
    const QString other = node.isEmpty() ? QString() : (onB ? bToA : aToB).value(node);
    rows.push_back({p.isBuffer ? Kind::Buffer : Kind::Parameter, text, moduleOfParameter(onB ? moduleOfB : moduleOfA, p),
                    onB ? other : node, onB ? node : other});
  }
  return rows;
}

}  // namespace tdfx::ui
