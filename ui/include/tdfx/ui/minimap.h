#pragma once
// The overview in the corner of the graph view: the whole scene small, with a frame around what
// the main view shows. Clicking or dragging in it moves the main view. Shown only while the graph
// is larger than the window (View > Overview hides it). A graph many times taller than wide is
// shown by its full width around the part in view, following it, instead of as a sliver.
#include <QGraphicsView>

namespace tdfx::ui {

class GraphView;

class Minimap : public QGraphicsView {
  Q_OBJECT
 public:
  /// A child of `main`'s viewport, drawing `main`'s scene.
  explicit Minimap(GraphView* main);
  /// Fits the scene, places the overview in the bottom-right corner, shows it when the main view
  /// does not show the whole scene, and redraws the frame.
  void refresh();
  /// The part of the scene the main view shows, in scene coordinates.
  QRectF visibleSceneRect() const;

 protected:
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  void placeInCorner();
  /// Whether the scene is a deep net's strip: then the overview shows its full width, not all of it.
  bool tall() const;

  GraphView* main_;
};

}  // namespace tdfx::ui
