#include "tdfx/util/crash_stage.h"

#include <atomic>

namespace tdfx {

namespace {
std::atomic<const char*> currentStage{""};
static_assert(std::atomic<const char*>::is_always_lock_free, "read from a signal handler");
}  // namespace

CrashStage::CrashStage(const char* name) : previous_(currentStage.exchange(name)) {}

CrashStage::~CrashStage() { currentStage.store(previous_); }

const char* CrashStage::current() { return currentStage.load(); }

}  // namespace tdfx
