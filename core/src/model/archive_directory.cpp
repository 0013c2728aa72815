#include "archive_directory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "tdfx/error.h"

namespace tdfx {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint64_t kMaxDirectoryBytes = uint64_t{64} << 20;  // ~700k entries: far past any model

uint64_t readLittleEndian(const std::string& bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

// "200 MiB" below a GiB, "3.0 GiB" from there.
std::string gib(uint64_t bytes) {
  char buf[32];
  if (bytes < (uint64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>((bytes + (1 << 20) - 1) >> 20));
  else std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
  return buf;
}

uint64_t halfOfPhysicalMemory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0) return uint64_t{8} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) / 2;
}

}  // namespace

ArchiveDirectory readArchiveDirectory(const std::string& path, uint64_t fileSize, const ArchiveRead& read) {
  const auto fail = [&path](const std::string& what) -> ModelFileError {
    return ModelFileError(path + ": cannot load as TorchScript: not a readable zip archive: " + what);
  };
  // The end record is 22 bytes plus a comment of at most 65535: search that tail from the end.
  const uint64_t tailSize = std::min<uint64_t>(fileSize, 22 + 65535 + 20);
  const std::string tail = read(fileSize - tailSize, tailSize);
  if (tail.size() < 22) throw fail("too short for a zip end record");
  size_t end = std::string::npos;
  for (size_t i = tail.size() - 22 + 1; i-- > 0;)
    if (readLittleEndian(tail, i, 4) == kEndOfDirectory) {
      end = i;
      break;
    }
  if (end == std::string::npos) throw fail("no end of central directory (truncated?)");
  uint64_t entries = readLittleEndian(tail, end + 10, 2);
  uint64_t directorySize = readLittleEndian(tail, end + 12, 4);
  uint64_t directoryOffset = readLittleEndian(tail, end + 16, 4);
  if (end >= 20 && readLittleEndian(tail, end - 20, 4) == kZip64Locator) {
    const uint64_t at = readLittleEndian(tail, end - 20 + 8, 8);
    if (at > fileSize || fileSize - at < 56) throw fail("zip64 end record outside the file");
    const std::string z = read(at, 56);
    if (z.size() < 56 || readLittleEndian(z, 0, 4) != kZip64EndOfDirectory) throw fail("bad zip64 end record");
    entries = readLittleEndian(z, 32, 8);
    directorySize = readLittleEndian(z, 40, 8);
    directoryOffset = readLittleEndian(z, 48, 8);
  }
  if (directoryOffset > fileSize || directorySize > fileSize - directoryOffset)
    throw fail("central directory outside the file");
  if (directorySize > kMaxDirectoryBytes) throw fail("central directory larger than 64 MiB");
  const std::string dir = read(directoryOffset, directorySize);
  if (dir.size() != directorySize) throw fail("cannot read the central directory");

  ArchiveDirectory directory;
  directory.offset = directoryOffset;
  std::vector<ArchiveRecord>& records = directory.records;
  size_t at = 0;
  for (uint64_t n = 0; n < entries; ++n) {
    if (dir.size() - at < 46 || readLittleEndian(dir, at, 4) != kDirectoryEntry)
      throw fail("central directory entry " + std::to_string(n) + " is malformed");
    ArchiveRecord r;
    r.method = static_cast<uint16_t>(readLittleEndian(dir, at + 10, 2));
    r.crc32 = static_cast<uint32_t>(readLittleEndian(dir, at + 16, 4));
    r.compressedSize = readLittleEndian(dir, at + 20, 4);
    r.size = readLittleEndian(dir, at + 24, 4);
    r.localHeaderOffset = readLittleEndian(dir, at + 42, 4);
    const size_t nameLength = readLittleEndian(dir, at + 28, 2), extraLength = readLittleEndian(dir, at + 30, 2),
                 commentLength = readLittleEndian(dir, at + 32, 2);
    if (dir.size() - at - 46 < nameLength + extraLength + commentLength)
      throw fail("central directory entry " + std::to_string(n) + " runs past the directory");
    r.name = dir.substr(at + 46, nameLength);
    // Zip64 sizes live in extra field 0x0001, in this order, for the fields that read 0xFFFFFFFF.
    for (size_t e = at + 46 + nameLength, stop = e + extraLength; e + 4 <= stop;) {
      const uint64_t id = readLittleEndian(dir, e, 2), length = readLittleEndian(dir, e + 2, 2);
      if (e + 4 + length > stop) break;
      if (id == 0x0001) {
        size_t field = e + 4;
        if (r.size == 0xFFFFFFFF && field + 8 <= e + 4 + length) r.size = readLittleEndian(dir, field, 8), field += 8;
        if (r.compressedSize == 0xFFFFFFFF && field + 8 <= e + 4 + length) r.compressedSize = readLittleEndian(dir, field, 8), field += 8;
        if (r.localHeaderOffset == 0xFFFFFFFF && field + 8 <= e + 4 + length) r.localHeaderOffset = readLittleEndian(dir, field, 8);
      }
      e += 4 + length;
    }
    records.push_back(std::move(r));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return directory;
}

ArchiveDirectory checkArchiveSizes(const std::string& path, uint64_t fileSize, const ArchiveRead& read,
                                   const ArchiveLimits& limits) {
  const uint64_t totalLimit = limits.totalBytes ? limits.totalBytes : halfOfPhysicalMemory();
  uint64_t total = 0;
  ArchiveDirectory directory = readArchiveDirectory(path, fileSize, read);
  for (const ArchiveRecord& r : directory.records) {
    const std::string where = path + ": record " + r.name + " ";
    const bool metadata = r.name.size() >= 22 && r.name.compare(r.name.size() - 22, 22, "/extra/tensordict.json") == 0;
    if (metadata && r.size > limits.metadataBytes)
      throw ModelFileError(where + "declares " + gib(r.size) + "; a tensordict.json is at most 16 MiB (nothing was read)");
    if (r.method != 0 && r.size > (uint64_t{16} << 20) && r.size / std::max<uint64_t>(r.compressedSize, 1) > limits.inflationRatio)
      throw ModelFileError(where + "inflates " + std::to_string(r.size / std::max<uint64_t>(r.compressedSize, 1)) +
                           "-fold, from " + gib(r.compressedSize) + " to " + gib(r.size) +
                           " (a zip bomb?); torch.jit.save stores records uncompressed (nothing was read)");
    total += std::min<uint64_t>(r.size, totalLimit + 1);
    if (total > totalLimit)
      throw ModelFileError(path + ": the records declare more than " + gib(totalLimit) +
                           " in all, past the memory tdfx allows a model (half of physical memory; nothing was read)");
  }
  return directory;
}

}  // namespace tdfx
