// Mutation fuzzer for the model loader, the tensordict.json parser, the tracer and the runtime.
//
//   tdfx_fuzz_loader (--iterations N | --seconds N) [--seed S] [--timeout S] [--max-limited N]
//                    [--max-known-percent P] [--out DIR] SEED_FILE...
//
// Each iteration takes a seed archive and mutates it: raw bytes (flips, truncation, splices) or,
// through LibTorch's zip reader/writer, one record (the pickles, the code, tensordict.json with
// JSON-aware edits). The result is opened in a model worker, as the apps open files: loaded,
// traced and run on its example inputs. A failure must be a checked error (tdfx's own, or
// LibTorch's c10::Error refusing the input); the worker tags every error answer with its origin.
// A bug is:
// - a worker that crashes (a signal: WorkerCrash, naming the stage it died in and its frames),
//   unless the crash's site (its innermost frame outside the C and C++ runtimes) is LibTorch's own
//   code, reached through a function the allow-list below names, in the stage and by the signal
//   it names: a crash in tdfx's code (libtdfx-core, the program) is never excused, whatever the
//   stage;
// - a worker that answers with another exception (WorkerFault: std::out_of_range, an exception
//   escaping a noexcept function);
// - more than --max-limited inputs stopped at the time or memory limit (a planted hang is one);
// - more than --max-known-percent of the inputs crashing LibTorch.
// Bugs are kept as OUT/failure-<n>.pt. Exit 0 when no bug was found. --iterations bounds the run
// by work done (CI), --seconds by time (a long hunt by hand).
//
// TDFX_TEST_PLANT_FAULT=KIND@WHERE plants a fault in tdfx's own code (tdfx/util/crash_stage.h): the
// fuzz.loader_sees_* tests plant one in each stage, and the fuzzer must fail naming it.
#include <algorithm>
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

enum class Outcome { Ok, TdfxError, Limited, KnownCrash, Bug };

// Whose code a frame of a crashed worker is. Only LibTorch's may be excused, and only at a site the
// allow-list names; tdfx's own code (libtdfx-core, the program) and anything unknown never are.
enum class Owner { LibTorch, System, Other };

Owner ownerOf(const std::string& object) {
  const auto startsWith = [&](const char* prefix) { return object.rfind(prefix, 0) == 0; };
  if (startsWith("libtorch") || startsWith("libc10")) return Owner::LibTorch;
  for (const char* system : {"libc.so", "libstdc++.so", "libgcc_s.so", "libm.so", "ld-linux", "libpthread.so"})
    if (startsWith(system)) return Owner::System;
  return Owner::Other;
}

// Where a crash happened: the innermost frame outside the C and C++ runtimes (the abort() that
// glibc's free() raised belongs to whoever called free()). Null when there are no such frames.
const tdfx::CrashFrame* crashSite(const std::vector<tdfx::CrashFrame>& frames) {
  for (const tdfx::CrashFrame& f : frames)
    if (ownerOf(f.object) != Owner::System) return &f;
  return nullptr;
}

std::string describe(const tdfx::CrashFrame* site) {
  return site ? site->object + ", " + site->function : std::string("no frame outside the C and C++ runtimes");
}

// The innermost frames, for the report of a crash: where it happened, and how it got there.
std::string describe(const std::vector<tdfx::CrashFrame>& frames, size_t most = 16) {
  std::string out;
  for (size_t i = 0; i < frames.size() && i < most; ++i)
    out += "\n    #" + std::to_string(i) + " " + frames[i].function.substr(0, 160) + " in " + frames[i].object;
  return frames.empty() ? "\n    (no frames: the worker died without answering)" : out;
}

// Known crashes of LibTorch 1.13's importer on damaged archives: a crash in the stage, by the
// signal, whose site is LibTorch's own code reached through the function named, is counted apart,
// not as a bug. Each entry says why it is LibTorch's, not ours.
struct KnownCrash {
  const char* stage;
  const char* signal;
  const char* through;  // a function of LibTorch's between the site and tdfx's call, as demangled
  const char* reason;
};
const KnownCrash kKnownCrashes[] = {
    {tdfx::stage::kImporter, "(SIGSEGV)", "torch::jit::",
     "LibTorch 1.13's importer dereferences what damaged TorchScript code leaves null: a class body line "
     "`__buffers__ = []` cut to `__= []` segfaults in torch::jit::load (tests/worker/model_worker_test.cpp "
     "ACrashInLibTorchIsAnErrorNamingTheSignal); tdfx checks the zip directory and record sizes before it"},
    {tdfx::stage::kDebugInfo, "(SIGABRT)", "torch::jit::Source::findSourceRangeThatGenerated",
     "LibTorch 1.13 unpickles a function's .debug_pkl record when a source range is first asked for "
     "(Source::findSourceRangeThatGenerated); on a damaged pickle its unpickler frees an invalid pointer "
     "and glibc aborts (`free(): invalid size` in torch::jit::unpickle; fuzz.loader --seed 7 finds one)"},
    {tdfx::stage::kDebugInfo, "(SIGSEGV)", "torch::jit::Source::findSourceRangeThatGenerated",
     "the same unpickling of a damaged .debug_pkl (Source::findSourceRangeThatGenerated): its unpickler "
     "reads a string through a pointer the damage left wild and segfaults copying it"},
};

// The frames of LibTorch's own that the crash happened in: from its site outwards, up to tdfx's
// call into LibTorch (the first frame that is neither LibTorch's nor the runtimes').
bool reachedThrough(const std::vector<tdfx::CrashFrame>& frames, const tdfx::CrashFrame* site, const std::string& function) {
  bool inSite = false;
  for (const tdfx::CrashFrame& f : frames) {
    inSite = inSite || &f == site;
    if (!inSite) continue;
    if (ownerOf(f.object) == Owner::Other) return false;
    if (ownerOf(f.object) == Owner::LibTorch && f.function.find(function) != std::string::npos) return true;
  }
  return false;
}

const KnownCrash* knownCrash(const tdfx::WorkerCrash& e) {
  const std::string message = e.what();
  const tdfx::CrashFrame* site = crashSite(e.frames());
  if (!site || ownerOf(site->object) != Owner::LibTorch) return nullptr;  // tdfx's own frame, or none
  for (const KnownCrash& k : kKnownCrashes)
    if (message.find(std::string(" in ") + k.stage) != std::string::npos && message.find(k.signal) != std::string::npos &&
        reachedThrough(e.frames(), site, k.through))
      return &k;
  return nullptr;
}

// A request stopped at its time or memory limit: not a checked refusal of the input, and not a
// crash either. Counted apart and bounded (--max-limited), so that a hang or a runaway allocation
// in tdfx's code cannot pass as "rejected".
bool hitLimit(const tdfx::Error& e) {
  return dynamic_cast<const tdfx::WorkerTimeout*>(&e) || std::string(e.what()).find("; --memory-limit)") != std::string::npos;
}

// Opened as the apps open files: in a model worker. A worker that dies (LibTorch's importer
// crashes on some damaged code) is a WorkerCrash naming the signal and the frames it died in.
Outcome exercise(const std::string& path, double timeoutSeconds, std::string& message, const KnownCrash*& known) {
  try {
    tdfx::WorkerLimits limits;
    limits.openSeconds = limits.requestSeconds = timeoutSeconds;
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
    message = std::string("crash: ") + e.what() + " (site: " + describe(crashSite(e.frames())) + ")" + describe(e.frames());
    known = knownCrash(e);
    return known ? Outcome::KnownCrash : Outcome::Bug;
  } catch (const tdfx::WorkerFault& e) {
    message = std::string("exception in the worker: ") + e.what();
    return Outcome::Bug;
  } catch (const tdfx::Error& e) {
    message = e.what();
    return hitLimit(e) ? Outcome::Limited : Outcome::TdfxError;
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
  double seconds = 0, timeout = 20;
  size_t maxIterations = 0, maxLimited = 2, maxKnownPercent = 10;
  uint64_t seed = 1;
  std::string outDir = fs::temp_directory_path() / "tdfx-fuzz";
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (a == "--iterations" && i + 1 < argc) maxIterations = std::stoull(argv[++i]);
    else if (a == "--timeout" && i + 1 < argc) timeout = std::stod(argv[++i]);
    else if (a == "--max-limited" && i + 1 < argc) maxLimited = std::stoull(argv[++i]);
    else if (a == "--max-known-percent" && i + 1 < argc) maxKnownPercent = std::stoull(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (a == "--out" && i + 1 < argc) outDir = argv[++i];
    else seeds.push_back(a);
  }
  if (seeds.empty() || (seconds <= 0 && maxIterations == 0)) {
    std::cerr << "usage: tdfx_fuzz_loader (--iterations N | --seconds N) [--seed S] [--timeout S] [--max-limited N]\n"
                 "                        [--max-known-percent P] [--out DIR] SEED_FILE...\n";
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
  const auto started = std::chrono::steady_clock::now();
  const auto more = [&](size_t done) {
    if (maxIterations > 0 && done >= maxIterations) return false;
    return seconds <= 0 || std::chrono::steady_clock::now() < started + std::chrono::duration<double>(seconds);
  };
  size_t iterations = 0, rejected = 0, accepted = 0, limited = 0, known = 0, bugs = 0;
  const auto keep = [&](const std::string& why) {
    const std::string kept = (fs::path(outDir) / ("failure-" + std::to_string(bugs++) + ".pt")).string();
    fs::copy_file(current, kept, fs::copy_options::overwrite_existing);
    std::cerr << "BUG: " << why << "\n  input kept as " << kept << "\n";
  };
  while (more(iterations)) {
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
    const KnownCrash* crash = nullptr;
    switch (exercise(current, timeout, message, crash)) {
      case Outcome::Ok: ++accepted; break;
      case Outcome::TdfxError: ++rejected; break;
      case Outcome::Limited:
        // Within the bound, a mutated constant may make a real loop long; past it, a hang or a
        // runaway allocation is suspected, each one kept.
        if (++limited > maxLimited) keep("stopped at a limit (more than --max-limited " + std::to_string(maxLimited) + "): " + message);
        else std::cerr << "stopped at a limit: " << message << "\n";
        break;
      case Outcome::KnownCrash:
        ++known;
        std::cerr << "known LibTorch crash (" << crash->reason << "): " << message << "\n";
        break;
      case Outcome::Bug: keep(message);
    }
    ++iterations;
  }
  fs::remove(current);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "fuzz: " << iterations << " inputs in " << took << " s: " << accepted << " accepted, " << rejected
            << " rejected with a checked error, " << limited << " stopped at a limit, " << known
            << " known LibTorch importer crashes, " << bugs << " bugs\n";
  // Known crashes are LibTorch's, but so many that they hide the inputs that reach tdfx's code.
  if (known * 100 > maxKnownPercent * std::max<size_t>(iterations, 1)) {
    std::cerr << "BUG: " << known << " of " << iterations << " inputs crashed LibTorch (more than --max-known-percent "
              << maxKnownPercent << ")\n";
    return 1;
  }
  return bugs == 0 ? 0 : 1;
}
