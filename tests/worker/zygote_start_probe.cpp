// Starts the worker zygote as tdfx-cli's main does, in fresh processes, for the start-up stress
// test and benchmark. Each start runs in a child forked from this process, whose OpenBLAS pool is
// started again first, as loading the library starts it in a new tdfx-cli: what startWorkerZygote
// then stops and must wait for is exactly what a new process has. (One exec per start would cost
// LibTorch's static initialisation, about 1 s under load, per start.)
//   --starts N           N starts, one per child (default 1)
//   --joined-threads N   each child first starts and joins N more threads (each stays listed for a
//                        moment after its join, as OpenBLAS's threads do)
//   --ending-thread MS   each child first starts a thread that ends by itself MS milliseconds later
//                        (a thread on its way out: the start must wait for it, not fail)
//   --hold-thread NAME   each child first starts a thread named NAME that stays (the start must
//                        fail and name it)
// Prints "N starts, F failed, median T us" and the first failure's reason; exit 0 when none failed.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tdfx/worker/model_worker.h"

namespace {

using BlasCall = int (*)();

BlasCall blasCall(const char* name) { return reinterpret_cast<BlasCall>(::dlsym(RTLD_DEFAULT, name)); }

// The child: one start, reported on `report` as "ok <us>" or "fail <reason>".
[[noreturn]] void startOnce(int report, int joined, int endingMs, const char* hold) {
  if (const BlasCall init = blasCall("blas_thread_init")) init();
  for (int i = 0; i < joined; ++i) std::thread([] {}).join();
  if (endingMs > 0)
    std::thread([endingMs] { std::this_thread::sleep_for(std::chrono::milliseconds(endingMs)); }).detach();
  if (hold) {
    pthread_t thread;
    ::pthread_create(
        &thread, nullptr, [](void*) -> void* {
          while (true) ::pause();
        },
        nullptr);
    ::pthread_setname_np(thread, hold);
  }
  const auto start = std::chrono::steady_clock::now();
  const bool started = tdfx::startWorkerZygote();
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  const std::string text = started ? "ok " + std::to_string(us.count()) : "fail " + tdfx::workerZygoteProblem();
  if (::write(report, text.data(), text.size()) < 0) ::_exit(3);
  ::_exit(started ? 0 : 1);  // no static destructors; the zygote ends with this process
}

}  // namespace

int main(int argc, char** argv) {
  int starts = 1, joined = 0, endingMs = 0;
  const char* hold = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--starts") && i + 1 < argc) {
      starts = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--joined-threads") && i + 1 < argc) {
      joined = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--ending-thread") && i + 1 < argc) {
      endingMs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--hold-thread") && i + 1 < argc) {
      hold = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--starts N] [--joined-threads N] [--ending-thread MS] [--hold-thread NAME]\n", argv[0]);
      return 2;
    }
  }
  // This process forks the children: single-threaded, its own pool stopped for good.
  if (const BlasCall shutdown = blasCall("blas_thread_shutdown_")) shutdown();
  int failed = 0;
  std::string firstFailure;
  std::vector<long> micros;
  for (int i = 0; i < starts; ++i) {
    int p[2];
    if (::pipe(p) != 0) return 2;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      startOnce(p[1], joined, endingMs, hold);
    }
    ::close(p[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
    ::close(p[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (text.rfind("ok ", 0) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      micros.push_back(std::atol(text.c_str() + 3));
    } else if (failed++ == 0) {
      firstFailure = "start " + std::to_string(i + 1) + ": " + (text.empty() ? "no report" : text);
    }
  }
  std::sort(micros.begin(), micros.end());
  std::printf("%d starts, %d failed, median %ld us\n", starts, failed, micros.empty() ? 0L : micros[micros.size() / 2]);
  if (failed) std::printf("%s\n", firstFailure.c_str());
  return failed ? 1 : 0;
}
