#include "tdfx/util/dtype.h"

#include <utility>

#include "tdfx/error.h"

namespace tdfx {
namespace {
const std::pair<const char*, c10::ScalarType> kDtypeNames[] = {
    {"float32", c10::kFloat}, {"float64", c10::kDouble}, {"float16", c10::kHalf},   {"bfloat16", c10::kBFloat16},
    {"int64", c10::kLong},    {"int32", c10::kInt},      {"int16", c10::kShort},    {"int8", c10::kChar},
    {"uint8", c10::kByte},    {"bool", c10::kBool},      {"complex64", c10::kComplexFloat},
    {"complex128", c10::kComplexDouble}};
// Quantized dtypes name a call's argument (`torch.quantize_per_tensor(x, 0.1, 10, torch.qint8)`) and
// a tensor's type; inputs are not drawn in them.
const std::pair<const char*, c10::ScalarType> kQuantizedDtypeNames[] = {
    {"qint8", c10::kQInt8}, {"quint8", c10::kQUInt8}, {"qint32", c10::kQInt32},
    {"quint4x2", c10::kQUInt4x2}, {"quint2x4", c10::kQUInt2x4}};
const std::pair<const char*, c10::ScalarType> kDtypeAliases[] = {
    {"float", c10::kFloat}, {"double", c10::kDouble}, {"half", c10::kHalf}, {"long", c10::kLong}, {"int", c10::kInt}};
}  // namespace

c10::ScalarType parseDtype(const std::string& name) {
  for (const auto& [n, t] : kDtypeNames)
    if (name == n) return t;
  for (const auto& [n, t] : kDtypeAliases)
    if (name == n) return t;
  for (const auto& [n, t] : kQuantizedDtypeNames)
    if (name == n) return t;
  std::string accepted;
  for (const auto& [n, t] : kDtypeNames) accepted += (accepted.empty() ? "" : ", ") + std::string(n);
  throw Error("unknown dtype \"" + name + "\"; expected one of " + accepted);
}

std::string dtypeToString(c10::ScalarType dtype) {
  for (const auto& [n, t] : kDtypeNames)
    if (dtype == t) return n;
  for (const auto& [n, t] : kQuantizedDtypeNames)
    if (dtype == t) return n;
  return c10::toString(dtype);
}

std::string dtypeRepr(c10::ScalarType dtype) { return "torch." + dtypeToString(dtype); }

}  // namespace tdfx
