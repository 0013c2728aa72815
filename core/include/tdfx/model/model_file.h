#pragma once
// Loading a model file: a TorchScript archive, optionally carrying tdfx's tensordict.json.
// The format is specified in docs/model-format.md.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>
#include <torch/csrc/jit/api/module.h>

#include "tdfx/nn/td_module.h"

namespace tdfx {

class ArchiveReader;
struct DeferredWeights;

/// One example input from the file: the key, its shape and dtype.
struct InputSpec {
  NestedKey key;
  std::vector<int64_t> shape;
  c10::ScalarType dtype = c10::ScalarType::Float;
};

/// A loaded model: the TorchScript root and the TensorDict module built from its description.
/// `root` and the modules in `module` are handles sharing the loaded TorchScript objects, so a
/// copy of a ModelFile shares them too. Keep it alive while a GraphModule traced from it runs.
struct ModelFile {
  std::string path;
  torch::jit::Module root;
  std::shared_ptr<const TensorDictModuleBase> module;
  /// True when the archive carried tensordict.json; false for a plain TorchScript archive.
  bool hasTensorDictMetadata = false;
  /// How tdfx-export saved the modules ("torch.jit.script" or "torch.jit.trace"); empty when not said.
  /// A traced archive has lost the Python call forms, so its graph's call forms are approximate.
  std::string exportedWith;
  /// The TorchScript file format version the archive records (its `version` record, written by
  /// the torch that saved it); 0 when it cannot be read.
  uint64_t formatVersion = 0;
  std::vector<int64_t> batchSize;
  std::vector<InputSpec> exampleInputs;
  /// The parameters whose values a load with WeightsRead::AfterLoad left unread (null: none);
  /// readDeferredWeights reads them.
  std::shared_ptr<DeferredWeights> deferredWeights;
};

/// A model file opened and checked (a non-empty zip whose directory declares sane sizes), not yet
/// deserialised. Its bytes are read through the open descriptor (pread), so loading it opens no
/// file: a sandbox can forbid every open first, and the model's code (its `__setstate__` runs
/// while it is deserialised) then opens nothing either. Move-only; closes the file when destroyed.
class ModelArchive {
 public:
  /// Throws tdfx::ModelFileError naming the file and what is wrong.
  static ModelArchive open(const std::string& path);
  const std::string& path() const { return path_; }
  /// The reader LibTorch's importer reads the archive through (shared: it outlives a load).
  const std::shared_ptr<ArchiveReader>& reader() const { return reader_; }

 private:
  std::string path_;
  std::shared_ptr<ArchiveReader> reader_;
};

/// When a load reads the parameters' values.
enum class WeightsRead {
  DuringLoad,  ///< all of them, before the load returns
  /// After the load, in readDeferredWeights: the parameters' records (the bulk of a file) are left
  /// unread, so a model's graph can be traced and shown first. Only parameters wait: a tracer
  /// computes with buffers and constants (FX's concrete values), never with a parameter's value,
  /// which is a Proxy. A file whose objects run `__setstate__` (which may read any value while
  /// the file is deserialised) is loaded again with every value read during the load.
  AfterLoad,
};

/// Deserialises an opened archive, as loadModelFile does after opening it.
ModelFile loadModelArchive(const ModelArchive& archive, WeightsRead weights = WeightsRead::DuringLoad);

/// Reads the parameter values a load with WeightsRead::AfterLoad left unread; nothing when none
/// are left. Throws tdfx::ModelFileError when the file was changed in place since it was opened
/// (a record is shorter now), and again at every later call: the model's values are incomplete.
void readDeferredWeights(const ModelFile& model);

/// Loads `path` on the CPU, in this process (ModelArchive::open, then loadModelArchive): checks that it is a non-empty zip file whose
/// directory declares sane sizes, loads it once, decodes its debug info into a SourceIndex, checks
/// that every tensor fits its storage and puts the root in eval mode. May run on any thread.
/// Throws tdfx::ModelFileError naming the file and what is wrong. LibTorch's importer can crash
/// (not throw) on a damaged archive, and the model's code runs here: for untrusted files use a
/// ModelWorker (tdfx/worker/model_worker.h), which loads them in a process of their own.
ModelFile loadModelFile(const std::string& path);

/// Builds a model from an already loaded TorchScript root and the text of tensordict.json
/// (empty: treat the root as one module, keys from its forward signature). `root` is shared, not
/// copied; `sources` (may be null) is shared by every TensorDictModule built. Throws
/// tdfx::ModelFileError naming `path`, the JSON location and the problem.
ModelFile modelFromMetadata(torch::jit::Module root, const std::string& metadataJson,
                            const std::string& path = "<memory>", std::shared_ptr<const SourceIndex> sources = nullptr);

/// Random inputs for the example specs: floats from a normal distribution, integers in [0, 10),
/// bools from a coin flip, all from a generator seeded with `seed`. Throws tdfx::KeyError when a
/// shape does not start with the model's batch size.
TensorDict makeExampleInputs(const ModelFile& model, uint64_t seed = 0);

}  // namespace tdfx
