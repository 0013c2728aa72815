// Fingerprints stand for node values in verify: equal exactly when the values are bitwise the same
// (neg and conj views by value), for tensors of any size and values of any structure.
#include "runtime/fingerprint.h"

#include <cstring>
#include <limits>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "runtime/value_comparison.h"

namespace tdfx::runtime {
namespace {

constexpr uint64_t kKey = 0x1234'5678'9abc'def0ull;

bool sameFingerprint(const c10::IValue& a, const c10::IValue& b, uint64_t key = kKey) {
  return bitwiseSame(fingerprint(a, key), fingerprint(b, key));
}

// `t` with one bit of its byte `byte` flipped.
at::Tensor flipped(const at::Tensor& t, size_t byte) {
  at::Tensor copy = t.clone();
  static_cast<unsigned char*>(copy.data_ptr())[byte] ^= 0x10;
  return copy;
}

TEST(Fingerprint, EqualValuesHaveEqualFingerprintsHoweverTheyLieInMemory) {
  const at::Tensor x = at::randn({64, 33});
  EXPECT_TRUE(sameFingerprint(x, x.clone()));
  EXPECT_TRUE(sameFingerprint(x.t(), x.t().contiguous()));  // strides differ, values do not
  // Views whose rows lie apart are read row by row where they lie: the same as their copies.
  const at::Tensor y = at::randn({4, 5, 6, 7});
  for (const at::Tensor& view : {y.permute({1, 0, 2, 3}), y.narrow(2, 1, 3), y.narrow(3, 2, 4), y.select(1, 2),
                                 y.permute({2, 1, 0, 3}).narrow(0, 1, 1), y.index({at::indexing::Slice(), 0})})
    EXPECT_TRUE(sameFingerprint(view, view.contiguous())) << view.sizes() << " " << view.strides();
  EXPECT_FALSE(sameFingerprint(y.narrow(3, 2, 4), y.narrow(3, 1, 4)));
  EXPECT_TRUE(sameFingerprint(at::_neg_view(x), x.neg()));  // a neg view's raw bytes are x's
  const at::Tensor c = at::randn({5}, at::kComplexFloat);
  EXPECT_TRUE(sameFingerprint(c.conj(), c.conj().resolve_conj()));
  EXPECT_FALSE(sameFingerprint(at::_neg_view(x), x.clone()));
  EXPECT_FALSE(sameFingerprint(c.conj(), c.clone()));
}

TEST(Fingerprint, AnyBitDtypeOrShapeChangesIt) {
  // 3 MiB: the bytes are hashed in 1 MiB chunks; a bit in each chunk counts.
  const at::Tensor big = at::randn({3 * 1024 * 1024 / 4 + 5});
  const size_t bytes = big.numel() * 4;
  for (const size_t byte : {size_t{0}, size_t{31}, size_t{32}, size_t{1 << 20}, bytes / 2, bytes - 1})
    EXPECT_FALSE(sameFingerprint(big, flipped(big, byte))) << "byte " << byte;
  EXPECT_TRUE(sameFingerprint(big, big.clone()));
  EXPECT_TRUE(sameFingerprint(at::zeros({0}), at::zeros({0})));
  EXPECT_FALSE(sameFingerprint(at::zeros({0}), at::zeros({0, 2})));
  const at::Tensor small = at::arange(6, at::kInt);
  for (size_t byte = 0; byte < 24; ++byte) EXPECT_FALSE(sameFingerprint(small, flipped(small, byte))) << byte;
  EXPECT_FALSE(sameFingerprint(at::tensor({0.0f}), at::tensor({-0.0f})));  // the sign of a zero
  const float nan = std::numeric_limits<float>::quiet_NaN();
  uint32_t bits;
  std::memcpy(&bits, &nan, sizeof bits);
  bits |= 1u;  // another payload
  float other;
  std::memcpy(&other, &bits, sizeof other);
  EXPECT_FALSE(sameFingerprint(at::tensor({nan}), at::tensor({other})));
  EXPECT_TRUE(sameFingerprint(at::tensor({nan}), at::tensor({nan})));
  EXPECT_FALSE(sameFingerprint(small, small.view({2, 3})));                    // the same bytes, another shape
  EXPECT_FALSE(sameFingerprint(at::zeros({4}, at::kInt), at::zeros({4})));     // the same bytes, another dtype
  EXPECT_FALSE(sameFingerprint(small, small.flip(0)));                        // the same bytes, another order
}

TEST(Fingerprint, TheKeyChangesItAndAnIntNeverStandsForATensor) {
  const at::Tensor x = at::randn({8});
  EXPECT_FALSE(bitwiseSame(fingerprint(x, 1), fingerprint(x, 2)));
  const c10::IValue f = fingerprint(x, kKey);
  ASSERT_TRUE(f.isTuple());
  const c10::IValue hash = f.toTupleRef().elements().at(1);
  EXPECT_FALSE(bitwiseSame(f, hash));  // a node that yields this int is not the tensor
}

TEST(Fingerprint, StructuresAreFingerprintedItemByItem) {
  const at::Tensor a = at::randn({3}), b = at::randn({2, 2});
  const auto tuple = [](std::vector<c10::IValue> items) { return c10::ivalue::Tuple::create(std::move(items)); };
  EXPECT_TRUE(sameFingerprint(tuple({a, 3, c10::IValue()}), tuple({a.clone(), 3, c10::IValue()})));
  EXPECT_FALSE(sameFingerprint(tuple({a, 3}), tuple({a, 4})));
  EXPECT_FALSE(sameFingerprint(tuple({a, b}), tuple({a, flipped(b, 5)})));
  EXPECT_FALSE(sameFingerprint(tuple({a, b}), tuple({b, a})));
  c10::List<at::Tensor> list({a, b}), same({a.clone(), b.clone()});
  EXPECT_TRUE(sameFingerprint(list, same));
  EXPECT_TRUE(sameFingerprint(at::Tensor(), at::Tensor()));  // an undefined tensor is None
  EXPECT_FALSE(sameFingerprint(at::Tensor(), a));
  EXPECT_FALSE(sameFingerprint(1.5, 2.5));
  EXPECT_FALSE(sameFingerprint(0.0, -0.0));
}

}  // namespace
}  // namespace tdfx::runtime
