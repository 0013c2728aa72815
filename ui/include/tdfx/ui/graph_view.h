#pragma once
#include <QGraphicsView>

namespace tdfx::ui {

/// Zoom with the wheel or Ctrl+= / Ctrl+-, fit with F or Ctrl+0, pan by dragging or arrow keys.
class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(QWidget* parent = nullptr);
  void zoomBy(double factor);
  void fitAll();

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
};

}  // namespace tdfx::ui
