#include "archive_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace tdfx {
namespace {

// `<archive>/data/<digits>`: where torch.jit.save writes the bytes of the tensors of data.pkl
// (parameters, buffers, tensor attributes). Constants (`constants/`) and every pickle and code
// record are read as they are asked for: the importer parses them at once.
bool isTensorRecord(const ArchiveRecord& r) {
  if (r.method != 0 || r.size != r.compressedSize || r.size == 0) return false;
  const size_t slash = r.name.rfind('/');
  if (slash == std::string::npos || slash + 1 == r.name.size()) return false;
  for (size_t i = slash + 1; i < r.name.size(); ++i)
    if (r.name[i] < '0' || r.name[i] > '9') return false;
  const std::string folder = "/data";
  return slash >= folder.size() && r.name.compare(slash - folder.size(), folder.size(), folder) == 0 &&
         r.name.find('/') == slash - folder.size();
}

constexpr uint64_t kLocalHeaderBytes = 30;

}  // namespace

ArchiveReader::ArchiveReader(int fd, size_t size) : fd_(fd), size_(size) {}

ArchiveReader::~ArchiveReader() { ::close(fd_); }

size_t ArchiveReader::read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (deferring_ && n > 0) {
      auto it = tensorRecords_.upper_bound(pos);
      if (it != tensorRecords_.begin()) {
        --it;
        const TensorRecord& r = it->second;
        if (n == r.size && pos >= r.firstDataOffset && pos <= r.lastDataOffset) {
          deferred_.push_back({pos, buf, n});
          return n;
        }
      }
    }
  }
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(pos + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // short: the file shrank since it was opened
    done += static_cast<size_t>(got);
  }
  return done;
}

void ArchiveReader::setTensorRecords(const std::vector<ArchiveRecord>& records) {
  std::lock_guard<std::mutex> lock(mutex_);
  tensorRecords_.clear();
  // A record's bytes follow its local header (30 bytes, its name, an extra field of unknown
  // length) and end before the next record's header: only a read inside that span is its own.
  std::vector<const ArchiveRecord*> inFile;
  for (const ArchiveRecord& r : records) inFile.push_back(&r);
  std::sort(inFile.begin(), inFile.end(),
            [](const ArchiveRecord* a, const ArchiveRecord* b) { return a->localHeaderOffset < b->localHeaderOffset; });
  for (size_t i = 0; i < inFile.size(); ++i) {
    const ArchiveRecord& r = *inFile[i];
    if (!isTensorRecord(r)) continue;
    const uint64_t first = r.localHeaderOffset + kLocalHeaderBytes + r.name.size();
    const uint64_t end = i + 1 < inFile.size() ? inFile[i + 1]->localHeaderOffset : size_;
    if (end < first || end - first < r.size) continue;  // overlapping records: read as asked
    tensorRecords_[first] = {first, end - r.size, r.size};
  }
}

void ArchiveReader::deferTensorReads() {
  std::lock_guard<std::mutex> lock(mutex_);
  deferring_ = true;
  deferred_.clear();
}

std::vector<DeferredRead> ArchiveReader::stopDeferring() {
  std::lock_guard<std::mutex> lock(mutex_);
  deferring_ = false;
  std::vector<DeferredRead> reads;
  reads.swap(deferred_);
  return reads;
}

}  // namespace tdfx
