// main() of the core tests: the model worker zygote first, while the process has one thread.
#include <gtest/gtest.h>

#include "tdfx/worker/model_worker.h"

int main(int argc, char** argv) {
  tdfx::startWorkerZygote();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
