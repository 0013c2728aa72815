#pragma once
// Tensors a module holds besides its parameters and buffers, for diff.
#include <string>
#include <utility>
#include <vector>

#include <torch/script.h>

namespace tdfx {

/// The module's own (not its children's) tensors outside its parameters and buffers: attributes
/// that are tensors, and the tensors inside attributes holding objects of TorchScript's C++ classes,
/// the packed weights of quantized modules (LinearPackedParamsBase, ConvPackedParamsBase,
/// CellParamsBase), read through the class's own `__getstate__`, which is what saving the module
/// writes. Without them a diff of two quantized models with other weights said "identical".
/// Each is named by its attribute and its place in that attribute's state: {"_packed_params", ".0"}
/// (a quantized Linear's weight), {"param", ".4.0.0"}. A state that cannot be read is skipped.
struct AttributeTensor {
  std::string attribute;
  std::string place;  ///< "" for a tensor attribute itself
  at::Tensor value;
};
std::vector<AttributeTensor> attributeTensors(const torch::jit::Module& module);

}  // namespace tdfx
