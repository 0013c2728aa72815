#include "tdfx/runtime/input_values.h"

#include <filesystem>
#include <fstream>

#include <torch/csrc/jit/serialization/pickle.h>

#include "tdfx/error.h"
#include "tdfx/model/tensor_geometry.h"
#include "tdfx/util/display_text.h"

namespace tdfx {

std::vector<char> readInputValuesFile(const std::string& path, const std::string& where) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw Error(where + ": cannot read the file: " + ec.message());
  if (!std::filesystem::exists(status)) throw Error(where + ": no such file");
  if (!std::filesystem::is_regular_file(status))
    throw Error(where + ": not a regular file, expected tensors saved with torch.save");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(where + ": cannot read the file: " + ec.message());
  if (size > kMaxInputValuesBytes)
    throw Error(where + ": " + std::to_string(size >> 20) + " MiB, over the " + std::to_string(kMaxInputValuesBytes >> 20) +
                " MiB tdfx takes as input values");
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes(size);
  if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(size))) throw Error(where + ": cannot read the file");
  return bytes;
}

NestedKey dottedKey(const std::string& text, const std::string& what) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = text.find('.', start);
    parts.push_back(text.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (parts.back().empty()) throw Error(what + ": empty part in key \"" + escapeControls(capText(text, 200)) + "\"");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return NestedKey(std::move(parts));
}

namespace {

constexpr const char* kExpected =
    "expected a dict {\"input.x\": tensor} or a tuple of (\"input.x\", tensor) pairs saved with torch.save";

// A key as a string, its parts joined by "." as --input writes them, or as a tuple of strings (a
// part that holds a "." itself: tdfx.verify saves tuple keys so).
NestedKey keyOf(const c10::IValue& key) {
  if (key.isString()) return dottedKey(key.toStringRef(), "input values");
  if (key.isTuple()) {
    std::vector<std::string> parts;
    for (const c10::IValue& part : key.toTupleRef().elements()) {
      if (!part.isString() || part.toStringRef().empty()) break;
      parts.push_back(part.toStringRef());
    }
    if (!parts.empty() && parts.size() == key.toTupleRef().elements().size()) return NestedKey(std::move(parts));
  }
  throw Error("input values: a key is " + std::string(key.tagKind()) + ", not a string or a tuple of non-empty strings; " +
              kExpected);
}

void add(InputValues& out, const c10::IValue& key, const c10::IValue& value) {
  const NestedKey name = keyOf(key);
  if (!value.isTensor())
    throw Error("input values: " + escapeControls(capText(keyRepr(name), 200)) + " is " + std::string(value.tagKind()) +
                ", expected a tensor");
  const at::Tensor& t = value.toTensor();
  if (t.is_sparse() || t.is_quantized() || !t.device().is_cpu())
    throw Error("input values: " + escapeControls(capText(keyRepr(name), 200)) + " must be a dense CPU tensor");
  // As an archive's tensors: a shape, stride or offset the pickle chose that reaches outside the
  // storage's bytes would make the forward read outside its buffer.
  if (const auto why = tensorGeometryProblem(t, "file"))
    throw Error("input values: tensor " + escapeControls(capText(keyRepr(name), 200)) + " " + *why +
                ": the file is damaged");
  out.emplace_back(name, t);
}

// Frees a value without recursion. The unpickler builds containers nested any depth without
// recursing (200,000 tuples in a 400 KB file), but an IValue frees its items recursively: freed
// as it is, such a value overflows the stack. Here each container gives its items to a work list
// before it goes, so every free is shallow.
class FreedIteratively {
 public:
  explicit FreedIteratively(c10::IValue& value) : value_(value) {}
  FreedIteratively(const FreedIteratively&) = delete;
  FreedIteratively& operator=(const FreedIteratively&) = delete;
  ~FreedIteratively() {
    std::vector<c10::IValue> pending;
    pending.push_back(std::move(value_));
    value_ = c10::IValue();
    while (!pending.empty()) {
      c10::IValue v = std::move(pending.back());
      pending.pop_back();
      if (v.isTuple()) {
        const auto tuple = v.toTuple();
        for (size_t i = 0; i < tuple->elements().size(); ++i) {
          pending.push_back(tuple->elements()[i]);
          tuple->unsafeSetElement(i, c10::IValue());
        }
      } else if (v.isList()) {
        auto list = v.toList();
        for (size_t i = 0; i < list.size(); ++i) pending.push_back(list.get(i));
        list.clear();
      } else if (v.isGenericDict()) {
        auto dict = v.toGenericDict();
        for (const auto& item : dict) {
          pending.push_back(item.key());
          pending.push_back(item.value());
        }
        dict.clear();
      }
    }
  }

 private:
  c10::IValue& value_;
};

}  // namespace

InputValues inputValuesFromPickle(const std::vector<char>& bytes) {
  c10::IValue value;
  const FreedIteratively freed(value);  // on every way out, the error's too
  try {
    value = torch::jit::pickle_load(bytes);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    what = what.substr(0, what.find('\n'));
    // LibTorch 1.13's unpickler lacks pickle's one-item opcodes, SETITEM ('s', 0x73) and APPEND
    // ('a', 0x61), which Python writes for a dict or list of exactly one item.
    if (what.find("Unknown opcode for unpickling at 0x73") != std::string::npos ||
        what.find("Unknown opcode for unpickling at 0x61") != std::string::npos)
      throw Error("input values: LibTorch cannot read a dict or list of one item as torch.save writes it; save a "
                  "tuple of pairs instead: torch.save(((\"input.x\", x),), FILE)");
    throw Error("input values: not a file torch.save wrote (" + capText(what, 200) + "); " + kExpected);
  }
  InputValues out;
  if (value.isGenericDict()) {
    for (const auto& item : value.toGenericDict()) add(out, item.key(), item.value());
    return out;
  }
  if (value.isTuple() || value.isList()) {
    const std::vector<c10::IValue> items =
        value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
    for (const c10::IValue& pair : items) {
      if (!pair.isTuple() || pair.toTupleRef().elements().size() != 2)
        throw Error(std::string("input values: an item is ") + pair.tagKind() + ", not a (key, tensor) pair; " + kExpected);
      add(out, pair.toTupleRef().elements()[0], pair.toTupleRef().elements()[1]);
    }
    return out;
  }
  throw Error(std::string("input values: ") + kExpected + ", got " + value.tagKind());
}

}  // namespace tdfx
