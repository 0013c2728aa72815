#pragma once
// The window's history of selections: Back and Forward (Alt+Left, Alt+Right) step through the
// nodes the user selected. Plain logic with no widget, so it is tested without a window; the
// window asks it whether a selection is a new step and which entry to show.
#include <QObject>
#include <QStringList>
#include <functional>
#include <optional>

namespace tdfx::ui {

class SelectionHistory : public QObject {
  Q_OBJECT
 public:
  using Shown = std::function<QString(const QString& id)>;  ///< the view node drawing an id now
  using Drawn = std::function<bool(const QString& id)>;     ///< whether an entry can be shown now

  explicit SelectionHistory(QObject* parent = nullptr) : QObject(parent) {}

  /// The entry shown now ("" before any selection).
  QString current() const { return current_; }
  bool canGoBack() const { return !back_.isEmpty(); }
  bool canGoForward() const { return !forward_.isEmpty(); }
  /// A new model: no history.
  void clear();
  /// A node the picture selected. The user's choice is a new step (Forward is dropped). One the
  /// window makes while `revisiting` (a step back, the same node redrawn inside a collapsed module)
  /// is not, and keeps the node the user chose, so expanding the module again shows that node.
  /// An empty `id` is the user clearing the selection (a click on empty canvas, Esc): nothing is
  /// current, and Back returns to the node that was; while `revisiting`, the window redrawing.
  void selected(const QString& id, const Shown& shownAs);
  /// Whether a Revisiting lives: the selection changes now are the window's own.
  bool revisiting() const { return revisiting_; }
  /// Back (or Forward) to the nearest entry drawn now; the ones passed over on the way (inside a
  /// module collapsed since) stay, in order, for when they are drawn again. Returns the entry to
  /// show (now current), or nothing when none is drawn.
  std::optional<QString> step(bool back, const Drawn& drawn);

  /// While one lives, selections are the window's own, not the user's steps.
  class Revisiting {
   public:
    explicit Revisiting(SelectionHistory& h) : h_(h), was_(h.revisiting_) { h_.revisiting_ = true; }
    ~Revisiting() { h_.revisiting_ = was_; }
    Revisiting(const Revisiting&) = delete;
    Revisiting& operator=(const Revisiting&) = delete;

   private:
    SelectionHistory& h_;
    bool was_;
  };

 Q_SIGNALS:
  /// Whether Back and Forward have somewhere to go.
  void changed(bool canGoBack, bool canGoForward);

 private:
  void announce() { Q_EMIT changed(canGoBack(), canGoForward()); }
  QStringList back_, forward_;
  QString current_;
  bool revisiting_ = false;
};

}  // namespace tdfx::ui
