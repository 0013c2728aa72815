#pragma once
// NestedKey: the address of an entry in a TensorDict, a string or a tuple of strings.
#include <initializer_list>
#include <string>
#include <vector>

namespace tdfx {

/// A key into a (possibly nested) TensorDict. `"a"` and `("a",)` are the same key, so a key is
/// stored as its list of parts; a plain string is a one-part key.
class NestedKey {
 public:
  NestedKey() = default;
  NestedKey(std::string part) : parts_{std::move(part)} {}  // NOLINT: implicit, like Python
  NestedKey(const char* part) : parts_{std::string(part)} {}  // NOLINT
  NestedKey(std::initializer_list<std::string> parts) : parts_(parts) {}
  explicit NestedKey(std::vector<std::string> parts) : parts_(std::move(parts)) {}

  const std::vector<std::string>& parts() const { return parts_; }
  size_t size() const { return parts_.size(); }
  bool empty() const { return parts_.empty(); }
  const std::string& front() const { return parts_.front(); }
  const std::string& back() const { return parts_.back(); }
  /// The key without its first part (`("a","b","c")` -> `("b","c")`).
  NestedKey tail() const;
  /// This key with `part` appended.
  NestedKey child(const std::string& part) const;

  /// Whether the key was written as a single string ("x") rather than a tuple; equal keys compare
  /// equal either way, but printing follows what the user wrote for one-part tuples.
  bool isSinglePart() const { return parts_.size() == 1; }

  friend bool operator==(const NestedKey& a, const NestedKey& b) { return a.parts_ == b.parts_; }
  friend bool operator!=(const NestedKey& a, const NestedKey& b) { return !(a == b); }
  friend bool operator<(const NestedKey& a, const NestedKey& b) { return a.parts_ < b.parts_; }

 private:
  std::vector<std::string> parts_;
};

/// Python str() of the key as FX prints it in a graph: `input`, `(input, x)`.
std::string keyToString(const NestedKey& key);

/// Python repr() of the key as it appears in generated code: `'input'`, `('input', 'x')`.
std::string keyRepr(const NestedKey& key);

/// Joins a list of keys for error messages: `'a', ('b', 'c')`.
std::string keysToString(const std::vector<NestedKey>& keys);

}  // namespace tdfx
