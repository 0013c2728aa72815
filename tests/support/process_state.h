#pragma once
// Whether a model worker process has ended, for tests and benchmarks.
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace tdfx::testing {

/// Whether process `pid` has ended: gone, or a zombie (it has ended; the worker zygote, its parent,
/// reaps it when it gets to it, so a busy machine can keep it listed for a while).
inline bool processHasEnded(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pidField, comm, state;
  return stat >> pidField >> comm >> state && state == "Z";  // comm has no spaces here
}

/// Whether process `pid` ends within `seconds`.
inline bool processEnds(pid_t pid, double seconds = 10) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!processHasEnded(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace tdfx::testing
