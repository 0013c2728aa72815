#pragma once
// Drives the real MainWindow in tests: open a file or run verify and wait for the worker.
#include <QSignalSpy>
#include <QTest>
#include <string>

#include "tdfx/ui/main_window.h"

namespace tdfx::ui {

inline bool openAndWait(MainWindow& w, const std::string& file) {
  QSignalSpy loaded(&w, &MainWindow::modelLoaded);
  QSignalSpy failed(&w, &MainWindow::loadFailed);
  w.openFile(QString::fromStdString(file));
  for (int i = 0; i < 600 && loaded.isEmpty() && failed.isEmpty(); ++i) QTest::qWait(50);
  return !loaded.isEmpty();
}

/// Runs verify; true when it finished and passed.
inline bool verifyAndWait(MainWindow& w) {
  QSignalSpy done(&w, &MainWindow::verified);
  w.runVerify();
  for (int i = 0; i < 600 && done.isEmpty(); ++i) QTest::qWait(50);
  return !done.isEmpty() && done.first().first().toBool();
}

/// Calls `change` (a style, direction or hierarchy change) and waits for the new picture.
template <typename Change>
bool relayoutAndWait(MainWindow& w, Change change) {
  QSignalSpy changed(&w, &MainWindow::viewChanged);
  change();
  for (int i = 0; i < 600 && changed.isEmpty(); ++i) QTest::qWait(20);
  return !changed.isEmpty();
}

}  // namespace tdfx::ui
