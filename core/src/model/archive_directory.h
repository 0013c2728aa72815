#pragma once
// The zip central directory of a model archive, read before LibTorch reads anything: the sizes it
// declares are checked first, so that a record that inflates to gigabytes is refused up front.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tdfx {

/// One entry of a zip central directory (plain data).
struct ArchiveRecord {
  std::string name;
  uint16_t method = 0;          ///< 0: stored (what torch.jit.save writes), 8: deflated
  uint64_t compressedSize = 0;  ///< bytes in the file
  uint64_t size = 0;            ///< bytes once read (inflated)
  uint64_t localHeaderOffset = 0;  ///< where the record's local header starts; its bytes follow it
  uint32_t crc32 = 0;              ///< the CRC-32 of its bytes once read, as the writer computed it
};

/// A zip central directory: where it starts in the file (records' bytes all end before it) and
/// its entries.
struct ArchiveDirectory {
  uint64_t offset = 0;
  std::vector<ArchiveRecord> records;
};

/// The bytes of the archive at [offset, offset + size); fewer when the file ends first.
using ArchiveRead = std::function<std::string(uint64_t offset, uint64_t size)>;

/// Reads the central directory (zip64 included) of the `fileSize` bytes `read` gives: the file
/// LibTorch will read, through the same descriptor, never the path again. Throws ModelFileError
/// naming `path` when the directory is missing or malformed.
ArchiveDirectory readArchiveDirectory(const std::string& path, uint64_t fileSize, const ArchiveRead& read);

/// Bounds on what an archive may declare (see checkArchiveSizes).
struct ArchiveLimits {
  uint64_t metadataBytes = uint64_t{16} << 20;  ///< tensordict.json
  uint64_t totalBytes = 0;                      ///< all records inflated; 0: half of physical memory
  uint64_t inflationRatio = 64;                 ///< a compressed record past 16 MiB may grow at most this much
};

/// Throws ModelFileError when a record's declared size passes a limit: names the record, its
/// size and the limit. Reads the directory only, and returns it.
ArchiveDirectory checkArchiveSizes(const std::string& path, uint64_t fileSize, const ArchiveRead& read,
                       const ArchiveLimits& limits = {});

}  // namespace tdfx
