#pragma once
// A tensor's digest: a 64-bit hash of its dtype, shape and the bytes of the values it stands for,
// keyed. Two tensors have equal digests under one key exactly when they are bitwise the same, up to
// a collision that a model cannot aim for, since it never sees the key. tdfx-cli diff and the
// window's compare send digests across the process boundary instead of values: only parameters
// whose digests differ have their values read (parametersToCompare).
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace tdfx {

/// The fingerprint verify keeps of a tensor value (neg and conj views resolved, quantized tensors
/// with their scheme, scales and zero points, sparse ones dense).
uint64_t tensorDigest(const at::Tensor& tensor, uint64_t key);

}  // namespace tdfx
