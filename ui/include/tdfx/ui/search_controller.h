#pragma once
// The toolbar's search: the field (live as you type, debounced; Enter next, Shift+Enter previous),
// the ".*" toggle for regular expressions, and the match count beside them. It marks every match in
// the scene and walks them; after a compare or a reload, F3 with the field empty walks the changes.
// It knows the window only through the session it searches and the function that goes to a node,
// so it is tested without one.
#include <QObject>
#include <QStringList>
#include <functional>

class QAction;
class QLabel;
class QLineEdit;
class QTimer;
class QToolBar;

namespace tdfx::ui {

class GraphScene;
struct ModelSession;

class SearchController : public QObject {
  Q_OBJECT
 public:
  using Session = std::function<const ModelSession*()>;
  using Go = std::function<void(const QString& id)>;  ///< selects and centres a view node

  SearchController(GraphScene* scene, Session session, Go go, QWidget* parent);

  /// The field, the regex toggle and the count, added to `toolbar`.
  void addTo(QToolBar* toolbar);
  QLineEdit* field() const { return field_; }
  QString countText() const;
  /// The view nodes matching the last search (or the changes F3 walks).
  QStringList matches() const { return matches_; }
  /// The matches drawn as search matches: none while F3 walks compared changes (compare marks them).
  QStringList searchMarks() const { return walkingChanges_ ? QStringList() : matches_; }

  /// The view nodes whose label, id, IR nodes, targets, op kinds, module types or keys contain
  /// `text` case-insensitively (or match it as a regular expression), in view order.
  static QStringList matchingNodes(const ModelSession& session, const QString& text, bool regex);

  /// Selects and centres the next (previous) match after the selection; its id, or "" for none.
  QString find(const QString& text, int direction);
  void setRegex(bool on);
  /// Empties the field and forgets the matches (another model, Esc).
  void clear();
  /// After a compare or a reload: F3 with the field empty walks `ids`; the count says `count`.
  void walk(const QStringList& ids, const QString& count = {});
  /// A new picture of the same model: the search's matches in it, or the changes still drawn.
  void redrawn();

 Q_SIGNALS:
  /// Enter found nothing for `text`.
  void noMatch(const QString& text);

 private:
  void searchLive();
  bool updateMatches(const QString& text);
  void forget();

  GraphScene* scene_;
  Session session_;
  Go go_;
  QLineEdit* field_;
  QLabel* count_;
  QTimer* timer_;
  QAction* regexAction_ = nullptr;
  bool regex_ = false;
  QStringList matches_;
  QString matchedText_;
  bool walkingChanges_ = false;  ///< F3 walks the compared changes (the field is empty)
};

}  // namespace tdfx::ui
