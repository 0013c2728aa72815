#pragma once
// Whether an unpickled tensor's shape and strides fit its storage. LibTorch 1.13 does not check
// this when it unpickles a tensor (torch::jit::load, torch::jit::pickle_load); a damaged or hostile
// pickle then makes the first kernel read or write out of bounds. The model's archive and the
// files of input values are both checked with it.
#include <optional>
#include <string>

#include <ATen/core/Tensor.h>

namespace tdfx {

/// Why `t` does not fit its storage ("has a negative stride", "of shape [...] needs N elements but
/// its storage holds M", ...), or nullopt when every element it can reach lies in its storage's
/// buffer. `container` names where the storage's bytes came from ("archive", "file"). A tensor
/// without storage (sparse, MKL-DNN) is not checked here. The arithmetic cannot overflow: the
/// pickle chooses every number.
std::optional<std::string> tensorGeometryProblem(const at::Tensor& t, const std::string& container);

}  // namespace tdfx
