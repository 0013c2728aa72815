#pragma once
// Helpers shared by the tests: fixture paths and exact tensor comparison.
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tdfx/tensordict/tensordict.h"

namespace tdfx::testing {

inline std::string fixture(const std::string& name) { return std::string(TDFX_FIXTURES_DIR) + "/" + name; }

/// Bitwise equality: same shape, dtype and bytes.
inline ::testing::AssertionResult bitwiseEqual(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type())
    return ::testing::AssertionFailure() << "shape/dtype differ: " << a.sizes() << " " << a.scalar_type() << " vs "
                                         << b.sizes() << " " << b.scalar_type();
  const at::Tensor ca = a.contiguous(), cb = b.contiguous();
  const size_t bytes = ca.numel() * ca.element_size();
  if (std::memcmp(ca.data_ptr(), cb.data_ptr(), bytes) != 0)
    return ::testing::AssertionFailure() << "values differ, max |a-b| = "
                                         << (ca.to(at::kDouble) - cb.to(at::kDouble)).abs().max().item<double>();
  return ::testing::AssertionSuccess();
}

/// Every leaf key of `expected` is in `actual` with bitwise-equal contents, and no extra keys.
inline ::testing::AssertionResult sameTensorDict(const TensorDict& expected, const TensorDict& actual) {
  const auto ek = expected.keys(true, true), ak = actual.keys(true, true);
  if (ek.size() != ak.size())
    return ::testing::AssertionFailure() << "key sets differ: " << keysToString(ek) << " vs " << keysToString(ak);
  for (const NestedKey& k : ek) {
    if (!actual.contains(k)) return ::testing::AssertionFailure() << "missing key " << keyRepr(k);
    auto r = bitwiseEqual(expected.get(k), actual.get(k));
    if (!r) return r << " at key " << keyRepr(k);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tdfx::testing
