// Lookups over the generated tables of fx_tables.cpp.
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "tdfx/ir/fx_tables.h"

namespace tdfx::fx {

namespace {
// A generated table indexed by one of its text fields (the first row of a key wins); built once,
// never freed (lookups may run during static destruction).
template <typename Row>
using Index = std::unordered_map<std::string_view, const Row*>;
template <typename Row>
const Index<Row>* indexRows(const Row* rows, size_t count, const char* Row::*key) {
  auto* index = new Index<Row>();
  for (size_t i = 0; i < count; ++i) index->emplace(rows[i].*key, &rows[i]);
  return index;
}
template <typename Row>
const Row* lookUp(const Index<Row>& index, std::string_view key) {
  auto it = index.find(key);
  return it == index.end() ? nullptr : it->second;
}
}  // namespace

const generated::CallableSpelling* findCallable(const std::string& spelling) {
  static const auto* index =
      indexRows(generated::kCallables, generated::kNumCallables, &generated::CallableSpelling::spelling);
  return lookUp(*index, spelling);
}

const generated::CallableSpelling* findCallableForAten(const std::string& aten) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, const generated::CallableSpelling*>();
    // The table is sorted by spelling; prefer torch.X over the other namespaces for one operator.
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < generated::kNumCallables; ++i) {
        const auto& c = generated::kCallables[i];
        const std::string_view spelling = c.spelling;
        const bool plainTorch = spelling.rfind("torch.", 0) == 0 && spelling.find('.', 6) == std::string_view::npos;
        if (*c.aten && c.kind == CallKind::AsWritten && plainTorch == (pass == 0)) m->emplace(c.aten, &c);
      }
    return m;
  }();
  return lookUp(*index, aten);
}

std::vector<std::string> splitTableField(const char* field, char separator) {
  std::vector<std::string> out;
  std::string current;
  for (const char* p = field; *p; ++p) {
    if (*p == separator) {
      out.push_back(current);
      current.clear();
    } else {
      current += *p;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

std::vector<std::string> moduleConstantNames(const std::string& type) {
  for (size_t i = 0; i < generated::kNumModuleConstants; ++i)
    if (type == generated::kModuleConstants[i].type) return splitTableField(generated::kModuleConstants[i].constants);
  return {};
}

bool isTensorMethod(const std::string& name) {
  static const auto* methods = [] {
    auto* s = new std::unordered_set<std::string_view>();
    for (size_t i = 0; i < generated::kNumTensorMethods; ++i) s->insert(generated::kTensorMethods[i]);
    return s;
  }();
  return methods->count(name) > 0;
}

std::string operatorName(const std::string& text, bool unary) {
  if (unary && text == "not") return "not_";  // Python's `not`: no magic method, FX records operator.not_
  // The symbol of each magic method's format ("{} + {}" binary, "-{}" unary); the first name of a
  // symbol wins, as Python's operators map to them (`/` is truediv, listed before div).
  static const auto* bySymbol = [] {
    auto* m = new std::unordered_map<std::string, std::string>();
    for (size_t i = 0; i < generated::kNumMagicMethods; ++i) {
      const std::string_view format = generated::kMagicMethods[i].format;
      std::string key;
      if (format.size() > 6 && format.substr(0, 3) == "{} " && format.substr(format.size() - 3) == " {}")
        key = "2" + std::string(format.substr(3, format.size() - 6));
      else if (format.size() > 2 && format.find("{}") == format.size() - 2)
        key = "1" + std::string(format.substr(0, format.size() - 2));
      if (!key.empty()) m->emplace(key, generated::kMagicMethods[i].name);
    }
    return m;
  }();
  auto it = bySymbol->find((unary ? "1" : "2") + text);
  return it == bySymbol->end() ? "" : it->second;
}

const generated::OperatorLowering* findOperatorLowering(const std::string& name, const std::string& operands) {
  for (size_t i = 0; i < generated::kNumOperators; ++i) {
    const auto& row = generated::kOperators[i];
    if (name == row.name && operands == row.operands) return &row;
  }
  return nullptr;
}

const generated::OperatorLowering* findOperatorForAten(const std::string& aten, size_t operands) {
  for (size_t i = 0; i < generated::kNumOperators; ++i) {
    const auto& row = generated::kOperators[i];
    if (aten == row.aten && std::string_view(row.operands).size() == operands && !row.swapped) return &row;
  }
  return nullptr;
}

const generated::MagicMethod* findMagicMethod(const std::string& name) {
  static const auto* index = indexRows(generated::kMagicMethods, generated::kNumMagicMethods, &generated::MagicMethod::name);
  return lookUp(*index, name);
}

}  // namespace tdfx::fx
