#pragma once
// Follows one file on disk: says when it changed and has settled. Saves are often a write followed
// by a rename (which replaces the watched file), or several writes: the follower watches the file
// and its folder, and reports only once the file's identity (FileStamp) stayed the same for a while.
#include <QFileSystemWatcher>
#include <QObject>
#include <QTimer>

#include "tdfx/util/file_identity.h"

namespace tdfx::ui {

/// A file's state as the follower compares it: whether it exists, and which version it is
/// (device, inode, size, mtime and ctime: a `mv` or `cp -p` of a same-size file with the same mtime
/// is another version too).
struct FileStamp {
  bool exists = false;
  tdfx::FileIdentity identity;
  bool operator==(const FileStamp& o) const { return exists == o.exists && (!exists || identity == o.identity); }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }
  /// The state of `path` now.
  static FileStamp of(const QString& path);
};

class FileFollower : public QObject {
  Q_OBJECT
 public:
  explicit FileFollower(QObject* parent = nullptr);
  /// Follows `path` from now on (its present state is the one already seen); "" stops.
  void follow(const QString& path);
  /// Follows `path` with `seen` as the state already seen (the version a load read): when the
  /// file is in another state already, settled() comes once it is quiet.
  void follow(const QString& path, const FileStamp& seen);
  QString path() const { return path_; }
  /// How long the file must stay unchanged before settled() (default 300 ms).
  void setQuietMs(int ms) { quiet_.setInterval(ms); }

 Q_SIGNALS:
  /// The file differs from the state last seen, and has stopped changing.
  void settled(const QString& path);
  /// The file is gone (deleted, or moved away) and stayed so; settled() comes if it is back.
  void gone(const QString& path);

 private:
  using Stamp = FileStamp;
  Stamp stamp() const { return FileStamp::of(path_); }
  void touched();
  void check();

  /// After gone(): looks for the file once a second (a deleted folder drops out of the watcher, and
  /// one made again is not watched), until it is back.
  void lookForReturn();

  QFileSystemWatcher watcher_;
  QTimer quiet_;
  QTimer lookout_;
  QString path_;
  Stamp seen_;     ///< the state last reported (or when following began)
  Stamp pending_;  ///< the state at the last check
};

}  // namespace tdfx::ui
