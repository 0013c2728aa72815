#pragma once
// Waits for a condition while the event loop runs, so that a test is bounded by the work it waits
// for rather than by a fixed time that a loaded machine may not give it.
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QTest>
#include <functional>

namespace tdfx::ui {

/// Runs the event loop until `done()` holds, at most `timeoutMs` (a bound against a hang, not the
/// test's measure), then delivers whatever is queued. Returns done().
inline bool waitUntil(const std::function<bool()>& done, int timeoutMs = 120000) {
  const QDeadlineTimer deadline(timeoutMs);
  while (!done() && !deadline.hasExpired()) QTest::qWait(10);
  QCoreApplication::processEvents();
  return done();
}

}  // namespace tdfx::ui
