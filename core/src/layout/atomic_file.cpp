// Writing a file so that it is either all there or not changed at all (exports, code, documents).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "tdfx/error.h"
#include "tdfx/layout/graphviz_layout.h"

namespace tdfx {

namespace {

// The mode the written file gets: an existing regular file's own (an export over a 0600 file stays
// 0600), else what a plain creat(path, 0666) gives under the process's umask. A link to a device
// or anything else that is not a regular file lends no mode: /dev/full's 0666 would make the
// export world-writable (issue 35, finding 3).
mode_t targetMode(const std::string& path, int tmpFd) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  struct stat tmp {};
  return ::fstat(tmpFd, &tmp) == 0 ? (tmp.st_mode & 07777) : 0644;  // created with 0666 & ~umask
}

// An unnamed file in `dir` (O_TMPFILE): until it is linked under its name it has none, so a
// signal or a crash mid-write leaves nothing behind. -1 where the file system cannot (then a named
// temporary file is used).
int unnamedFile(const std::string& dir) {
#ifdef O_TMPFILE
  return ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#else
  (void)dir;
  errno = EOPNOTSUPP;
  return -1;
#endif
}

// A temporary name next to `path` that no file has: "DIR/.tdfx-XXXXXX".
std::string freshName(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string name = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + ".tdfx-XXXXXX";
  static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device random;
  for (size_t i = name.size() - 6; i < name.size(); ++i) name[i] = digits[random() % 36];
  return name;
}

}  // namespace

void writeFileAtomically(const std::string& path, const std::string& bytes) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string tmp;  // the temporary file's name, while it has one
  int fd = unnamedFile(dir);
  if (fd < 0) {
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      tmp = freshName(path);
      fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);  // 0666 & ~umask, as creat
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) throw Error(path + ": cannot write in " + dir + ": " + std::strerror(errno));
  }
  const auto fail = [&](const std::string& what) {
    const int err = errno;
    ::close(fd);
    if (!tmp.empty()) ::unlink(tmp.c_str());
    throw Error(path + ": " + what + ": " + std::strerror(err));
  };
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write failed");
    written += static_cast<size_t>(n);
  }
  if (::fchmod(fd, targetMode(path, fd)) != 0 || ::fsync(fd) != 0) fail("write failed");
  if (tmp.empty()) {
    // Named only now, and only until the rename a moment later.
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    for (int attempt = 0; attempt < 100 && tmp.empty(); ++attempt) {
      const std::string name = freshName(path);
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) tmp = name;
      else if (errno != EEXIST) fail("cannot write in " + dir);
    }
    if (tmp.empty()) fail("cannot write in " + dir);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": write failed: " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot replace the file: " + std::strerror(err));
  }
}

}  // namespace tdfx
