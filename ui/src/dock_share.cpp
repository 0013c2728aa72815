#include "dock_share.h"

#include <QAction>
#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QSet>
#include <algorithm>
#include <cmath>

namespace tdfx::ui {

DockShare::DockShare(QMainWindow* window, QWidget* graph) : QObject(window), window_(window), graph_(graph) {}

bool DockShare::beside(QDockWidget* dock) const {
  const Qt::DockWidgetArea area = window_->dockWidgetArea(dock);
  return area == Qt::LeftDockWidgetArea || area == Qt::RightDockWidgetArea;
}

int DockShare::sizeOf(QDockWidget* dock) const { return beside(dock) ? dock->width() : dock->height(); }

bool DockShare::eventFilter(QObject* watched, QEvent* event) {
  // Not while the docks of that side are shrunk for the graph: Qt's layout settles them late.
  if (event->type() == QEvent::Resize && !resizing_ && window_->size() == windowSize_)
    if (auto* dock = qobject_cast<QDockWidget*>(watched); dock && dock->isVisible() && !dock->isFloating())
      if (!(beside(dock) ? shrunkAcross_ : shrunkBelow_)) wanted_[dock] = sizeOf(dock);
  return QObject::eventFilter(watched, event);
}

void DockShare::foldBelow(QDockWidget* dock, int height) {
  foldable_ = dock;
  foldHeight_ = height;
  // The user's own choice through View > Panels: shown while small, it stays; hidden, it stays so.
  connect(dock->toggleViewAction(), &QAction::triggered, this, [this](bool shown) {
    folded_ = false;
    userKept_ = shown && window_->height() < foldHeight_;
  });
}

void DockShare::unfold() {
  if (!folded_) return;
  folded_ = false;
  userKept_ = true;  // until the window is large again
  foldable_->show();
}

void DockShare::apply() {
  if (foldable_) {
    // Verify's inputs, options and results took half a 710x444 window; folded there, the graph has it.
    const bool small = window_->height() < foldHeight_;
    if (small && !folded_ && !userKept_ && !foldable_->isHidden()) {
      folded_ = true;
      foldable_->hide();
    } else if (!small) {
      userKept_ = false;
      if (folded_) {
        folded_ = false;
        foldable_->show();
      }
    }
  }
  QList<QDockWidget*> across, below;
  QSet<Qt::DockWidgetArea> areasSeen;
  for (QDockWidget* dock : window_->findChildren<QDockWidget*>(Qt::FindDirectChildrenOnly)) {
    if (!wanted_.contains(dock)) {
      dock->installEventFilter(this);
      wanted_[dock] = sizeOf(dock);  // as first laid out
    }
    if (dock->isHidden() || dock->isFloating()) continue;
    const Qt::DockWidgetArea area = window_->dockWidgetArea(dock);
    if (areasSeen.contains(area)) continue;  // docks stacked or tabbed in one area share its size
    areasSeen.insert(area);
    (beside(dock) ? across : below) << dock;
  }
  share(across, graph_->width(), window_->width(), true);
  share(below, graph_->height(), window_->height(), false);
  windowSize_ = window_->size();
}

void DockShare::share(const QList<QDockWidget*>& docks, int graph, int window, bool across) {
  if (docks.isEmpty()) return;
  const int wantedGraph = static_cast<int>(kGraphShare * window) + 1;
  int total = 0, missing = 0;
  for (QDockWidget* dock : docks) {
    total += sizeOf(dock);
    missing += std::max(0, wanted_.value(dock) - sizeOf(dock));
  }
  QList<int> sizes;
  bool& shrunk = across ? shrunkAcross_ : shrunkBelow_;
  shrunk = graph < wantedGraph || missing > graph - wantedGraph;  // still short of what they want
  if (graph < wantedGraph) {
    // Too little for the graph: each dock gives up the same part of its size.
    if (total <= 0) return;
    const double keep = std::max(0.0, double(total - (wantedGraph - graph)) / total);
    for (QDockWidget* dock : docks) sizes << std::max(1, int(sizeOf(dock) * keep));
  } else if (missing > 0) {
    // Room to spare: the docks that shrank get back what they miss, in proportion, as far as it goes.
    const double give = std::min(1.0, double(graph - wantedGraph) / missing);
    if (give <= 0) return;
    for (QDockWidget* dock : docks)
      sizes << sizeOf(dock) + int(std::lround(give * std::max(0, wanted_.value(dock) - sizeOf(dock))));
  } else {
    return;
  }
  resizing_ = true;
  window_->resizeDocks(docks, sizes, across ? Qt::Horizontal : Qt::Vertical);
  resizing_ = false;
}

}  // namespace tdfx::ui
