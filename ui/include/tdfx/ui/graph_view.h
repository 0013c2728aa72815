#pragma once
#include <QGraphicsView>

namespace tdfx::ui {

/// The graph: zoom with the wheel or Ctrl+= / Ctrl+-, fit with F or Ctrl+0, pan by dragging or arrow keys.
class Minimap;

class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(QWidget* parent = nullptr);
  void zoomBy(double factor);
  void fitAll();
  /// The first view of a graph: all of it when that is readable, otherwise its start (top, or left
  /// for left-to-right graphs) at a readable scale, the overview showing where that is.
  void showStart();
  /// The overview in the corner (created with the view; shown when the graph is larger than the window).
  Minimap* minimap() const { return minimap_; }
  /// Call after the scene's contents change.
  void sceneChanged();
  /// View > Overview: whether the overview may be shown at all.
  void setOverviewEnabled(bool on);
  bool overviewEnabled() const { return overviewEnabled_; }

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void scaleChanged();

  Minimap* minimap_ = nullptr;
  bool overviewEnabled_ = true;
};

}  // namespace tdfx::ui
