// Load, trace and run times for model files, as a table or JSON (for trace_benchmark.py).
//   tdfx_trace_bench [--json] [--repeat N] [--input KEY=SHAPE]... MODEL...
//   The forward columns: the eager module's forward and the printed graph's (GraphModule::forward,
//   which runs the nodes as printed), each warmed up once, then the best of N runs taken in turn;
//   ratio = printed / eager. The node fw column: the same printed graph run node by node
//   (GraphModule::forwardRecorded, the run whose per-node times the GUI's time overlay shows: each
//   node the function the same emitter made), best of N. malloc is tuned as in the model worker (reuseFreedMemory).
//   tdfx_trace_bench --worker-start [--repeat N] MODEL: what a model worker adds to opening MODEL
//     (zygote fork, socket, serialization), as JSON: open in a worker vs load + trace here.
#include <chrono>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdfx/error.h"
#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"
#include "tdfx/runtime/verify.h"
#include "tdfx/worker/model_worker.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename Fn>
double bestOf(int repeat, Fn&& fn) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < repeat; ++i) {
    const auto start = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

}  // namespace

// Opening MODEL in a worker (fork from the zygote, load and trace there, the graph back as CBOR)
// against loading and tracing it in this process; the difference is the worker's own cost.
int workerStart(const std::string& path, int repeat) {
  const double worker = bestOf(repeat, [&] {
    tdfx::ModelWorker w;
    w.open(path);
  });
  // The GUI then asks for each parameter's min, max and mean (after its first frame).
  const double withStats = bestOf(repeat, [&] {
    tdfx::ModelWorker w;
    w.open(path);
    w.parameterStats();
  });
  const double local = bestOf(repeat, [&] {
    const tdfx::ModelFile model = tdfx::loadModelFile(path);
    const tdfx::GraphModule gm = tdfx::symbolicTrace(*model.module);
  });
  std::cout << nlohmann::json{{"worker_open_s", worker}, {"worker_open_and_stats_s", withStats}, {"in_process_s", local}, {"worker_cost_s", worker - local}}.dump()
            << "\n";
  return 0;
}

int main(int argc, char** argv) {
  tdfx::startWorkerZygote();  // first, while the process has one thread
  tdfx::reuseFreedMemory();   // models run here as in a model worker
  bool json = false, worker = false;
  int repeat = 3;
  std::vector<tdfx::InputSpec> inputs;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--worker-start") worker = true;
    else if (a == "--repeat" && i + 1 < argc) repeat = std::stoi(argv[++i]);
    else if (a == "--input" && i + 1 < argc) inputs.push_back(tdfx::parseInputSpec(argv[++i]));
    else models.push_back(a);
  }
  nlohmann::json rows = nlohmann::json::array();
  try {
    if (worker && models.size() == 1) return workerStart(models[0], repeat);
    for (const std::string& path : models) {
      tdfx::ModelFile model;
      const double load = bestOf(1, [&] { model = tdfx::loadModelFile(path); });
      std::optional<tdfx::GraphModule> gm;
      const double trace = bestOf(repeat, [&] { gm.emplace(tdfx::symbolicTrace(*model.module)); });
      const tdfx::TensorDict td = tdfx::verificationInputs(model, inputs, 0);
      tdfx::VerifyReport report;
      const double verifyTime = bestOf(1, [&] { report = tdfx::verify(*model.module, *gm, td); });
      const auto forwardOnce = [&td](const tdfx::TensorDictModuleBase& m) {
        tdfx::TensorDict in = td;
        m.forward(in);
      };
      const auto recordedOnce = [&td, &gm] {
        tdfx::TensorDict in = td, out;
        gm->forwardRecorded(in, &out);
      };
      forwardOnce(*model.module);
      forwardOnce(*gm);
      recordedOnce();
      double eagerForward = std::numeric_limits<double>::infinity(), graphForward = eagerForward;
      double nodeForward = eagerForward;
      for (int i = 0; i < repeat; ++i) {
        eagerForward = std::min(eagerForward, bestOf(1, [&] { forwardOnce(*model.module); }));
        graphForward = std::min(graphForward, bestOf(1, [&] { forwardOnce(*gm); }));
        nodeForward = std::min(nodeForward, bestOf(1, recordedOnce));
      }
      std::string name = path.substr(path.find_last_of('/') + 1);
      name = name.substr(0, name.rfind('.'));
      rows.push_back({{"model", name},
                      {"nodes", gm->graph().size()},
                      {"load_s", load},
                      {"trace_s", trace},
                      {"verify_s", verifyTime},
                      {"eager_s", report.eagerSeconds},
                      {"traced_s", report.tracedSeconds},
                      {"eager_forward_s", eagerForward},
                      {"graph_forward_s", graphForward},
                      {"node_forward_s", nodeForward},
                      {"ratio", graphForward / eagerForward},
                      {"bitwise", report.passed()}});
    }
  } catch (const std::exception& e) {
    std::cerr << "tdfx_trace_bench: " << e.what() << "\n";
    return 1;
  }
  if (json) {
    std::cout << rows.dump(1) << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(22) << "model" << std::right << std::setw(7) << "nodes" << std::setw(10) << "load ms"
            << std::setw(10) << "trace ms" << std::setw(11) << "verify ms" << std::setw(10) << "eager ms" << std::setw(11)
            << "traced ms" << std::setw(12) << "eager fw ms" << std::setw(12) << "graph fw ms" << std::setw(11) << "node fw ms" << std::setw(7) << "ratio"
            << std::setw(9) << "bitwise\n";
  for (const auto& r : rows)
    std::cout << std::left << std::setw(22) << r["model"].get<std::string>() << std::right << std::setw(7)
              << r["nodes"].get<size_t>() << std::fixed << std::setprecision(1) << std::setw(10)
              << r["load_s"].get<double>() * 1e3 << std::setw(10) << r["trace_s"].get<double>() * 1e3 << std::setw(11)
              << r["verify_s"].get<double>() * 1e3 << std::setw(10) << r["eager_s"].get<double>() * 1e3 << std::setw(11)
              << r["traced_s"].get<double>() * 1e3 << std::setw(12) << r["eager_forward_s"].get<double>() * 1e3
              << std::setw(12) << r["graph_forward_s"].get<double>() * 1e3 << std::setw(11)
              << r["node_forward_s"].get<double>() * 1e3 << std::setprecision(3) << std::setw(7)
              << r["ratio"].get<double>() << std::setw(9) << (r["bitwise"].get<bool>() ? "yes" : "NO") << "\n";
  return 0;
}
