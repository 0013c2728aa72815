#include "tdfx/util/crash_stage.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tdfx {

namespace {
std::atomic<const char*> currentStage{""};
static_assert(std::atomic<const char*>::is_always_lock_free, "read from a signal handler");
}  // namespace

CrashStage::CrashStage(const char* name) : previous_(currentStage.exchange(name)) {}

CrashStage::~CrashStage() { currentStage.store(previous_); }

const char* CrashStage::current() { return currentStage.load(); }

void plantedFault(const char* where) {
  static const char* const planted = std::getenv("TDFX_TEST_PLANT_FAULT");
  if (!planted) return;
  const char* at = std::strchr(planted, '@');
  if (!at || std::strcmp(at + 1, where) != 0) return;
  const std::string kind(planted, at);
  if (kind == "signal") std::raise(SIGSEGV);
  if (kind == "abort") std::abort();
  if (kind == "exception") throw std::out_of_range("vector::_M_range_check (planted by TDFX_TEST_PLANT_FAULT)");
  if (kind == "hang")
    for (volatile unsigned spin = 0;; spin = spin + 1) {
    }
}

}  // namespace tdfx
