// tdfx-cli serve: one warm process answering tdfx-cli commands sent as JSON lines (docs/cli.md,
// "serve"), so that a caller such as `import tdfx` pays LibTorch's start once per session instead
// of once per call, and a model opened by one command is still open for the next.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <string>

#include <sys/types.h>

#include "tdfx/util/file_identity.h"
#include "tdfx/worker/model_worker.h"

/// A model opened in its worker, as a command uses it: the worker answers further requests on it
/// (verify, run, torchScript); a cached model is shared with later commands and never changed (a
/// command that adds run records to the graph works on a copy).
struct OpenedModel {
  std::shared_ptr<tdfx::ModelWorker> worker;
  std::shared_ptr<tdfx::TracedModel> model;
  bool cached = false;  ///< kept by serve for later commands: never changed, copied to change
};

/// The models serve keeps open between requests, each in its own worker: the most recently used
/// `capacity`. An entry is used again only for the same path, the same file (device, inode, size
/// and modification time: a file saved again, as tdfx.py does by renaming a new one over it, is
/// another file) and the same limits, while its worker lives; a worker killed at a limit or by a
/// crash is dropped, and the next command opens the model afresh.
class ModelCache {
 public:
  explicit ModelCache(size_t capacity) : capacity_(capacity) {}
  OpenedModel open(const std::string& path, const tdfx::WorkerLimits& limits);
  /// Closes the model `worker` holds: a command ran its forward in a way that may have left
  /// state behind (batch norm statistics of a model in training mode, counters, torch's
  /// generator), so the next command opens it afresh, as a one-shot tdfx-cli would.
  void forget(const std::shared_ptr<tdfx::ModelWorker>& worker);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string path;
    tdfx::FileIdentity stamp;
    tdfx::WorkerLimits limits;
    OpenedModel opened;
  };

  std::list<Entry> entries_;  // the most recently used first
  size_t capacity_;
};

/// Where commands open their models: a fresh worker each (the command line), or serve's cache.
/// Returns the opened model; notes about it (how it was exported, where it differs from FX) are
/// the caller's to print.
OpenedModel openModelFor(const std::string& path, const tdfx::WorkerLimits& limits);

/// serve's ModelCache::forget, when serving; nothing otherwise.
void forgetModel(const OpenedModel& opened);

/// The traced model of `opened` for a command to change: moved out of a fresh one, copied from a
/// cached one.
tdfx::TracedModel ownCopy(OpenedModel& opened);

/// Whether this process serves requests (then stdout is the protocol, never a terminal).
bool serving();

/// Whether argv asks for `serve` (its first argument that is not a global option), and not for its
/// --help or --version. main() asks before the worker zygote starts, so that the protocol's
/// descriptors can be kept from workers.
bool servesRequests(int argc, char** argv);

/// Moves the protocol off descriptors 0 and 1 before any worker can inherit them: a model that
/// prints (TorchScript's print) then writes to stderr, and one that reads stdin reads nothing,
/// instead of corrupting or stealing requests. Call before startWorkerZygote().
void reserveProtocolDescriptors();

/// The serve loop: reads one request per line on the protocol's input until it ends, runs each
/// command with `runCommand` (runCli; a request's commands up to the first that fails), and writes
/// one reply line per request. Returns 0 at the end of input.
int serveRequests(int (*runCommand)(int argc, char** argv), size_t cachedModels);
