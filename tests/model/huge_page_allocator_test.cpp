#include "model/huge_page_allocator.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <cstdint>

#include <cstdio>
#include <torch/script.h>

#include "tdfx/model/model_file.h"

namespace tdfx {
namespace {

uintptr_t address(const at::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); }

TEST(HugePageAllocator, LargeBlocksStartOnAHugePageAndAreUnmappedWhenFreed) {
  const uint64_t before = hugePageBytesInUse();
  at::Tensor large, small;
  {
    const ScopedHugePageAllocator scope;
    large = at::ones({3 * 1024 * 1024 + 1}, at::kFloat);  // 12 MiB and 4 bytes: seven huge pages
    small = at::ones({1024}, at::kFloat);
  }
  EXPECT_EQ(address(large) % kHugePage, 0u);
  EXPECT_EQ(hugePageBytesInUse() - before, 7 * kHugePage);
  EXPECT_EQ(hugePageBlockBytes(large.storage().data_ptr()), c10::optional<size_t>(large.nbytes()));
  EXPECT_FALSE(hugePageBlockBytes(small.storage().data_ptr()).has_value());
  EXPECT_EQ(large.sum().item<double>(), 3.0 * 1024 * 1024 + 1);  // usable after the scope ended
  EXPECT_EQ(small.sum().item<double>(), 1024.0);
  large.reset();
  EXPECT_EQ(hugePageBytesInUse(), before);
}

TEST(HugePageAllocator, TheLastScopeToEndPutsThePreviousAllocatorBack) {
  c10::Allocator* const original = c10::GetCPUAllocator();
  {
    const ScopedHugePageAllocator outer;
    {
      const ScopedHugePageAllocator inner;  // a second load at the same time shares the installation
      EXPECT_EQ(at::ones({16}).sum().item<double>(), 16.0);
    }
    EXPECT_NE(c10::GetCPUAllocator(), original);
  }
  EXPECT_EQ(c10::GetCPUAllocator(), original);
  const at::Tensor after = at::zeros({3 * 1024 * 1024}, at::kFloat);
  EXPECT_FALSE(hugePageBlockBytes(after.storage().data_ptr()).has_value());
}

// Quantized models' weights are packed by fbgemm with raw_allocate / raw_deallocate during the load;
// LibTorch asserts a raw deleter (issue 21: a dynamically quantized Linear aborted the worker).
TEST(HugePageAllocator, RawBlocksLargeAndSmallAreFreedByTheRawDeleter) {
  const uint64_t before = hugePageBytesInUse();
  const ScopedHugePageAllocator scope;
  c10::Allocator* const allocator = c10::GetCPUAllocator();
  ASSERT_NE(allocator->raw_deleter(), nullptr);
  void* large = allocator->raw_allocate(kMinHugeBlock + 1);
  void* small = allocator->raw_allocate(64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % kHugePage, 0u);
  EXPECT_EQ(hugePageBytesInUse() - before, 2 * kHugePage + kHugePage);  // 4 MiB + 1 byte: three huge pages
  static_cast<char*>(large)[kMinHugeBlock] = 1;
  static_cast<char*>(small)[63] = 1;
  allocator->raw_deallocate(large);
  allocator->raw_deallocate(small);
  EXPECT_EQ(hugePageBytesInUse(), before);
}

TEST(HugePageAllocator, AnAllocationOverTheAddressSpaceIsALibTorchErrorNamingTheSize) {
  const ScopedHugePageAllocator scope;
  try {
    (void)at::empty({int64_t{1} << 50}, at::kByte);  // 1 PiB: more than any address space here
    FAIL() << "allocated 1 PiB";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("can't allocate memory: you tried to allocate 1125899906842624 bytes"),
              std::string::npos)
        << e.what();
  }
}

TEST(HugePageAllocator, ALoadedModelsLargeWeightsLiveInHugePageBlocks) {
  // A real archive, saved by LibTorch: one weight of 8 MiB and one of 16 bytes.
  torch::jit::Module saved("Scale");
  saved.register_parameter("large", torch::full({2 * 1024 * 1024}, 0.5), false);
  saved.register_parameter("small", torch::ones({4}), false);
  saved.define("def forward(self, x):\n    return x * self.large.sum() + self.small.sum()\n");
  const std::string path = ::testing::TempDir() + "huge_page_weights.pt";
  saved.save(path);

  const ModelFile model = loadModelFile(path);
  const at::Tensor large = model.root.attr("large").toTensor();
  const at::Tensor small = model.root.attr("small").toTensor();
  EXPECT_EQ(hugePageBlockBytes(large.storage().data_ptr()), c10::optional<size_t>(large.nbytes()));
  EXPECT_FALSE(hugePageBlockBytes(small.storage().data_ptr()).has_value());
  EXPECT_EQ(large.sum().item<double>(), 1024.0 * 1024);  // the record's bytes, read in whole
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tdfx
