#include "python_subscript.h"

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>

#include "printed_call.h"
#include "tdfx/error.h"

namespace tdfx::runtime {

namespace {

namespace idx = at::indexing;

using ValueOf = std::function<c10::IValue(const Node*)>;

std::optional<int64_t> sliceBound(const Argument& bound, const ValueOf& valueOf) {
  const c10::IValue v = argumentValue(bound, valueOf);
  if (v.isNone()) return std::nullopt;
  if (!v.isInt()) throw RuntimeError("slice bounds must be ints or None, not " + v.tagKind());
  return v.toInt();
}

struct PythonSlice {
  std::optional<int64_t> start, stop, step;
};

PythonSlice sliceOf(const ArgumentSlice& s, const ValueOf& valueOf) {
  return {sliceBound(s.items.at(0), valueOf), sliceBound(s.items.at(1), valueOf), sliceBound(s.items.at(2), valueOf)};
}

// The positions slice.indices(size) selects, as Python computes them.
std::vector<int64_t> slicePositions(const PythonSlice& s, int64_t size) {
  const int64_t step = s.step.value_or(1);
  if (step == 0) throw RuntimeError("slice step cannot be zero");
  const auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + size : *v;
    if (step > 0) return std::min(std::max<int64_t>(i, 0), size);
    return std::min(std::max<int64_t>(i, -1), size - 1);
  };
  const int64_t start = clamp(s.start, step > 0 ? 0 : size - 1);
  const int64_t stop = clamp(s.stop, step > 0 ? size : -1);
  std::vector<int64_t> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
  return out;
}

idx::TensorIndex tensorIndexOf(const c10::IValue& v) {
  if (v.isNone()) return idx::None;
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt();
  if (v.isTensor()) return v.toTensor();
  if (v.isIntList()) return at::tensor(v.toIntVector(), at::kLong);
  throw RuntimeError("a tensor cannot be indexed by a " + v.tagKind());
}

idx::TensorIndex tensorIndexOf(const Argument& a, const ValueOf& valueOf) {
  if (const auto* s = std::get_if<ArgumentSlice>(&a.value)) {
    const PythonSlice bounds = sliceOf(*s, valueOf);
    const auto opt = [](std::optional<int64_t> v) { return v ? c10::optional<int64_t>(*v) : c10::nullopt; };
    return idx::Slice(opt(bounds.start), opt(bounds.stop), opt(bounds.step));
  }
  if (std::holds_alternative<ArgumentEllipsis>(a.value)) return idx::Ellipsis;
  if (const auto* l = std::get_if<ArgumentList>(&a.value)) {
    std::vector<int64_t> positions;
    for (const Argument& item : l->items) {
      const c10::IValue v = argumentValue(item, valueOf);
      if (!v.isInt()) return tensorIndexOf(argumentValue(a, valueOf));
      positions.push_back(v.toInt());
    }
    return at::tensor(positions, at::kLong);
  }
  return tensorIndexOf(argumentValue(a, valueOf));
}

c10::IValue indexTensor(const at::Tensor& t, const Argument& index, const ValueOf& valueOf) {
  std::vector<idx::TensorIndex> indices;
  if (const auto* tuple = std::get_if<ArgumentTuple>(&index.value)) {
    for (const Argument& item : tuple->items) indices.push_back(tensorIndexOf(item, valueOf));
  } else if (index.isNode()) {
    const c10::IValue v = valueOf(index.node());
    if (v.isTuple()) {
      for (const c10::IValue& item : v.toTupleRef().elements()) indices.push_back(tensorIndexOf(item));
    } else {
      indices.push_back(tensorIndexOf(v));
    }
  } else {
    indices.push_back(tensorIndexOf(index, valueOf));
  }
  return t.index(indices);
}

int64_t position(int64_t i, size_t size, const char* what) {
  const int64_t n = static_cast<int64_t>(size);
  const int64_t p = i < 0 ? i + n : i;
  if (p < 0 || p >= n) throw RuntimeError(std::string(what) + " index " + std::to_string(i) + " out of range");
  return p;
}

}  // namespace

c10::IValue pythonSubscript(const c10::IValue& container, const Argument& index, const ValueOf& valueOf) {
  if (container.isTensor()) return indexTensor(container.toTensor(), index, valueOf);
  if (container.isGenericDict()) {
    const c10::IValue key = argumentValue(index, valueOf);
    const auto dict = container.toGenericDict();
    auto it = dict.find(key);
    if (it == dict.end()) throw RuntimeError("key not in the dict");
    return it->value();
  }
  const bool tuple = container.isTuple();
  if (!tuple && !container.isList() && !container.isString())
    throw RuntimeError("a " + container.tagKind() + " cannot be subscripted");
  std::vector<c10::IValue> items;
  if (tuple) {
    items = container.toTupleRef().elements().vec();
  } else if (container.isList()) {
    items = container.toListRef().vec();
  } else {
    for (char c : container.toStringRef()) items.emplace_back(std::string(1, c));
  }
  const char* what = tuple ? "tuple" : container.isList() ? "list" : "string";
  if (const auto* s = std::get_if<ArgumentSlice>(&index.value)) {
    std::vector<c10::IValue> picked;
    for (int64_t p : slicePositions(sliceOf(*s, valueOf), static_cast<int64_t>(items.size()))) picked.push_back(items[p]);
    if (tuple) return c10::ivalue::Tuple::create(std::move(picked));
    if (container.isString()) {
      std::string out;
      for (const auto& c : picked) out += c.toStringRef();
      return out;
    }
    c10::impl::GenericList list(container.toList().elementType());
    for (auto& v : picked) list.push_back(std::move(v));
    return list;
  }
  const c10::IValue i = argumentValue(index, valueOf);
  if (!i.isInt()) throw RuntimeError(std::string(what) + " indices must be integers or slices, not " + i.tagKind());
  return items.at(position(i.toInt(), items.size(), what));
}

NestedKey tensordictKey(const Argument& key) {
  if (const auto* s = std::get_if<std::string>(&key.value)) return NestedKey(*s);
  std::vector<std::string> parts;
  if (const auto* items = key.items()) {
    for (const Argument& part : *items) {
      const auto* s = std::get_if<std::string>(&part.value);
      if (!s) throw RuntimeError("a TensorDict key part must be a string");
      parts.push_back(*s);
    }
  }
  if (parts.empty()) throw RuntimeError("a TensorDict is read with a string or a tuple of strings");
  return NestedKey(std::move(parts));
}

}  // namespace tdfx::runtime
