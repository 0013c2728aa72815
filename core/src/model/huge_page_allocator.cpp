#include "huge_page_allocator.h"

#include <sys/mman.h>

#include <atomic>
#include <mutex>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

namespace tdfx {
namespace {

std::atomic<uint64_t> bytesInUse{0};

// The deleter's context: what to unmap, and what was asked for.
struct Block {
  void* base;
  size_t size;
  size_t requested;
};

void unmapBlock(void* context) {
  const auto* block = static_cast<Block*>(context);
  ::munmap(block->base, block->size);
  bytesInUse -= block->size;
  delete block;
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
    return {base, new Block{base, size, bytes}, &unmapBlock, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }  // blocks need their context

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
  c10::SetCPUAllocator(&allocator(), kPriority);
}

ScopedHugePageAllocator::~ScopedHugePageAllocator() {
  const std::lock_guard<std::mutex> lock(installMutex);
  if (--installed == 0) c10::SetCPUAllocator(allocator().fallback(), kPriority);
}

c10::optional<size_t> hugePageBlockBytes(const c10::DataPtr& ptr) {
  if (ptr.get_deleter() != &unmapBlock) return c10::nullopt;
  return static_cast<const Block*>(ptr.get_context())->requested;
}

uint64_t hugePageBytesInUse() { return bytesInUse; }

}  // namespace tdfx
