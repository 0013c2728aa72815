// The app's side of the model worker, and the zygote that forks workers.
#include "tdfx/worker/model_worker.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "graph_json.h"
#include "thread_census.h"
#include "tdfx/error.h"
#include "worker_protocol.h"

namespace tdfx {

using nlohmann::json;

namespace {

// The zygote's control socket (the app's end); -1 when no zygote runs. Requests on it are
// serialised by zygoteMutex.
int zygoteFd = -1;
std::mutex zygoteMutex;
// Why startWorkerZygote did not start one, for the error a ModelWorker then gives.
std::string zygoteProblem = "tdfx::startWorkerZygote() was not called (call it first in main, while the process has one thread)";

uint64_t physicalMemory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) : uint64_t{8} << 30;
}

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30));
  return buf;
}

// Zygote requests: "S<memory bytes>" forks a worker and answers its pid with the app's end of the
// worker's socket (SCM_RIGHTS); "W<pid>" waits for that worker to end and answers its wait status.
void sendWithFd(int socket, const std::string& text, int fd) {
  iovec iov{const_cast<char*>(text.data()), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  while (::sendmsg(socket, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

// Receives one message (and a descriptor, when one came with it); "" when the other end is gone.
std::string receiveWithFd(int socket, int* fd) {
  char buf[256];
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return {};
  if (fd) {
    *fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(fd, CMSG_DATA(c), sizeof(int));
  }
  return std::string(buf, static_cast<size_t>(n));
}

// A worker keeps only its socket (moved to fd 3) and stdin, stdout and stderr: whatever else the
// app had open when it started stays out of the model's reach.
int keepOnly(int socket) {
  if (socket != 3) {
    if (::dup2(socket, 3) < 0) ::_exit(127);
    socket = 3;
  }
  ::close_range(4, ~0U, 0);
  return socket;
}

[[noreturn]] void runZygote(int control) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the app is gone: so is the zygote (and, below, each worker)
  if (::getppid() == 1) ::_exit(0);
  ::signal(SIGINT, SIG_IGN);  // Ctrl-C in a terminal is for the app, which stops its workers itself
  std::vector<pid_t> discarded;  // killed workers the app does not wait for: reaped here
  while (true) {
    for (auto it = discarded.begin(); it != discarded.end();)
      it = ::waitpid(*it, nullptr, WNOHANG) != 0 ? discarded.erase(it) : std::next(it);
    pollfd p{control, POLLIN, 0};
    if (::poll(&p, 1, discarded.empty() ? -1 : 200) == 0) continue;
    const std::string request = receiveWithFd(control, nullptr);
    if (request.empty()) ::_exit(0);
    if (request[0] == 'D') {
      discarded.push_back(static_cast<pid_t>(std::stol(request.substr(1))));
      continue;
    }
    if (request[0] == 'S') {
      int sv[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        sendWithFd(control, "E" + std::string(std::strerror(errno)), -1);
        continue;
      }
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::signal(SIGINT, SIG_DFL);
        serveModelWorker(keepOnly(sv[1]), std::stoull(request.substr(1)));
        ::_exit(0);
      }
      ::close(sv[1]);
      sendWithFd(control, pid > 0 ? "P" + std::to_string(pid) : "E" + std::string(std::strerror(errno)), pid > 0 ? sv[0] : -1);
      ::close(sv[0]);
    } else if (request[0] == 'W') {
      int status = 0;
      const pid_t pid = static_cast<pid_t>(std::stol(request.substr(1)));
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      sendWithFd(control, "R" + std::to_string(status), -1);
    }
  }
}

std::string signalName(int sig) {
  const char* d = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (d ? std::string(" (") + d + ")" : std::string());
}

}  // namespace

bool startWorkerZygote() {
  if (zygoteFd >= 0) return true;
  // OpenBLAS starts its thread pool when the library is loaded, before main. Its pool is idle now,
  // and its own pre-fork handler would stop it anyway; stopping it here makes the process provably
  // single-threaded when it forks (OpenBLAS starts the pool again at its next use).
  using BlasShutdown = int (*)();
  if (const auto shutdown = reinterpret_cast<BlasShutdown>(::dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"))) shutdown();
  // A thread just joined (OpenBLAS's, above) is still listed for a moment: wait for it to go.
  // Only a thread that stays a whole second is a real one.
  const auto waitStart = std::chrono::steady_clock::now();
  std::vector<worker::OtherThread> firstSeen;
  const auto others = worker::waitUntilSingleThreaded(std::chrono::seconds(1), &firstSeen);
  if (std::getenv("TDFX_DEBUG_ZYGOTE") && !firstSeen.empty()) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - waitStart);
    std::fprintf(stderr, "tdfx: worker zygote: waited %lld us for %s\n", static_cast<long long>(us.count()),
                 worker::describeThreads(firstSeen).c_str());
  }
  if (!others.empty()) {
    zygoteProblem = "forking is only safe in a single-threaded process, and " + worker::describeThreads(others) +
                    (others.size() == 1 ? " was" : " were") +
                    " still running 1 s after tdfx::startWorkerZygote() began; call it first in main(), "
                    "before anything (Qt, a thread pool, a library's initialiser) starts a thread";
    return false;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    zygoteProblem = std::string("socketpair failed: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    zygoteProblem = std::string("fork failed: ") + std::strerror(errno);
    ::close(sv[0]);
    ::close(sv[1]);
    return false;
  }
  if (pid == 0) {
    ::close(sv[0]);
    runZygote(sv[1]);
  }
  ::close(sv[1]);
  zygoteFd = sv[0];
  return true;
}

std::string workerZygoteProblem() {
  std::lock_guard<std::mutex> zygote(zygoteMutex);
  return zygoteFd >= 0 ? std::string() : zygoteProblem;
}

uint64_t WorkerLimits::effectiveMemoryBytes() const { return memoryBytes ? memoryBytes : physicalMemory() / 2; }

ModelWorker::ModelWorker(WorkerLimits limits) : limits_(limits) {}

ModelWorker::~ModelWorker() { stop(); }

void ModelWorker::spawn() {
  std::lock_guard<std::mutex> zygote(zygoteMutex);
  if (zygoteFd < 0) throw Error("the model worker cannot start: no worker zygote runs: " + zygoteProblem);
  sendWithFd(zygoteFd, "S" + std::to_string(limits_.effectiveMemoryBytes()), -1);
  int fd = -1;
  const std::string answer = receiveWithFd(zygoteFd, &fd);
  if (!answer.empty() && answer[0] == 'P' && fd < 0) {  // a worker but no socket (no fd left here?)
    const pid_t orphan = static_cast<pid_t>(std::stol(answer.substr(1)));
    ::kill(orphan, SIGKILL);
    sendWithFd(zygoteFd, "D" + std::to_string(orphan), -1);
  }
  if (answer.empty() || answer[0] != 'P' || fd < 0)
    throw Error("the model worker cannot start: " +
                (answer.size() > 1 && answer[0] == 'E' ? answer.substr(1) : std::string("no socket from the zygote")));
  std::lock_guard<std::mutex> lock(processMutex_);
  fd_ = fd;
  pid_ = static_cast<pid_t>(std::stol(answer.substr(1)));
  if (cancelled_) ::kill(pid_, SIGKILL);  // cancelled while it started: the request sees it gone
}

void ModelWorker::stop() {
  pid_t pid;
  {
    std::lock_guard<std::mutex> lock(processMutex_);
    pid = pid_.exchange(-1);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  // The zygote reaps it when it has ended; nobody waits here (this may be the GUI thread, and a
  // killed process with gigabytes mapped takes a while to go).
  std::lock_guard<std::mutex> zygote(zygoteMutex);
  sendWithFd(zygoteFd, "D" + std::to_string(pid), -1);
}

void ModelWorker::cancel() {
  cancelled_ = true;
  std::lock_guard<std::mutex> lock(processMutex_);
  if (pid_ > 0) ::kill(pid_, SIGKILL);  // the request in progress sees the socket close
}

std::vector<uint8_t> ModelWorker::request(const std::vector<uint8_t>& message, double seconds, const std::string& what) {
  const std::string model = path_.empty() ? std::string("the model") : path_;
  if (cancelled_) throw WorkerCancelled(model + ": " + what + " was cancelled");
  if (pid_ <= 0) spawn();
  int fd;
  {
    std::lock_guard<std::mutex> lock(processMutex_);
    fd = fd_;
  }
  std::vector<uint8_t> answer;
  bool answered = false, timedOut = false;
  if (worker::writeFrame(fd, message)) {
    // Wait for the answer with a deadline; cancel() kills the worker, which closes the socket.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (true) {
      const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        timedOut = true;
        break;
      }
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min(left * 1000.0 + 1, 1000.0)));
      if (ready < 0 && errno != EINTR) break;
      if (ready > 0) {
        answered = worker::readFrame(fd, answer);
        break;
      }
    }
  }
  if (answered) return answer;
  // No answer: the worker was cancelled, ran past the limit, or died. Stop it and say which.
  const pid_t pid = pid_;
  if (pid > 0) ::kill(pid, SIGKILL);  // whatever went wrong, it is stopped before it is reaped
  int status = 0;
  {
    std::lock_guard<std::mutex> lock(processMutex_);
    pid_ = -1;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  if (pid > 0) {
    std::lock_guard<std::mutex> zygote(zygoteMutex);
    sendWithFd(zygoteFd, "W" + std::to_string(pid), -1);
    const std::string r = receiveWithFd(zygoteFd, nullptr);
    if (r.size() > 1) status = std::stoi(r.substr(1));
  }
  if (cancelled_) throw WorkerCancelled(model + ": " + what + " was cancelled");
  if (timedOut) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", seconds);
    throw Error(model + ": " + what + " did not finish within " + limit + " s (the time limit; --timeout); the model "
                "worker was stopped");
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string why = signalName(sig);
    if (sig == SIGKILL) why += ", perhaps by the kernel's out-of-memory killer";
    throw Error(model + ": the model worker died by " + why + " during " + what +
                (what == "open" ? " (the archive may be damaged: LibTorch crashed reading it)" : std::string()));
  }
  throw Error(model + ": the model worker ended (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
              ") during " + what);
}

namespace {

// Turns a worker's error answer back into the exception type it came from.
[[noreturn]] void rethrow(const json& answer, const WorkerLimits& limits) {
  const std::string type = answer.value("type", "error");
  std::string message = answer.value("error", "unknown error");
  if (type == "memory" || message.find("can't allocate memory") != std::string::npos ||
      message.find("std::bad_alloc") != std::string::npos)
    message += " (the model worker may use at most " + gib(limits.effectiveMemoryBytes()) + " of memory; --memory-limit)";
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

TracedModel ModelWorker::open(const std::string& path) {
  std::lock_guard<std::mutex> lock(requestMutex_);
  stop();  // one model per worker: a new open starts a fresh one
  path_ = path;
  const json answer = decode(request(json::to_cbor(json{{"op", "open"}, {"path", path}}),
                                     limits_.openSeconds, "open"));
  if (!answer.value("ok", false)) {
    stop();
    rethrow(answer, limits_);
  }
  loadSeconds_ = answer.value("load_seconds", 0.0);
  traceSeconds_ = answer.value("trace_seconds", 0.0);
  return tracedModelFromJsonValue(answer.at("model"));
}

WorkerVerifyResult ModelWorker::verify(const std::vector<InputSpec>& inputs, uint64_t seed, const VerifyOptions& options) {
  std::lock_guard<std::mutex> lock(requestMutex_);
  if (pid_ <= 0) throw Error("no model is open in a worker (it was cancelled or ended): open the model again");
  const json req = {{"op", "verify"},       {"inputs", worker::inputsJson(inputs)}, {"seed", seed},
                    {"atol", options.atol}, {"rtol", options.rtol},
                    {"random_seed", options.randomSeed ? json(*options.randomSeed) : json(nullptr)}};
  const json answer = decode(request(json::to_cbor(req), limits_.requestSeconds, "verify"));
  if (!answer.value("ok", false)) rethrow(answer, limits_);
  WorkerVerifyResult result;
  result.report = worker::reportFromJson(answer.at("report"));
  result.report.options = options;
  result.records = worker::recordsFromJson(answer.at("records"));
  return result;
}

std::vector<NodeRunRecord> ModelWorker::run(const std::vector<InputSpec>& inputs, uint64_t seed) {
  std::lock_guard<std::mutex> lock(requestMutex_);
  if (pid_ <= 0) throw Error("no model is open in a worker (it was cancelled or ended): open the model again");
  const json answer = decode(request(json::to_cbor(json{{"op", "run"}, {"inputs", worker::inputsJson(inputs)}, {"seed", seed}}),
                                     limits_.requestSeconds, "run"));
  if (!answer.value("ok", false)) rethrow(answer, limits_);
  return worker::recordsFromJson(answer.at("records"));
}

std::vector<ParameterStats> ModelWorker::parameterStats() {
  std::lock_guard<std::mutex> lock(requestMutex_);
  if (pid_ <= 0) throw Error("no model is open in a worker (it was cancelled or ended): open the model again");
  const json answer =
      decode(request(json::to_cbor(json{{"op", "parameter_stats"}}), limits_.requestSeconds, "parameter statistics"));
  if (!answer.value("ok", false)) rethrow(answer, limits_);
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

std::vector<ParameterValues> ModelWorker::parameterValues() {
  std::lock_guard<std::mutex> lock(requestMutex_);
  if (pid_ <= 0) throw Error("no model is open in a worker (it was cancelled or ended): open the model again");
  const json answer = decode(request(json::to_cbor(json{{"op", "parameter_values"}}), limits_.requestSeconds, "parameter values"));
  if (!answer.value("ok", false)) rethrow(answer, limits_);
  std::vector<ParameterValues> out;
  for (const json& p : answer.at("parameters")) {
    ParameterValues v;
    v.name = p.at("name").get<std::string>();
    v.shape = p.at("shape").get<std::vector<int64_t>>();
    v.dtype = p.at("dtype").get<std::string>();
    v.isBuffer = p.at("buffer").get<bool>();
    if (p.contains("values")) {
      const auto& bytes = p.at("values").get_binary();
      if (bytes.size() % sizeof(double) != 0) throw Error("the model worker sent a malformed parameter " + v.name);
      v.values.resize(bytes.size() / sizeof(double));
      std::memcpy(v.values.data(), bytes.data(), bytes.size());
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::map<std::string, int> ModelWorker::probeSandbox() {
  std::lock_guard<std::mutex> lock(requestMutex_);
  const json answer = decode(request(json::to_cbor(json{{"op", "probe_sandbox"}}), limits_.requestSeconds, "probe"));
  if (!answer.value("ok", false)) rethrow(answer, limits_);
  return answer.at("results").get<std::map<std::string, int>>();
}

}  // namespace tdfx
