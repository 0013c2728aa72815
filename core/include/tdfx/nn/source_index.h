#pragma once
// Where TorchScript nodes came from in the user's Python source.
#include <memory>
#include <string>
#include <unordered_map>

#include <torch/csrc/jit/ir/ir.h>

namespace tdfx {

/// The user's source behind one TorchScript node.
struct SourceLocation {
  std::string file;
  int line = 0;
  std::string window;       ///< the source from the node's range onwards (a bounded window)
  size_t rangeLength = 0;   ///< how much of `window` the recorded range covers
};

/// Source locations of the nodes of a loaded archive. LibTorch decodes an archive's debug info
/// lazily and can crash on a damaged one, so the model loader decodes it in an isolated child
/// process and hands the result to the tracer through this index; the tracer then never touches
/// the debug info itself. Keys are non-owning pointers to the nodes of one loaded module's
/// TorchScript graphs: the index is meaningful only with that module, and is shared (as
/// std::shared_ptr<const SourceIndex>) by the TensorDictModules built from it.
class SourceIndex {
 public:
  void add(const torch::jit::Node* node, SourceLocation location) { map_[node] = std::move(location); }
  const SourceLocation* find(const torch::jit::Node* node) const {
    auto it = map_.find(node);
    return it == map_.end() ? nullptr : &it->second;
  }
  size_t size() const { return map_.size(); }

 private:
  std::unordered_map<const torch::jit::Node*, SourceLocation> map_;
};

}  // namespace tdfx
