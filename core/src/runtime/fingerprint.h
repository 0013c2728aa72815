#pragma once
// A value's fingerprint: what verify keeps of each node's value instead of a copy. Holding a copy
// of every value a large model makes costs more than running it (maxvit_t: 1,632 values, 1.4 s of
// copying and fresh memory for a 0.2 s forward); a fingerprint is read where the value is made and
// keeps a few bytes. Two values have equal fingerprints (bitwiseSame) exactly when they are
// bitwise the same, up to a collision of a 64-bit hash keyed by a random number that the model
// never sees. Values whose fingerprints differ are then compared in full.
#include <cstdint>

#include <ATen/core/ivalue.h>

namespace tdfx::runtime {

/// A tensor becomes ("tensor", an int): a hash of the dtype, the shape and the bytes of the values the tensor
/// stands for (neg and conj views resolved), keyed by `key`; an undefined tensor stays as it is.
/// Tuples and lists are fingerprinted item by item (a tuple of ints), dicts by value; anything
/// else (None, bool, int, float, str) is its own fingerprint.
c10::IValue fingerprint(const c10::IValue& value, uint64_t key);

/// The operator `tdfx_verify::fingerprint(Any value, int key) -> Any`, which inserts fingerprint()
/// into a TorchScript graph: verify's recording of eager values calls it where each value is made.
c10::Symbol fingerprintOperator();

}  // namespace tdfx::runtime
