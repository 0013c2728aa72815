#pragma once
// Which version of a file is on disk: what serve's model cache, the GUI's follow-file and the
// deferred weights compare to tell a file they read from one rewritten since.
#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

namespace tdfx {

/// A file's device, inode, size, modification time and status-change time. The ctime is what
/// makes it hold: `touch -r`, `cp -p` and utime() put an old mtime back on new content, but any
/// write, rename or utime() itself sets the ctime to now, and no call sets it back.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  long long modifiedNs = 0;
  long long changedNs = 0;

  bool operator==(const FileIdentity& o) const {
    return device == o.device && inode == o.inode && size == o.size && modifiedNs == o.modifiedNs &&
           changedNs == o.changedNs;
  }
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }

  static FileIdentity of(const struct stat& st);
  /// The file `path` names now (following links); nothing when it cannot be stat'ed.
  static std::optional<FileIdentity> ofPath(const std::string& path);
  /// The file open as `fd`; nothing when fstat fails.
  static std::optional<FileIdentity> ofDescriptor(int fd);
};

}  // namespace tdfx
