// tdfx-cli trace --out-dir: many archives traced in one process, one model worker reused.
#pragma once

#include <string>
#include <vector>

#include "tdfx/worker/model_worker.h"

struct BatchTraceOptions {
  std::vector<std::string> models;  // archives named on the command line
  std::string listFile;             // --from: one archive path per line, optionally followed by --input flags
  std::vector<std::string> inputs;  // --input for every model's verify (a line's own --input override it)
  uint64_t seed = 0;                // --seed for every model's verify
  std::string outDir;
  bool fxDot = false;  // also NAME.dot, the `export --style fx --expand-all` picture
  bool verify = false; // also NAME.verify.txt, the verify report on the file's example inputs
};

/// Says on stderr where the printed graph follows code torch.fx does not run (the TorchScript side
/// of a branch on torch.jit.is_scripting()), one note per line of the output node's fxDifference.
void noteFxDifference(const std::string& path, const tdfx::TracedModel& model);

/// Traces every model into outDir: NAME.graph.txt and NAME.code.txt (what `trace --graph` and
/// `trace --code` print), or NAME.error.txt with the error. Every model gets a fresh worker (a fork
/// of the zygote, milliseconds) instead of a fresh tdfx-cli (LibTorch's start, most of a second).
/// Returns 0 when every model traced (and verified, with --verify), 1 otherwise; a line per model
/// that failed goes to stderr, and a summary line to stdout.
int runBatchTrace(const BatchTraceOptions& options, const tdfx::WorkerLimits& limits);
