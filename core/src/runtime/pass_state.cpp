#include "pass_state.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include "random_state.h"

namespace tdfx::runtime {
namespace {

void collectModules(const TensorDictModuleBase& module, std::vector<torch::jit::Module>& out) {
  if (const auto* seq = dynamic_cast<const TensorDictSequential*>(&module)) {
    for (const auto& child : seq->modules()) collectModules(*child, out);
  } else if (const auto* leaf = dynamic_cast<const TensorDictModule*>(&module)) {
    out.push_back(leaf->module());
  }
}

// A copy that nothing else holds: what a slot gets back, the saved copy staying as it is.
c10::IValue fresh(const c10::IValue& saved) {
  if (!saved.isTensor()) return saved.deepcopy();
  const at::Tensor& t = saved.toTensor();
  at::Tensor copy = t.clone();
  if (t.requires_grad()) copy.requires_grad_(true);
  return copy;
}

}  // namespace

PassState::PassState(const TensorDictModuleBase& module, const std::vector<at::Tensor>& graphTensors,
                     std::optional<uint64_t> seed)
    : seed_(seed) {
  torch::NoGradGuard noGrad;
  std::vector<torch::jit::Module> roots;
  collectModules(module, roots);
  for (const auto& root : roots) addModule(root._ivalue());
  for (const at::Tensor& t : graphTensors)
    if (t.defined()) tensors_.push_back({t, t.clone(), t._version()});
  random_ = saveRandomState();
}

void PassState::addModule(const c10::intrusive_ptr<c10::ivalue::Object>& object) {
  if (std::find(seen_.begin(), seen_.end(), object) != seen_.end()) return;
  seen_.push_back(object);
  for (size_t i = 0; i < object->slots().size(); ++i) {
    const c10::IValue& value = object->getSlot(i);
    if (value.isObject()) {
      if (value.toObjectRef().type()->is_module()) addModule(value.toObject());
      continue;  // a custom class: not copied
    }
    Slot slot{object, i, {}, value, 0};
    try {
      slot.saved = fresh(value);
    } catch (const std::exception&) {
      continue;  // a value that cannot be copied (a capsule): a forward cannot change it either
    }
    if (value.isTensor()) slot.version = value.toTensor()._version();
    slots_.push_back(std::move(slot));
  }
}

void PassState::restore() {
  torch::NoGradGuard noGrad;
  for (Slot& slot : slots_) {
    const c10::IValue& now = slot.object->getSlot(slot.index);
    // A tensor the pass neither replaced nor changed in place stays; anything else is put back.
    if (slot.saved.isTensor() && now.isTensor() && now.toTensor().is_same(slot.current.toTensor()) &&
        now.toTensor()._version() == slot.version)
      continue;
    slot.current = fresh(slot.saved);
    if (slot.current.isTensor()) slot.version = slot.current.toTensor()._version();
    slot.object->setSlot(slot.index, slot.current);
  }
  // The graph holds these tensors itself: changed in place, they get their values back in place.
  for (GraphTensor& g : tensors_) {
    if (g.tensor._version() == g.version) continue;
    g.tensor.copy_(g.copy);
    g.version = g.tensor._version();
  }
  if (seed_) at::manual_seed(*seed_);
  else restoreRandomState(random_);
}

}  // namespace tdfx::runtime
