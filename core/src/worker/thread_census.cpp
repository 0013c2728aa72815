#include "thread_census.h"

#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace tdfx::worker {

namespace {

// The tids of the other threads, without their names: what the wait polls.
std::vector<OtherThread> otherThreadIds() {
  std::vector<OtherThread> threads;
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return threads;
  const auto self = static_cast<pid_t>(::syscall(SYS_gettid));
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const auto tid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
    if (tid != self) threads.push_back(OtherThread{tid, {}});
  }
  ::closedir(dir);
  return threads;
}

std::vector<OtherThread> named(std::vector<OtherThread> threads) {
  for (OtherThread& t : threads) {
    std::ifstream comm("/proc/self/task/" + std::to_string(t.tid) + "/comm");
    std::getline(comm, t.name);
  }
  return threads;
}

}  // namespace

std::vector<OtherThread> otherThreads() { return named(otherThreadIds()); }

std::vector<OtherThread> waitUntilSingleThreaded(std::chrono::nanoseconds limit, std::vector<OtherThread>* firstSeen) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // Yield first (the exiting thread usually needs only a few microseconds of CPU), then sleep in
  // growing steps so that a thread that really stays costs little CPU while we wait for it.
  auto pause = std::chrono::microseconds(20);
  for (int round = 0;; ++round) {
    std::vector<OtherThread> threads = otherThreadIds();  // names only where they are reported
    if (round == 0 && firstSeen) *firstSeen = named(threads);
    if (threads.empty() || std::chrono::steady_clock::now() >= deadline) return named(std::move(threads));
    if (round < 8) {
      ::sched_yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(10000));
    }
  }
}

std::string describeThreads(const std::vector<OtherThread>& threads) {
  std::string text;
  for (const OtherThread& t : threads) {
    if (!text.empty()) text += ", ";
    text += "thread '" + t.name + "' (tid " + std::to_string(t.tid) + ")";
  }
  return text;
}

}  // namespace tdfx::worker
