#pragma once
// The parameter values a load left unread (WeightsRead::AfterLoad): which storages wait for which
// bytes of the file, sorting them after the load, and reading them.
#include <mutex>
#include <string>
#include <vector>

#include "archive_reader.h"
#include "tdfx/model/model_file.h"

namespace tdfx {

struct DeferredWeights {
  struct Pending {
    c10::Storage storage;  // held, so the buffer outlives any module that drops it
    uint64_t offset = 0;
    size_t size = 0;
    uint32_t crc32 = 0;  // what its bytes must sum to: the central directory's, as the open read it
  };
  std::string path;
  std::shared_ptr<ArchiveReader> reader;
  std::vector<Pending> pending;  // by offset in the file
  std::string failure;           // a read that came up short: every later call throws it
  std::mutex mutex;
};

/// What became of a load's deferred reads.
enum class DeferredOutcome {
  Settled,     ///< only parameters wait (in `out`, null when none); every other value is read
  LoadAgain,   ///< load with every value read (a `__setstate__`, or a read this walk cannot place)
};

/// Sorts the reads a load of `root` deferred: a record only parameters use stays deferred; one a
/// buffer, a tensor attribute or an object uses is read now. LoadAgain (nothing read) when an
/// object has a `__setstate__`, or a read does not land in a storage of its own, of its size,
/// that a module, attribute or object holds. Throws ModelFileError when the file changed in
/// place since it was opened.
DeferredOutcome settleDeferredReads(const torch::jit::Module& root, const std::string& path,
                                    const std::shared_ptr<ArchiveReader>& reader, std::vector<DeferredRead> reads,
                                    std::shared_ptr<DeferredWeights>& out);

}  // namespace tdfx
