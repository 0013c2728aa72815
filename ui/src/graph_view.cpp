#include "tdfx/ui/graph_view.h"

#include <QGraphicsItem>
#include <QKeyEvent>
#include <QLabel>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/minimap.h"

namespace tdfx::ui {

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
  setDragMode(ScrollHandDrag);
  setRenderHint(QPainter::Antialiasing);
  setTransformationAnchor(NoAnchor);  // zoomAround keeps the point that matters in place
  setViewportUpdateMode(SmartViewportUpdate);
  // Items never move once laid out: no BSP index maintenance cost, and one fewer save/restore per item.
  setOptimizationFlags(DontSavePainterState | DontAdjustForAntialiasing);
  setAcceptDrops(false);  // files dropped on the graph go to the window
  connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, &GraphView::viewMoved);
  connect(verticalScrollBar(), &QScrollBar::valueChanged, this, &GraphView::viewMoved);
}

void GraphView::scaleChanged() {
  // Antialiasing thousands of tiny shapes costs more than it shows: only when zoomed in enough.
  setRenderHint(QPainter::Antialiasing, transform().m11() >= 0.25);
  if (minimap_) minimap_->refresh();
  makeRoomForOverlays();
  placeLegend();  // a zoom that moves no scroll bar still moves the nodes under it
  Q_EMIT viewMoved();
}

void GraphView::setBackground(const QColor& base) {
  setBackgroundBrush(base);
  if (minimap_) {
    minimap_->setBackgroundBrush(base);
    minimap_->resetCachedContent();  // it caches its background
  }
  styleLegend();
}

void GraphView::styleLegend() {
  if (!legend_) return;
  const bool dark = backgroundBrush().style() != Qt::NoBrush && backgroundBrush().color().lightness() < 128;
  legend_->setStyleSheet(dark ? QStringLiteral("QLabel { background: rgba(30, 34, 40, 230); color: #E5E8EC; "
                                               "border: 1px solid #5D6D7E; padding: 3px; }")
                              : QStringLiteral("QLabel { background: rgba(255, 255, 255, 225); color: #222222; "
                                               "border: 1px solid #9AA5B1; padding: 3px; }"));
}

void GraphView::sceneChanged() {
  if (!minimap_ && scene()) {
    minimap_ = new Minimap(this);
    if (backgroundBrush().style() != Qt::NoBrush) minimap_->setBackgroundBrush(backgroundBrush());
  }
  if (minimap_) minimap_->refresh();
  makeRoomForOverlays();
  placeLegend();
}

namespace {
constexpr int kOverlayGap = 8;  // between an overlay and the window's edge, and the graph
}

int GraphView::legendRoom() const {
  // Room below the graph while the legend fits the window, shown or stepping aside for a node:
  // the room must not change as it does (the scroll bars would move, and the nodes under it).
  return legend_ && legendWanted_ && legendFits_ ? legend_->height() + 2 * kOverlayGap : 0;
}

QRect GraphView::legendGeometry() const { return legend_ && !legend_->isHidden() ? legend_->geometry() : QRect(); }

void GraphView::makeRoomForOverlays() {
  if (!scene()) return;
  const double s = transform().m11();
  const QRectF graph = scene()->sceneRect();
  if (!(s > 0) || graph.isEmpty()) return;
  const bool overview = minimap_ && !minimap_->isHidden();
  const double right = overview ? (viewport()->width() - minimap_->geometry().left() + kOverlayGap) / s : 0;
  const QRectF room = graph.adjusted(-sideRoomLeft_, 0, right + sideRoomRight_, legendRoom() / s);
  // Setting the same rect again would still recompute the scroll bars.
  if (room != sceneRect()) setSceneRect(room);
}

void GraphView::setOverviewEnabled(bool on) {
  overviewEnabled_ = on;
  sceneChanged();
}

void GraphView::setLegend(const QList<QPair<QString, QColor>>& entries) {
  if (!legend_) {
    legend_ = new QLabel(viewport());
    legend_->setTextFormat(Qt::RichText);
    legend_->setAttribute(Qt::WA_TransparentForMouseEvents);
    styleLegend();
    // Scrolling moves the viewport's children with the picture: put the legend back each time.
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, legend_, [this] { placeLegend(); });
    connect(verticalScrollBar(), &QScrollBar::valueChanged, legend_, [this] { placeLegend(); });
  }
  legendLabels_.clear();
  QString html = QStringLiteral("<table cellspacing=\"2\">");
  for (const auto& [label, colour] : entries) {
    legendLabels_ << label;
    html += QStringLiteral("<tr><td bgcolor=\"%1\" width=\"14\">&nbsp;</td><td>%2</td></tr>")
                .arg(colour.name(), label.toHtmlEscaped());
  }
  legend_->setText(html + QStringLiteral("</table>"));
  legend_->adjustSize();
  legendWanted_ = !entries.isEmpty();
  placeLegend();
  makeRoomForOverlays();
}

QStringList GraphView::legendLabels() const { return legendLabels_; }

void GraphView::placeLegend() {
  // Lower left: the overview has the lower right, and graphs start at the top.
  if (!legend_) return;
  // In a window too small for both, the graph goes first: the legend is a key, not content.
  const bool fits = 3 * legend_->height() <= viewport()->height() && 3 * legend_->width() <= viewport()->width();
  const QRect at(QPoint(kOverlayGap, viewport()->height() - legend_->height() - kOverlayGap), legend_->size());
  legend_->move(at.topLeft());
  // Nor does it cover a node: it steps aside while one is under it (a scrolled or zoomed view put
  // nodes under it at 710x444 and at 1400x900; issue 57's leftovers), and is back once they pass.
  bool overNode = false;
  if (scene() && legendWanted_ && fits)
    for (const QGraphicsItem* item : scene()->items(mapToScene(at).boundingRect(), Qt::IntersectsItemBoundingRect))
      if (!item->data(0).toString().isEmpty()) {
        overNode = true;
        break;
      }
  const bool roomChanged = fits != legendFits_;
  legendFits_ = fits;
  legend_->setVisible(legendWanted_ && fits && !overNode);
  if (roomChanged) makeRoomForOverlays();
}

void GraphView::resizeEvent(QResizeEvent* event) {
  // A fitted graph stays fitted as the window is resized (issue 36: back at full size from a
  // small window, the graph stayed at the small window's zoom). Any other zoom changes the scale,
  // which ends the fit.
  const Fit fitted = transform().m11() == fittedScale_ ? fitted_ : Fit::None;
  const double top = mapToScene(QPoint(0, 0)).y();
  QGraphicsView::resizeEvent(event);
  placeLegend();
  if (minimap_) minimap_->refresh();
  makeRoomForOverlays();
  // A pane squeezed to nothing (a splitter) has no scale to fit at: the fit waits for room.
  if (viewport()->width() <= 2 * kOverlayGap + 1 || viewport()->height() <= 2 * kOverlayGap + 1) return;
  if (fitted == Fit::Whole) fitAll();
  else if (fitted == Fit::Width) fitWidthFrom(top);
}

void GraphView::zoomBy(double factor) {
  const QRectF shown = mapToScene(viewport()->rect()).boundingRect();
  QPointF anchor = shown.center();
  if (scene())
    for (const QGraphicsItem* item : scene()->selectedItems())
      if (shown.contains(item->sceneBoundingRect().center())) anchor = item->sceneBoundingRect().center();
  zoomAround(factor, anchor);
}

void GraphView::zoomAround(double factor, const QPointF& anchor) {
  const double current = transform().m11();
  if ((current < 0.02 && factor < 1) || (current > 8 && factor > 1)) return;
  const QPointF before = mapFromScene(anchor);
  scale(factor, factor);
  // Scroll so that the anchor is back where it was on screen (as far as the scroll range allows).
  const QPointF moved = mapFromScene(anchor) - before;
  horizontalScrollBar()->setValue(horizontalScrollBar()->value() + static_cast<int>(std::lround(moved.x())));
  verticalScrollBar()->setValue(verticalScrollBar()->value() + static_cast<int>(std::lround(moved.y())));
  scaleChanged();
}

void GraphView::showItem(const QGraphicsItem* item) {
  if (!item) return;
  if (transform().m11() < kReadableScale) {
    const double s = kReadableScale / transform().m11();
    scale(s, s);
    scaleChanged();
  }
  centerOn(item);
  // Centred, it may still sit under the overview in a small window: then centre it in the free part.
  const QRect free = freeArea();
  const QRect at = mapFromScene(item->sceneBoundingRect()).boundingRect();
  if (minimap_ && !minimap_->isHidden() && at.intersects(minimap_->geometry()) && free.width() > at.width()) {
    const int shift = at.center().x() - free.center().x();
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() + shift);
  }
}

void GraphView::setZoom(double scale) {
  if (!(scale > 0)) return;
  const QPointF centre = mapToScene(viewport()->rect().center());
  resetTransform();
  QGraphicsView::scale(scale, scale);
  centerOn(centre);
  scaleChanged();
}

QRect GraphView::freeArea() const {
  QRect area = viewport()->rect();
  if (minimap_ && !minimap_->isHidden()) area.setRight(minimap_->geometry().left() - kOverlayGap);
  return area;
}

void GraphView::recentreSideways() {
  if (!scene()) return;
  const double s = transform().m11();
  const QRectF shown = mapToScene(viewport()->rect()).boundingRect();
  const QRectF band(scene()->sceneRect().left(), shown.top(), scene()->sceneRect().width(), shown.height());
  QRectF content;
  for (const QGraphicsItem* item : scene()->items(band, Qt::IntersectsItemBoundingRect))
    if (!item->data(0).toString().isEmpty()) content = content.united(item->sceneBoundingRect());  // nodes only
  const QRect free = freeArea();
  if (content.isEmpty() || !(s > 0) || content.width() * s > free.width()) return;
  // The view's centre that puts the content's centre in the middle of the free area; the view may
  // scroll past the graph's edge for it (a column at the graph's right edge, under the overview).
  const double centreX = content.center().x() - (free.center().x() - viewport()->rect().center().x()) / s;
  const double halfWidth = viewport()->width() / (2 * s);
  const QRectF graph = scene()->sceneRect();
  sideRoomLeft_ = std::max(sideRoomLeft_, graph.left() - (centreX - halfWidth));
  sideRoomRight_ = std::max(sideRoomRight_, centreX + halfWidth - graph.right());
  makeRoomForOverlays();
  centerOn(centreX, shown.center().y());
}

void GraphView::fitAll() {
  if (!scene() || scene()->sceneRect().isEmpty()) return scaleChanged();
  // The whole graph above the legend, which has the lower left corner (fitInView would put the
  // output of a small graph under it).
  const QRectF r = scene()->sceneRect();
  const double usableHeight = std::max(1, viewport()->height() - legendRoom() - 2 * kOverlayGap);
  const double s = std::min((viewport()->width() - 2 * kOverlayGap) / r.width(), usableHeight / r.height());
  sideRoomLeft_ = sideRoomRight_ = 0;
  resetTransform();
  scale(s, s);
  makeRoomForOverlays();  // the room below for the legend, so that the centre can sit above it
  centerOn(r.center().x(), r.center().y() + legendRoom() / (2 * s));
  scaleChanged();  // after centring: the overview asks whether all of the graph is in sight
  fitted_ = Fit::Whole, fittedScale_ = transform().m11();
}

bool GraphView::fitsByWidth() const {
  if (!scene() || viewport()->width() <= 0) return false;
  const QRectF r = scene()->sceneRect();
  const double whole = std::min(viewport()->width() / r.width(), viewport()->height() / r.height());
  return r.width() * whole < 0.25 * viewport()->width();  // fitted whole, it would fill under a quarter
}

void GraphView::fit() {
  if (!fitsByWidth()) return fitAll();
  fitWidthFrom(scene()->sceneRect().top());
}

void GraphView::fitWidthFrom(double top) {
  const QRectF r = scene()->sceneRect();
  const double s = std::min(1.0, viewport()->width() / r.width());
  sideRoomLeft_ = sideRoomRight_ = 0;
  resetTransform();
  scale(s, s);
  centerOn(r.center().x(), top + viewport()->height() / (2 * s));
  scaleChanged();
  fitted_ = Fit::Width, fittedScale_ = transform().m11();
}

void GraphView::showStart() {
  fitAll();
  // Below kReadableScale node labels are under 9 px (issue 57, K: swin_t opened at 0.5, text about 6 px).
  if (!scene() || transform().m11() >= kReadableScale) return;
  const QRectF r = scene()->sceneRect();
  const bool tall = r.height() >= r.width();
  // Fit the narrow side when that is readable, else the readable minimum; never above 100 %.
  const double across = tall ? viewport()->width() / r.width() : viewport()->height() / r.height();
  const double s = std::clamp(across, kReadableScale, 1.0);
  sideRoomLeft_ = sideRoomRight_ = 0;
  resetTransform();
  scale(s, s);
  const double halfW = viewport()->width() / (2 * s), halfH = viewport()->height() / (2 * s);
  // Where the graph starts: its first row of nodes (the input), centred, or from their left when
  // they are wider than the view. The rest of the top band can lie far to the side: Swin's first
  // stage starts at the right of the picture (the view showed the middle of the band, without the
  // input), maxvit_t's nested frames put six titles above its first node, and the FX style's row
  // of weights lies beside a tall chain (mobilenet_v3_small: the view sat on empty canvas, issue 57, D).
  QRectF band, firstRow;
  std::vector<QRectF> nodes;
  for (const QGraphicsItem* item : scene()->items(QRectF(r.left(), r.top(), r.width(), 2 * halfH), Qt::IntersectsItemBoundingRect))
    if (!item->data(0).toString().isEmpty()) nodes.push_back(item->sceneBoundingRect());  // nodes only
  double top = r.bottom();
  for (const QRectF& n : nodes) top = std::min(top, n.top());
  for (const QRectF& n : nodes)
    if (n.top() < top + n.height()) firstRow = firstRow.united(n);
  double x = tall ? r.center().x() : r.left() + halfW;
  if (!firstRow.isEmpty()) x = firstRow.width() > 2 * halfW ? firstRow.left() + halfW : firstRow.center().x();
  // From the top of the picture, or from a little above the first row when frame titles fill the top.
  const double y = firstRow.isEmpty() ? r.top() : std::max(r.top(), firstRow.top() - 40);
  centerOn(x, y + halfH);
  scaleChanged();
}

void GraphView::wheelEvent(QWheelEvent* event) {
  // As in Netron and most viewers: the wheel scrolls, Ctrl+wheel zooms (View > Wheel zooms: always).
  if (!wheelZooms_ && !(event->modifiers() & Qt::ControlModifier)) return QGraphicsView::wheelEvent(event);
  if (event->angleDelta().y() == 0) return;
  zoomAround(event->angleDelta().y() > 0 ? 1.15 : 1 / 1.15, mapToScene(event->position().toPoint()));
}

void GraphView::zoomToSelection() {
  if (!scene() || scene()->selectedItems().isEmpty()) return;
  const QGraphicsItem* item = scene()->selectedItems().first();
  const QRectF r = item->sceneBoundingRect();
  const QRect free = freeArea();
  // The node about a third of the free width (at most 300 %), so its edges stay in sight.
  const double s = std::clamp(std::min(free.width() / (3 * r.width()), free.height() / (6 * r.height())), kReadableScale, 3.0);
  setZoom(s);
  showItem(item);
}

void GraphView::keyPressEvent(QKeyEvent* event) {
  const bool ctrl = event->modifiers() & Qt::ControlModifier;
  if (event->key() == Qt::Key_Escape) return Q_EMIT escapePressed();
  // With a node selected, the arrow keys walk the graph (Netron's habit); without one they scroll.
  const bool arrow = event->key() == Qt::Key_Up || event->key() == Qt::Key_Down || event->key() == Qt::Key_Left ||
                     event->key() == Qt::Key_Right;
  if (arrow && event->modifiers() == Qt::NoModifier && scene())
    if (auto* graph = qobject_cast<GraphScene*>(scene()); graph && !graph->selectedNode().isEmpty()) {
      const QString next = graph->step(graph->selectedNode(), event->key());
      if (!next.isEmpty()) {
        graph->selectNode(next);
        ensureVisible(graph->nodeItem(next), 40, 40);
      }
      return;
    }
  if ((event->key() == Qt::Key_F && !ctrl) || (ctrl && event->key() == Qt::Key_0)) return fit();
  if (ctrl && (event->key() == Qt::Key_Equal || event->key() == Qt::Key_Plus)) return zoomBy(1.25);
  if (ctrl && event->key() == Qt::Key_Minus) return zoomBy(0.8);
  QGraphicsView::keyPressEvent(event);  // arrow keys scroll
  // A page down a graph lands on other columns: bring them into the middle of the free area.
  if (!ctrl && (event->key() == Qt::Key_PageDown || event->key() == Qt::Key_PageUp || event->key() == Qt::Key_Home ||
                event->key() == Qt::Key_End))
    recentreSideways();
}

}  // namespace tdfx::ui
