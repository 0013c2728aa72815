#include "huge_page_allocator.h"

#include <sys/mman.h>

#include <atomic>
#include <mutex>
#include <unordered_map>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

namespace tdfx {
namespace {

std::atomic<uint64_t> bytesInUse{0};

// The huge blocks that live, by address. A block's context is its data pointer, as LibTorch's own
// CPU allocator does it: raw_allocate (fbgemm's weight packing in quantized models takes blocks
// that way) requires it, and raw_deallocate frees with raw_deleter() alone.
struct Block {
  size_t size;
  size_t requested;
};
std::mutex blocksMutex;
std::unordered_map<void*, Block>& blocks() {
  static auto* live = new std::unordered_map<void*, Block>;  // never destroyed: blocks outlive main
  return *live;
}

// The raw deleter of the allocator installed before ours: small blocks come from it.
std::atomic<c10::DeleterFnPtr> fallbackRawDeleter{nullptr};

// Frees a huge block, or hands a small one taken raw back to the allocator it came from.
void releaseBlock(void* data) {
  if (!data) return;
  {
    const std::lock_guard<std::mutex> lock(blocksMutex);
    const auto it = blocks().find(data);
    if (it != blocks().end()) {
      ::munmap(data, it->second.size);
      bytesInUse -= it->second.size;
      blocks().erase(it);
      return;
    }
  }
  const c10::DeleterFnPtr fallback = fallbackRawDeleter.load();
  TORCH_INTERNAL_ASSERT(fallback, "huge-page allocator: a raw block that it did not make, and no raw deleter to free it");
  fallback(data);
}

class HugePageAllocator final : public c10::Allocator {
 public:
  void setFallback(c10::Allocator* fallback) { fallback_ = fallback; }
  c10::Allocator* fallback() const { return fallback_; }

  c10::DataPtr allocate(size_t bytes) const override {
    if (bytes < kMinHugeBlock) return fallback_->allocate(bytes);
    const size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    // Over-map by one huge page so the block can start on a huge-page boundary: the kernel only
    // backs aligned 2 MiB ranges with huge pages. The unaligned head and tail are unmapped again.
    void* raw = ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    // The same words as LibTorch's own allocator, which the model worker's errors recognise.
    TORCH_CHECK(raw != MAP_FAILED, "huge-page allocator: can't allocate memory: you tried to allocate ", bytes,
                " bytes.");
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start) ::munmap(raw, aligned - start);
    if (const size_t tail = kHugePage - (aligned - start)) ::munmap(reinterpret_cast<void*>(aligned + size), tail);
    void* base = reinterpret_cast<void*>(aligned);
    ::madvise(base, size, MADV_HUGEPAGE);  // advice only: where THP is off, these stay 4 KiB pages
    bytesInUse += size;
    {
      const std::lock_guard<std::mutex> lock(blocksMutex);
      blocks()[base] = Block{size, bytes};
    }
    return {base, base, &releaseBlock, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &releaseBlock; }

 private:
  c10::Allocator* fallback_ = nullptr;
};

HugePageAllocator& allocator() {
  static HugePageAllocator instance;
  return instance;
}

std::mutex installMutex;
int installed = 0;  // live scopes

// SetCPUAllocator only replaces an allocator of the same or a lower priority.
constexpr uint8_t kPriority = 100;

}  // namespace

ScopedHugePageAllocator::ScopedHugePageAllocator() {
  const std::lock_guard<std::mutex> lock(installMutex);
  if (installed++ > 0) return;
  allocator().setFallback(c10::GetCPUAllocator());
  fallbackRawDeleter = allocator().fallback()->raw_deleter();
  c10::SetCPUAllocator(&allocator(), kPriority);
}

ScopedHugePageAllocator::~ScopedHugePageAllocator() {
  const std::lock_guard<std::mutex> lock(installMutex);
  if (--installed == 0) c10::SetCPUAllocator(allocator().fallback(), kPriority);
}

c10::optional<size_t> hugePageBlockBytes(const c10::DataPtr& ptr) {
  if (ptr.get_deleter() != &releaseBlock) return c10::nullopt;
  const std::lock_guard<std::mutex> lock(blocksMutex);
  const auto it = blocks().find(ptr.get());
  if (it == blocks().end()) return c10::nullopt;
  return it->second.requested;
}

uint64_t hugePageBytesInUse() { return bytesInUse; }

}  // namespace tdfx
