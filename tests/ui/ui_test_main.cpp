// One QApplication for every GUI test, on the offscreen platform.
#include <QApplication>
#include <gtest/gtest.h>

#include "tdfx/worker/model_worker.h"

int main(int argc, char** argv) {
  tdfx::startWorkerZygote();  // before Qt starts any thread: the window opens models in workers
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
