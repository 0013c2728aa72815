#pragma once
// How the main window's room is shared between the graph and the docks around it, as the window is
// resized: the graph keeps at least half of it either way (the docks shrink in proportion to make
// it up), and growing the window gives each dock back the size it had (or the user gave it) before
// it had to shrink; the rest goes to the graph.
#include <QHash>
#include <QObject>
#include <QSize>

class QDockWidget;
class QMainWindow;

namespace tdfx::ui {

class DockShare : public QObject {
 public:
  /// Shares `window`'s room with `graph`, its central widget.
  DockShare(QMainWindow* window, QWidget* graph);
  /// After the window's size changed (its resizeEvent, after QMainWindow's own).
  void apply();
  /// `dock` is folded away (hidden) while the window is under `height` px tall, and comes back when
  /// it grows; shown by the user there (View > Panels), it stays.
  void foldBelow(QDockWidget* dock, int height);
  /// Brings a folded dock back (a verify run started from the menu shows its results).
  void unfold();
  bool folded() const { return folded_; }

 protected:
  /// A dock resized while the window kept its size (the user dragged a separator, or its content
  /// grew): that is the size it is given back.
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  static constexpr double kGraphShare = 0.5;
  /// The dock's size across its area: the width beside the graph, the height below it.
  int sizeOf(QDockWidget* dock) const;
  bool beside(QDockWidget* dock) const;
  /// Shrinks or grows `docks` (one per area, all beside or all below) so that the graph gets its
  /// share of `window` and the docks what they want of the rest.
  void share(const QList<QDockWidget*>& docks, int graph, int window, bool across);

  QMainWindow* window_;
  QWidget* graph_;
  QHash<QDockWidget*, int> wanted_;  ///< the size each dock is given back when there is room
  QSize windowSize_;                 ///< the window's size at the last apply()
  bool resizing_ = false;            ///< our own resizeDocks: not the user's choice
  bool shrunkAcross_ = false, shrunkBelow_ = false;  ///< docks that side smaller than they want
  QDockWidget* foldable_ = nullptr;  ///< foldBelow()'s dock
  int foldHeight_ = 0;
  bool folded_ = false;    ///< hidden by us, for the small window
  bool userKept_ = false;  ///< shown by the user while the window is small
};

}  // namespace tdfx::ui
