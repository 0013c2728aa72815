// Mutation fuzzer for the model loader, the tensordict.json parser, the tracer and the runtime.
//
//   tdfx_fuzz_loader --seconds N [--seed S] [--out DIR] SEED_FILE...
//
// Each iteration takes a seed archive and mutates it: raw bytes (flips, truncation, splices) or,
// through LibTorch's zip reader/writer, one record (the pickles, the code, tensordict.json with
// JSON-aware edits). The result is opened in a model worker, as the apps open files: loaded,
// traced and run on its example inputs. A failure must be a checked error (tdfx's own, or
// LibTorch's c10::Error refusing the input); the worker tags every error answer with its origin,
// and a worker that crashes (a signal: WorkerCrash, naming the stage it died in) or answers with
// another exception (WorkerFault: std::out_of_range, an exception escaping a noexcept function) is
// a bug, unless the allow-list below names it as a known LibTorch importer crash, with its reason.
// Bugs are kept as OUT/failure-<n>.pt. Exit 0 when no bug was found.
//
// TDFX_TEST_PLANT_FAULT=signal|exception plants a fault in the worker's loader path (the
// fuzz.loader_sees_* tests: the fuzzer must fail).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <caffe2/serialize/inline_container.h>

#include "tdfx/error.h"
#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"
#include "tdfx/util/crash_stage.h"
#include "tdfx/worker/model_worker.h"
#include "tdfx/worker/worker_process.h"

namespace fs = std::filesystem;

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeFile(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

using Records = std::vector<std::pair<std::string, std::string>>;

Records readRecords(const std::string& path) {
  caffe2::serialize::PyTorchStreamReader reader(path);
  Records records;
  for (const std::string& name : reader.getAllRecords()) {
    if (name == "version" || name == ".data/version") continue;
    auto [ptr, size] = reader.getRecord(name);
    records.emplace_back(name, std::string(static_cast<const char*>(ptr.get()), size));
  }
  return records;
}

void writeRecords(const std::string& path, const Records& records) {
  caffe2::serialize::PyTorchStreamWriter writer(path);
  for (const auto& [name, data] : records) writer.writeRecord(name, data.data(), data.size());
  writer.writeEndOfFile();
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  size_t pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  void mutateBytes(std::string& s) {
    if (s.empty()) {
      s = "x";
      return;
    }
    switch (pick(5)) {
      case 0:  // flip a few bytes
        for (size_t k = 0, n = 1 + pick(8); k < n; ++k) s[pick(s.size())] ^= static_cast<char>(1 + pick(255));
        break;
      case 1:  // truncate
        s.resize(pick(s.size()));
        break;
      case 2: {  // duplicate a slice
        const size_t a = pick(s.size()), len = pick(std::min<size_t>(64, s.size() - a));
        s.insert(pick(s.size()), s.substr(a, len));
        break;
      }
      case 3:  // interesting values
        s[pick(s.size())] = "\x00\xff\x7f\x80\x01"[pick(5)];
        break;
      default: {  // erase a slice
        const size_t a = pick(s.size());
        s.erase(a, pick(std::min<size_t>(32, s.size() - a)));
      }
    }
  }

  void mutateJson(std::string& s) {
    static const char* tokens[] = {"\"module\"", "\"sequential\"", "\"kind\"", "[]", "{}", "null", "-1", "1e308",
                                   "\"\"", "[\"a\",\"b\"]", "\"0.module\"", "99", "true", "\"in_keys\"", ","};
    if (pick(3) == 0) return mutateBytes(s);
    // Replace a token-ish span with a JSON fragment.
    const size_t a = pick(s.size());
    const size_t len = pick(std::min<size_t>(24, s.size() - a) + 1);
    s.replace(a, len, tokens[pick(sizeof tokens / sizeof *tokens)]);
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

enum class Outcome { Ok, TdfxError, KnownCrash, Bug };

// Known crashes of LibTorch 1.13's importer on damaged archives: a crash whose message names the
// stage and signal is counted apart, not as a bug. Each entry says why it is LibTorch's, not ours.
struct KnownCrash {
  const char* stage;
  const char* signal;
  const char* reason;
};
const KnownCrash kKnownCrashes[] = {
    {tdfx::stage::kImporter, "(SIGSEGV)",
     "LibTorch 1.13's importer dereferences what damaged TorchScript code leaves null: a class body line "
     "`__buffers__ = []` cut to `__= []` segfaults in torch::jit::load (tests/worker/model_worker_test.cpp "
     "ACrashInLibTorchIsAnErrorNamingTheSignal); tdfx checks the zip directory and record sizes before it"},
    {tdfx::stage::kDebugInfo, "(SIGABRT)",
     "LibTorch 1.13 unpickles a function's .debug_pkl record when a source range is first asked for "
     "(Source::findSourceRangeThatGenerated); on a damaged pickle its unpickler frees an invalid pointer "
     "and glibc aborts (`free(): invalid size` in torch::jit::unpickle; fuzz.loader --seed 7 finds one)"},
};

const KnownCrash* knownCrash(const std::string& message) {
  for (const KnownCrash& k : kKnownCrashes)
    if (message.find(std::string(" in ") + k.stage) != std::string::npos && message.find(k.signal) != std::string::npos)
      return &k;
  return nullptr;
}

// Opened as the apps open files: in a model worker. A worker that dies (LibTorch's importer
// crashes on some damaged code) is a tdfx::Error naming the signal; the fuzzer counts those apart.
Outcome exercise(const std::string& path, std::string& message) {
  try {
    tdfx::WorkerLimits limits;
    limits.openSeconds = limits.requestSeconds = 20;
    limits.memoryBytes = uint64_t{4} << 30;
    tdfx::ModelWorker worker(limits);
    const tdfx::TracedModel model = worker.open(path);
    // Submodules kept whole for data-dependent loops run the model's own loop, which a mutated
    // constant can make endless (as it would in eager PyTorch): such graphs are traced, not run.
    bool dataDependent = false;
    for (const auto& node : model.traced.graph->nodes()) dataDependent = dataDependent || !node->meta().leafReason.empty();
    if (!model.model.exampleInputs.empty() && !dataDependent) worker.run({}, 0);
    return Outcome::Ok;
  } catch (const tdfx::WorkerCrash& e) {
    message = std::string("crash: ") + e.what();
    return knownCrash(e.what()) ? Outcome::KnownCrash : Outcome::Bug;
  } catch (const tdfx::WorkerFault& e) {
    message = std::string("exception in the worker: ") + e.what();
    return Outcome::Bug;
  } catch (const tdfx::Error& e) {
    message = e.what();
    return Outcome::TdfxError;
  } catch (const std::exception& e) {
    message = std::string("non-tdfx exception: ") + e.what();
    return Outcome::Bug;
  } catch (...) {
    message = "unknown exception";
    return Outcome::Bug;
  }
}

}  // namespace

int main(int argc, char** argv) {
  tdfx::startWorkerZygote();
  double seconds = 10;
  uint64_t seed = 1;
  std::string outDir = fs::temp_directory_path() / "tdfx-fuzz";
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (a == "--out" && i + 1 < argc) outDir = argv[++i];
    else seeds.push_back(a);
  }
  if (seeds.empty()) {
    std::cerr << "usage: tdfx_fuzz_loader --seconds N [--seed S] [--out DIR] SEED_FILE...\n";
    return 2;
  }
  fs::create_directories(outDir);
  const std::string current = (fs::path(outDir) / "current.pt").string();
  std::vector<std::string> seedBytes;
  std::vector<Records> seedRecords;
  for (const auto& s : seeds) {
    seedBytes.push_back(readFile(s));
    seedRecords.push_back(readRecords(s));
  }
  Mutator m(seed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  size_t iterations = 0, rejected = 0, accepted = 0, known = 0, bugs = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const size_t which = m.pick(seeds.size());
    const size_t strategy = m.pick(4);
    if (strategy == 0) {
      std::string bytes = seedBytes[which];
      for (size_t k = 0, n = 1 + m.pick(3); k < n; ++k) m.mutateBytes(bytes);
      writeFile(current, bytes);
    } else {
      Records records = seedRecords[which];
      auto& [name, data] = records[m.pick(records.size())];
      const bool json = name == "extra/tensordict.json";
      if (strategy == 1) {
        // Prefer the metadata: it is what tdfx parses itself.
        for (auto& r : records)
          if (r.first == "extra/tensordict.json") m.mutateJson(r.second);
      } else if (json) {
        m.mutateJson(data);
      } else {
        m.mutateBytes(data);
      }
      writeRecords(current, records);
    }
    std::string message;
    switch (exercise(current, message)) {
      case Outcome::Ok: ++accepted; break;
      case Outcome::TdfxError: ++rejected; break;
      case Outcome::KnownCrash:
        ++known;
        std::cerr << "known LibTorch crash (" << knownCrash(message)->reason << "): " << message << "\n";
        break;
      case Outcome::Bug: {
        const std::string kept = (fs::path(outDir) / ("failure-" + std::to_string(bugs++) + ".pt")).string();
        fs::copy_file(current, kept, fs::copy_options::overwrite_existing);
        std::cerr << "BUG: " << message << "\n  input kept as " << kept << "\n";
      }
    }
    ++iterations;
  }
  fs::remove(current);
  std::cout << "fuzz: " << iterations << " inputs in " << seconds << " s: " << accepted << " accepted, " << rejected
            << " rejected with a checked error, " << known << " known LibTorch importer crashes, " << bugs << " bugs\n";
  return bugs == 0 ? 0 : 1;
}
