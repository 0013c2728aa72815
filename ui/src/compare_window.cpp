// The comparison side by side. Each picture is the session's own layout; marks come from the diff's
// node names, mapped to what each picture shows (a node inside a collapsed module marks its box).
#include "tdfx/ui/compare_window.h"

#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QVBoxLayout>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"

namespace tdfx::ui {

namespace {

constexpr int kRoleA = Qt::UserRole;      // IR node name on side A ("" for none)
constexpr int kRoleB = Qt::UserRole + 1;  // on side B

QString q(const std::string& s) { return QString::fromStdString(s); }

QWidget* titled(const QString& title, QWidget* body, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* label = new QLabel(title, box);
  label->setTextFormat(Qt::PlainText);  // file names are the user's, shown as text
  layout->addWidget(label);
  layout->addWidget(body, 1);
  return box;
}

}  // namespace

CompareWindow::CompareWindow(std::shared_ptr<const ModelSession> a, std::shared_ptr<const ModelSession> b, ModelDiff diff,
                             const QString& nameA, const QString& nameB, QWidget* parent)
    : QWidget(parent, Qt::Window), a_(std::move(a)), b_(std::move(b)), diff_(std::move(diff)) {
  setWindowTitle(tr("Compare %1 with %2").arg(nameA, nameB));
  setObjectName(QStringLiteral("compareWindow"));
  for (const auto& [x, y] : diff_.matched) {
    aToB_.insert(q(x), q(y));
    bToA_.insert(q(y), q(x));
  }
  sceneA_ = new GraphScene(this);
  sceneB_ = new GraphScene(this);
  sceneA_->showGraph(a_->view, a_->layout);
  sceneB_->showGraph(b_->view, b_->layout);
  viewA_ = new GraphView(this);
  viewB_ = new GraphView(this);
  viewA_->setScene(sceneA_);
  viewB_->setScene(sceneB_);
  mark(sceneA_, *a_, diff_.marksA.removed, GraphScene::DiffRemoved);
  mark(sceneA_, *a_, diff_.marksA.changed, GraphScene::DiffChanged);
  mark(sceneA_, *a_, diff_.marksA.weights, GraphScene::DiffWeights);
  mark(sceneB_, *b_, diff_.marksB.added, GraphScene::DiffAdded);
  mark(sceneB_, *b_, diff_.marksB.changed, GraphScene::DiffChanged);
  mark(sceneB_, *b_, diff_.marksB.weights, GraphScene::DiffWeights);
  const QList<QPair<QString, QColor>> legend{{tr("removed"), GraphScene::markColor(GraphScene::DiffRemoved)},
                                             {tr("added"), GraphScene::markColor(GraphScene::DiffAdded)},
                                             {tr("changed"), GraphScene::markColor(GraphScene::DiffChanged)},
                                             {tr("weights differ"), GraphScene::markColor(GraphScene::DiffWeights)}};
  viewA_->setLegend(legend);
  viewB_->setLegend(legend);

  list_ = new QListWidget(this);
  list_->setObjectName(QStringLiteral("differences"));
  for (const DiffNode& n : diff_.removed) addRow(tr("- node %1").arg(q(n.label())), n.name, "");
  for (const DiffNode& n : diff_.added) addRow(tr("+ node %1").arg(q(n.label())), "", n.name);
  for (const NodeChange& c : diff_.changed)
    for (const NodeDifference& d : c.changes)
      addRow(tr("~ node %1: %2: %3 -> %4").arg(q(c.a.label()), q(d.what), q(d.a), q(d.b)), c.a.name, c.b.name);
  for (const ParameterChange& p : diff_.parameters) {
    if (p.kind == ParameterChange::Kind::Equal) continue;
    const QString kind = p.isBuffer ? tr("buffer") : tr("parameter");
    QString text;
    switch (p.kind) {
      case ParameterChange::Kind::Added: text = tr("+ %1 %2").arg(kind, q(p.name)); break;
      case ParameterChange::Kind::Removed: text = tr("- %1 %2").arg(kind, q(p.name)); break;
      case ParameterChange::Kind::ShapeChanged: text = tr("~ %1 %2: shape %3").arg(kind, q(p.name), q(p.detail)); break;
      case ParameterChange::Kind::NotCompared: text = tr("? %1 %2: %3").arg(kind, q(p.name), q(p.detail)); break;
      default: text = tr("~ %1 %2: values differ, max |delta| %3").arg(kind, q(p.name)).arg(p.maxAbsDiff, 0, 'g', 6);
    }
    const std::string node = p.usedBy.empty() ? std::string() : p.usedBy.front();
    const bool onB = p.kind == ParameterChange::Kind::Added;
    std::string other;
    if (!node.empty()) other = (onB ? bToA_ : aToB_).value(q(node)).toStdString();
    addRow(text, onB ? other : node, onB ? node : other);
  }
  if (list_->count() == 0) list_->addItem(tr("identical: no node, parameter or buffer differs"));
  connect(list_, &QListWidget::currentRowChanged, this, &CompareWindow::showDifference);
  connect(sceneA_, &GraphScene::nodeSelected, this, &CompareWindow::selectOnA);
  connect(sceneB_, &GraphScene::nodeSelected, this, &CompareWindow::selectOnB);

  auto* pictures = new QSplitter(Qt::Horizontal, this);
  pictures->addWidget(titled(nameA, viewA_, pictures));
  pictures->addWidget(titled(nameB, viewB_, pictures));
  auto* all = new QSplitter(Qt::Vertical, this);
  all->addWidget(pictures);
  all->addWidget(titled(tr("%1 difference(s)").arg(diff_.identical() ? 0 : list_->count()), list_, all));
  all->setStretchFactor(0, 4);
  all->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(all);
  resize(1400, 850);
  viewA_->showStart();
  viewB_->showStart();
}

QString CompareWindow::viewIdOn(const ModelSession& session, const std::string& ir) const {
  for (const ViewNode& n : session.view.nodes)
    for (const std::string& i : n.irNodes)
      if (i == ir) return q(n.id);
  return {};
}

void CompareWindow::mark(GraphScene* scene, const ModelSession& session, const std::vector<std::string>& ir,
                         unsigned kind) {
  QSet<QString> ids;
  for (const std::string& name : ir)
    if (const QString id = viewIdOn(session, name); !id.isEmpty()) ids.insert(id);
  scene->setMarked(ids, static_cast<GraphScene::Mark>(kind));
}

void CompareWindow::addRow(const QString& text, const std::string& irA, const std::string& irB) {
  auto* item = new QListWidgetItem(text, list_);
  item->setData(kRoleA, q(irA));
  item->setData(kRoleB, q(irB));
}

void CompareWindow::showDifference(int row) {
  const QListWidgetItem* item = list_->item(row);
  if (!item) return;
  syncing_ = true;
  const auto go = [this](GraphScene* scene, GraphView* view, const ModelSession& session, const QString& ir) {
    const QString id = ir.isEmpty() ? QString() : viewIdOn(session, ir.toStdString());
    scene->selectNode(id);
    if (!id.isEmpty()) view->showItem(scene->nodeItem(id));
  };
  go(sceneA_, viewA_, *a_, item->data(kRoleA).toString());
  go(sceneB_, viewB_, *b_, item->data(kRoleB).toString());
  syncing_ = false;
}

void CompareWindow::selectOnA(const QString& id) { follow(*a_, id, aToB_, *b_, sceneB_, viewB_); }
void CompareWindow::selectOnB(const QString& id) { follow(*b_, id, bToA_, *a_, sceneA_, viewA_); }

void CompareWindow::follow(const ModelSession& from, const QString& id, const QHash<QString, QString>& partner,
                           const ModelSession& to, GraphScene* scene, GraphView* view) {
  if (syncing_ || id.isEmpty()) return;
  syncing_ = true;
  for (const ViewNode& n : from.view.nodes)
    if (q(n.id) == id && !n.irNodes.empty()) {
      const QString other = viewIdOn(to, partner.value(q(n.irNodes.front())).toStdString());
      scene->selectNode(other);
      if (!other.isEmpty()) view->showItem(scene->nodeItem(other));
    }
  syncing_ = false;
}

}  // namespace tdfx::ui
