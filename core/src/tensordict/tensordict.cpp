#include "tdfx/tensordict/tensordict.h"

#include <sstream>
#include <variant>

#include <ATen/ATen.h>

#include "tdfx/error.h"
#include "tdfx/util/dtype.h"

namespace tdfx {

struct TensorDict::Entry {
  std::string name;
  std::variant<at::Tensor, TensorDict> value;

  bool isTensor() const { return std::holds_alternative<at::Tensor>(value); }
};

namespace {

std::string shapeToString(at::IntArrayRef shape) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

}  // namespace

TensorDict::TensorDict(std::vector<int64_t> batchSize) : batchSize_(std::move(batchSize)) {}

TensorDict::TensorDict(const TensorDict& other) : batchSize_(other.batchSize_) {
  entries_.reserve(other.entries_.size());
  for (const auto& e : other.entries_) entries_.push_back(std::make_unique<Entry>(*e));
}

TensorDict& TensorDict::operator=(const TensorDict& other) {
  if (this != &other) {
    TensorDict copy(other);
    *this = std::move(copy);
  }
  return *this;
}

TensorDict::TensorDict(TensorDict&&) noexcept = default;
TensorDict& TensorDict::operator=(TensorDict&&) noexcept = default;
TensorDict::~TensorDict() = default;

TensorDict::Entry* TensorDict::find(const std::string& part) {
  for (auto& e : entries_)
    if (e->name == part) return e.get();
  return nullptr;
}

const TensorDict::Entry* TensorDict::find(const std::string& part) const {
  for (const auto& e : entries_)
    if (e->name == part) return e.get();
  return nullptr;
}

const TensorDict::Entry& TensorDict::lookup(const NestedKey& key) const {
  if (key.empty()) throw KeyError("empty key: a TensorDict key needs at least one part");
  const TensorDict* td = this;
  for (size_t i = 0; i < key.size(); ++i) {
    const Entry* e = td->find(key.parts()[i]);
    const bool last = i + 1 == key.size();
    if (!e || (!last && e->isTensor())) {
      throw KeyError("key " + keyRepr(key) + " not found in TensorDict; existing keys: " +
                     keysToString(keys(/*includeNested=*/true)));
    }
    if (last) return *e;
    td = &std::get<TensorDict>(e->value);
  }
  throw KeyError("unreachable");
}

TensorDict& TensorDict::parentFor(const NestedKey& key) {
  if (key.empty()) throw KeyError("empty key: a TensorDict key needs at least one part");
  TensorDict* td = this;
  for (size_t i = 0; i + 1 < key.size(); ++i) {
    Entry* e = td->find(key.parts()[i]);
    if (!e) {
      auto created = std::make_unique<Entry>(Entry{key.parts()[i], TensorDict(td->batchSize_)});
      e = created.get();
      td->entries_.push_back(std::move(created));
    } else if (e->isTensor()) {
      NestedKey prefix(std::vector<std::string>(key.parts().begin(), key.parts().begin() + i + 1));
      throw KeyError("cannot set key " + keyRepr(key) + ": " + keyRepr(prefix) +
                     " is a tensor, not a nested TensorDict");
    }
    td = &std::get<TensorDict>(e->value);
  }
  return *td;
}

void TensorDict::checkBatch(const NestedKey& key, at::IntArrayRef shape) const {
  bool ok = shape.size() >= batchSize_.size();
  for (size_t i = 0; ok && i < batchSize_.size(); ++i) ok = shape[i] == batchSize_[i];
  if (!ok) {
    throw KeyError("cannot set key " + keyRepr(key) + ": shape " + shapeToString(shape) +
                   " does not start with the batch size " + shapeToString(batchSize_));
  }
}

void TensorDict::set(const NestedKey& key, const at::Tensor& value) {
  if (!value.defined()) throw KeyError("cannot set key " + keyRepr(key) + ": the tensor is undefined");
  checkBatch(key, value.sizes());
  TensorDict& parent = parentFor(key);
  if (Entry* e = parent.find(key.back()))
    e->value = value;
  else
    parent.entries_.push_back(std::make_unique<Entry>(Entry{key.back(), value}));
}

void TensorDict::setTensorDict(const NestedKey& key, const TensorDict& value) {
  checkBatch(key, value.batchSize_);
  TensorDict& parent = parentFor(key);
  if (Entry* e = parent.find(key.back()))
    e->value = value;
  else
    parent.entries_.push_back(std::make_unique<Entry>(Entry{key.back(), value}));
}

const at::Tensor& TensorDict::get(const NestedKey& key) const {
  const Entry& e = lookup(key);
  if (!e.isTensor())
    throw KeyError("key " + keyRepr(key) + " holds a nested TensorDict, not a tensor");
  return std::get<at::Tensor>(e.value);
}

const TensorDict& TensorDict::getTensorDict(const NestedKey& key) const {
  const Entry& e = lookup(key);
  if (e.isTensor()) throw KeyError("key " + keyRepr(key) + " holds a tensor, not a nested TensorDict");
  return std::get<TensorDict>(e.value);
}

bool TensorDict::contains(const NestedKey& key) const {
  const TensorDict* td = this;
  for (size_t i = 0; i < key.size(); ++i) {
    const Entry* e = td->find(key.parts()[i]);
    if (!e) return false;
    if (i + 1 == key.size()) return true;
    if (e->isTensor()) return false;
    td = &std::get<TensorDict>(e->value);
  }
  return false;
}

bool TensorDict::isTensorDict(const NestedKey& key) const {
  return contains(key) && !lookup(key).isTensor();
}

void TensorDict::erase(const NestedKey& key) {
  lookup(key);  // throws with the list of keys when missing
  TensorDict* td = this;
  for (size_t i = 0; i + 1 < key.size(); ++i) td = &std::get<TensorDict>(td->find(key.parts()[i])->value);
  auto& es = td->entries_;
  for (auto it = es.begin(); it != es.end(); ++it) {
    if ((*it)->name == key.back()) {
      es.erase(it);
      return;
    }
  }
}

void TensorDict::collectKeys(const NestedKey& prefix, bool includeNested, bool leavesOnly,
                             std::vector<NestedKey>& out) const {
  for (const auto& e : entries_) {
    NestedKey key = prefix.empty() ? NestedKey(e->name) : prefix.child(e->name);
    if (e->isTensor()) {
      out.push_back(key);
      continue;
    }
    if (!leavesOnly) out.push_back(key);
    if (includeNested) std::get<TensorDict>(e->value).collectKeys(key, includeNested, leavesOnly, out);
  }
}

std::vector<NestedKey> TensorDict::keys(bool includeNested, bool leavesOnly) const {
  std::vector<NestedKey> out;
  collectKeys(NestedKey(), includeNested, leavesOnly, out);
  return out;
}

namespace {
template <typename Fn>
TensorDict mapTensors(const TensorDict& td, Fn fn) {
  TensorDict out(td.batchSize());
  for (const NestedKey& key : td.keys(/*includeNested=*/true, /*leavesOnly=*/false)) {
    if (td.isTensorDict(key)) {
      // Recreate empty sub-TensorDicts too, so structure survives the copy.
      if (!out.contains(key)) out.setTensorDict(key, TensorDict(td.getTensorDict(key).batchSize()));
    } else {
      out.set(key, fn(td.get(key)));
    }
  }
  return out;
}
}  // namespace

TensorDict TensorDict::clone() const {
  return mapTensors(*this, [](const at::Tensor& t) { return t.clone(); });
}

TensorDict TensorDict::to(c10::ScalarType dtype) const {
  return mapTensors(*this, [dtype](const at::Tensor& t) { return t.to(dtype); });
}

TensorDict TensorDict::to(c10::Device device) const {
  return mapTensors(*this, [device](const at::Tensor& t) { return t.to(device); });
}

void TensorDict::appendRepr(std::string& out, int indent) const {
  const std::string pad(indent + 4, ' ');
  out += "TensorDict(\n" + pad + "fields={";
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = *entries_[i];
    out += "\n" + pad + "    " + e.name + ": ";
    if (e.isTensor()) {
      const at::Tensor& t = std::get<at::Tensor>(e.value);
      std::string device = t.device().str();
      out += "Tensor(shape=torch.Size(" + shapeToString(t.sizes()) + "), device=" + device +
             ", dtype=" + dtypeRepr(t.scalar_type()) + ", is_shared=False)";
    } else {
      std::get<TensorDict>(e.value).appendRepr(out, indent + 8);
    }
    if (i + 1 < entries_.size()) out += ",";
  }
  out += "},\n" + pad + "batch_size=torch.Size(" + shapeToString(batchSize_) + "),\n" + pad +
         "device=None,\n" + pad + "is_shared=False)";
}

std::string TensorDict::toString() const {
  std::string out;
  appendRepr(out, 0);
  return out;
}

}  // namespace tdfx
