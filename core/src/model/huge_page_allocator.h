#pragma once
// A CPU allocator for LibTorch that backs large blocks with transparent huge pages, installed while
// loadModelFile reads an archive's tensor records.
//
// Why: on the machines tdfx is measured on (virtual machines with nested paging), the first touch
// of each 4 KiB page costs about 12 us. Loading vit_b_16 (330 MB of weights) spent about 1 s in
// page faults, and the first pass over the loaded weights (parameter statistics, the first run)
// about 0.5 s more. Blocks of kMinHugeBlock bytes and more come from mmap with MADV_HUGEPAGE
// (2 MiB pages: 512 times fewer faults); smaller ones from the allocator installed before. Each
// block carries its own deleter, so it outlives the scope that installed the allocator. Blocks taken
// raw (Allocator::raw_allocate, as fbgemm's weight packing does) are freed by raw_deleter(), which
// also hands small raw blocks back to the allocator installed before. A huge block taken raw and
// freed raw after the scope ended would reach the restored allocator's deleter: LibTorch's raw
// users free within the call that allocated, during the load.
#include <c10/util/Optional.h>
#include <cstddef>
#include <cstdint>

namespace c10 {
struct Allocator;
class DataPtr;
}  // namespace c10

namespace tdfx {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kMinHugeBlock = size_t{4} << 20;

/// Makes the huge-page allocator LibTorch's CPU allocator while at least one scope lives; the last
/// scope to end puts the previous allocator back. Loads on several threads share one installation.
class ScopedHugePageAllocator {
 public:
  ScopedHugePageAllocator();
  ~ScopedHugePageAllocator();
  ScopedHugePageAllocator(const ScopedHugePageAllocator&) = delete;
  ScopedHugePageAllocator& operator=(const ScopedHugePageAllocator&) = delete;
};

/// The bytes asked for when the huge-page allocator made `ptr`; nullopt for any other block.
c10::optional<size_t> hugePageBlockBytes(const c10::DataPtr& ptr);

/// Bytes of huge-page blocks this process holds now (mapped, rounded up to whole huge pages).
uint64_t hugePageBytesInUse();

}  // namespace tdfx
