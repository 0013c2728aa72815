#pragma once
// The reader LibTorch's importer reads a model archive through: one descriptor, opened before any
// sandbox forbids opens. It can leave the bytes of the tensor records unread during a load and
// read them afterwards (deferred weights, tdfx/model/model_file.h).
#include <caffe2/serialize/read_adapter_interface.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "archive_directory.h"
#include "tdfx/util/file_identity.h"

namespace tdfx {

/// A read the importer asked for that the reader left for later: `size` bytes of the file at
/// `offset`, into `buffer` (a tensor record's storage, allocated by the importer).
struct DeferredRead {
  uint64_t offset = 0;
  void* buffer = nullptr;
  size_t size = 0;
  uint32_t crc32 = 0;  // the record's, from the central directory read at the open
};

class ArchiveReader : public caffe2::serialize::ReadAdapterInterface {
 public:
  /// Owns `fd` (closed when destroyed); `size` is the file's size when it was opened.
  ArchiveReader(int fd, size_t size);
  ~ArchiveReader() override;
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  size_t size() const override { return size_; }
  /// Fewer than `n` bytes when the file ended first (it shrank since it was opened). The record's
  /// name (the last argument) goes unused: a short read's error is the importer's, naming it.
  size_t read(uint64_t pos, void* buf, size_t n, const char* what) const override;

  /// The archive's tensor records (`<archive>/data/<N>`, stored), from its central directory:
  /// the only reads deferTensorReads may leave for later. Records whose spans are not sane (a
  /// shared or overflowing offset, bytes past the next record or into the directory) are not.
  /// An archive holding C++ class objects (`torch.classes`, in data.pkl) defers nothing: they
  /// unpickle themselves in native code, with their tensors' values.
  void setTensorRecords(const ArchiveDirectory& directory);
  /// Whether a load may leave reads for later (setTensorRecords found some, and no C++ class).
  bool canDefer() const;
  /// From now on, a read of exactly one tensor record's bytes is noted, not done: its buffer keeps
  /// whatever the allocator gave it.
  void deferTensorReads();
  /// Whether the file is still the one opened, unchanged: the same inode, size, modification and
  /// change times (a file rewritten in place keeps its inode).
  bool unchangedSinceOpen() const;
  /// Stops deferring; the reads noted since deferTensorReads.
  std::vector<DeferredRead> stopDeferring();

 private:
  bool pickleFreeOfCppClasses(const ArchiveRecord& r, uint64_t first, uint64_t end) const;

  struct TensorRecord {
    uint64_t firstDataOffset = 0;  // after a local header with this name and no extra field
    uint64_t lastDataOffset = 0;   // the latest start that still ends before the next record
    uint64_t size = 0;
    uint32_t crc32 = 0;
  };
  int fd_;
  size_t size_;
  std::optional<FileIdentity> opened_;
  std::map<uint64_t, TensorRecord> tensorRecords_;  // by the offset their bytes may start at
  mutable std::mutex mutex_;
  bool deferring_ = false;
  bool cppClasses_ = true;  // until data.pkl was read and holds none
  mutable std::vector<DeferredRead> deferred_;
};

}  // namespace tdfx
