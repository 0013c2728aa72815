#include "tdfx/nn/td_module.h"

#include <algorithm>
#include <mutex>

#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "tdfx/error.h"

namespace tdfx {

bool isDiscardKey(const NestedKey& key) { return key.size() == 1 && key.front() == "_"; }

void useReferenceExecutor() {
  static std::once_flag once;
  std::call_once(once, [] {
    torch::jit::setGraphExecutorOptimize(false);
    torch::jit::getProfilingMode() = false;
  });
}

namespace {
std::string where(const std::string& path) {
  return path.empty() ? std::string("the root module") : "module '" + path + "'";
}
}  // namespace

TensorDictModule::TensorDictModule(torch::jit::Module module, std::vector<NestedKey> inKeys,
                                   std::vector<NestedKey> outKeys, std::string path)
    : module_(std::move(module)), inKeys_(std::move(inKeys)), outKeys_(std::move(outKeys)),
      path_(std::move(path)) {
  useReferenceExecutor();
  auto method = module_.find_method("forward");
  if (!method)
    throw Error(where(path_) + " (" + module_.type()->name()->qualifiedName() + ") has no forward method");
  const auto& args = method->function().getSchema().arguments();
  const size_t params = args.size() - 1;  // without self
  size_t required = 0;
  for (size_t i = 1; i < args.size(); ++i)
    if (!args[i].default_value()) required = i;
  if (inKeys_.size() > params || inKeys_.size() < required) {
    std::string names;
    for (size_t i = 1; i < args.size(); ++i) names += (i > 1 ? ", " : "") + args[i].name();
    throw Error(where(path_) + ": forward(" + names + ") takes " + std::to_string(required) +
                (required == params ? "" : " to " + std::to_string(params)) + " inputs but in_keys has " +
                std::to_string(inKeys_.size()) + " (" + keysToString(inKeys_) + ")");
  }
  if (outKeys_.empty()) throw Error(where(path_) + ": out_keys is empty; a module must write at least one key");
  // A forward whose return type is known must produce a value for each out key. More values are
  // fine: tensordict zips out_keys with the outputs, so the extra ones are not written (a scripted
  // googlenet returns (logits, aux2, aux1) where eager Python returns logits).
  const auto& returns = method->function().getSchema().returns();
  if (returns.size() == 1) {
    const c10::TypePtr& type = returns[0].type();
    size_t produced = 0;
    if (auto tuple = type->cast<c10::TupleType>()) produced = tuple->elements().size();
    else if (type->kind() == c10::TypeKind::TensorType) produced = 1;
    if (produced != 0 && produced < outKeys_.size())
      throw Error(where(path_) + ": forward returns " + std::to_string(produced) + " value(s) (" + type->repr_str() +
                  ") but out_keys has " + std::to_string(outKeys_.size()) + " (" + keysToString(outKeys_) + ")");
  }
}

std::vector<c10::IValue> TensorDictModule::arguments(const TensorDict& td) const {
  std::vector<c10::IValue> inputs;
  inputs.reserve(inKeys_.size());
  for (const NestedKey& key : inKeys_) inputs.emplace_back(td.get(key));
  if (!plain_) return inputs;
  // A plain archive's forward parameters past its in keys have defaults (`mask: Optional[Tensor] =
  // None`). One the TensorDict holds under its name is given, as the traced graph's placeholder of
  // that name reads it: the same inputs on both sides. The defaults before it fill their places.
  const auto& parameters = module_.get_method("forward").function().getSchema().arguments();
  size_t given = 0;
  for (size_t i = inputs.size() + 1; i < parameters.size(); ++i)
    if (td.contains(NestedKey(parameters[i].name()))) given = i;
  for (size_t i = inputs.size() + 1; i <= given; ++i) {
    const NestedKey key(parameters[i].name());
    if (td.contains(key)) inputs.emplace_back(td.get(key));
    else inputs.push_back(parameters[i].default_value() ? *parameters[i].default_value() : c10::IValue());
  }
  return inputs;
}

c10::IValue TensorDictModule::call(const TensorDict& td) const {
  torch::NoGradGuard noGrad;
  std::vector<c10::IValue> inputs = arguments(td);
  try {
    return module_.get_method("forward")(std::move(inputs));
  } catch (const c10::Error& e) {
    throw RuntimeError("running " + where(path_) + " failed: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    // TorchScript's interpreter reports errors in scripted code as std::runtime_error.
    throw RuntimeError("running " + where(path_) + " failed: " + e.what());
  }
}

std::vector<c10::IValue> TensorDictModule::outputsOf(const c10::IValue& result) const {
  std::vector<c10::IValue> outputs;
  if (result.isTuple())
    outputs = result.toTupleRef().elements().vec();
  else
    outputs.push_back(result);
  if (outputs.size() < outKeys_.size()) {
    throw RuntimeError(where(path_) + " returned " + std::to_string(outputs.size()) + " value(s) but out_keys has " +
                       std::to_string(outKeys_.size()) + " (" + keysToString(outKeys_) + ")");
  }
  return outputs;
}

void TensorDictModule::write(const c10::IValue& result, TensorDict& dest) const {
  const std::vector<c10::IValue> outputs = outputsOf(result);
  for (size_t i = 0; i < outKeys_.size(); ++i) {
    // None (googlenet's aux outputs in eval mode): the key is not written, in eager as in traced.
    if (isDiscardKey(outKeys_[i]) || outputs[i].isNone()) continue;
    // A plain archive returns what it likes (nested tuples, ints): only its tensors fit a
    // TensorDict, and call() gives the rest.
    if (plain_ && !outputs[i].isTensor()) continue;
    if (!outputs[i].isTensor())
      throw RuntimeError(where(path_) + " output " + std::to_string(i) + " for key " + keyRepr(outKeys_[i]) +
                         " is a " + outputs[i].tagKind() + ", expected a Tensor");
    dest.set(outKeys_[i], outputs[i].toTensor());
  }
}

void TensorDictModule::forward(TensorDict& td, TensorDict* tdOut) const { write(call(td), tdOut ? *tdOut : td); }

TensorDictSequential::TensorDictSequential(std::vector<std::shared_ptr<const TensorDictModuleBase>> modules,
                                           std::optional<std::vector<NestedKey>> selectedOutKeys)
    : modules_(std::move(modules)), selected_(std::move(selectedOutKeys)) {
  useReferenceExecutor();
  if (modules_.empty()) throw Error("a TensorDictSequential needs at least one module");
  if (selected_) {
    const auto written = writtenKeys();
    for (const NestedKey& key : *selected_)
      if (std::find(written.begin(), written.end(), key) == written.end())
        throw Error("selected out key " + keyRepr(key) + " is not written by any module; written keys: " +
                    keysToString(written));
  }
}

std::vector<NestedKey> TensorDictSequential::inKeys() const {
  std::vector<NestedKey> in, written;
  for (const auto& m : modules_) {
    for (const NestedKey& k : m->inKeys())
      if (std::find(written.begin(), written.end(), k) == written.end() &&
          std::find(in.begin(), in.end(), k) == in.end())
        in.push_back(k);
    for (const NestedKey& k : m->outKeys()) written.push_back(k);
  }
  return in;
}

std::vector<NestedKey> TensorDictSequential::writtenKeys() const {
  std::vector<NestedKey> all;
  for (const auto& m : modules_)
    for (const NestedKey& k : m->outKeys())
      if (!isDiscardKey(k)) all.push_back(k);
  // Keep the last occurrence of each key, in order.
  std::vector<NestedKey> out;
  for (size_t i = 0; i < all.size(); ++i)
    if (std::find(all.begin() + i + 1, all.end(), all[i]) == all.end()) out.push_back(all[i]);
  return out;
}

std::vector<NestedKey> TensorDictSequential::outKeys() const { return selected_ ? *selected_ : writtenKeys(); }

void TensorDictSequential::forward(TensorDict& td, TensorDict* tdOut) const {
  // Modules read earlier outputs from the working TensorDict; with a separate destination or a
  // selection, intermediates stay in a working copy so only the out keys reach the destination.
  if (!tdOut && !selected_) {
    for (const auto& m : modules_) m->forward(td);
    return;
  }
  TensorDict work = td;
  for (const auto& m : modules_) m->forward(work);
  TensorDict& dest = tdOut ? *tdOut : td;
  for (const NestedKey& key : outKeys())
    if (!isDiscardKey(key)) dest.set(key, work.get(key));
}

}  // namespace tdfx
