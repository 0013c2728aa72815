#pragma once
// PassState: what a forward may change besides its outputs (torch's random state, the modules'
// buffers, parameters and plain attributes, the graph's own tensors), taken once before the first
// pass; restore() puts back whatever a pass changed, so every pass of verify starts from the state
// the file had and no pass sees what another wrote.
#include <optional>
#include <vector>

#include <ATen/core/ivalue.h>

#include "tdfx/nn/td_module.h"

namespace tdfx::runtime {

class PassState {
 public:
  /// `seed`: each restore seeds torch's generator with it; nullopt: restores the state taken here.
  PassState(const TensorDictModuleBase& module, const std::vector<at::Tensor>& graphTensors,
            std::optional<uint64_t> seed);
  void restore();

 private:
  struct Slot {
    c10::intrusive_ptr<c10::ivalue::Object> object;
    size_t index = 0;
    c10::IValue saved;    // the value the file had (a tensor: a copy)
    c10::IValue current;  // the value put in the slot last
    int64_t version = 0;  // a tensor's version counter when it was put there
  };
  void addModule(const c10::intrusive_ptr<c10::ivalue::Object>& object);

  std::vector<Slot> slots_;
  std::vector<c10::intrusive_ptr<c10::ivalue::Object>> seen_;
  struct GraphTensor {
    at::Tensor tensor, copy;
    int64_t version = 0;  // the tensor's version counter when it held the copy's values
  };
  std::vector<GraphTensor> tensors_;
  at::Tensor random_;
  std::optional<uint64_t> seed_;
};

}  // namespace tdfx::runtime
