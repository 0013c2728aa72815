#pragma once
// The threads of this process, read from /proc/self/task: forking the worker zygote is only safe
// when the calling thread is the only one.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace tdfx::worker {

/// A thread of this process other than the caller.
struct OtherThread {
  pid_t tid = 0;
  std::string name;  ///< /proc/self/task/<tid>/comm, "" when it was gone before it could be read
};

/// The threads listed in /proc/self/task now, the calling thread excluded.
std::vector<OtherThread> otherThreads();

/// Waits up to `limit` until the calling thread is the only one, and returns the threads still
/// listed then (none: the process is single-threaded). A thread that has been joined stays listed
/// for a moment after pthread_join returns: the kernel wakes the joiner when the thread clears its
/// tid, before it releases the task. On a loaded machine that moment can last milliseconds, so one
/// reading right after OpenBLAS joined its pool saw two threads in up to a quarter of starts.
/// `firstSeen`, when given, receives the threads of the first reading (for diagnostics).
std::vector<OtherThread> waitUntilSingleThreaded(std::chrono::nanoseconds limit,
                                                 std::vector<OtherThread>* firstSeen = nullptr);

/// "thread 'gmain' (tid 1234)", joined with ", ".
std::string describeThreads(const std::vector<OtherThread>& threads);

}  // namespace tdfx::worker
