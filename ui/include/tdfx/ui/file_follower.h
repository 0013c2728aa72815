#pragma once
// Follows one file on disk: says when it changed and has settled. Saves are often a write followed
// by a rename (which replaces the watched file), or several writes: the follower watches the file
// and its folder, and reports only once the file's size and time stayed the same for a while.
#include <QDateTime>
#include <QFileSystemWatcher>
#include <QObject>
#include <QTimer>

namespace tdfx::ui {

class FileFollower : public QObject {
  Q_OBJECT
 public:
  explicit FileFollower(QObject* parent = nullptr);
  /// Follows `path` from now on (its present state is the one already seen); "" stops.
  void follow(const QString& path);
  QString path() const { return path_; }
  /// How long the file must stay unchanged before settled() (default 300 ms).
  void setQuietMs(int ms) { quiet_.setInterval(ms); }

 Q_SIGNALS:
  /// The file differs from the state last seen, and has stopped changing.
  void settled(const QString& path);

 private:
  struct Stamp {
    bool exists = false;
    qint64 size = -1;
    QDateTime modified;
    bool operator==(const Stamp& o) const { return exists == o.exists && size == o.size && modified == o.modified; }
  };
  Stamp stamp() const;
  void touched();
  void check();

  QFileSystemWatcher watcher_;
  QTimer quiet_;
  QString path_;
  Stamp seen_;     ///< the state last reported (or when following began)
  Stamp pending_;  ///< the state at the last check
};

}  // namespace tdfx::ui
