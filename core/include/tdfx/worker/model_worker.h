#pragma once
// The model worker: a process that loads one model file, once, and is the only process that runs
// LibTorch's deserializer or the model's code. The app keeps one per open model and talks to it
// with requests (open, verify, run); a crash, a hang or an allocation bomb in the model ends the
// worker, never the app. See docs/architecture.md ("Model worker").
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tdfx/error.h"
#include "tdfx/runtime/graph_module.h"
#include "tdfx/runtime/torchscript_export.h"
#include "tdfx/runtime/verify.h"
#include "tdfx/worker/graph_format.h"
#include "tdfx/worker/model_diff.h"
#include "tdfx/worker/worker_process.h"

namespace tdfx {

/// Time and memory limits of a worker. Zero memory: half of physical memory.
struct WorkerLimits {
  double openSeconds = 120;     ///< load and trace
  double requestSeconds = 60;   ///< verify, run
  uint64_t memoryBytes = 0;     ///< memory the worker may add to its start (RLIMIT_DATA)
  /// The limit in effect: memoryBytes, or half of physical memory.
  uint64_t effectiveMemoryBytes() const;
};

/// One parameter's or buffer's statistics, for the inspector.
struct ParameterStats {
  std::string node;       ///< the graph node's name
  std::string parameter;  ///< ParameterInfo::name of that node
  double min = 0, max = 0, mean = 0;
};

/// Sets min, max, mean and hasStats of the ParameterInfo each row names; rows naming no node or
/// parameter of `graph` are skipped.
void applyParameterStats(Graph& graph, const std::vector<ParameterStats>& stats);

/// What a verify request returns: the report and a recorded run of the traced graph.
struct WorkerVerifyResult {
  VerifyReport report;
  std::vector<NodeRunRecord> records;  ///< empty unless asked for (VerifyRecords::Recorded)
};

/// Whether a verify also sends the records of its traced run (each node's outputs and time, what
/// the GUI shows beside the report). They come from the run verify makes anyway: no extra pass.
enum class VerifyRecords { Recorded, ReportOnly };

/// One model worker process. Requests block the calling thread until the worker answers, the
/// limit passes (the worker is killed: tdfx::Error naming the request, the model and the limit),
/// the worker dies (tdfx::Error naming the signal) or another thread calls cancel(). After a
/// failure other than an error reported by the worker, the worker is gone: open() starts a new one.
/// Requests from several threads are served one at a time.
class ModelWorker {
 public:
  explicit ModelWorker(WorkerLimits limits = {});
  ~ModelWorker();
  ModelWorker(const ModelWorker&) = delete;
  ModelWorker& operator=(const ModelWorker&) = delete;

  /// Starts the worker process and warms it (a TorchScript import, trace and run of a small module
  /// of its own), so that the next open() is served by it instead of a fresh process: a first load
  /// in a fresh process is slower. The GUI keeps one such spare while the window is idle. Throws
  /// tdfx::Error when the worker cannot start or warm up (then it is not kept).
  void prepare();
  /// Whether a prepared worker waits for its open() (one that ended meanwhile may still count as
  /// waiting until it is reaped: open() then starts a fresh one).
  bool prepared() const { return prepared_ && process_.alive(); }
  /// Starts a worker (when none runs, or a prepared one), which loads and traces `path`. Throws
  /// tdfx::ModelFileError / TraceError as the worker reported them, tdfx::Error for limits and
  /// crashes.
  TracedModel open(const std::string& path, GraphDetail detail = GraphDetail::Full);
  /// Min, max and mean of every call_module node's parameters in the open model. A request of its
  /// own, because it reads every weight once more (0.1 s for resnet50, 0.35 s for vit_b_16 here):
  /// the GUI asks for it after the first frame and keeps them beside the graph (applyParameterStats
  /// puts them in a graph that is not shown yet).
  std::vector<ParameterStats> parameterStats();
  /// Verifies the open model on inputs built from the file's example inputs and `inputs`, then the
  /// tensors of `inputValues` as they are: the bytes of a file torch.save wrote (a dict {"input.x":
  /// tensor}), sent as they are and read in the worker (inputValuesFromPickle), never here.
  WorkerVerifyResult verify(const std::vector<InputSpec>& inputs, uint64_t seed, const VerifyOptions& options,
                            const std::vector<char>& inputValues = {},
                            VerifyRecords records = VerifyRecords::Recorded);
  /// One recorded run of the traced graph: each node's outputs and time. Inputs as verify's.
  std::vector<NodeRunRecord> run(const std::vector<InputSpec>& inputs, uint64_t seed,
                                 const std::vector<char>& inputValues = {});
  /// Every parameter and buffer of the open model with its values (for tdfx-cli diff). The answer
  /// is 8 bytes per value and must fit a 1 GiB frame: about 130 million values. With `digestKey`,
  /// each comes with its digest (tensorDigest under that key); with `valuesOf`, only the parameters
  /// named there come with their values (parametersToCompare).
  std::vector<ParameterValues> parameterValues(std::optional<uint64_t> digestKey = std::nullopt,
                                               const std::vector<std::string>* valuesOf = nullptr);
  /// The open model's traced graph as a TorchScript archive (saveTorchScript: the bytes of a .pt
  /// file and its forward's signature). The worker builds it, as it runs the model's code; the
  /// caller writes the file. Throws tdfx::RuntimeError naming the node TorchScript cannot express.
  TorchScriptArchive torchScript();
  /// Kills the worker now (any thread). The request in progress, and any request made until
  /// resetCancel(), throws WorkerCancelled, even one that was about to start a worker.
  void cancel() { process_.cancel(); }
  /// Makes requests possible again after cancel(). Call it where the next request is decided (the
  /// GUI thread, before queueing a job), so that a cancel meant for a job starting now is not lost.
  void resetCancel() { process_.resetCancel(); }
  /// Whether a worker process is running (not after a deferred read of the weights failed: that
  /// worker is stopped, so that a cache of workers opens the model afresh).
  bool alive() const { return process_.alive(); }
  /// Whether the open left the model's weights for the next request to read (deferred weights).
  bool weightsPending() const { return weightsPending_; }
  /// Whether the worker, idle between requests, still answers (WorkerProcess::idleAndConnected).
  bool idleAndConnected() { return process_.idleAndConnected(); }
  pid_t pid() const { return process_.pid(); }
  const std::string& modelPath() const { return path_; }
  /// Seconds the worker took to load and to trace the model in the last open().
  double loadSeconds() const { return loadSeconds_; }
  double traceSeconds() const { return traceSeconds_; }
  const WorkerLimits& limits() const { return limits_; }
  void setLimits(const WorkerLimits& limits) { limits_ = limits; }

  /// For tests of the sandbox: what the worker gets when it tries to open a file for writing,
  /// create a socket, exec and ptrace ({"open": errno, ...}; 0 means it was allowed).
  std::map<std::string, int> probeSandbox();

 private:
  std::vector<uint8_t> request(const std::vector<uint8_t>& message, double seconds, const std::string& what);
  void stop();

  WorkerLimits limits_;
  std::string path_;
  double loadSeconds_ = 0, traceSeconds_ = 0;
  std::atomic<bool> prepared_{false};  ///< the process runs, warmed, with no model yet
  /// The open left the parameters' values unread (WeightsRead::AfterLoad): the next request reads
  /// them first, so it gets the open's time as well as its own.
  bool weightsPending_ = false;
  /// The answer of a deferred read of the weights that failed (the file changed under the open):
  /// the worker was stopped, since no later request could succeed on it, and every request until
  /// the next open() gets this answer again. Empty when none failed.
  std::vector<uint8_t> weightsFailure_;
  /// Throws unless a worker holds an open model: the failed weights' error, or "no model is open".
  void requireOpenModel();
  std::mutex requestMutex_;  // one request at a time
  WorkerProcess process_;
};

/// The parameters and buffers of the models open in `a` and `b`, for diffModels, read in two
/// requests to each worker (the two workers at once): every parameter's digest under a key drawn
/// here, then the values of only those whose digests differ. Equal weights never cross the process
/// boundary: a self-diff of resnet18 moves 102 digests instead of 94 MB of values.
std::pair<std::vector<ParameterValues>, std::vector<ParameterValues>> parametersToCompare(ModelWorker& a, ModelWorker& b);

/// The worker's side (runs in the forked worker process): serves requests on `fd` until it closes.
void serveModelWorker(int fd, uint64_t memoryBytes);

/// Tunes this process's malloc for running models: tensors up to 32 MiB come from a heap that is
/// never given back to the kernel, so a forward reuses freed pages instead of faulting in fresh
/// ones. The model worker calls it at its start; benchmarks that run models in-process call it to
/// measure what the worker does. Process-wide; memory stays at the peak.
void reuseFreedMemory();

}  // namespace tdfx
