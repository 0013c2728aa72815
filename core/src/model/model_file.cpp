#include "tdfx/model/model_file.h"
#include "tdfx/model/tensor_geometry.h"

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <sstream>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/version.h>

#include "archive_directory.h"
#include "archive_reader.h"
#include "deferred_weights.h"
#include "huge_page_allocator.h"
#include "tdfx/error.h"
#include "tdfx/util/crash_stage.h"
#include "tdfx/util/json_nesting.h"
#include "tdfx/util/display_text.h"
#include "tdfx/util/python_repr.h"
#include "tdfx/util/dtype.h"

namespace tdfx {
namespace {

using nlohmann::json;

constexpr const char* kMetadataFile = "tensordict.json";
constexpr const char* kFormatName = "tdfx.tensordict";
constexpr int kFormatVersion = 1;

struct MetadataParser {
  std::string file;
  torch::jit::Module root;
  std::shared_ptr<const SourceIndex> sources;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw ModelFileError(file + ": tensordict.json: " + where + ": " + what);
  }

  const json& member(const json& obj, const std::string& where, const char* name) const {
    if (!obj.contains(name)) fail(where, std::string("missing \"") + name + "\"");
    return obj.at(name);
  }

  NestedKey key(const json& j, const std::string& where) const {
    if (j.is_string()) return NestedKey(j.get<std::string>());
    if (j.is_array() && !j.empty()) {
      std::vector<std::string> parts;
      for (const json& p : j) {
        if (!p.is_string()) fail(where, "expected a key: a string or a non-empty list of strings, got " + j.dump());
        parts.push_back(p.get<std::string>());
      }
      return NestedKey(std::move(parts));
    }
    fail(where, "expected a key: a string or a non-empty list of strings, got " + j.dump());
  }

  std::vector<NestedKey> keyList(const json& j, const std::string& where) const {
    if (!j.is_array()) fail(where, "expected a list of keys, got " + j.dump());
    std::vector<NestedKey> keys;
    for (size_t i = 0; i < j.size(); ++i) keys.push_back(key(j[i], where + "[" + std::to_string(i) + "]"));
    return keys;
  }

  torch::jit::Module submodule(const std::string& path, const std::string& where) const {
    torch::jit::Module m = root;
    if (path.empty()) return m;
    std::string walked;
    size_t start = 0;
    while (start <= path.size()) {
      const size_t dot = path.find('.', start);
      const std::string name = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (!m.hasattr(name) || !m.attr(name).isModule()) {
        std::string children;
        for (const auto& child : m.named_children()) children += (children.empty() ? "" : ", ") + child.name;
        fail(where, "path \"" + path + "\": " + (walked.empty() ? std::string("the root module") : "'" + walked + "'") +
                        " has no submodule '" + name + "' (submodules: " + (children.empty() ? "none" : children) + ")");
      }
      m = m.attr(name).toModule();
      walked += (walked.empty() ? "" : ".") + name;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return m;
  }

  std::shared_ptr<const TensorDictModuleBase> spec(const json& j, const std::string& where, int depth) const {
    if (depth > 64) fail(where, "modules nested deeper than 64 levels");
    if (!j.is_object()) fail(where, "expected an object with \"kind\", got " + j.dump());
    const json& kind = member(j, where, "kind");
    if (kind == "module") {
      const json& pathJ = member(j, where, "path");
      if (!pathJ.is_string()) fail(where + ".path", "expected a string, got " + pathJ.dump());
      const std::string path = pathJ.get<std::string>();
      auto in = keyList(member(j, where, "in_keys"), where + ".in_keys");
      auto out = keyList(member(j, where, "out_keys"), where + ".out_keys");
      try {
        auto module = std::make_shared<TensorDictModule>(submodule(path, where), std::move(in), std::move(out), path);
        module->setSourceIndex(sources);
        return module;
      } catch (const ModelFileError&) {
        throw;
      } catch (const Error& e) {
        fail(where, e.what());
      }
    }
    if (kind == "sequential") {
      const json& mods = member(j, where, "modules");
      if (!mods.is_array() || mods.empty()) fail(where + ".modules", "expected a non-empty list of modules");
      std::vector<std::shared_ptr<const TensorDictModuleBase>> children;
      for (size_t i = 0; i < mods.size(); ++i)
        children.push_back(spec(mods[i], where + ".modules[" + std::to_string(i) + "]", depth + 1));
      std::optional<std::vector<NestedKey>> selected;
      if (j.contains("out_keys")) selected = keyList(j.at("out_keys"), where + ".out_keys");
      try {
        return std::make_shared<TensorDictSequential>(std::move(children), std::move(selected));
      } catch (const Error& e) {
        fail(where, e.what());
      }
    }
    fail(where + ".kind", "unknown kind " + kind.dump() + "; expected \"module\" or \"sequential\"");
  }

  std::vector<int64_t> shape(const json& j, const std::string& where) const {
    if (!j.is_array()) fail(where, "expected a list of non-negative integers, got " + j.dump());
    std::vector<int64_t> dims;
    for (const json& d : j) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        fail(where, "expected a list of non-negative integers, got " + j.dump());
      dims.push_back(d.get<int64_t>());
    }
    return dims;
  }
};

// The module of a plain archive: keys from the forward signature, outputs from its return type.
std::shared_ptr<const TensorDictModuleBase> plainModule(const torch::jit::Module& root, const std::string& file,
                                                        const std::shared_ptr<const SourceIndex>& sources) {
  auto method = root.find_method("forward");
  if (!method) throw ModelFileError(file + ": the TorchScript root module has no forward method");
  const auto& schema = method->function().getSchema();
  std::vector<NestedKey> in;
  for (size_t i = 1; i < schema.arguments().size(); ++i)
    if (!schema.arguments()[i].default_value()) in.emplace_back(schema.arguments()[i].name());
  std::vector<NestedKey> out;
  const auto& returns = schema.returns();
  size_t count = 1;
  std::vector<std::string> fields;  // a NamedTuple's outputs are keyed by its field names
  if (returns.size() == 1) {
    if (auto tuple = returns[0].type()->cast<c10::TupleType>()) {
      count = tuple->elements().size();
      if (tuple->schema())
        for (const auto& field : tuple->schema()->arguments()) fields.push_back(field.name());
    }
  }
  if (!fields.empty() && fields.size() == count)
    for (const std::string& f : fields) out.emplace_back(f);
  else if (count == 1)
    out.emplace_back("output");
  else
    for (size_t i = 0; i < count; ++i) out.emplace_back("output_" + std::to_string(i));
  auto module = std::make_shared<TensorDictModule>(root, in, out, "");
  module->setSourceIndex(sources);
  module->setPlain(true);
  return module;
}

// "  File \"PATH\", line N, in NAME" as "NAME at PATH:N"; "" for any other line. By hand, not
// std::regex: the line is the model's text, and libstdc++'s matcher recurses once per character.
std::string tracebackFrame(const std::string& line) {
  const size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos || line.compare(start, 6, "File \"") != 0) return {};
  const size_t pathEnd = line.find("\", line ", start + 6);
  if (pathEnd == std::string::npos) return {};
  const size_t numberStart = pathEnd + 8;
  size_t numberEnd = numberStart;
  while (numberEnd < line.size() && std::isdigit(static_cast<unsigned char>(line[numberEnd]))) ++numberEnd;
  if (numberEnd == numberStart || line.compare(numberEnd, 5, ", in ") != 0) return {};
  std::string name = line.substr(numberEnd + 5);
  name.erase(name.find_last_not_of(' ') + 1);
  return name + " at " + line.substr(start + 6, pathEnd - start - 6) + ":" + line.substr(numberStart, numberEnd - numberStart);
}

// An exception line as Python prints it: unindented, a dotted name ending in Error or Exception, ": ".
bool isExceptionLine(const std::string& line) {
  const size_t colon = line.find(": ");
  if (colon == std::string::npos || colon == 0 || colon > 200) return false;
  const std::string name = line.substr(0, colon);
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_') return false;
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  const auto endsWith = [&name](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return endsWith("Error") || endsWith("Exception");
}

// The model's own code failing while the archive loads (a `__setstate__`): LibTorch reports the
// interpreter's two tracebacks, 20 lines. Said in one: the function and the line where it failed
// (the innermost frame of the original-code traceback, else of the serialized code's, which an
// archive saved without debug info has alone) and the exception that follows the frames.
std::optional<std::string> loadTimeCodeFailure(const std::string& message) {
  static const std::string kHeader = "The following operation failed in the TorchScript interpreter.";
  if (message.rfind(kHeader, 0) != 0) return std::nullopt;
  std::istringstream lines(message);
  std::string line, where, exception;
  while (std::getline(lines, line)) {
    if (!exception.empty()) {
      if (line.find_first_not_of(' ') != std::string::npos) exception += " " + line.substr(line.find_first_not_of(' '));
    } else if (line.rfind("Traceback of TorchScript, original code", 0) == 0) {
      where.clear();  // the model's own source follows: its frames replace the serialized code's
    } else if (std::string frame = tracebackFrame(line); !frame.empty()) {
      where = std::move(frame);  // most recent call last: the innermost frame wins
    } else if (!where.empty() && isExceptionLine(line)) {
      exception = line;
    }
  }
  if (exception.empty()) return std::nullopt;
  return "the model's code failed while the archive was loaded (" + where + "): " + exception;
}

// The error for an archive LibTorch refused, from LibTorch's message.
// LibTorch's reader reports damage in its own terms ("stoull", "vector::_M_range_check", "INTERNAL
// ASSERT FAILED ... please report a bug to PyTorch"): said here as what is wrong with the file.
ModelFileError loadFailure(const std::string& path, const std::string& message) {
  // First: the model's code may fail with any text (an op's INTERNAL ASSERT included), which the
  // damage patterns below would take for LibTorch's reader.
  if (auto failed = loadTimeCodeFailure(message)) return ModelFileError(path + ": cannot load as TorchScript: " + *failed);
  const std::string firstLine = message.substr(0, message.find('\n'));
  const auto damaged = [&](const std::string& what) {
    return ModelFileError(path + ": cannot load as TorchScript: " + what + ": the archive is damaged, or was not written "
                          "by torch.jit.save");
  };
  if (message.find("maximum supported version") != std::string::npos)
    return ModelFileError(path + ": saved by a newer PyTorch than this tdfx's LibTorch " + TORCH_VERSION +
                          " can read (" + firstLine + ")");
  if (message == "stoull" || message == "stoll")
    return damaged("its `version` record is not a file format version (a number too large for 64 bits)");
  if (const size_t at = message.find("Couldn't parse the version "); at != std::string::npos) {
    std::string value = message.substr(at + 27);
    value = value.substr(0, value.find(" as Long Long"));
    while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
    return damaged("its `version` record is not a file format version (it holds " + pythonStringRepr(value.substr(0, 64)) + ")");
  }
  if (message.rfind("vector::_M_range_check", 0) == 0) {
    // "vector::_M_range_check: __n (which is 200) >= this->size() (which is 11)"
    const auto number = [&](size_t from) {
      const size_t at = message.find("(which is ", from);
      return at == std::string::npos ? std::string("?") : message.substr(at + 10, message.find(')', at) - at - 10);
    };
    const size_t second = message.find("size()");
    return damaged("a pickle in it refers to memo entry " + number(0) + ", but defines only " +
                   number(second == std::string::npos ? message.size() : second) + " entries");
  }
  if (const size_t assertAt = message.find("INTERNAL ASSERT FAILED"); assertAt != std::string::npos) {
    const std::string marker = "please report a bug to PyTorch.";
    const size_t detail = message.find(marker);
    std::string why = detail == std::string::npos ? message.substr(0, assertAt) : message.substr(detail + marker.size());
    why = why.substr(why.find_first_not_of(' ') == std::string::npos ? 0 : why.find_first_not_of(' '));
    why = why.substr(0, why.find('\n'));
    return damaged("a pickle in it is malformed (LibTorch's reader: " + (why.empty() ? firstLine : why) + ")");
  }
  return ModelFileError(path + ": cannot load as TorchScript: " + message);
}

// Every TorchScript function of a loaded archive, with a stable name to match them across processes.
template <typename Fn>
void forEachFunction(const torch::jit::Module& root, Fn&& fn) {
  for (torch::jit::Function* f : root._ivalue()->compilation_unit()->get_functions())
    if (f->isGraphFunction()) fn(f->qualname().qualifiedName(), torch::jit::toGraphFunction(*f).graph()->block());
}

template <typename Fn>
void forEachNode(torch::jit::Block* block, size_t& ordinal, Fn&& fn) {
  for (torch::jit::Node* node : block->nodes()) {
    fn(ordinal++, node);
    for (torch::jit::Block* sub : node->blocks()) forEachNode(sub, ordinal, fn);
  }
}

// Decodes the debug info of every node (in the child process): {function: {"nodes": [[ordinal,
// file, line, window, length, start, builtin def], ...], "source": the function's own source text}}.
json decodeDebugInfo(const torch::jit::Module& root) {
  json out = json::object();
  forEachFunction(root, [&](const std::string& name, torch::jit::Block* block) {
    json nodes = json::array();
    size_t ordinal = 0;
    forEachNode(block, ordinal, [&](size_t i, torch::jit::Node* node) {
      const auto& range = node->sourceRange();
      if (!range.source()) return;
      auto original = range.findSourceRangeThatGenerated();
      if (!original || !original->source()) return;
      const SourceLocation loc = sourceLocationOf(*original);
      nodes.push_back({i, loc.file, loc.line, json::binary(std::vector<std::uint8_t>(loc.window.begin(), loc.window.end())),
                       loc.rangeLength, loc.start, loc.builtinDef});
    });
    const std::string source = functionSourceOf(block, name.substr(name.rfind('.') + 1));
    if (!nodes.empty() || !source.empty())
      out[name] = {{"nodes", std::move(nodes)}, {"source", json::binary(std::vector<std::uint8_t>(source.begin(), source.end()))}};
  });
  return out;
}

// The child's decoded debug info, matched to this process's nodes of the same archive.
std::shared_ptr<const SourceIndex> indexDebugInfo(const torch::jit::Module& root, const json& decoded) {
  auto index = std::make_shared<SourceIndex>();
  forEachFunction(root, [&](const std::string& name, torch::jit::Block* block) {
    auto it = decoded.find(name);
    if (it == decoded.end()) return;
    const auto& source = it->at("source").get_binary();
    index->addFunctionSource(name, std::string(source.begin(), source.end()));
    std::unordered_map<size_t, const json*> byOrdinal;
    for (const json& entry : it->at("nodes")) byOrdinal[entry.at(0).get<size_t>()] = &entry;
    size_t ordinal = 0;
    forEachNode(block, ordinal, [&](size_t i, torch::jit::Node* node) {
      auto found = byOrdinal.find(i);
      if (found == byOrdinal.end()) return;
      const json& e = *found->second;
      const auto& bytes = e.at(3).get_binary();
      index->add(node, {e.at(1).get<std::string>(), e.at(2).get<int>(), std::string(bytes.begin(), bytes.end()),
                        e.at(4).get<size_t>(), e.at(5).get<size_t>(), e.at(6).get<std::string>()});
    });
  });
  return index;
}

// Every tensor in the module's attributes (also inside lists, tuples, dicts and objects) and every
// tensor constant in the code is checked against its own storage (views sharing one are each
// checked): tensorGeometryProblem.
void checkTensorFits(const at::Tensor& t, const std::string& what, const std::string& path) {
  if (const auto why = tensorGeometryProblem(t, "archive"))
    throw ModelFileError(path + ": tensor " + what + " " + *why + ": the archive is damaged");
}

// Every tensor in a value: itself, or inside lists, tuples, dicts and (non-module) objects, to a
// bounded depth (a hostile pickle may nest deeply; past the bound the value is refused).
void checkTensorsIn(const c10::IValue& v, const std::string& what, const std::string& path, int depth = 0) {
  if (depth > 64) throw ModelFileError(path + ": attribute " + what + " nests containers deeper than 64 levels");
  if (v.isTensor()) {
    checkTensorFits(v.toTensor(), what, path);
  } else if (v.isList()) {
    for (const c10::IValue& item : v.toListRef()) checkTensorsIn(item, what, path, depth + 1);
  } else if (v.isTuple()) {
    for (const c10::IValue& item : v.toTupleRef().elements()) checkTensorsIn(item, what, path, depth + 1);
  } else if (v.isGenericDict()) {
    for (const auto& entry : v.toGenericDict()) {
      checkTensorsIn(entry.key(), what, path, depth + 1);
      checkTensorsIn(entry.value(), what, path, depth + 1);
    }
  } else if (v.isObject() && !v.toObjectRef().type()->is_module()) {
    for (const c10::IValue& slot : v.toObjectRef().slots()) checkTensorsIn(slot, what, path, depth + 1);
  }
}

void checkTensorStorage(const torch::jit::Module& root, const std::string& path) {
  for (const auto& attr : root.named_attributes(/*recurse=*/true)) checkTensorsIn(attr.value, "'" + attr.name + "'", path);
  forEachFunction(root, [&](const std::string&, torch::jit::Block* block) {
    size_t ordinal = 0;
    forEachNode(block, ordinal, [&](size_t, torch::jit::Node* node) {
      if (node->kind() != c10::prim::Constant) return;
      if (auto v = torch::jit::toIValue(node->output())) checkTensorsIn(*v, "constant", path);
    });
  });
}

}  // namespace

ModelFile modelFromMetadata(torch::jit::Module root, const std::string& metadataJson, const std::string& path,
                            std::shared_ptr<const SourceIndex> sources) {
  ModelFile model;
  model.path = path;
  model.root = root;
  if (metadataJson.empty()) {
    model.module = plainModule(root, path, sources);
    return model;
  }
  model.hasTensorDictMetadata = true;
  MetadataParser p{path, root, sources};
  // Bounded before parsing: nlohmann's values are destroyed recursively, so absurd nesting in a
  // hostile file must not reach it.
  if (metadataJson.size() > (16u << 20)) p.fail("size", "larger than 16 MiB; this is not a tdfx description");
  if (jsonNestingDepth(metadataJson, 256) > 256) p.fail("structure", "nested deeper than 256 levels");
  json j;
  try {
    j = json::parse(metadataJson);
  } catch (const json::exception& e) {
    p.fail("not valid JSON", e.what());
  }
  if (!j.is_object()) p.fail("top level", "expected an object, got " + j.dump());
  if (!j.contains("format") || j["format"] != kFormatName)
    p.fail("format", std::string("expected \"") + kFormatName + "\", got " + (j.contains("format") ? j["format"].dump() : "nothing"));
  const json& version = p.member(j, "top level", "version");
  if (!version.is_number_integer() || version.get<int64_t>() < 1)
    p.fail("version", "expected a positive integer, got " + version.dump());
  if (version.get<int64_t>() > kFormatVersion)
    p.fail("version", "file format version " + version.dump() + " is newer than this tdfx supports (" +
                          std::to_string(kFormatVersion) + "); upgrade tdfx");
  model.module = p.spec(p.member(j, "top level", "module"), "module", 0);
  if (j.contains("exported_with") && j["exported_with"].is_string()) model.exportedWith = j["exported_with"].get<std::string>();
  if (j.contains("batch_size")) model.batchSize = p.shape(j["batch_size"], "batch_size");
  if (j.contains("example_inputs")) {
    const json& inputs = j["example_inputs"];
    if (!inputs.is_array()) p.fail("example_inputs", "expected a list, got " + inputs.dump());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string where = "example_inputs[" + std::to_string(i) + "]";
      const json& in = inputs[i];
      if (!in.is_object()) p.fail(where, "expected an object with key, shape, dtype");
      InputSpec spec;
      spec.key = p.key(p.member(in, where, "key"), where + ".key");
      spec.shape = p.shape(p.member(in, where, "shape"), where + ".shape");
      if (in.contains("dtype")) {
        if (!in["dtype"].is_string()) p.fail(where + ".dtype", "expected a string, got " + in["dtype"].dump());
        try {
          spec.dtype = parseDtype(in["dtype"].get<std::string>());
        } catch (const Error& e) {
          p.fail(where + ".dtype", e.what());
        }
      }
      model.exampleInputs.push_back(std::move(spec));
    }
  }
  return model;
}

ModelArchive ModelArchive::open(const std::string& path) {
  // The path's type first, without opening it: a device or FIFO is refused before open() could
  // act on it. Then one descriptor, checked to be the file just looked at: every check below reads
  // through it, and so does LibTorch, so a file renamed over the path after these checks is never
  // the one loaded.
  struct stat named {};
  if (::stat(path.c_str(), &named) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) throw ModelFileError(path + ": no such file");
    if (err == ENAMETOOLONG)  // the name itself: shown capped, with the limits it broke
      throw ModelFileError(capText(path, 200) + ": the file name is too long (" + std::to_string(path.size()) +
                           " bytes; the system allows " + std::to_string(PATH_MAX) + " for a path and " +
                           std::to_string(NAME_MAX) + " for each of its parts)");
    throw ModelFileError(path + ": cannot read the file: " + std::strerror(err));
  }
  if (S_ISDIR(named.st_mode)) throw ModelFileError(path + ": is a directory, expected a TorchScript archive (.pt)");
  if (!S_ISREG(named.st_mode))
    throw ModelFileError(path + ": is not a regular file, expected a TorchScript archive (.pt)");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw ModelFileError(path + ": cannot read the file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != named.st_dev || st.st_ino != named.st_ino) {
    ::close(fd);
    throw ModelFileError(path + ": the file changed while it was opened; open it again");
  }
  // The reader owns the descriptor from here: it is closed whatever a check below throws.
  auto reader = std::make_shared<ArchiveReader>(fd, static_cast<size_t>(st.st_size));
  if (st.st_size == 0) throw ModelFileError(path + ": the file is empty, expected a TorchScript archive (.pt)");
  const ArchiveRead read = [&reader](uint64_t offset, uint64_t size) {
    std::string bytes(size, '\0');
    bytes.resize(reader->read(offset, bytes.data(), size, "zip directory"));
    return bytes;
  };
  if (read(0, 2) != "PK")
    throw ModelFileError(path + ": not a TorchScript archive (expected a zip file saved by torch.jit.save)");
  // From the zip directory, before LibTorch reads a record.
  reader->setTensorRecords(checkArchiveSizes(path, static_cast<uint64_t>(st.st_size), read));
  ModelArchive archive;
  archive.path_ = path;
  archive.reader_ = std::move(reader);
  return archive;
}

ModelFile loadModelFile(const std::string& path) { return loadModelArchive(ModelArchive::open(path)); }

ModelFile loadModelArchive(const ModelArchive& archive, WeightsRead weights) {
  const std::string& path = archive.path();
  torch::jit::ExtraFilesMap extra{{kMetadataFile, ""}};
  torch::jit::Module root;
  std::vector<DeferredRead> deferred;
  try {
    const ScopedHugePageAllocator hugePages;  // the weights: the bulk of the load's memory
    const CrashStage importing(stage::kImporter);
    if (weights == WeightsRead::AfterLoad && archive.reader()->canDefer()) archive.reader()->deferTensorReads();
    struct StopDeferring {
      ArchiveReader& reader;
      std::vector<DeferredRead>& reads;
      ~StopDeferring() { reads = reader.stopDeferring(); }
    } stop{*archive.reader(), deferred};
    root = torch::jit::load(archive.reader(), c10::Device(c10::kCPU), extra);
  } catch (const c10::Error& e) {
    // A __setstate__ that checked a value not read yet: the file may well load with every value.
    if (!deferred.empty()) return loadModelArchive(archive, WeightsRead::DuringLoad);
    const std::string what = e.what_without_backtrace();
    throw loadFailure(path, what);
  } catch (const std::exception& e) {
    if (!deferred.empty()) return loadModelArchive(archive, WeightsRead::DuringLoad);
    throw loadFailure(path, e.what());
  }
  checkTensorStorage(root, path);
  std::shared_ptr<DeferredWeights> unread;
  if (settleDeferredReads(root, path, archive.reader(), std::move(deferred), unread) == DeferredOutcome::LoadAgain) {
    root = torch::jit::Module();  // its tensors freed first: the memory limit counts them
    return loadModelArchive(archive, WeightsRead::DuringLoad);
  }
  root.eval();
  uint64_t formatVersion = 0;
  try {  // the zip's directory and its small `version` record only: LibTorch has read it already
    const CrashStage importing(stage::kImporter);
    formatVersion = caffe2::serialize::PyTorchStreamReader(archive.reader()).version();
  } catch (const c10::Error&) {
  }
  std::shared_ptr<const SourceIndex> sources;
  try {
    // LibTorch unpickles each function's debug info (.debug_pkl) only now, when a source range is
    // first asked for: still its importer, reading the archive.
    const CrashStage importing(stage::kDebugInfo);
    plantedFault("debug-info");
    sources = indexDebugInfo(root, decodeDebugInfo(root));
  } catch (const json::exception&) {
    sources = std::make_shared<SourceIndex>();  // unusable: trace without source text
  } catch (const c10::Error&) {
    sources = std::make_shared<SourceIndex>();
  }
  ModelFile model = modelFromMetadata(root, extra[kMetadataFile], path, sources);
  model.formatVersion = formatVersion;
  model.deferredWeights = std::move(unread);
  return model;
}

namespace {

// Inputs are allocated in the process that asked: bound them, so a shape like [2^32, 2^32, 4] in a
// file or on the command line is an error that says so, not an overflow or an out-of-memory kill.
constexpr uint64_t kMaxInputBytes = uint64_t{2} << 30;

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void checkInputSize(const InputSpec& spec, uint64_t& total) {
  uint64_t count = 1;
  for (const int64_t d : spec.shape) {
    if (d < 0) throw Error("input " + keyRepr(spec.key) + ": negative dimension in shape " + shapeText(spec.shape));
    if (d != 0 && count > kMaxInputBytes / static_cast<uint64_t>(d)) count = kMaxInputBytes + 1;
    else count *= static_cast<uint64_t>(d);
  }
  const uint64_t itemBytes = c10::elementSize(spec.dtype);
  const uint64_t bytes = count > kMaxInputBytes / itemBytes ? kMaxInputBytes + 1 : count * itemBytes;
  total = bytes > kMaxInputBytes ? bytes : total + bytes;
  if (total > kMaxInputBytes)
    throw Error("input " + keyRepr(spec.key) + " of shape " + shapeText(spec.shape) + " (" + dtypeToString(spec.dtype) +
                ") takes the inputs past " + std::to_string(kMaxInputBytes >> 30) +
                " GiB, the most tdfx allocates for a model's inputs; give a smaller shape with --input");
}

}  // namespace

TensorDict makeExampleInputs(const ModelFile& model, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  TensorDict td(model.batchSize);
  uint64_t total = 0;
  for (const InputSpec& spec : model.exampleInputs) checkInputSize(spec, total);
  for (const InputSpec& spec : model.exampleInputs) {
    at::Tensor t;
    const auto options = at::TensorOptions().dtype(spec.dtype);
    if (spec.dtype == c10::kBool)
      t = at::randint(0, 2, spec.shape, gen, at::TensorOptions().dtype(c10::kLong)).to(c10::kBool);
    else if (c10::isFloatingType(spec.dtype))
      t = at::randn(spec.shape, gen, at::TensorOptions().dtype(c10::kFloat)).to(spec.dtype);
    else if (c10::isComplexType(spec.dtype))  // real and imaginary parts each drawn from N(0, 1/2)
      t = at::randn(spec.shape, gen, at::TensorOptions().dtype(c10::toRealValueType(spec.dtype) == c10::kDouble
                                                                   ? c10::kComplexDouble : c10::kComplexFloat))
              .to(spec.dtype);
    else
      t = at::randint(0, 10, spec.shape, gen, options);
    td.set(spec.key, t);
  }
  return td;
}

}  // namespace tdfx
