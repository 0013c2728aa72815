#include "tdfx/tensordict/nested_key.h"

#include "tdfx/util/python_repr.h"

namespace tdfx {

NestedKey NestedKey::tail() const {
  return NestedKey(std::vector<std::string>(parts_.begin() + (parts_.empty() ? 0 : 1), parts_.end()));
}

NestedKey NestedKey::child(const std::string& part) const {
  std::vector<std::string> parts = parts_;
  parts.push_back(part);
  return NestedKey(std::move(parts));
}

namespace {
std::string joinParts(const NestedKey& key, std::string (*format)(const std::string&)) {
  if (key.size() == 1) return format(key.front());
  std::string out = "(";
  for (size_t i = 0; i < key.size(); ++i) {
    if (i) out += ", ";
    out += format(key.parts()[i]);
  }
  return out + ")";
}
}  // namespace

std::string keyToString(const NestedKey& key) {
  return joinParts(key, [](const std::string& s) { return s; });
}

std::string keyRepr(const NestedKey& key) {
  return joinParts(key, [](const std::string& s) { return pythonStringRepr(s); });
}

std::string keysToString(const std::vector<NestedKey>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i) out += ", ";
    out += keyRepr(keys[i]);
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace tdfx
