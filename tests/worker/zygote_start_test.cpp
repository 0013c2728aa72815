// The worker zygote's start in fresh processes (tests/worker/zygote_start_probe.cpp): a thread that
// was just joined never makes it fail, whatever the load; a thread that stays is named.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include "support/test_paths.h"

extern char** environ;

namespace {

struct ProbeResult {
  int exitCode = -1;
  std::string output, errors;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs the probe with `args`, its stdout and stderr in files.
ProbeResult runProbe(const std::vector<std::string>& args, const std::string& errorFile) {
  std::vector<std::string> all{tdfx::testing::kZygoteProbe};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string outputFile = errorFile + ".out";
  posix_spawn_file_actions_addopen(&actions, 1, outputFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, errorFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  ProbeResult r;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    r.errors = std::string("posix_spawn failed: ") + std::strerror(rc);
    return r;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.output = readFile(outputFile);
  r.errors = readFile(errorFile);
  std::remove(outputFile.c_str());
  return r;
}

std::string errorFile(const char* name) {
  return ::testing::TempDir() + "tdfx-" + name + "-" + std::to_string(::getpid()) + ".err";
}

// 500 starts in fresh processes beside two busy threads of this process, half of them right after
// joining eight more threads: a joined thread is still listed for a moment after its join, which a
// single reading of the thread count took for a second thread (issue 20: up to 1 start in 4).
TEST(WorkerZygote, StartsInFiveHundredFreshProcessesBesideTwoBusyThreads) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int i = 0; i < 2; ++i)
    load.emplace_back([&stop] {
      volatile unsigned long spin = 0;
      while (!stop.load(std::memory_order_relaxed)) spin = spin + 1;
    });
  const std::string errors = errorFile("zygote-stress");
  const ProbeResult plain = runProbe({"--starts", "250"}, errors);
  const ProbeResult joined = runProbe({"--starts", "250", "--joined-threads", "8"}, errors);
  stop = true;
  for (std::thread& t : load) t.join();
  std::remove(errors.c_str());
  EXPECT_EQ(plain.exitCode, 0) << plain.output << plain.errors;
  EXPECT_NE(plain.output.find("250 starts, 0 failed"), std::string::npos) << plain.output;
  EXPECT_EQ(joined.exitCode, 0) << joined.output << joined.errors;
  EXPECT_NE(joined.output.find("250 starts, 0 failed"), std::string::npos) << joined.output;
}

// A thread that ends 30 ms after the start began is waited for: the deterministic form of the race
// above (a single reading of the thread count failed every one of these).
TEST(WorkerZygote, AThreadOnItsWayOutIsWaitedFor) {
  const std::string errors = errorFile("zygote-ending");
  const ProbeResult r = runProbe({"--starts", "10", "--ending-thread", "30"}, errors);
  std::remove(errors.c_str());
  EXPECT_EQ(r.exitCode, 0) << r.output << r.errors;
  EXPECT_NE(r.output.find("10 starts, 0 failed"), std::string::npos) << r.output;
}

TEST(WorkerZygote, AThreadThatStaysIsNamedWithWhatToDo) {
  const std::string errors = errorFile("zygote-held");
  const ProbeResult r = runProbe({"--hold-thread", "gmain"}, errors);
  std::remove(errors.c_str());
  EXPECT_EQ(r.exitCode, 1) << r.output << r.errors;
  EXPECT_NE(r.output.find("1 starts, 1 failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("forking is only safe in a single-threaded process, and thread 'gmain' (tid "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(") was still running 1 s after tdfx::startWorkerZygote() began; call it first in main()"),
            std::string::npos)
      << r.output;
}

}  // namespace
