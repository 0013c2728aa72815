#include "tdfx/ui/file_follower.h"

#include <QFile>
#include <QFileInfo>

namespace tdfx::ui {

FileFollower::FileFollower(QObject* parent) : QObject(parent) {
  quiet_.setSingleShot(true);
  quiet_.setInterval(300);
  connect(&watcher_, &QFileSystemWatcher::fileChanged, this, &FileFollower::touched);
  connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, &FileFollower::touched);
  connect(&quiet_, &QTimer::timeout, this, &FileFollower::check);
  lookout_.setInterval(1000);
  connect(&lookout_, &QTimer::timeout, this, &FileFollower::lookForReturn);
}

void FileFollower::lookForReturn() {
  if (path_.isEmpty()) return lookout_.stop();
  const QString folder = QFileInfo(path_).absolutePath();
  if (QFileInfo::exists(folder) && !watcher_.directories().contains(folder)) watcher_.addPath(folder);
  if (!QFileInfo::exists(path_)) return;
  lookout_.stop();
  touched();  // back: reported once quiet, as any change
}

void FileFollower::follow(const QString& path) {
  if (!watcher_.files().isEmpty()) watcher_.removePaths(watcher_.files());
  if (!watcher_.directories().isEmpty()) watcher_.removePaths(watcher_.directories());
  quiet_.stop();
  lookout_.stop();
  path_ = path;
  if (path.isEmpty()) return;
  seen_ = pending_ = stamp();
  watcher_.addPath(QFileInfo(path).absolutePath());  // a rename over the file is seen here
  if (seen_.exists) watcher_.addPath(path);
}

FileStamp FileStamp::of(const QString& path) {
  const std::optional<FileIdentity> identity = FileIdentity::ofPath(QFile::encodeName(path).toStdString());
  if (!identity) return {};
  return {true, *identity};
}

void FileFollower::follow(const QString& path, const FileStamp& seen) {
  follow(path);
  if (path.isEmpty()) return;
  seen_ = seen;
  if (pending_ != seen_) quiet_.start();  // changed since that version was read: reported once quiet
}

void FileFollower::touched() {
  // A replaced file drops out of the watch list: watch the new one.
  if (!watcher_.files().contains(path_) && QFileInfo::exists(path_)) watcher_.addPath(path_);
  pending_ = stamp();
  quiet_.start();  // (re)started by every change: the check comes once the writes stop
}

void FileFollower::check() {
  const Stamp now = stamp();
  if (!(now == pending_)) {  // still being written
    pending_ = now;
    quiet_.start();
    return;
  }
  if (now == seen_) return;  // back as it was
  seen_ = now;
  // Gone for the whole quiet time: not the first half of a save by rename, which settles in it.
  if (!now.exists) {
    lookout_.start();
    Q_EMIT gone(path_);
  } else {
    Q_EMIT settled(path_);
  }
}

}  // namespace tdfx::ui
