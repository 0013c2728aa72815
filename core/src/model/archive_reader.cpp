#include "archive_reader.h"

#include "tdfx/util/crash_stage.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

// `<archive>/data.pkl`: the pickle of the module's objects.
bool isDataPickle(const ArchiveRecord& r) {
  const std::string tail = "/data.pkl";
  return r.name.size() > tail.size() && r.name.compare(r.name.size() - tail.size(), tail.size(), tail) == 0 &&
         r.name.find('/') == r.name.size() - tail.size();
}

}  // namespace

// Whether data.pkl (stored, its bytes somewhere in [first, end)) names no C++ class: its objects'
// classes are written by their qualified names, `__torch__.torch.classes.quantized....` for those.
bool ArchiveReader::pickleFreeOfCppClasses(const ArchiveRecord& r, uint64_t first, uint64_t end) const {
  if (r.method != 0 || r.size > (uint64_t{64} << 20)) return false;  // compressed or huge: not looked at
  unsigned char header[kLocalHeaderBytes];
  const uint64_t headerAt = first - kLocalHeaderBytes - r.name.size();
  if (::pread(fd_, header, sizeof header, static_cast<off_t>(headerAt)) != static_cast<ssize_t>(sizeof header)) return false;
  const uint64_t extra = header[28] | (uint64_t{header[29]} << 8);
  const uint64_t at = first + extra;
  if (at > end || end - at < r.size) return false;
  std::string bytes(r.size, '\0');
  if (::pread(fd_, bytes.data(), bytes.size(), static_cast<off_t>(at)) != static_cast<ssize_t>(bytes.size())) return false;
  return bytes.find("torch.classes") == std::string::npos;
}

ArchiveReader::ArchiveReader(int fd, size_t size) : fd_(fd), size_(size), opened_(FileIdentity::ofDescriptor(fd)) {}

bool ArchiveReader::unchangedSinceOpen() const {
  const std::optional<FileIdentity> now = FileIdentity::ofDescriptor(fd_);
  return now && opened_ && *now == *opened_;
}

ArchiveReader::~ArchiveReader() { ::close(fd_); }

size_t ArchiveReader::read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const {
  if (std::strcmp(CrashStage::current(), stage::kImporter) == 0) plantedFault("importer");  // LibTorch's read, tdfx's code
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (deferring_ && n > 0) {
      auto it = tensorRecords_.upper_bound(pos);
      if (it != tensorRecords_.begin()) {
        --it;
        const TensorRecord& r = it->second;
        if (n == r.size && pos >= r.firstDataOffset && pos <= r.lastDataOffset) {
          deferred_.push_back({pos, buf, n, r.crc32});
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

void ArchiveReader::setTensorRecords(const ArchiveDirectory& directory) {
  std::lock_guard<std::mutex> lock(mutex_);
  tensorRecords_.clear();
  cppClasses_ = true;
  // A record's bytes follow its local header (30 bytes, its name, an extra field of unknown
  // length) and end before the next record's header, or the directory: only a read inside that
  // span is its own.
  std::vector<const ArchiveRecord*> inFile;
  for (const ArchiveRecord& r : directory.records) inFile.push_back(&r);
  std::sort(inFile.begin(), inFile.end(),
            [](const ArchiveRecord* a, const ArchiveRecord* b) { return a->localHeaderOffset < b->localHeaderOffset; });
  for (size_t i = 0; i < inFile.size(); ++i) {
    const ArchiveRecord& r = *inFile[i];
    const bool shared = (i > 0 && inFile[i - 1]->localHeaderOffset == r.localHeaderOffset) ||
                        (i + 1 < inFile.size() && inFile[i + 1]->localHeaderOffset == r.localHeaderOffset);
    uint64_t first = 0;
    if (shared || __builtin_add_overflow(r.localHeaderOffset, kLocalHeaderBytes + r.name.size(), &first)) continue;
    const uint64_t end = std::min(i + 1 < inFile.size() ? inFile[i + 1]->localHeaderOffset : directory.offset,
                                  std::min<uint64_t>(directory.offset, size_));
    if (end < first || end - first < r.size) continue;  // past the next record or the directory
    if (isTensorRecord(r)) tensorRecords_[first] = {first, end - r.size, r.size, r.crc32};
    if (isDataPickle(r)) cppClasses_ = !pickleFreeOfCppClasses(r, first, end);
  }
}

bool ArchiveReader::canDefer() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !tensorRecords_.empty() && !cppClasses_;
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
