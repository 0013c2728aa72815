#pragma once
// TensorDict: a dictionary of tensors sharing leading batch dimensions, after Python's tensordict.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "tdfx/tensordict/nested_key.h"

namespace tdfx {

/// An ordered mapping from string keys to tensors or nested TensorDicts. Every entry's shape starts
/// with `batchSize()`. Entries keep insertion order, like a Python dict.
///
/// A TensorDict is a value type: copying it copies the table of entries, while tensors (like Python
/// references) are shared. Nested TensorDicts are owned by their parent. Errors throw tdfx::KeyError.
class TensorDict {
 public:
  explicit TensorDict(std::vector<int64_t> batchSize = {});
  TensorDict(const TensorDict& other);
  TensorDict& operator=(const TensorDict& other);
  TensorDict(TensorDict&&) noexcept;
  TensorDict& operator=(TensorDict&&) noexcept;
  ~TensorDict();

  const std::vector<int64_t>& batchSize() const { return batchSize_; }

  /// Sets a tensor; intermediate sub-TensorDicts are created with this batch size. Throws when the
  /// tensor's leading dims do not match the batch size, or a key part names an existing tensor.
  void set(const NestedKey& key, const at::Tensor& value);
  /// Sets a nested TensorDict (copied). Its batch size must start with this one's; throws KeyError
  /// otherwise, or when a key part names an existing tensor.
  void setTensorDict(const NestedKey& key, const TensorDict& value);

  /// The tensor at `key`; throws KeyError naming the key and listing the existing keys.
  const at::Tensor& get(const NestedKey& key) const;
  /// The nested TensorDict at `key`; throws KeyError when missing or when it holds a tensor.
  const TensorDict& getTensorDict(const NestedKey& key) const;
  bool contains(const NestedKey& key) const;
  bool isTensorDict(const NestedKey& key) const;
  /// Removes the entry (a tensor or a whole sub-TensorDict); throws KeyError when missing.
  void erase(const NestedKey& key);

  /// Keys in insertion order. With includeNested, keys of sub-TensorDicts follow their parent's key;
  /// with leavesOnly, keys of sub-TensorDicts themselves are left out.
  std::vector<NestedKey> keys(bool includeNested = false, bool leavesOnly = false) const;
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  /// A copy whose tensors are cloned too (Python's td.clone()).
  TensorDict clone() const;
  /// A copy with every tensor converted (Python's td.to(dtype) / td.to(device)).
  TensorDict to(c10::ScalarType dtype) const;
  TensorDict to(c10::Device device) const;

  /// Python's repr of a TensorDict, fields in insertion order.
  std::string toString() const;

 private:
  struct Entry;
  Entry* find(const std::string& part);
  const Entry* find(const std::string& part) const;
  const Entry& lookup(const NestedKey& key) const;
  TensorDict& parentFor(const NestedKey& key);
  void checkBatch(const NestedKey& key, at::IntArrayRef shape) const;
  void collectKeys(const NestedKey& prefix, bool includeNested, bool leavesOnly,
                   std::vector<NestedKey>& out) const;
  void appendRepr(std::string& out, int indent) const;

  std::vector<int64_t> batchSize_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace tdfx
