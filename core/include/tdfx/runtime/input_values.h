#pragma once
// Input tensors given with their values (tdfx-cli --input-values, Python's tdfx.verify(m, tensor)):
// a user's real data, used as it is, where the other inputs are drawn at random from a seed.
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "tdfx/tensordict/nested_key.h"

namespace tdfx {

/// Key -> tensor, in the order given.
using InputValues = std::vector<std::pair<NestedKey, at::Tensor>>;

/// The most bytes a file of input values may have (the request that carries it to the model
/// worker is one frame of at most 1 GiB).
inline constexpr size_t kMaxInputValuesBytes = size_t{512} << 20;

/// Reads what `torch.save({"input.x": tensor, ...}, path)` wrote: a dict whose keys are the
/// input keys with their parts joined by "." (as --input writes them) and whose values are CPU
/// tensors, or a tuple of (key, tensor) pairs (LibTorch 1.13 cannot read a dict of exactly one
/// item: Python writes it with an opcode its unpickler lacks). The unpickler builds plain values
/// only (no class, no code). Throws tdfx::Error saying what was found where tensors were expected.
InputValues inputValuesFromPickle(const std::vector<char>& bytes);

/// The bytes of a file of input values, read whole (at most kMaxInputValuesBytes) and not parsed:
/// the model worker parses them. Throws tdfx::Error starting with `where` when it is missing, not
/// a regular file, too large or unreadable.
std::vector<char> readInputValuesFile(const std::string& path, const std::string& where);

/// "input.x" -> ("input", "x"); throws tdfx::Error naming `what` for an empty part.
NestedKey dottedKey(const std::string& text, const std::string& what);

}  // namespace tdfx
