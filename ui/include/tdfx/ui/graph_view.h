#pragma once
#include <QGraphicsView>

class QLabel;

namespace tdfx::ui {

/// The graph: zoom with Ctrl+wheel or Ctrl+= / Ctrl+-, fit with F or Ctrl+0, pan by dragging, the
/// wheel or the arrow keys; with a node selected the arrow keys move the selection along the edges.
class Minimap;

class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(QWidget* parent = nullptr);
  /// The scale at and above which node labels are readable; going to a node zooms in to it.
  static constexpr double kReadableScale = 0.8;
  /// Zooms around the selected node when it is in sight (it stays where it is on screen), else
  /// around the view's centre.
  void zoomBy(double factor);
  /// Zooms so that scene point `anchor` stays at the same place in the window (wheel: the cursor).
  void zoomAround(double factor, const QPointF& anchor);
  /// Centres `item`, zooming in first when its label would be too small to read; never under the
  /// overview (then it is centred in the part of the window left of it).
  void showItem(const QGraphicsItem* item);
  /// Zoom to selection: the selected node large in the middle of the free area (nothing without one).
  void zoomToSelection();
  /// The wheel zooms (true, as before) or scrolls with Ctrl+wheel zooming (false, the default).
  void setWheelZooms(bool on) { wheelZooms_ = on; }
  bool wheelZooms() const { return wheelZooms_; }
  /// Sets the zoom to `scale` (1: 100 %), keeping the centre of the view where it is.
  void setZoom(double scale);
  /// Scrolls sideways so that the nodes in the rows in view are centred in the part of the window
  /// the overview leaves free (after a move down a graph whose columns change place: ViT's encoder
  /// sits right of its stem). Nothing moves when they are wider than that part.
  void recentreSideways();
  /// The part of the viewport the overview leaves free to the left of it (all of it when hidden).
  QRect freeArea() const;
  /// The whole graph in the window, however small.
  void fitAll();
  /// Fit (F, Ctrl+0): the whole graph, unless that would be a strip (a deep net is many times
  /// taller than wide): then the full width from the top, at most at 100 %.
  void fit();
  /// Whether fit() would show the width from the top rather than everything.
  bool fitsByWidth() const;
  /// The first view of a graph: all of it when that is readable, otherwise its start (top, or left
  /// for left-to-right graphs) at a readable scale, the overview showing where that is.
  void showStart();
  /// The overview in the corner (created with the view; shown when the graph is larger than the window).
  Minimap* minimap() const { return minimap_; }
  /// The legend in the view's lower left corner: what each colour means (hidden when empty, and
  /// while the view is under three times its size).
  void setLegend(const QList<QPair<QString, QColor>>& entries);
  QStringList legendLabels() const;
  /// Call after the scene's contents change.
  void sceneChanged();
  /// The legend's place in the viewport (empty when there is none).
  QRect legendGeometry() const;
  /// The theme's background for the picture, the overview and the legend (both stayed light in the
  /// dark theme: issue 57, L).
  void setBackground(const QColor& base);
  /// View > Overview: whether the overview may be shown at all.
  void setOverviewEnabled(bool on);
  bool overviewEnabled() const { return overviewEnabled_; }

 Q_SIGNALS:
  /// The part of the graph in view changed: scrolled or zoomed (compare keeps its panes together).
  void viewMoved();
  /// Esc in the graph (the window clears its search).
  void escapePressed();

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void scaleChanged();

  void placeLegend();
  /// The legend's height with its margin, in pixels (0 when hidden): fitted graphs stay above it.
  int legendRoom() const;
  /// The view scrolls past the graph by the overlays' size (the overview to the right, the legend
  /// below), so that nothing they cover is out of reach: the view's scene rect is the graph's
  /// grown by them, in scene units at the current zoom.
  void makeRoomForOverlays();

  /// The full width at a scale of at most 100 %, `top` (scene) at the top of the view.
  void fitWidthFrom(double top);
  /// The last fit (whole graph, or width from the top) and the scale it chose: while the scale is
  /// that, a resize fits again.
  enum class Fit { None, Whole, Width };
  Fit fitted_ = Fit::None;
  double fittedScale_ = 0;

  void styleLegend();  ///< the legend light or dark, after the background
  Minimap* minimap_ = nullptr;
  QLabel* legend_ = nullptr;
  QStringList legendLabels_;
  bool legendWanted_ = false;
  bool legendFits_ = false;  ///< the window is large enough for it (else hidden, and no room kept below)  ///< it has entries (it is hidden while the window is too small for it)
  bool overviewEnabled_ = true;
  /// Scene units the view may scroll past the graph's left and right edges, so that recentreSideways
  /// can put a column near an edge in the middle (a fit forgets them).
  double sideRoomLeft_ = 0, sideRoomRight_ = 0;
  bool wheelZooms_ = false;
};

}  // namespace tdfx::ui
