#pragma once
// PassState: what a forward may change besides its outputs (torch's random state, the modules'
// buffers, parameters and plain attributes, the graph's own tensors), taken once before the first
// pass; restore() puts back whatever a pass changed, so every pass of verify starts from the state
// the file had and no pass sees what another wrote.
//
// Tensors are saved by storage, not by name: a buffer that shares its storage with a parameter (or
// another buffer) is saved and put back together with it, so that a write through one name is
// undone in every name that sees it, and the names still share one storage afterwards, as in the
// file.
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <ATen/core/ivalue.h>

#include <torch/csrc/jit/api/module.h>

#include "tdfx/error.h"
#include "tdfx/nn/td_module.h"

namespace tdfx::runtime {

/// The tensors of `module` (and its submodules) that running its forward may change in place:
/// freeze_module's test (torch/csrc/jit/passes/freeze_module.cpp), the forward inlined and each
/// attribute read whose value some node writes, by alias analysis. nullopt when it cannot tell
/// which: a call left that could not be inlined (an interface's method), a written attribute it
/// cannot resolve or that holds a container, or, where `inputsMayHoldModuleTensors` (a module of a
/// sequential reads what an earlier one returned, which may be its tensor), a write to an input.
/// Assigning an attribute is no such change: the tensor it held stays as it was.
std::optional<std::vector<at::Tensor>> tensorsForwardMayWrite(const torch::jit::Module& module,
                                                              bool inputsMayHoldModuleTensors);

/// restore() found a tensor that was held, not copied, changed in place: the state the file had
/// is lost, and no later pass can be trusted.
class StateLost : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

class PassState {
 public:
  /// `seed`: each restore seeds torch's generator with it; nullopt: restores the state taken here.
  /// `tracedWrites`: the tensors the traced graph's forward may change in place
  /// (GraphModule::tensorsForwardMayWrite); nullopt: any. The tensors that neither forward can
  /// change are not copied (a copy of vgg11's weights costs 1.4 s on two cores), only held: a slot
  /// a pass assigns gets the held tensor back.
  PassState(const TensorDictModuleBase& module, const std::vector<at::Tensor>& graphTensors,
            std::optional<uint64_t> seed, const std::optional<std::vector<at::Tensor>>& tracedWrites = std::nullopt);
  /// Puts back what the last pass changed. Throws StateLost when a tensor that was held, not
  /// copied, was changed in place: the analysis missed a write.
  void restore();

 private:
  struct Slot {
    c10::intrusive_ptr<c10::ivalue::Object> object;
    size_t index = 0;
    c10::IValue saved;    // the value the file had (a tensor: a copy, or the tensor itself when held)
    c10::IValue current;  // the value put in the slot last
    int64_t version = 0;  // a tensor's version counter when it was put there
    bool held = false;    // `saved` is the file's tensor itself, never changed in place
    int group = -1;       // a copied strided tensor: its storage's entry in groups_ (`saved` unused)
  };
  /// A storage that copied tensors view: its bytes as the file had them, and the slots that view it
  /// with where each one starts, its shape and strides. restore() gives them all one new storage.
  struct StorageGroup {
    at::Tensor bytes;  // a uint8 copy of the whole storage
    struct View {
      size_t slot = 0;
      at::TensorOptions options;
      int64_t offset = 0;
      std::vector<int64_t> sizes, strides;
      bool requiresGrad = false;
    };
    std::vector<View> views;
  };
  /// Adds `value` (a strided tensor with a storage) to its storage's group and returns the group's
  /// index; -1 for a tensor saved whole instead (no storage, quantized, a conj or neg view).
  int addToGroup(size_t slot, const at::Tensor& value);
  void restoreGroup(StorageGroup& group);
  std::vector<StorageGroup> groups_;
  std::unordered_map<const c10::StorageImpl*, size_t> groupOfStorage_;
  /// `written`: the storages of the tensors to copy; null: all.
  void addModule(const c10::intrusive_ptr<c10::ivalue::Object>& object,
                 const std::unordered_set<const void*>* written);

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
