#include "pass_state.h"

#include <algorithm>
#include <unordered_map>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/runtime/graph_iterator.h>
#include <torch/csrc/jit/passes/inliner.h>

#include "random_state.h"
#include "tdfx/error.h"

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

// What a written tensor is known by: its storage, where it has one (a write through one view of
// a storage is a write to every tensor that views it), else the tensor itself (sparse, MKL-DNN).
const void* storageKey(const at::Tensor& t) {
  if (t.has_storage() && t.layout() == at::kStrided && !t.is_quantized()) return t.storage().unsafeGetStorageImpl();
  return t.unsafeGetTensorImpl();
}

std::optional<std::vector<at::Tensor>> analyseWrites(const torch::jit::Module& module, bool inputsMayHoldModuleTensors) {
  const auto forward = module.find_method("forward");
  if (!forward) return std::nullopt;
  std::shared_ptr<torch::jit::Graph> graph = torch::jit::toGraphFunction(forward->function()).graph()->copy();
  // One Inline pass does not reach the calls inside the graphs it inlined: inline until none is
  // left (a call left after that is an interface's method, which nothing here can see into).
  const auto callsLeft = [&] {
    for (torch::jit::DepthFirstGraphNodeIterator it(graph); torch::jit::Node* node = it.next();)
      if (node->kind() == c10::prim::CallMethod || node->kind() == c10::prim::CallFunction) return true;
    return false;
  };
  for (int round = 0; round < 64 && callsLeft(); ++round) torch::jit::Inline(*graph);
  if (callsLeft()) return std::nullopt;
  // Frozen: each attribute read of a module is its own memory location, so that BatchNorm's
  // `num_batches_tracked.add_(1)` (in a branch taken only in training) marks that buffer, not
  // every tensor of the model.
  torch::jit::AliasDb aliases(graph, /*isFrozen=*/true);
  // A forward that writes to its input may write to a tensor that an earlier module of a
  // sequential returned: every tensor then.
  for (size_t i = 1; inputsMayHoldModuleTensors && i < graph->inputs().size(); ++i)
    if (aliases.hasWriters(graph->inputs()[i])) return std::nullopt;
  std::unordered_map<const torch::jit::Value*, c10::IValue> objects{{graph->inputs()[0], module._ivalue()}};
  std::vector<at::Tensor> written;
  for (torch::jit::DepthFirstGraphNodeIterator it(graph); torch::jit::Node* node = it.next();) {
    if (node->kind() != c10::prim::GetAttr) continue;
    const auto owner = objects.find(node->input());
    c10::IValue value;
    if (owner != objects.end() && owner->second.isObject()) {
      const auto& object = owner->second.toObjectRef();
      if (const auto slot = object.type()->findAttributeSlot(node->s(c10::attr::name))) value = object.getSlot(*slot);
    }
    if (value.isObject()) objects[node->output()] = value;
    if (!aliases.hasWriters(node->output()) || value.isObject()) continue;  // an object's are read by name
    if (!value.isTensor()) return std::nullopt;  // a written value not found, or a container of them
    written.push_back(value.toTensor());
  }
  return written;
}

}  // namespace

std::optional<std::vector<at::Tensor>> tensorsForwardMayWrite(const torch::jit::Module& module,
                                                              bool inputsMayHoldModuleTensors) {
  try {
    return analyseWrites(module, inputsMayHoldModuleTensors);
  } catch (const std::exception&) {
    return std::nullopt;  // a graph the passes do not take: every tensor is copied
  }
}

PassState::PassState(const TensorDictModuleBase& module, const std::vector<at::Tensor>& graphTensors,
                     std::optional<uint64_t> seed, const std::optional<std::vector<at::Tensor>>& tracedWrites)
    : seed_(seed) {
  torch::NoGradGuard noGrad;
  std::vector<torch::jit::Module> roots;
  collectModules(module, roots);
  std::optional<std::unordered_set<const void*>> written;
  if (tracedWrites) {
    written.emplace();
    for (const at::Tensor& t : *tracedWrites) written->insert(storageKey(t));
    for (const auto& root : roots) {
      const auto eagerWrites = tensorsForwardMayWrite(root, /*inputsMayHoldModuleTensors=*/roots.size() > 1);
      if (!eagerWrites) {
        written.reset();
        break;
      }
      for (const at::Tensor& t : *eagerWrites) written->insert(storageKey(t));
    }
  }
  for (const auto& root : roots) addModule(root._ivalue(), written ? &*written : nullptr);
  for (const at::Tensor& t : graphTensors)
    if (t.defined()) tensors_.push_back({t, t.clone(), t._version()});
  random_ = saveRandomState();
}

int PassState::addToGroup(size_t slot, const at::Tensor& value) {
  if (storageKey(value) == value.unsafeGetTensorImpl() || value.is_conj() || value.is_neg()) return -1;
  const auto [found, added] = groupOfStorage_.emplace(value.storage().unsafeGetStorageImpl(), groups_.size());
  if (added) {
    const auto bytes = static_cast<int64_t>(value.storage().nbytes());
    at::Tensor whole = at::empty({0}, value.options().dtype(at::kByte));
    whole.set_(value.storage(), 0, {bytes}, {1});
    groups_.push_back({whole.clone(), {}});
  }
  StorageGroup& group = groups_[found->second];
  group.views.push_back({slot, value.options(), value.storage_offset(), value.sizes().vec(), value.strides().vec(),
                         value.requires_grad()});
  return static_cast<int>(found->second);
}

void PassState::restoreGroup(StorageGroup& group) {
  // A fresh storage, not the old one written back: a tensor a pass returned may be a view of it,
  // and must keep the value that pass gave it.
  const at::Tensor bytes = group.bytes.clone();
  for (const StorageGroup::View& view : group.views) {
    at::Tensor t = at::empty({0}, view.options.requires_grad(false));
    t.set_(bytes.storage(), view.offset, view.sizes, view.strides);
    if (view.requiresGrad) t.requires_grad_(true);
    Slot& slot = slots_[view.slot];
    slot.current = t;
    slot.version = t._version();
    slot.object->setSlot(slot.index, slot.current);
  }
}

void PassState::addModule(const c10::intrusive_ptr<c10::ivalue::Object>& object,
                          const std::unordered_set<const void*>* written) {
  if (std::find(seen_.begin(), seen_.end(), object) != seen_.end()) return;
  seen_.push_back(object);
  for (size_t i = 0; i < object->slots().size(); ++i) {
    const c10::IValue& value = object->getSlot(i);
    if (value.isObject()) {
      if (value.toObjectRef().type()->is_module()) addModule(value.toObject(), written);
      continue;  // a custom class: not copied
    }
    Slot slot{object, i, {}, value, 0, false};
    try {
      slot.held = value.isTensor() && written && !written->count(storageKey(value.toTensor()));
      if (!slot.held && value.isTensor()) slot.group = addToGroup(slots_.size(), value.toTensor());
      if (slot.group < 0) slot.saved = slot.held ? value : fresh(value);
    } catch (const std::exception&) {
      continue;  // a value that cannot be copied (a capsule): a forward cannot change it either
    }
    if (value.isTensor()) slot.version = value.toTensor()._version();
    slots_.push_back(std::move(slot));
  }
}

void PassState::restore() {
  torch::NoGradGuard noGrad;
  // A tensor the pass neither replaced nor changed in place stays; anything else is put back.
  const auto unchanged = [](const Slot& slot) {
    const c10::IValue& now = slot.object->getSlot(slot.index);
    return slot.current.isTensor() && now.isTensor() && now.toTensor().is_same(slot.current.toTensor()) &&
           now.toTensor()._version() == slot.version;
  };
  // A storage is put back whole when any tensor that views it changed: a write through one view
  // bumps only that view's version.
  for (StorageGroup& group : groups_)
    if (!std::all_of(group.views.begin(), group.views.end(),
                     [&](const StorageGroup::View& v) { return unchanged(slots_[v.slot]); }))
      restoreGroup(group);
  for (Slot& slot : slots_) {
    if (slot.group >= 0 || (slot.saved.isTensor() && unchanged(slot))) continue;
    if (slot.held) {
      if (slot.saved.toTensor()._version() != slot.version)
        throw StateLost("verify cannot restore attribute '" + slot.object->type()->getAttributeName(slot.index) +
                           "' of " + slot.object->type()->name()->qualifiedName() +
                           ": a pass changed it in place, though neither forward's code writes it");
      slot.object->setSlot(slot.index, slot.saved);  // assigned: the held tensor goes back
      slot.current = slot.saved;
      continue;
    }
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
