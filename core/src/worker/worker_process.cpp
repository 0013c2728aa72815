// Worker processes and the zygote that forks them.
#include "tdfx/worker/worker_process.h"

#include <c10/util/Exception.h>

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cxxabi.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "tdfx/worker/model_worker.h"
#include "thread_census.h"
#include "worker_protocol.h"

namespace tdfx {

namespace {

// The zygote's control socket (the app's end); -1 when no zygote runs. Requests on it are
// serialised by zygoteMutex.
int zygoteFd = -1;
std::mutex zygoteMutex;
// Why startWorkerZygote did not start one, for the error a WorkerProcess then gives.
std::string zygoteProblem = "tdfx::startWorkerZygote() was not called (call it first in main, while the process has one thread)";


// The services a zygote can fork, by name (filled by static initialisers, before main).
std::map<std::string, WorkerService>& services() {
  static std::map<std::string, WorkerService> all{{"model", &serveModelWorker}};
  return all;
}

// Zygote requests: "S<service> <memory bytes>" forks a worker and answers its pid with the app's end of the
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
      // "S<service> <memory bytes>"
      const size_t space = request.find(' ');
      const auto service = services().find(request.substr(1, space == std::string::npos ? 0 : space - 1));
      if (space == std::string::npos || service == services().end()) {
        sendWithFd(control, "Eno such worker service: " + request.substr(1, 64), -1);
        continue;
      }
      int sv[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        sendWithFd(control, "E" + std::string(std::strerror(errno)), -1);
        continue;
      }
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::signal(SIGINT, SIG_DFL);
        service->second(keepOnly(sv[1]), std::stoull(request.substr(space + 1)));
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

// The writable private memory this process has now (VmData of /proc/self/status), which is what
// RLIMIT_DATA counts.
uint64_t dataBytes() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  unsigned long long kib = 0;
  if (status) {
    char line[256];
    while (std::fgets(line, sizeof line, status)) {
      if (std::sscanf(line, "VmData: %llu kB", &kib) == 1) break;
    }
    std::fclose(status);
  }
  return kib * 1024;
}


}  // namespace

void limitWorkerMemory(uint64_t memoryBytes) {
  if (!memoryBytes) return;
  // RLIMIT_DATA counts writable private memory (heap, anonymous mappings, thread stacks), not the
  // libraries a worker starts with (LibTorch, Qt or Graphviz: about 0.8 GiB) and not the address
  // space malloc reserves for each thread's arena and never writes. RLIMIT_AS counted both, so a
  // model with 184 MiB of tensors failed a 256 MiB limit whenever a pool thread's first malloc
  // reserved a 64 MiB arena (CI, 2026-12-02). The limit counts from what is there already (the
  // libraries' data; under ASan, its shadow), so --memory-limit is what the work itself may add.
  const uint64_t bytes = dataBytes() + memoryBytes;
  const rlimit limit{bytes, bytes};
  ::setrlimit(RLIMIT_DATA, &limit);
}

void serveJsonRequests(int fd, const std::function<nlohmann::json(const nlohmann::json&)>& answer) {
  std::vector<uint8_t> frame;
  while (worker::readFrame(fd, frame)) {
    nlohmann::json reply;
    try {
      reply = answer(worker::parseCbor(frame));
    } catch (const std::bad_alloc&) {
      reply = {{"ok", false}, {"error", "out of memory"}, {"origin", "limit"}};
    } catch (const Error& e) {
      reply = {{"ok", false}, {"error", e.what()}, {"origin", "tdfx"}};
    } catch (const c10::Error& e) {
      reply = {{"ok", false}, {"error", e.what_without_backtrace()}, {"origin", "libtorch"}};
    } catch (const std::exception& e) {  // a bug: the answer says whose (origin, as worker_server.cpp)
      reply = {{"ok", false}, {"error", e.what()}, {"origin", "exception"}};
    }
    if (!worker::writeFrame(fd, nlohmann::json::to_cbor(reply))) break;
  }
}

bool registerWorkerService(const std::string& name, WorkerService serve) {
  services()[name] = serve;
  return true;
}

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


WorkerProcess::WorkerProcess(std::string service, std::string title) : service_(std::move(service)), title_(std::move(title)) {}

WorkerProcess::~WorkerProcess() { stop(); }

void WorkerProcess::spawn(uint64_t memoryBytes) {
  std::lock_guard<std::mutex> zygote(zygoteMutex);
  if (zygoteFd < 0) throw Error(title_ + " cannot start: no worker zygote runs: " + zygoteProblem);
  sendWithFd(zygoteFd, "S" + service_ + " " + std::to_string(memoryBytes), -1);
  int fd = -1;
  const std::string answer = receiveWithFd(zygoteFd, &fd);
  if (!answer.empty() && answer[0] == 'P' && fd < 0) {  // a worker but no socket (no fd left here?)
    const pid_t orphan = static_cast<pid_t>(std::stol(answer.substr(1)));
    ::kill(orphan, SIGKILL);
    sendWithFd(zygoteFd, "D" + std::to_string(orphan), -1);
  }
  if (answer.empty() || answer[0] != 'P' || fd < 0)
    throw Error(title_ + " cannot start: " +
                (answer.size() > 1 && answer[0] == 'E' ? answer.substr(1) : std::string("no socket from the zygote")));
  std::lock_guard<std::mutex> lock(processMutex_);
  fd_ = fd;
  pid_ = static_cast<pid_t>(std::stol(answer.substr(1)));
  if (cancelled_) ::kill(pid_, SIGKILL);  // cancelled while it started: the request sees it gone
}

void WorkerProcess::stop() {
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

void WorkerProcess::cancel() {
  cancelled_ = true;
  std::lock_guard<std::mutex> lock(processMutex_);
  if (pid_ > 0) ::kill(pid_, SIGKILL);  // the request in progress sees the socket close
}

std::vector<uint8_t> WorkerProcess::request(const std::vector<uint8_t>& message, double seconds, uint64_t memoryBytes,
                                            const std::string& subject, const std::string& what,
                                            const std::string& crashHint) {
  const std::string& model = subject;
  if (cancelled_) throw WorkerCancelled(model + ": " + what + " was cancelled");
  if (pid_ <= 0) spawn(memoryBytes);
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
    throw WorkerTimeout(model + ": " + what + " did not finish within " + limit + " s (the time limit; --timeout); " + title_ +
                " was stopped");
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string why = signalName(sig);
    if (sig == SIGKILL) why += ", perhaps by the kernel's out-of-memory killer";
    throw WorkerCrash(model + ": " + title_ + " died by " + why + " during " + what + crashHint);
  }
  throw WorkerCrash(model + ": " + title_ + " ended (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
              ") during " + what);
}


namespace {

// The "frames" of a crash answer (worker_server.cpp, crashFrames): "OBJECT<TAB>SYMBOL" lines,
// symbols demangled here, outside the signal handler.
std::vector<CrashFrame> crashFrames(const nlohmann::json& answer) {
  std::vector<CrashFrame> frames;
  std::istringstream lines(answer.value("frames", std::string()));
  for (std::string line; std::getline(lines, line);) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    CrashFrame frame{line.substr(0, tab), line.substr(tab + 1)};
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(frame.function.c_str(), nullptr, nullptr, &status),
                                                      std::free);
    if (status == 0 && demangled) frame.function = demangled.get();
    frames.push_back(std::move(frame));
  }
  return frames;
}

}  // namespace

void throwIfFaultOrCrash(const nlohmann::json& answer, const std::string& message, const std::string& crashSubject) {
  const std::string origin = answer.value("origin", std::string("tdfx"));
  if (origin == "exception" || origin == "terminate") throw WorkerFault(message);
  if (origin == "signal")
    throw WorkerCrash(crashSubject.empty() ? message : crashSubject + ": " + message, crashFrames(answer));
}

nlohmann::json WorkerProcess::requestJson(const nlohmann::json& message, double seconds, uint64_t memoryBytes,
                                          const std::string& subject, const std::string& what) {
  const std::vector<uint8_t> bytes = request(nlohmann::json::to_cbor(message), seconds, memoryBytes, subject, what);
  nlohmann::json answer;
  try {
    answer = worker::parseCbor(bytes);
  } catch (const Error& e) {
    throw Error(title_ + " sent an unreadable answer: " + e.what());
  }
  if (!answer.value("ok", false)) {
    const std::string message = subject + ": " + what + ": " + answer.value("error", std::string("failed"));
    throwIfFaultOrCrash(answer, message);
    throw Error(message);
  }
  return answer;
}

bool WorkerProcess::idleAndConnected() {
  std::lock_guard<std::mutex> lock(processMutex_);
  if (pid_ <= 0 || fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  const int ready = ::poll(&p, 1, 0);
  // Idle, a worker sends nothing: anything to read is its end of file (or a stray byte that
  // would desynchronise the next answer); POLLHUP and POLLERR say the same.
  return ready == 0;
}

}  // namespace tdfx
