// Lookups over the generated tables of fx_tables.cpp.
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "tdfx/ir/fx_tables.h"

namespace tdfx::fx {

const generated::CallableSpelling* findCallable(const std::string& spelling) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, const generated::CallableSpelling*>();
    for (size_t i = 0; i < generated::kNumCallables; ++i) m->emplace(generated::kCallables[i].spelling, &generated::kCallables[i]);
    return m;
  }();
  auto it = index->find(spelling);
  return it == index->end() ? nullptr : it->second;
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
  auto it = index->find(aten);
  return it == index->end() ? nullptr : it->second;
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
  if (unary) {
    if (text == "-") return "neg";
    if (text == "+") return "pos";
    if (text == "~") return "invert";
    if (text == "not") return "not_";
    return "";
  }
  // The operator module's names, as torch.fx.graph.magic_methods lists them.
  static const std::unordered_map<std::string, std::string> binary = {
      {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "truediv"}, {"//", "floordiv"}, {"%", "mod"},
      {"**", "pow"}, {"@", "matmul"}, {"&", "and_"}, {"|", "or_"}, {"^", "xor"}, {"<<", "lshift"},
      {">>", "rshift"}, {"==", "eq"}, {"!=", "ne"}, {"<", "lt"}, {">", "gt"}, {"<=", "le"}, {">=", "ge"}};
  auto it = binary.find(text);
  return it == binary.end() ? "" : it->second;
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
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, const generated::MagicMethod*>();
    for (size_t i = 0; i < generated::kNumMagicMethods; ++i) m->emplace(generated::kMagicMethods[i].name, &generated::kMagicMethods[i]);
    return m;
  }();
  auto it = index->find(name);
  return it == index->end() ? nullptr : it->second;
}

}  // namespace tdfx::fx
