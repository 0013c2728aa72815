// The app's side of the model worker (its process: worker_process.cpp).
#include "tdfx/worker/model_worker.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <future>
#include <random>
#include <set>

#include "graph_json.h"
#include "tdfx/error.h"
#include "worker_protocol.h"

namespace tdfx {

using nlohmann::json;

namespace {

uint64_t physicalMemory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) : uint64_t{8} << 30;
}

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
  return buf;
}

}  // namespace

uint64_t WorkerLimits::effectiveMemoryBytes() const { return memoryBytes ? memoryBytes : physicalMemory() / 2; }

ModelWorker::ModelWorker(WorkerLimits limits) : limits_(limits), process_("model", "the model worker") {}

ModelWorker::~ModelWorker() { stop(); }

void ModelWorker::stop() { process_.stop(); }

std::vector<uint8_t> ModelWorker::request(const std::vector<uint8_t>& message, double seconds, const std::string& what) {
  const std::string name = path_.empty() ? std::string("the model") : path_;
  if (what == "open") {
    weightsPending_ = false;
    weightsFailure_.clear();
  } else if (weightsPending_ && what != "probe") {  // the sandbox probe reads no weight
    // The weights an open left unread are read first, in a request of their own under the open's
    // limit: the request itself keeps the limit the user was told (verify's 60 s, not 60 + 120).
    weightsPending_ = false;
    std::vector<uint8_t> read = process_.request(json::to_cbor(json{{"op", "read_weights"}}), limits_.openSeconds,
                                                 limits_.effectiveMemoryBytes(), name, "reading the weights", "");
    if (!worker::parseCbor(read).value("ok", false)) {
      // Its error is the request's, and every later one's: the worker holds a model without its
      // weights. Stopped, it is no longer taken as open (serve's cache then opens the file afresh).
      stop();
      weightsFailure_ = read;
      return read;
    }
  }
  return process_.request(message, seconds, limits_.effectiveMemoryBytes(), name, what,
                          what == "open" ? " (the archive may be damaged: LibTorch crashed reading it)" : "");
}

namespace {

// Turns a worker's error answer back into the exception type it came from.
[[noreturn]] void rethrow(const json& answer, const WorkerLimits& limits, const std::string& path) {
  const std::string type = answer.value("type", "error");
  std::string message = answer.value("error", "unknown error");
  if (type == "memory" || message.find("can't allocate memory") != std::string::npos ||
      message.find("std::bad_alloc") != std::string::npos)
    message += " (the model worker may use at most " + gib(limits.effectiveMemoryBytes()) + " of memory; --memory-limit)";
  // A crash (the worker's last answer, from its signal handler) names the model.
  throwIfFaultOrCrash(answer, message, path.empty() ? std::string("the model") : path);
  if (type == "model_file") throw ModelFileError(message);
  if (type == "trace") throw TraceError(message);
  if (type == "key") throw KeyError(message);
  throw Error(message);
}

json decode(const std::vector<uint8_t>& bytes) {
  try {
    return worker::parseCbor(bytes);
  } catch (const Error& e) {
    throw Error(std::string("the model worker sent an unreadable answer: ") + e.what());
  }
}

}  // namespace

void ModelWorker::requireOpenModel() {
  if (!weightsFailure_.empty()) rethrow(decode(weightsFailure_), limits_, path_);
  if (!process_.alive()) throw Error("no model is open in a worker (it was cancelled or ended): open the model again");
}

void ModelWorker::prepare() {
  std::lock_guard<std::mutex> lock(requestMutex_);
  if (prepared_ && process_.alive()) return;
  stop();
  path_.clear();
  const json answer = decode(request(json::to_cbor(json{{"op", "warm"}}), limits_.openSeconds, "warm-up"));
  if (!answer.value("ok", false)) {
    stop();
    rethrow(answer, limits_, path_);
  }
  prepared_ = true;
}

TracedModel ModelWorker::open(const std::string& path, GraphDetail detail) {
  std::lock_guard<std::mutex> lock(requestMutex_);
  // One model per worker: a new open starts a fresh one, unless this one was prepared for it.
  const bool reuse = prepared_ && process_.alive();
  prepared_ = false;
  if (!reuse) stop();
  path_ = path;
  json asked{{"op", "open"}, {"path", path}};
  if (detail == GraphDetail::Comparison) asked["detail"] = "comparison";
  const std::vector<uint8_t> message = json::to_cbor(asked);
  std::vector<uint8_t> bytes;
  try {
    bytes = request(message, limits_.openSeconds, "open");
  } catch (const WorkerCancelled&) {
    throw;
  } catch (const Error&) {
    if (!reuse) throw;
    stop();  // the spare ended while it waited (killed, or out of memory): a fresh worker then
    bytes = request(message, limits_.openSeconds, "open");
  }
  const json answer = decode(bytes);
  if (!answer.value("ok", false)) {
    stop();
    rethrow(answer, limits_, path_);
  }
  loadSeconds_ = answer.value("load_seconds", 0.0);
  traceSeconds_ = answer.value("trace_seconds", 0.0);
  weightsPending_ = answer.value("weights_pending", false);
  return tracedModelFromJsonValue(answer.at("model"));
}

namespace {
// A file of input values travels as its bytes; the worker parses them (inputValuesFromPickle).
void addInputValues(json& req, const std::vector<char>& bytes) {
  if (!bytes.empty()) req["input_values"] = json::binary(std::vector<uint8_t>(bytes.begin(), bytes.end()));
}
}  // namespace

WorkerVerifyResult ModelWorker::verify(const std::vector<InputSpec>& inputs, uint64_t seed, const VerifyOptions& options,
                                       const std::vector<char>& inputValues, VerifyRecords records) {
  std::lock_guard<std::mutex> lock(requestMutex_);
  requireOpenModel();
  json req = {{"op", "verify"},       {"inputs", worker::inputsJson(inputs)}, {"seed", seed},
              {"atol", options.atol}, {"rtol", options.rtol},
              {"random_seed", options.randomSeed ? json(*options.randomSeed) : json(nullptr)},
              {"time", options.time},          {"records", records == VerifyRecords::Recorded}};
  addInputValues(req, inputValues);
  const json answer = decode(request(json::to_cbor(req), limits_.requestSeconds, "verify"));
  if (!answer.value("ok", false)) rethrow(answer, limits_, path_);
  WorkerVerifyResult result;
  result.report = reportFromJson(answer.at("report").get<std::string>());
  result.report.options = options;
  if (records == VerifyRecords::Recorded) result.records = worker::recordsFromJson(answer.at("records"));
  return result;
}

std::vector<NodeRunRecord> ModelWorker::run(const std::vector<InputSpec>& inputs, uint64_t seed,
                                            const std::vector<char>& inputValues) {
  std::lock_guard<std::mutex> lock(requestMutex_);
  requireOpenModel();
  json req{{"op", "run"}, {"inputs", worker::inputsJson(inputs)}, {"seed", seed}};
  addInputValues(req, inputValues);
  const json answer = decode(request(json::to_cbor(req), limits_.requestSeconds, "run"));
  if (!answer.value("ok", false)) rethrow(answer, limits_, path_);
  return worker::recordsFromJson(answer.at("records"));
}

std::vector<ParameterStats> ModelWorker::parameterStats() {
  std::lock_guard<std::mutex> lock(requestMutex_);
  requireOpenModel();
  const json answer =
      decode(request(json::to_cbor(json{{"op", "parameter_stats"}}), limits_.requestSeconds, "parameter statistics"));
  if (!answer.value("ok", false)) rethrow(answer, limits_, path_);
  std::vector<ParameterStats> out;
  try {
    for (const json& row : answer.at("stats"))
      out.push_back({row.at(0).get<std::string>(), row.at(1).get<std::string>(), row.at(2).get<double>(),
                     row.at(3).get<double>(), row.at(4).get<double>()});
  } catch (const json::exception& e) {
    throw Error(std::string("the model worker sent malformed parameter statistics: ") + e.what());
  }
  return out;
}

void applyParameterStats(Graph& graph, const std::vector<ParameterStats>& stats) {
  for (const ParameterStats& s : stats) {
    Node* node = graph.findNode(s.node);
    if (!node) continue;
    for (ParameterInfo& p : node->meta().parameters) {
      if (p.name != s.parameter) continue;
      p.min = s.min;
      p.max = s.max;
      p.mean = s.mean;
      p.hasStats = true;
    }
  }
}

std::vector<ParameterValues> ModelWorker::parameterValues(std::optional<uint64_t> digestKey,
                                                          const std::vector<std::string>* valuesOf) {
  std::lock_guard<std::mutex> lock(requestMutex_);
  requireOpenModel();
  json asked{{"op", "parameter_values"}};
  if (digestKey) asked["digest_key"] = *digestKey;
  if (valuesOf) asked["values_of"] = *valuesOf;
  const std::vector<uint8_t> frame = request(json::to_cbor(asked), limits_.requestSeconds, "parameter values");
  worker::Tail tail;
  json answer;
  try {
    answer = worker::parseCborWithTail(frame, tail);
  } catch (const Error& e) {
    throw Error(std::string("the model worker sent an unreadable answer: ") + e.what());
  }
  if (!answer.value("ok", false)) rethrow(answer, limits_, path_);
  std::vector<ParameterValues> out;
  // [offset, length] in the tail, of `Element`s.
  const auto read = [&tail](const json& range, const std::string& what, auto element, auto& into) {
    using Element = decltype(element);
    const uint64_t offset = range.at(0).get<uint64_t>(), bytes = range.at(1).get<uint64_t>();
    if (bytes % sizeof(Element) != 0) throw Error("the model worker sent a malformed parameter " + what);
    const uint8_t* data = tail.at(offset, bytes, "parameter " + what);
    into.resize(bytes / sizeof(Element));
    for (size_t i = 0; i < into.size(); ++i) {
      Element e;
      std::memcpy(&e, data + i * sizeof(Element), sizeof(Element));
      into[i] = e;
    }
  };
  for (const json& p : answer.at("parameters")) {
    ParameterValues v;
    v.name = p.at("name").get<std::string>();
    v.shape = p.at("shape").get<std::vector<int64_t>>();
    v.dtype = p.at("dtype").get<std::string>();
    v.isBuffer = p.at("buffer").get<bool>();
    if (p.contains("floats")) read(p.at("floats"), v.name, float{}, v.values);
    if (p.contains("doubles")) read(p.at("doubles"), v.name, double{}, v.values);
    if (p.contains("integers")) read(p.at("integers"), v.name, int64_t{}, v.integers);
    if (p.contains("digest")) v.digest = p.at("digest").get<uint64_t>();
    out.push_back(std::move(v));
  }
  return out;
}

std::pair<std::vector<ParameterValues>, std::vector<ParameterValues>> parametersToCompare(ModelWorker& a, ModelWorker& b) {
  // Drawn here, never seen by either model: two files cannot be made to collide on purpose.
  std::random_device random;
  const uint64_t key = (static_cast<uint64_t>(random()) << 32) ^ random();
  const std::vector<std::string> none;
  const auto both = [&](std::optional<uint64_t> digestKey, const std::vector<std::string>& valuesOf) {
    auto fromB = std::async(std::launch::async, [&] { return b.parameterValues(digestKey, &valuesOf); });
    std::vector<ParameterValues> fromA;
    try {
      fromA = a.parameterValues(digestKey, &valuesOf);
    } catch (...) {
      fromB.wait();
      throw;
    }
    return std::make_pair(std::move(fromA), fromB.get());
  };
  auto [pa, pb] = both(key, none);
  std::map<std::string, const ParameterValues*> inB;
  for (const ParameterValues& p : pb) inB[p.name] = &p;
  // Values are read for what diffModels compares by value: a name both have, of one shape.
  std::vector<std::string> differing;
  for (const ParameterValues& p : pa) {
    const auto it = inB.find(p.name);
    if (it == inB.end() || it->second->shape != p.shape) continue;
    if (p.dtype != it->second->dtype || !p.digest || p.digest != it->second->digest) differing.push_back(p.name);
  }
  if (differing.empty()) return {std::move(pa), std::move(pb)};
  auto [va, vb] = both(std::nullopt, differing);
  const std::set<std::string> asked(differing.begin(), differing.end());
  const auto merge = [&](std::vector<ParameterValues>& into, std::vector<ParameterValues>& read) {
    std::map<std::string, ParameterValues*> byName;
    for (ParameterValues& p : into) byName[p.name] = &p;
    for (ParameterValues& p : read) {
      const auto it = byName.find(p.name);
      if (it == byName.end() || !asked.count(p.name)) continue;  // the others came with nothing
      it->second->values = std::move(p.values);
      it->second->integers = std::move(p.integers);
      it->second->digest.reset();  // compared by value
    }
  };
  merge(pa, va);
  merge(pb, vb);
  return {std::move(pa), std::move(pb)};
}

TorchScriptArchive ModelWorker::torchScript() {
  std::lock_guard<std::mutex> lock(requestMutex_);
  requireOpenModel();
  const json answer = decode(request(json::to_cbor(json{{"op", "torchscript"}}), limits_.requestSeconds, "TorchScript export"));
  if (!answer.value("ok", false)) rethrow(answer, limits_, path_);
  const auto& bytes = answer.at("archive").get_binary();
  return {std::string(bytes.begin(), bytes.end()), answer.at("signature").get<std::string>()};
}

std::map<std::string, int> ModelWorker::probeSandbox() {
  std::lock_guard<std::mutex> lock(requestMutex_);
  const json answer = decode(request(json::to_cbor(json{{"op", "probe_sandbox"}}), limits_.requestSeconds, "probe"));
  if (!answer.value("ok", false)) rethrow(answer, limits_, path_);
  return answer.at("results").get<std::map<std::string, int>>();
}

}  // namespace tdfx
