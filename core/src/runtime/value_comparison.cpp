#include "value_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include <ATen/ATen.h>

#include "tdfx/ir/graph_printer.h"
#include "tdfx/util/dtype.h"

namespace tdfx::runtime {
namespace {

// The values a tensor stands for, in memory: a neg or conj view keeps its raw bytes and a bit that
// says how to read them, so the bits are resolved before bytes are compared.
// A sparse (or other non-strided) tensor stands for its dense values.
at::Tensor materialized(const at::Tensor& t) {
  const at::Tensor dense = t.layout() == at::kStrided ? t : t.to_dense();
  return dense.resolve_conj().resolve_neg().contiguous();
}

bool bitwiseEqual(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type() || a.layout() != b.layout()) return false;
  const at::Tensor ca = materialized(a), cb = materialized(b);
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.numel() * ca.element_size()) == 0;
}

// Values as doubles for the numeric comparison; a complex tensor as its (real, imaginary) pairs, so
// that a difference in the imaginary part is not lost.
at::Tensor comparable(const at::Tensor& t) {
  if (t.is_quantized()) return t.int_repr().to(at::kDouble);  // the integers; the mapping is compared apart
  if (at::isComplexType(t.scalar_type())) return at::view_as_real(materialized(t)).to(at::kDouble);
  return materialized(t).to(at::kDouble);
}

// What differs in how two quantized tensors map their integers to values ("" when nothing does):
// the scheme, the scale(s), the zero point(s) or the axis. Compared bitwise, as the integers are.
std::string quantizationDifference(const at::Tensor& a, const at::Tensor& b) {
  if (a.is_quantized() != b.is_quantized()) return a.is_quantized() ? "eager is quantized, traced not" : "traced is quantized, eager not";
  if (!a.is_quantized()) return "";
  if (a.qscheme() != b.qscheme())
    return std::string("qschemes differ (") + c10::toString(a.qscheme()) + " vs " + c10::toString(b.qscheme()) + ")";
  if (a.qscheme() == at::kPerTensorAffine || a.qscheme() == at::kPerTensorSymmetric) {
    const double sa = a.q_scale(), sb = b.q_scale();
    if (std::memcmp(&sa, &sb, sizeof sa) != 0) {
      std::ostringstream s;
      s << "scales differ (" << sa << " vs " << sb << ")";
      return s.str();
    }
    if (a.q_zero_point() != b.q_zero_point())
      return "zero points differ (" + std::to_string(a.q_zero_point()) + " vs " + std::to_string(b.q_zero_point()) + ")";
    return "";
  }
  if (a.q_per_channel_axis() != b.q_per_channel_axis())
    return "axes differ (" + std::to_string(a.q_per_channel_axis()) + " vs " + std::to_string(b.q_per_channel_axis()) + ")";
  if (!bitwiseEqual(a.q_per_channel_scales(), b.q_per_channel_scales())) return "per-channel scales differ";
  if (!bitwiseEqual(a.q_per_channel_zero_points(), b.q_per_channel_zero_points())) return "per-channel zero points differ";
  return "";
}

}  // namespace

KeyComparison compareKey(const NestedKey& key, const at::Tensor& eager, const at::Tensor& traced,
                         const VerifyOptions& options) {
  // A sparse output is compared by its dense values, once both sides have the same layout.
  if (eager.layout() == traced.layout() && eager.layout() != at::kStrided)
    return compareKey(key, eager.to_dense(), traced.to_dense(), options);
  KeyComparison c;
  c.key = key;
  if (eager.layout() != traced.layout()) {
    std::ostringstream layouts;
    layouts << "layouts differ (" << eager.layout() << " vs " << traced.layout() << ")";
    c.problem = layouts.str();
    return c;
  }
  c.eagerShape = eager.sizes().vec();
  c.tracedShape = traced.sizes().vec();
  c.eagerDtype = dtypeToString(eager.scalar_type());
  c.tracedDtype = dtypeToString(traced.scalar_type());
  if (c.eagerShape != c.tracedShape || eager.scalar_type() != traced.scalar_type()) {
    c.problem = c.eagerShape != c.tracedShape ? "shapes differ" : "dtypes differ";
    return c;
  }
  if (std::string q = quantizationDifference(eager, traced); !q.empty()) {
    c.problem = std::move(q);
    return c;
  }
  c.bitwiseEqual = bitwiseEqual(eager, traced);
  const bool floating = at::isFloatingType(eager.scalar_type()) || at::isComplexType(eager.scalar_type());
  const at::Tensor a = comparable(eager), b = comparable(traced);
  if (floating) {
    c.eagerNaN = at::isnan(eager).sum().item<int64_t>();
    c.tracedNaN = at::isnan(traced).sum().item<int64_t>();
    c.eagerInf = at::isinf(eager).sum().item<int64_t>();
    c.tracedInf = at::isinf(traced).sum().item<int64_t>();
  }
  const at::Tensor finite = at::isfinite(a).logical_and(at::isfinite(b));
  if (finite.any().item<bool>()) {
    const at::Tensor diff = (a - b).abs().masked_select(finite);
    c.maxAbsDiff = diff.max().item<double>();
    const at::Tensor denom = a.abs().masked_select(finite);
    const at::Tensor nonzero = denom.ne(0);
    if (nonzero.any().item<bool>())
      c.maxRelDiff = (diff.masked_select(nonzero) / denom.masked_select(nonzero)).max().item<double>();
  }
  // Equal bytes are equal values: a row with a difference is never bitwise equal.
  if (c.maxAbsDiff > 0.0) c.bitwiseEqual = false;
  if (c.bitwiseEqual) {
    c.matches = true;
  } else if (!options.bitwise()) {
    // NaN in the same places count as equal; infinities must agree exactly.
    c.matches = at::isclose(a, b, options.rtol, options.atol, /*equal_nan=*/true).all().item<bool>();
  } else if (floating) {
    // Bitwise means the bytes: -0.0 is not 0.0, and a NaN's payload counts. Say why equal values fail.
    const at::Tensor sameValue = a.eq(b).logical_or(at::isnan(a).logical_and(at::isnan(b)));
    if (sameValue.all().item<bool>())
      c.problem = "equal values, other bits: the sign of a zero or the payload of a NaN differs";
  }
  return c;
}

namespace {

std::string scalarKind(const c10::IValue& v) {
  if (v.isBool()) return "bool";
  if (v.isInt()) return "int";
  if (v.isDouble()) return "float";
  if (v.isString()) return "str";
  if (v.isNone()) return "None";
  if (v.isDevice()) return "device";
  return v.tagKind();
}

// A row for two leaves that are not both tensors: None, bool, int, float, str.
KeyComparison compareScalars(const NestedKey& key, const c10::IValue& eager, const c10::IValue& traced,
                             const VerifyOptions& options) {
  KeyComparison c;
  c.key = key;
  c.eagerDtype = scalarKind(eager);
  c.tracedDtype = scalarKind(traced);
  if (c.eagerDtype != c.tracedDtype) {
    c.problem = "eager gives " + c.eagerDtype + ", traced " + c.tracedDtype;
    return c;
  }
  if (eager.isDouble()) {
    const double a = eager.toDouble(), b = traced.toDouble();
    c.bitwiseEqual = std::memcmp(&a, &b, sizeof a) == 0;  // the sign of a zero and a NaN's payload count
    if (std::isfinite(a) && std::isfinite(b)) c.maxAbsDiff = std::fabs(a - b);
    c.matches = c.bitwiseEqual || (!options.bitwise() && std::isfinite(a) && std::isfinite(b) &&
                                   c.maxAbsDiff <= options.atol + options.rtol * std::fabs(b));
  } else if (eager.isInt()) {
    c.bitwiseEqual = c.matches = eager.toInt() == traced.toInt();
    c.maxAbsDiff = std::fabs(static_cast<double>(eager.toInt()) - static_cast<double>(traced.toInt()));
  } else if (eager.isNone()) {
    c.bitwiseEqual = c.matches = true;
    c.problem = "None in both";
  } else if (eager.isBool() || eager.isString()) {
    c.bitwiseEqual = c.matches = eager == traced;
  } else if (eager.isDevice()) {
    c.bitwiseEqual = c.matches = eager.toDevice() == traced.toDevice();
    if (!c.matches) c.problem = "devices differ (" + eager.toDevice().str() + " vs " + traced.toDevice().str() + ")";
  } else {
    // A kind verify cannot compare (a Generator, an object, a stream): not shown to agree, so the
    // verdict can be no better than NOT PROVEN.
    c.problem = "a " + c.eagerDtype + " cannot be compared";
    c.notComparable = true;
  }
  return c;
}

std::vector<c10::IValue> elementsOf(const c10::IValue& v) {
  if (v.isTuple()) return v.toTupleRef().elements().vec();
  if (v.isList()) return v.toListRef().vec();
  return {};
}

}  // namespace

// Compares two values of any structure, one row per leaf: tensors, scalars, and the items of
// tuples, lists and string-keyed dicts, keyed by their path from `path` (`output_1[0]`).
void compareValues(const std::string& path, const c10::IValue& eagerValue, const c10::IValue& tracedValue,
                   const VerifyOptions& options, std::vector<KeyComparison>& rows) {
  const NestedKey key{std::vector<std::string>{path}};
  // TorchScript holds an Optional[Tensor] that is None as an undefined tensor: it is None.
  const auto noneIfUndefined = [](const c10::IValue& v) {
    return v.isTensor() && !v.toTensor().defined() ? c10::IValue() : v;
  };
  const c10::IValue eager = noneIfUndefined(eagerValue), traced = noneIfUndefined(tracedValue);
  if (eager.isTensor() && traced.isTensor()) {
    rows.push_back(compareKey(key, eager.toTensor(), traced.toTensor(), options));
    return;
  }
  const bool eagerSequence = eager.isTuple() || eager.isList(), tracedSequence = traced.isTuple() || traced.isList();
  if (eagerSequence && tracedSequence) {
    const auto a = elementsOf(eager), b = elementsOf(traced);
    if (a.size() != b.size()) {
      KeyComparison c;
      c.key = key;
      c.problem = "lengths differ (" + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + ")";
      rows.push_back(c);
      return;
    }
    for (size_t i = 0; i < a.size(); ++i) compareValues(path + "[" + std::to_string(i) + "]", a[i], b[i], options, rows);
    return;
  }
  if (eager.isGenericDict() && traced.isGenericDict()) {
    const auto a = eager.toGenericDict(), b = traced.toGenericDict();
    for (const auto& item : a) {
      const std::string name = item.key().isString() ? "'" + item.key().toStringRef() + "'" : item.key().tagKind();
      const auto other = b.find(item.key());
      if (other == b.end()) {
        KeyComparison c;
        c.key = NestedKey(std::vector<std::string>{path + "[" + name + "]"});
        c.problem = "missing from the traced output";
        rows.push_back(c);
        continue;
      }
      compareValues(path + "[" + name + "]", item.value(), other->value(), options, rows);
    }
    if (b.size() > a.size()) {
      KeyComparison c;
      c.key = key;
      c.problem = "the traced dict has " + std::to_string(b.size() - a.size()) + " more item(s)";
      rows.push_back(c);
    }
    return;
  }
  if (eager.isTensor() || traced.isTensor() || eagerSequence || tracedSequence || eager.isGenericDict() ||
      traced.isGenericDict()) {
    KeyComparison c;
    c.key = key;
    c.eagerDtype = eager.isTensor() ? dtypeToString(eager.toTensor().scalar_type()) : scalarKind(eager);
    c.tracedDtype = traced.isTensor() ? dtypeToString(traced.toTensor().scalar_type()) : scalarKind(traced);
    c.problem = "eager gives a " + eager.tagKind() + ", traced a " + traced.tagKind();
    rows.push_back(c);
    return;
  }
  rows.push_back(compareScalars(key, eager, traced, options));
}

bool bitwiseSame(const c10::IValue& eager, const c10::IValue& traced) {
  if (eager.isTensor() && traced.isTensor()) {
    const at::Tensor& a = eager.toTensor();
    const at::Tensor& b = traced.toTensor();
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    return bitwiseEqual(a, b);
  }
  if ((eager.isTuple() || eager.isList()) && (traced.isTuple() || traced.isList())) {
    const auto a = elementsOf(eager), b = elementsOf(traced);
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!bitwiseSame(a[i], b[i])) return false;
    return true;
  }
  if (eager.isTensor() || traced.isTensor() || eager.isGenericDict() || traced.isGenericDict()) return false;
  if (eager.isDouble() && traced.isDouble()) {
    const double a = eager.toDouble(), b = traced.toDouble();
    return std::memcmp(&a, &b, sizeof a) == 0;
  }
  if (eager.isNone() || traced.isNone()) return eager.isNone() && traced.isNone();
  if (eager.isDevice() || traced.isDevice()) return eager.isDevice() && traced.isDevice() && eager.toDevice() == traced.toDevice();
  if (eager.isInt() || eager.isBool() || eager.isString()) return eager.tagKind() == traced.tagKind() && eager == traced;
  return false;  // anything else: compareValues decides
}

// "float64 [2, 3]", "int 4", "tuple".
std::string describeValue(const c10::IValue& v) {
  if (v.isTensor() && !v.toTensor().defined()) return "None";
  if (v.isTensor()) return dtypeToString(v.toTensor().scalar_type()) + " " + formatShape(v.toTensor().sizes().vec());
  if (v.isInt()) return "int " + std::to_string(v.toInt());
  if (v.isBool()) return std::string("bool ") + (v.toBool() ? "True" : "False");
  if (v.isDouble()) {
    std::ostringstream s;
    s << "float " << v.toDouble();
    return s.str();
  }
  return scalarKind(v);
}


}  // namespace tdfx::runtime
