// The comparison side by side. Each picture is the session's own layout; marks come from the diff's
// node names, mapped to what each picture shows (a node inside a collapsed module marks its box).
#include "tdfx/ui/compare_window.h"

#include <QGraphicsItem>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>
#include <deque>

#include "tdfx/ui/difference_rows.h"
#include "node_description.h"
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QMimeData>
#include "tdfx/ui/difference_list.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"

namespace tdfx::ui {

namespace {

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

// What each compare mark looks like, said the way the picture shows it (a fill and a badge).
QList<QPair<QString, QColor>> compareLegend(const GraphScene& scene) {
  static const std::pair<GraphScene::Mark, const char*> marks[] = {
      {GraphScene::DiffRemoved, QT_TR_NOOP("removed (red fill, \u2212)")},
      {GraphScene::DiffAdded, QT_TR_NOOP("added (green fill, +)")},
      {GraphScene::DiffChanged, QT_TR_NOOP("changed (violet fill, ~)")},
      {GraphScene::DiffWeights, QT_TR_NOOP("weights differ (blue fill, \u0394)")}};
  QList<QPair<QString, QColor>> legend;
  for (const auto& [mark, label] : marks)
    if (!scene.markedNodes(mark).isEmpty()) legend.append({QObject::tr(label), GraphScene::markColor(mark)});
  return legend;
}

CompareWindow::CompareWindow(std::shared_ptr<const ModelSession> a, std::shared_ptr<const ModelSession> b, ModelDiff diff,
                             const QString& nameA, const QString& nameB, QWidget* parent)
    : QWidget(parent, Qt::Window), diff_(std::move(diff)) {
  setWindowTitle(tr("Compare %1 with %2").arg(nameA, nameB));
  setObjectName(QStringLiteral("compareWindow"));
  sides_[0].session = std::move(a);
  sides_[1].session = std::move(b);
  for (const auto& [x, y] : diff_.matched) {
    sides_[0].partner.insert(q(x), q(y));
    sides_[1].partner.insert(q(y), q(x));
  }
  buildSide(sides_[0], diff_.marksA);
  buildSide(sides_[1], diff_.marksB);
  matchViewNodes(0);
  matchViewNodes(1);

  list_ = new DifferenceList(this);
  list_->setRows(differenceRows(diff_, sides_[0].session->graph(), sides_[1].session->graph()),
                 tr("identical: no node, parameter or buffer differs"));
  connect(list_, &DifferenceList::chosen, this, &CompareWindow::showDifference);
  connect(sceneA(), &GraphScene::nodeSelected, this, &CompareWindow::selectOnA);
  connect(sceneB(), &GraphScene::nodeSelected, this, &CompareWindow::selectOnB);
  connect(viewA(), &GraphView::viewMoved, this, [this] { keepTogether(0); });
  connect(viewB(), &GraphView::viewMoved, this, [this] { keepTogether(1); });

  auto* pictures = new QSplitter(Qt::Horizontal, this);
  const QString names[2] = {nameA, nameB};
  for (int i = 0; i < 2; ++i) {
    auto* pane = new QSplitter(Qt::Vertical, pictures);
    pane->addWidget(sides_[i].view);
    pane->addWidget(sides_[i].inspector);
    pane->setStretchFactor(0, 5);
    pane->setStretchFactor(1, 1);
    pictures->addWidget(titled(names[i], pane, pictures));
  }
  auto* all = new QSplitter(Qt::Vertical, this);
  all->addWidget(pictures);
  all->addWidget(list_);
  all->setStretchFactor(0, 3);
  all->setStretchFactor(1, 1);
  all->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(all);
  resize(1400, 900);
  all->setSizes({620, 240});  // the list: about ten rows, resizable
}

void CompareWindow::buildSide(Side& side, const DiffMarks& marks) {
  side.scene = new GraphScene(this);
  side.scene->showGraph(side.session->view, side.session->layout);
  side.scene->setHoverCards([session = side.session](const QString& id) { return hoverCardHtml(*session, id); });
  side.view = new GraphView(this);
  side.view->setScene(side.scene);
  side.inspector = new QTextBrowser(this);
  side.inspector->setOpenLinks(false);
  side.inspector->setPlaceholderText(tr("Click a node or a difference to see it here"));
  for (const ViewNode& n : side.session->view.nodes)
    for (const std::string& ir : n.irNodes) side.viewIdOfIr.insert(q(ir), q(n.id));
  const auto mark = [&side](const std::vector<std::string>& ir, GraphScene::Mark kind) {
    QSet<QString> ids;
    for (const std::string& name : ir)
      if (const QString id = side.viewIdOfIr.value(q(name)); !id.isEmpty()) ids.insert(id);
    side.scene->setMarked(ids, kind);
  };
  mark(marks.removed, GraphScene::DiffRemoved);
  mark(marks.added, GraphScene::DiffAdded);
  mark(marks.changed, GraphScene::DiffChanged);
  mark(marks.weights, GraphScene::DiffWeights);
  side.view->setLegend(compareLegend(*side.scene));
  side.view->sceneChanged();  // its overview
}

void CompareWindow::matchViewNodes(int from) {
  Side& here = sides_[from];
  const Side& there = sides_[1 - from];
  for (const ViewNode& v : here.session->view.nodes)
    for (const std::string& ir : v.irNodes)
      if (const QString p = here.partner.value(q(ir)); !p.isEmpty())
        if (const QString other = there.viewIdOfIr.value(p); !other.isEmpty()) {
          here.match.insert(q(v.id), other);
          break;
        }
}

void CompareWindow::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (shownOnce_) return;
  shownOnce_ = true;
  // Laid out now: open on the first difference, both panes there; with none, each graph's start.
  if (!list_->selectRow(0)) {
    syncing_ = true;
    viewA()->showStart();
    viewB()->showStart();
    syncing_ = false;
  }
}

void CompareWindow::showDifference(const QString& irA, const QString& irB) {
  syncing_ = true;
  const QString ir[2] = {irA, irB};
  QString id[2];
  for (int i = 0; i < 2; ++i) id[i] = ir[i].isEmpty() ? QString() : sides_[i].viewIdOfIr.value(ir[i]);
  // An added (or removed) node has no partner: the other side shows where it would be.
  for (int i = 0; i < 2; ++i)
    if (id[i].isEmpty() && !id[1 - i].isEmpty()) id[i] = anchorOnOtherSide(1 - i, id[1 - i]);
  for (int i = 0; i < 2; ++i) {
    sides_[i].scene->selectNode(id[i]);
    if (!id[i].isEmpty()) sides_[i].view->showItem(sides_[i].scene->nodeItem(id[i]));
    inspect(i, id[i]);
  }
  // One zoom for both, the larger (a node shown must stay readable on both sides).
  const double zoom = std::max(viewA()->transform().m11(), viewB()->transform().m11());
  for (int i = 0; i < 2; ++i)
    if (viewA()->transform().m11() != viewB()->transform().m11()) {
      sides_[i].view->setZoom(zoom);
      if (!id[i].isEmpty()) sides_[i].view->showItem(sides_[i].scene->nodeItem(id[i]));
    }
  syncing_ = false;
}

QString CompareWindow::anchorOnOtherSide(int from, const QString& id) const {
  const Side& here = sides_[from];
  // Breadth first through the producers: the nearest node before the block that both sides have.
  QHash<QString, QStringList> producers;
  for (const ViewEdge& e : here.session->view.edges) producers[q(e.to)] << q(e.from);
  std::deque<QString> queue{id};
  QSet<QString> seen{id};
  while (!queue.empty()) {
    const QString at = queue.front();
    queue.pop_front();
    if (at != id)
      if (const QString match = here.match.value(at); !match.isEmpty()) return match;
    for (const QString& p : producers.value(at))
      if (!seen.contains(p)) {
        seen.insert(p);
        queue.push_back(p);
      }
  }
  return {};
}

void CompareWindow::selectOnA(const QString& id) { follow(0, id); }
void CompareWindow::selectOnB(const QString& id) { follow(1, id); }

void CompareWindow::follow(int from, const QString& id) {
  if (syncing_) return;
  syncing_ = true;
  list_->clearSelection();  // the row no longer says what is selected
  inspect(from, id);
  Side& there = sides_[1 - from];
  QString other = sides_[from].match.value(id);
  if (other.isEmpty() && !id.isEmpty()) other = anchorOnOtherSide(from, id);
  there.scene->selectNode(other);
  if (!other.isEmpty()) showBeside(from, id, other);
  inspect(1 - from, other);
  syncing_ = false;
}

void CompareWindow::showBeside(int from, const QString& id, const QString& partner) {
  // The clicked node stays under the pointer; its partner goes to the same place in the other pane,
  // at the same zoom, so the two are read side by side (the other pane centred it, wherever the
  // clicked one was: issue 57's leftovers).
  GraphView* here = sides_[from].view;
  GraphView* there = sides_[1 - from].view;
  const QGraphicsItem* clicked = sides_[from].scene->nodeItem(id);
  const QGraphicsItem* item = sides_[1 - from].scene->nodeItem(partner);
  if (!item) return;
  const QRect shown = here->viewport()->rect();
  const QPointF at = clicked ? here->mapFromScene(clicked->sceneBoundingRect().center()) : QPointF();
  if (!clicked || !shown.contains(at.toPoint())) return there->showItem(item);
  if (there->transform().m11() != here->transform().m11()) there->setZoom(here->transform().m11());
  const double scale = there->transform().m11();
  there->centerOn(item->sceneBoundingRect().center() - (at - QPointF(shown.center())) / scale);
}

void CompareWindow::keepTogether(int from) {
  if (syncing_) return;
  syncing_ = true;
  GraphView* here = sides_[from].view;
  GraphView* there = sides_[1 - from].view;
  if (there->transform().m11() != here->transform().m11()) there->setZoom(here->transform().m11());
  // The node nearest the centre that the other side has too, put at the same place there.
  const QPointF centre = here->mapToScene(here->viewport()->rect().center());
  const QRectF shown = here->mapToScene(here->viewport()->rect()).boundingRect();
  double best = -1;
  QPointF from_, to_;
  for (const QGraphicsItem* item : sides_[from].scene->items(shown)) {
    const QString id = item->data(0).toString();
    if (id.isEmpty()) continue;
    const QString partner = sides_[from].match.value(id);
    const QGraphicsItem* other = partner.isEmpty() ? nullptr : sides_[1 - from].scene->nodeItem(partner);
    if (!other) continue;
    const double d = QLineF(item->sceneBoundingRect().center(), centre).length();
    if (best < 0 || d < best) {
      best = d;
      from_ = item->sceneBoundingRect().center();
      to_ = other->sceneBoundingRect().center();
    }
  }
  if (best >= 0) there->centerOn(to_ + (centre - from_));
  syncing_ = false;
}

void CompareWindow::inspect(int side, const QString& id) {
  if (id.isEmpty()) sides_[side].inspector->clear();
  else inspectViewNode(sides_[side].inspector, *sides_[side].session, id);
}

namespace {

// The one local file a drag carries, or "".
QString droppedFile(const QMimeData* mime) {
  const QList<QUrl> urls = mime->urls();
  if (urls.size() != 1 || !urls.first().isLocalFile() || !QFileInfo(urls.first().toLocalFile()).isFile()) return {};
  return urls.first().toLocalFile();
}

}  // namespace

void CompareWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedFile(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void CompareWindow::dropEvent(QDropEvent* event) {
  const QString path = droppedFile(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  // The side under the drop: B's pane and whatever lies right of its left edge.
  const QPoint at = event->position().toPoint();
  const int side = at.x() >= sides_[1].view->mapTo(this, QPoint(0, 0)).x() ? 1 : 0;
  Q_EMIT fileDropped(side, path);
}

}  // namespace tdfx::ui
