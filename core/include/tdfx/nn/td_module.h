#pragma once
// TensorDictModule and TensorDictSequential: modules that read and write named TensorDict keys,
// after tensordict.nn. These are the eager (reference) implementations that traced graphs must match.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/csrc/jit/api/module.h>

#include "tdfx/nn/source_index.h"
#include "tdfx/tensordict/tensordict.h"

namespace tdfx {

/// Common interface of TensorDictModule, TensorDictSequential and GraphModule. forward is const;
/// the model loader and sequentials share modules as std::shared_ptr<const TensorDictModuleBase>.
class TensorDictModuleBase {
 public:
  virtual ~TensorDictModuleBase() = default;
  /// Keys read from the input TensorDict, in order (for sequentials: read before written).
  virtual std::vector<NestedKey> inKeys() const = 0;
  /// Keys written (for sequentials: the selected keys, or everything written with duplicates
  /// removed keeping the LAST occurrence, as tensordict does).
  virtual std::vector<NestedKey> outKeys() const = 0;
  /// Reads inputs from `td`, writes outputs to `*tdOut`, or to `td` when tdOut is null.
  /// Runs without autograd. Throws tdfx::KeyError for missing keys (or outputs that do not fit the
  /// destination's batch size), tdfx::RuntimeError otherwise.
  virtual void forward(TensorDict& td, TensorDict* tdOut = nullptr) const = 0;
};

/// Wraps one TorchScript module with in_keys and out_keys. Holds a torch::jit::Module handle (the
/// TorchScript object is shared with the archive's root, not copied).
class TensorDictModule : public TensorDictModuleBase {
 public:
  /// `module` is a handle sharing the TorchScript object; `path` is its attribute path inside the
  /// archive's root module ("" for the root), used for error messages and graph metadata.
  /// Throws tdfx::Error when the module has no forward, the forward's arity cannot take `inKeys`,
  /// out_keys is empty, or a known return type does not give one value per out key.
  TensorDictModule(torch::jit::Module module, std::vector<NestedKey> inKeys,
                   std::vector<NestedKey> outKeys, std::string path = "");

  std::vector<NestedKey> inKeys() const override { return inKeys_; }
  std::vector<NestedKey> outKeys() const override { return outKeys_; }
  void forward(TensorDict& td, TensorDict* tdOut = nullptr) const override;
  /// The forward's arguments read from `td` (the in keys' values), without self.
  /// Throws tdfx::KeyError for a missing key.
  std::vector<c10::IValue> arguments(const TensorDict& td) const;
  /// Runs forward on the in keys' values and returns what it returned, whatever its structure
  /// (a plain archive may return nested tuples, lists, dicts, ints). Throws like forward.
  c10::IValue call(const TensorDict& td) const;
  /// The values zipped with the out keys: the elements of a returned tuple, or the value itself.
  /// Throws tdfx::RuntimeError when there are fewer than the out keys.
  std::vector<c10::IValue> outputsOf(const c10::IValue& result) const;
  /// Writes `result` (as call returned it) to the out keys, as forward does.
  void write(const c10::IValue& result, TensorDict& dest) const;

  const torch::jit::Module& module() const { return module_; }
  const std::string& path() const { return path_; }
  /// Source locations from the archive's debug info, decoded safely by the loader; null when the
  /// module was not loaded from a file (the tracer then reads the debug info directly).
  const std::shared_ptr<const SourceIndex>& sourceIndex() const { return sources_; }
  void setSourceIndex(std::shared_ptr<const SourceIndex> sources) { sources_ = std::move(sources); }
  /// True for the root of a plain TorchScript archive (no tensordict.json): it is traced as
  /// torch.fx.symbolic_trace traces an nn.Module, one placeholder per forward parameter and the
  /// return value as the output; its keys are the parameter names.
  bool isPlain() const { return plain_; }
  void setPlain(bool plain) { plain_ = plain; }

 private:
  bool plain_ = false;
  std::shared_ptr<const SourceIndex> sources_;
  torch::jit::Module module_;
  std::vector<NestedKey> inKeys_;
  std::vector<NestedKey> outKeys_;
  std::string path_;
};

/// Runs modules in order on one TensorDict; later modules see earlier modules' outputs. The child
/// modules are shared (std::shared_ptr), not copied. forward passes the children's errors through.
class TensorDictSequential : public TensorDictModuleBase {
 public:
  /// `selectedOutKeys`, when given, limits what is written to the destination; every selected key
  /// must be written by some module. Throws tdfx::Error when `modules` is empty or a selected key
  /// is never written.
  explicit TensorDictSequential(std::vector<std::shared_ptr<const TensorDictModuleBase>> modules,
                                std::optional<std::vector<NestedKey>> selectedOutKeys = std::nullopt);

  std::vector<NestedKey> inKeys() const override;
  std::vector<NestedKey> outKeys() const override;
  /// Every key written by the modules, de-duplicated keeping the last occurrence.
  std::vector<NestedKey> writtenKeys() const;
  void forward(TensorDict& td, TensorDict* tdOut = nullptr) const override;

  const std::vector<std::shared_ptr<const TensorDictModuleBase>>& modules() const { return modules_; }
  const std::optional<std::vector<NestedKey>>& selectedOutKeys() const { return selected_; }

 private:
  std::vector<std::shared_ptr<const TensorDictModuleBase>> modules_;
  std::optional<std::vector<NestedKey>> selected_;
};

/// True for the out key "_", whose value is computed but never written.
bool isDiscardKey(const NestedKey& key);

/// Makes TorchScript run every graph op by op, without fusion or other executor optimisations,
/// so the eager module and a traced graph use the same kernels and agree bit for bit.
/// Called by the module constructors; idempotent.
void useReferenceExecutor();

}  // namespace tdfx
