#include "tdfx/ui/minimap.h"

#include "tdfx/ui/graph_view.h"

#include <QMouseEvent>
#include <QScrollBar>
#include <algorithm>
#include <cmath>

namespace tdfx::ui {

namespace {
constexpr int kMaxSide = 220;
constexpr int kMargin = 12;
constexpr double kTallAspect = 0.2;  // narrower than this (width / height): shown by its width
constexpr int kTallWidth = 110;
}  // namespace

Minimap::Minimap(GraphView* main) : QGraphicsView(main->viewport()), main_(main) {
  setScene(main->scene());
  setInteractive(false);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setFrameShape(QFrame::Box);
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Overview: click or drag to move the view"));
  // The overview is drawn small: no antialiasing, and text is skipped by the items' level of detail.
  setRenderHints({});
  setCacheMode(CacheBackground);
  setViewportUpdateMode(MinimalViewportUpdate);
  // Panning scrolls the viewport's children along with it: put the overview back in its corner
  // and move its frame (the fit of the scene in the overview does not change).
  const auto panned = [this] {
    if (!isVisible()) return;
    placeInCorner();
    viewport()->update();
  };
  connect(main->horizontalScrollBar(), &QScrollBar::valueChanged, this, panned);
  connect(main->verticalScrollBar(), &QScrollBar::valueChanged, this, panned);
  hide();
}

QRectF Minimap::visibleSceneRect() const { return main_->mapToScene(main_->viewport()->rect()).boundingRect(); }

void Minimap::refresh() {
  if (scene() != main_->scene()) setScene(main_->scene());
  const QRectF scene = main_->scene() ? main_->scene()->sceneRect() : QRectF();
  const bool wholeVisible = scene.isEmpty() || visibleSceneRect().contains(scene.adjusted(1, 1, -1, -1));
  if (wholeVisible || !main_->overviewEnabled()) {
    hide();
    return;
  }
  placeInCorner();
  if (!tall()) fitInView(scene, Qt::KeepAspectRatio);
  show();
  raise();
  viewport()->update();
}

bool Minimap::tall() const {
  const QRectF scene = main_->scene()->sceneRect();
  return scene.width() < kTallAspect * scene.height();
}

void Minimap::placeInCorner() {
  const QRectF scene = main_->scene()->sceneRect();
  const QRect area = main_->viewport()->rect();
  if (tall()) {
    // A deep net whole would be a strip a few pixels wide: show its full width instead, as tall as
    // the window allows, following the main view down the graph.
    const int w = std::max(40, std::min(kTallWidth, area.width() / 5));
    const int h = std::max(40, std::min(area.height() / 2, 2 * kMaxSide));  // in a small window, half its height
    setGeometry(area.right() - w - kMargin, area.bottom() - h - kMargin, w, h);
    const double s = (w - 4) / scene.width();
    setTransform(QTransform::fromScale(s, s));
    centerOn(visibleSceneRect().center());
    return;
  }
  const double aspect = scene.width() / scene.height();
  // In a small window the overview takes at most a quarter of the graph's width and a third of its
  // height (it covered a quarter of a 313x238 graph).
  const int side = std::max(50, std::min({kMaxSide, area.width() / 4, area.height() / 3}));
  const int w = aspect >= 1 ? side : std::max(40, int(side * aspect));
  const int h = aspect >= 1 ? std::max(40, int(side / aspect)) : side;
  setGeometry(area.right() - w - kMargin, area.bottom() - h - kMargin, w, h);
}

void Minimap::drawForeground(QPainter* painter, const QRectF&) {
  const double scale = transform().m11();
  if (!std::isfinite(scale) || scale <= 0) return;  // not fitted yet
  QPen pen(QColor("#D35400"));
  pen.setWidthF(2.0 / scale);  // two pixels wide at any scale
  painter->setPen(pen);
  painter->setBrush(QColor(211, 84, 0, 40));
  painter->drawRect(visibleSceneRect());
}

void Minimap::mousePressEvent(QMouseEvent* event) {
  main_->centerOn(mapToScene(event->position().toPoint()));
  main_->recentreSideways();  // what is there, in the middle of the free part: not under this overview
  viewport()->update();
}

void Minimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton) mousePressEvent(event);
}

void Minimap::wheelEvent(QWheelEvent* event) { event->accept(); }  // zooming belongs to the main view

}  // namespace tdfx::ui
