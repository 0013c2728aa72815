// main() of the core tests: the model worker zygote first, while the process has one thread.
#include <gtest/gtest.h>

#include "tdfx/worker/model_worker.h"

#if defined(__SANITIZE_ADDRESS__)
// Under -DTDFX_SANITIZE=ON the model worker's tests expect what a normal build does: an allocation
// past the worker's memory limit fails (ASan's allocator would abort the worker), and a crash in
// LibTorch ends the worker by its signal (ASan would report it and exit 1). LibTorch keeps global
// allocations alive at exit, which LeakSanitizer would call leaks. ASAN_OPTIONS still overrides.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:handle_segv=0:detect_leaks=0";
}
#endif

int main(int argc, char** argv) {
  tdfx::startWorkerZygote();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
