// MainWindow's picture of the open model: showing a layout, asking for a new one when the style,
// direction or hierarchy changes (laid out off the GUI thread by the Relayouter), and which view
// node shows an IR node.
#include <QGraphicsItem>
#include <QLineF>

#include "status_line.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "tdfx/ui/relayouter.h"
#include "tdfx/ui/search_controller.h"
#include "tdfx/ui/selection_history.h"
#include "view_toggles.h"

namespace tdfx::ui {

namespace {

// The node nearest the middle of what `view` shows ("" for none): where the view stays across a
// relayout with nothing selected.
QString nodeNearestTheMiddle(const GraphView& view) {
  if (!view.scene()) return {};
  const QRectF shown = view.mapToScene(view.viewport()->rect()).boundingRect();
  QString best;
  double bestDistance = 0;
  for (const QGraphicsItem* item : view.scene()->items(shown, Qt::IntersectsItemBoundingRect)) {
    const QString id = item->data(0).toString();  // nodes only
    if (id.isEmpty()) continue;
    const double d = QLineF(item->sceneBoundingRect().center(), shown.center()).length();
    if (best.isEmpty() || d < bestDistance) best = id, bestDistance = d;
  }
  return best;
}

}  // namespace

void MainWindow::showSession() {
  const QString selected = scene_->selectedNode();
  const SelectionHistory::Revisiting redrawn(*history_);  // the selection lost with the old items is not the user's
  scene_->showGraph(session_->view, session_->layout);
  view_->sceneChanged();
  search_->redrawn();
  applyOverlays();
  if (!selected.isEmpty() && scene_->nodeItem(selected)) scene_->selectNode(selected);
}

QString MainWindow::layoutNote() const {
  if (!session_ || session_->layoutNote.empty()) return {};
  return QStringLiteral("; ") + QString::fromStdString(session_->layoutNote);
}

void MainWindow::relayoutCurrent(const QString& selectAfter) {
  if (!session_) return;
  // Graphviz takes up to a second on big graphs: lay out on a worker, keep showing the old picture.
  ViewOptions options = options_;
  options.run = session_->run;  // the shapes of the last run, read by the job from its own copy
  status_->setText(tr("Laying out ..."));
  // With nothing selected, the view stays on what is in its middle (it went back to the top:
  // issue 57, G), as an IR node: the new picture may draw it inside a module or in another style.
  viewAnchor_.clear();
  if (scene_->selectedNode().isEmpty()) {
    const QString middle = nodeNearestTheMiddle(*view_);
    const ViewNode* v = session_->view.findNode(middle.toStdString());
    viewAnchor_ = v && !v->irNodes.empty() ? QString::fromStdString(v->irNodes.front()) : middle;
  }
  layouts_->request(session_, options, selectAfter);
}

void MainWindow::showLayout(std::shared_ptr<SessionLayout> layout, const QString& selectAfter) {
  if (!session_) return;
  const auto start = std::chrono::steady_clock::now();
  applyLayout(*session_, std::move(*layout));
  showSession();  // selects the node selected before, when it is still drawn
  // The view stays on what the user looks at: the node asked for, else the selection at the same
  // zoom; only a picture with neither starts again at the top.
  if (!selectAfter.isEmpty()) {
    selectAndCenter(shownAs(selectAfter));
  } else if (QGraphicsItem* selected = scene_->nodeItem(scene_->selectedNode())) {
    view_->centerOn(selected);
  } else if (QGraphicsItem* middle = viewAnchor_.isEmpty() ? nullptr : scene_->nodeItem(shownAs(viewAnchor_))) {
    view_->centerOn(middle);
  } else {
    view_->showStart();
  }
  showSelectionAfterRelayout();
  syncDepthBox();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  status_->setText(tr("%1 nodes, %2 edges; layout %3 ms, drawing %4 ms")
                       .arg(scene_->nodeCount())
                       .arg(scene_->edgeCount())
                       .arg(session_->layoutSeconds * 1e3, 0, 'f', 0)
                       .arg(ms, 0, 'f', 0) +
                   layoutNote());
  Q_EMIT viewChanged();
}

void MainWindow::syncDepthBox() {
  int deepest = 0;
  if (session_)
    for (const auto& [scope, depth] : allScopes(session_->graph())) deepest = std::max(deepest, depth);
  toggles_->reflectDepth(session_ ? session_->view.depth : 0, deepest);
}

QString MainWindow::viewIdOf(const QString& ir) const {
  return session_ ? QString::fromStdString(session_->viewIdOf(ir.toStdString())) : QString();
}

QSet<QString> MainWindow::viewIdsOf(const std::vector<std::string>& irNodes) const {
  QSet<QString> ids;
  if (!session_) return ids;
  for (const std::string& ir : irNodes)  // the session's index directly: no round trip through QString
    if (const std::string id = session_->viewIdOf(ir); !id.empty()) ids.insert(QString::fromStdString(id));
  return ids;
}

void MainWindow::setDepth(int depth) {
  options_.hierarchy.expandAll = false;
  options_.hierarchy.depth = depth;
  options_.hierarchy.expanded.clear();
  options_.hierarchy.collapsed.clear();
  toggles_->reflect(options_);
  relayoutCurrent();
}

void MainWindow::setExpandAll(bool on) {
  options_.hierarchy.expandAll = on;
  options_.hierarchy.expanded.clear();  // "expand all" also opens what was collapsed by hand
  options_.hierarchy.collapsed.clear();
  toggles_->reflect(options_);
  relayoutCurrent();
}

void MainWindow::setStyle(ViewStyle style) {
  options_.style = style;
  toggles_->reflect(options_);
  relayoutCurrent();
}

void MainWindow::setRankdir(const QString& rankdir) {
  options_.rankdir = rankdir == QStringLiteral("LR") ? "LR" : "TB";
  toggles_->reflect(options_);
  relayoutCurrent();
}

void MainWindow::expandScope(const QString& nodeId) {
  if (!session_) return;
  const ViewNode* v = session_->view.findNode(nodeId.toStdString());
  if (!v || (v->kind != ViewNode::Kind::Collapsed && v->kind != ViewNode::Kind::Shape)) return;
  options_.hierarchy.depth = session_->view.depth;  // keep the rest as it is
  // Show what opened: its first node.
  const QString first = v->irNodes.empty() ? QString() : QString::fromStdString(v->irNodes.front());
  if (v->kind == ViewNode::Kind::Shape) {  // a shape node opens into the size computations it holds
    options_.shapesExpanded.insert(v->id);
    return relayoutCurrent(first);
  }
  options_.hierarchy.collapsed.erase(v->scope);
  options_.hierarchy.expanded.insert(v->scope);
  relayoutCurrent(first);
}

void MainWindow::collapseScope(const QString& scope) {
  if (!session_ || scope.isEmpty()) return;
  options_.hierarchy.depth = session_->view.depth;
  if (options_.hierarchy.expandAll) {  // from "everything open", close just this one
    options_.hierarchy.expandAll = false;
    options_.hierarchy.depth = 1 << 20;
    toggles_->reflect(options_);
  }
  options_.hierarchy.expanded.erase(scope.toStdString());
  options_.hierarchy.collapsed.insert(scope.toStdString());
  // Show the collapsed module where the selection (the node right-clicked) was.
  const ViewNode* v = session_->view.findNode(scene_->selectedNode().toStdString());
  relayoutCurrent(v && !v->irNodes.empty() ? QString::fromStdString(v->irNodes.front()) : QString());
}

}  // namespace tdfx::ui
