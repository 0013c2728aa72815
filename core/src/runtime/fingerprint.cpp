#include "fingerprint.h"

#include <cstring>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/jit/runtime/custom_operator.h>

#include "tdfx/runtime/tensor_digest.h"

namespace tdfx::runtime {
namespace {

constexpr uint64_t kMul1 = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMul2 = 0xC2B2AE3D27D4EB4Full;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t mix(uint64_t h) {  // splitmix64's finaliser: every input bit reaches every output bit
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

// A keyed 64-bit hash of a byte stream, fed in pieces of any size: four independent lanes over
// 32-byte blocks, so that a 64-bit multiply's latency does not bound the speed; the lanes, the
// tail and the length are folded together at the end. Order-dependent: each lane is a chain, and
// lane i only sees words i, i+4, ... The same bytes give the same hash however they are split,
// so a strided tensor is hashed row by row where it lies, not copied first.
class StreamHash {
 public:
  explicit StreamHash(uint64_t key)
      : key_(key), lane_{key ^ kMul1, rotl(key, 17) ^ kMul2, rotl(key, 31) + kMul1, rotl(key, 47) - kMul2} {}

  void update(const unsigned char* data, size_t size) {
    if (size == 0) return;
    total_ += size;
    if (pending_ > 0) {
      const size_t take = std::min(sizeof buffer_ - pending_, size);
      std::memcpy(buffer_ + pending_, data, take);
      pending_ += take;
      data += take;
      size -= take;
      if (pending_ < sizeof buffer_) return;
      block(buffer_);
      pending_ = 0;
    }
    for (; size >= sizeof buffer_; data += sizeof buffer_, size -= sizeof buffer_) block(data);
    std::memcpy(buffer_, data, size);
    pending_ = size;
  }

  uint64_t finish() const {
    uint64_t h = mix(total_ ^ key_);
    for (uint64_t l : lane_) h = mix(h ^ l);
    for (size_t i = 0; i < pending_; ++i) h = mix(h ^ (static_cast<uint64_t>(buffer_[i]) << 8) ^ i);
    return h;
  }

 private:
  void block(const unsigned char* data) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, data + 8 * l, 8);
      lane_[l] = rotl(lane_[l] ^ (w * kMul2), 31) * kMul1;
    }
  }

  uint64_t key_;
  uint64_t lane_[4];
  unsigned char buffer_[32];
  size_t pending_ = 0;
  uint64_t total_ = 0;
};

// Feeds `t`'s bytes in row-major order. Rows along a last dimension of stride 1 are read where
// they lie (a permuted or sliced view: maxvit_t's windows and attention heads); other layouts
// are copied contiguous first.
void feed(const at::Tensor& t, StreamHash& hash) {
  const size_t element = t.element_size();
  const auto* base = static_cast<const unsigned char*>(t.data_ptr());
  if (t.is_contiguous()) {
    hash.update(base, t.numel() * element);
    return;
  }
  const int64_t dims = t.dim();
  if (dims == 0 || t.stride(dims - 1) != 1) {
    const at::Tensor copy = t.contiguous();
    hash.update(static_cast<const unsigned char*>(copy.data_ptr()), copy.numel() * element);
    return;
  }
  const int64_t row = t.size(dims - 1);
  if (t.numel() == 0) return;
  std::vector<int64_t> index(static_cast<size_t>(dims - 1), 0);
  while (true) {
    int64_t offset = 0;
    for (int64_t d = 0; d + 1 < dims; ++d) offset += index[d] * t.stride(d);
    hash.update(base + offset * static_cast<int64_t>(element), static_cast<size_t>(row) * element);
    int64_t d = dims - 2;
    for (; d >= 0 && ++index[d] == t.size(d); --d) index[d] = 0;
    if (d < 0) return;
  }
}

uint64_t tensorHash(const at::Tensor& tensor, uint64_t key) {
  // A neg or conj view keeps its raw bytes and a bit that says how to read them: resolved here, so
  // that the values are hashed (a copy only for such a view).
  // A sparse (or other non-strided) tensor has no data pointer of its own: its values are hashed
  // dense, and its layout beside them.
  const bool strided = tensor.layout() == at::kStrided;
  const at::Tensor values = strided ? tensor : tensor.to_dense();
  const at::Tensor t = values.is_conj() || values.is_neg() ? values.resolve_conj().resolve_neg() : values;
  uint64_t h = mix(key ^ static_cast<uint64_t>(t.scalar_type()));
  if (!strided) h = mix(h ^ (static_cast<uint64_t>(tensor.layout()) << 24));
  for (const int64_t d : t.sizes()) h = mix(h ^ static_cast<uint64_t>(d));
  // A quantized tensor's bytes are its integers: what they stand for is in its scheme, scale(s),
  // zero point(s) and axis, hashed too, so that a difference there shows at the node it starts.
  if (t.is_quantized()) {
    const at::QScheme scheme = t.qscheme();
    h = mix(h ^ (static_cast<uint64_t>(scheme) << 8));
    if (scheme == at::kPerTensorAffine || scheme == at::kPerTensorSymmetric) {
      const double scale = t.q_scale();
      uint64_t bits;
      std::memcpy(&bits, &scale, sizeof bits);
      h = mix(h ^ bits);
      h = mix(h ^ static_cast<uint64_t>(t.q_zero_point()));
    } else {
      h = mix(h ^ static_cast<uint64_t>(t.q_per_channel_axis()));
      h = mix(h ^ tensorHash(t.q_per_channel_scales(), key));
      h = mix(h ^ tensorHash(t.q_per_channel_zero_points(), key));
    }
  }
  // On this thread: hashing on torch's threads, beside OpenBLAS's threads that spin for a while
  // after each matrix product, made maxvit_t's node-by-node pass slower (0.41 s against 0.28 s).
  StreamHash stream(key);
  feed(t, stream);
  return mix(h ^ stream.finish());
}

// The operator's kernel: (value, key) on the stack, the fingerprint left there.
void fingerprintKernel(torch::jit::Stack& stack) {
  const int64_t key = torch::jit::pop(stack).toInt();
  c10::IValue value = torch::jit::pop(stack);
  torch::jit::push(stack, fingerprint(value, static_cast<uint64_t>(key)));
}

// Conservative aliasing: the graph executor moves nothing across the call, so the value is read
// where it was made, before any later in-place change.
const torch::jit::RegisterOperators registered({torch::jit::Operator(
    "tdfx_verify::fingerprint(Any value, int key) -> Any", fingerprintKernel, c10::AliasAnalysisKind::CONSERVATIVE)});

}  // namespace

c10::IValue fingerprint(const c10::IValue& value, uint64_t key) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    if (!t.defined()) return value;
    // Tagged, so that no int a node yields can stand for a tensor's fingerprint.
    return c10::ivalue::Tuple::create({c10::IValue("tensor"), static_cast<int64_t>(tensorHash(t, key))});
  }
  if (value.isTuple() || value.isList()) {
    std::vector<c10::IValue> items;
    const auto elements = value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
    for (const auto& e : elements) items.push_back(fingerprint(e, key));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (value.isGenericDict()) {
    std::vector<c10::IValue> items;
    for (const auto& entry : value.toGenericDict()) {
      items.push_back(entry.key());
      items.push_back(fingerprint(entry.value(), key));
    }
    return c10::ivalue::Tuple::create(std::move(items));
  }
  // A device as its text: fingerprints are compared as IValues, and "cpu" is "cpu" on both sides.
  if (value.isDevice()) return c10::ivalue::Tuple::create({c10::IValue("device"), c10::IValue(value.toDevice().str())});
  return value;
}

c10::Symbol fingerprintOperator() { return c10::Symbol::fromQualString("tdfx_verify::fingerprint"); }

}  // namespace tdfx::runtime

namespace tdfx {
uint64_t tensorDigest(const at::Tensor& tensor, uint64_t key) { return runtime::tensorHash(tensor, key); }
}  // namespace tdfx
