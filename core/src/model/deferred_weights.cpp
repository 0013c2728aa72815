#include "deferred_weights.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include <zlib.h>

#include "tdfx/error.h"

namespace tdfx {
namespace {

// A storage the loaded objects hold, and whether anything but a parameter holds it.
struct StorageUse {
  c10::Storage storage;
  bool onlyParameters = true;
};

struct Census {
  std::unordered_map<const void*, StorageUse> uses;  // by the storage's buffer
  bool setState = false;

  void tensor(const at::Tensor& t, bool parameter) {
    if (!t.defined() || !t.has_storage() || !t.storage().data()) return;
    auto [it, inserted] = uses.try_emplace(t.storage().data(), StorageUse{t.storage(), parameter});
    if (!parameter) it->second.onlyParameters = false;
  }

  // Modules are walked on their own (their parameters known by slot); checkTensorStorage has
  // bounded the nesting already, this bound only keeps a cycle from recursing without end.
  void value(const c10::IValue& v, int depth = 0) {
    if (depth > 64) return;
    if (v.isTensor()) {
      tensor(v.toTensor(), false);
    } else if (v.isList()) {
      for (const c10::IValue& item : v.toListRef()) value(item, depth + 1);
    } else if (v.isTuple()) {
      for (const c10::IValue& item : v.toTupleRef().elements()) value(item, depth + 1);
    } else if (v.isGenericDict()) {
      for (const auto& entry : v.toGenericDict()) {
        value(entry.key(), depth + 1);
        value(entry.value(), depth + 1);
      }
    } else if (v.isObject() && !v.toObjectRef().type()->is_module()) {
      // A TorchScript class's or a C++ custom class's (torch.classes, as quantized packed
      // parameters) own unpickling: it may have read any value.
      if (v.toObjectRef().type()->findMethod("__setstate__")) setState = true;
      for (const c10::IValue& slot : v.toObjectRef().slots()) value(slot, depth + 1);
    }
  }

  void module(const torch::jit::Module& m) {
    const auto& type = m.type();
    if (type->findMethod("__setstate__")) setState = true;
    const auto& object = m._ivalue();
    for (size_t i = 0; i < type->numAttributes(); ++i) {
      const c10::IValue v = object->getSlot(i);
      if (v.isObject() && v.toObjectRef().type()->is_module()) continue;  // walked by modules()
      if (type->is_parameter(i) && v.isTensor()) tensor(v.toTensor(), true);
      else value(v);
    }
  }
};

std::string rewritten(const std::string& path) {
  return path + ": the file changed while it was open (its size, times or inode differ: rewritten in place?); "
                "its weights were not read yet: open it again";
}

std::string shortRead(const std::string& path, const DeferredWeights::Pending& p, size_t got) {
  return path + ": the file changed while it was open: the " + std::to_string(p.size) + " bytes of a weight at offset " +
         std::to_string(p.offset) + " could not be read (" + std::to_string(got) +
         " read; was it rewritten in place?); open it again";
}

void readOne(const ArchiveReader& reader, const std::string& path, const DeferredWeights::Pending& p) {
  const size_t got = reader.read(p.offset, p.storage.data(), p.size, "deferred weight");
  if (got != p.size) throw ModelFileError(shortRead(path, p, got));
  // The bytes are the ones the archive was written with, as LibTorch's own read checks (miniz
  // compares every record it extracts with its CRC-32). A change that moves no time stamp (a
  // shared mapping written again through pages dirtied before the open) is caught here: the
  // graph, the buffers and the parameters then come from one version of the file or none.
  uLong sum = ::crc32(0L, Z_NULL, 0);
  const auto* bytes = static_cast<const Bytef*>(p.storage.data());
  for (size_t done = 0; done < p.size;) {
    const auto chunk = static_cast<uInt>(std::min<size_t>(p.size - done, size_t{1} << 30));
    sum = ::crc32(sum, bytes + done, chunk);
    done += chunk;
  }
  if (static_cast<uint32_t>(sum) != p.crc32)
    throw ModelFileError(path + ": the file changed while it was open: the " + std::to_string(p.size) +
                         " bytes of a weight at offset " + std::to_string(p.offset) +
                         " do not match the CRC-32 its archive gives them (changed through a shared mapping, "
                         "or damaged); open it again");
}

}  // namespace

DeferredOutcome settleDeferredReads(const torch::jit::Module& root, const std::string& path,
                                    const std::shared_ptr<ArchiveReader>& reader, std::vector<DeferredRead> reads,
                                    std::shared_ptr<DeferredWeights>& out) {
  out.reset();
  if (reads.empty()) return DeferredOutcome::Settled;
  Census census;
  for (const torch::jit::Module& m : root.modules()) census.module(m);
  if (census.setState) return DeferredOutcome::LoadAgain;
  auto weights = std::make_shared<DeferredWeights>();
  weights->path = path;
  weights->reader = reader;
  std::sort(reads.begin(), reads.end(), [](const DeferredRead& a, const DeferredRead& b) { return a.offset < b.offset; });
  std::unordered_map<const void*, size_t> buffers;
  for (const DeferredRead& r : reads) ++buffers[r.buffer];
  // Each read must land in a storage of its own that a tensor still holds, of exactly the
  // record's size. Otherwise (a sparse tensor's indices, a per-channel quantizer's scales, both
  // held where this walk does not look; a buffer freed and its address reused) the file is
  // loaded again with every value read: nothing is left unread, nothing written out of bounds.
  for (const DeferredRead& r : reads) {
    const auto it = census.uses.find(r.buffer);
    if (it == census.uses.end() || buffers.at(r.buffer) > 1 || it->second.storage.nbytes() != r.size)
      return DeferredOutcome::LoadAgain;
  }
  for (const DeferredRead& r : reads) {
    const auto it = census.uses.find(r.buffer);
    DeferredWeights::Pending p{it->second.storage, r.offset, r.size, r.crc32};
    if (it->second.onlyParameters) weights->pending.push_back(std::move(p));
    else readOne(*reader, path, p);
  }
  if (!weights->pending.empty()) out = std::move(weights);
  return DeferredOutcome::Settled;
}

void readDeferredWeights(const ModelFile& model) {
  if (!model.deferredWeights) return;
  DeferredWeights& w = *model.deferredWeights;
  std::lock_guard<std::mutex> lock(w.mutex);
  if (!w.failure.empty()) throw ModelFileError(w.failure);
  try {
    if (!w.pending.empty() && !w.reader->unchangedSinceOpen()) throw ModelFileError(rewritten(w.path));
    for (const DeferredWeights::Pending& p : w.pending) readOne(*w.reader, w.path, p);
    if (!w.pending.empty() && !w.reader->unchangedSinceOpen()) throw ModelFileError(rewritten(w.path));
  } catch (const ModelFileError& e) {
    w.failure = e.what();
    w.pending.clear();
    throw;
  }
  w.pending.clear();
  w.reader.reset();
}

}  // namespace tdfx
