#pragma once
// A worker process: a child forked from the worker zygote that serves one service (the model
// worker, the layout process) over a socket of CBOR frames. Whatever runs there can be stopped: a
// request has a deadline and cancel() kills the process from any thread. ModelWorker and
// LayoutProcess are built on it. See docs/architecture.md ("Model worker").
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdfx/error.h"

namespace tdfx {

/// A request failed because its worker was cancelled (WorkerProcess::cancel, ModelWorker::cancel).
class WorkerCancelled : public Error {
 public:
  using Error::Error;
};

/// Forks the worker zygote: a copy of this process, taken before any thread exists, that forks
/// one worker per model on request (fork is only safe in a single-threaded process; LibTorch, Qt
/// and OpenMP start threads later). Call it first thing in main. Returns false, and starts
/// nothing, when another thread still runs after a bounded wait (a thread that was just joined,
/// such as OpenBLAS's pool, which this call stops, is waited for); ModelWorker then fails with an
/// error naming that thread. Calling it again does nothing.
bool startWorkerZygote();

/// Why no worker zygote runs, naming the threads that prevented it; "" when one runs.
std::string workerZygoteProblem();

/// One frame of a crashed worker's stack: the file name of the object it is in (a shared library's,
/// such as "libtorch_cpu.so.1.13", or the program's) and its function, demangled where the object
/// names it ("?" where it does not: a static or anonymous function).
struct CrashFrame {
  std::string object;
  std::string function;
};

/// A worker died during a request: by a signal (a crash, or the kernel's out-of-memory killer) or
/// by exiting. Not one of tdfx's own checked errors: a loader fuzzer counts it as a bug.
class WorkerCrash : public Error {
 public:
  explicit WorkerCrash(const std::string& message, std::vector<CrashFrame> frames = {})
      : Error(message), frames_(std::move(frames)) {}
  /// Where it died, innermost first from the faulting instruction, as its crash handler saw it;
  /// empty when it died without answering (killed by the kernel, or a crash inside the handler).
  const std::vector<CrashFrame>& frames() const { return frames_; }

 private:
  std::vector<CrashFrame> frames_;
};

/// A worker answered with an exception that is neither tdfx's own error nor LibTorch's checked
/// one (a std::out_of_range from an unchecked lookup, an exception escaping a noexcept function):
/// a bug somewhere in the worker's code. The message starts with the exception's type.
class WorkerFault : public Error {
 public:
  using Error::Error;
};

/// An error answer's `origin` (worker_server.cpp tags each): "exception" and "terminate" (a bug
/// in the worker's code) throw WorkerFault, "signal" (the answer of its signal handler) throws
/// WorkerCrash, both with `message` (a crash's after "`crashSubject`: " when one is given); any
/// other ("tdfx", "libtorch", "limit": checked errors) returns, and the caller throws by the
/// answer's type. The one place that maps origins.
void throwIfFaultOrCrash(const nlohmann::json& answer, const std::string& message, const std::string& crashSubject = "");

/// A request ran past its time limit; its worker process was killed.
class WorkerTimeout : public Error {
 public:
  using Error::Error;
};

/// In a worker: limits its writable memory (RLIMIT_DATA) to `memoryBytes` more than it has when it
/// starts (0: no limit).
void limitWorkerMemory(uint64_t memoryBytes);

/// What a forked worker runs: serve requests on `fd` (frames, see worker_protocol.h) until it
/// closes. `memoryBytes` is the memory limit the service should set (0: none).
using WorkerService = void (*)(int fd, uint64_t memoryBytes);

/// A service's loop: reads each request (a CBOR frame), answers with `answer`'s document, until the
/// socket closes. An exception from `answer` becomes {"ok": false, "error": its message}.
void serveJsonRequests(int fd, const std::function<nlohmann::json(const nlohmann::json&)>& answer);

/// Makes a service available to WorkerProcess under `name`. Register before startWorkerZygote()
/// (a static initialiser does): the zygote is a copy of the process taken then. Returns true.
bool registerWorkerService(const std::string& name, WorkerService serve);

/// One worker process of a registered service. request() starts it on first use. Thread-safe as
/// ModelWorker documents: one request at a time is the caller's job; cancel() from any thread.
class WorkerProcess {
 public:
  /// `service`: a registered name; `title`: how errors name it ("the model worker").
  WorkerProcess(std::string service, std::string title);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  /// Sends one request and waits at most `seconds` for the answer. `subject` (a file, "the
  /// graph") and `what` ("open", "layout") name it in errors. Throws WorkerCancelled after
  /// cancel(), tdfx::Error when the limit passes (the process is killed) or the process dies.
  std::vector<uint8_t> request(const std::vector<uint8_t>& message, double seconds, uint64_t memoryBytes,
                               const std::string& subject, const std::string& what, const std::string& crashHint = "");
  /// request() with CBOR documents; an answer {"ok": false, "error": ...} throws tdfx::Error.
  nlohmann::json requestJson(const nlohmann::json& message, double seconds, uint64_t memoryBytes,
                             const std::string& subject, const std::string& what);
  /// Kills the process now (any thread); requests throw WorkerCancelled until resetCancel().
  void cancel();
  void resetCancel() { cancelled_ = false; }
  bool cancelled() const { return cancelled_; }
  /// Stops the process (the zygote reaps it).
  void stop();
  bool alive() const { return pid_ > 0; }
  /// Whether an idle process still answers: alive() and its socket neither closed nor holding
  /// anything unasked (a process killed while idle, by the OOM killer say, has closed it). For a
  /// caller that keeps a worker between commands (tdfx-cli serve) and would rather open afresh
  /// than fail the next request.
  bool idleAndConnected();
  pid_t pid() const { return pid_; }

 private:
  void spawn(uint64_t memoryBytes);

  std::string service_, title_;
  std::mutex processMutex_;  // guards pid_ and fd_ against cancel()
  std::atomic<pid_t> pid_{-1};
  int fd_ = -1;
  std::atomic<bool> cancelled_{false};
};

}  // namespace tdfx
