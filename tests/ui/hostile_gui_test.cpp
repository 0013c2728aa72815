// Hostile models in the real window (issue 22): a graph that keeps Graphviz busy for minutes is
// laid out in the layout process, so the window keeps responding, falls back to the layered
// layout and says so, and Cancel really stops it.
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <gtest/gtest.h>

#include <cstdlib>

#include "tdfx/ui/main_window.h"
#include "test_support.h"
#include "ui/window_driver.h"
#include "support/test_paths.h"

namespace tdfx::ui {
namespace {

using tdfx::testing::fixture;

// How long the event loop went without running a 10 ms timer, in ms: `during` the longest gap
// while `busy` held, `ending` the gap in which busy turned false. A handler that does its work and
// only then says it is done (showError emits loadFailed at its end) stalls the loop in that last
// gap, so a check of the handler's own work must look at both.
struct Stall {
  qint64 during = 0, ending = 0;
  qint64 longest() const { return std::max(during, ending); }
};

template <typename Busy>
Stall longestStall(Busy busy, int limitMs) {
  QElapsedTimer clock, total;
  clock.start();
  total.start();
  Stall stall;
  qint64 last = 0;
  bool wasBusy = true;  // at the previous tick (or the start)
  QTimer tick;
  tick.setInterval(10);
  QObject::connect(&tick, &QTimer::timeout, [&] {
    const qint64 now = clock.elapsed();
    const bool isBusy = busy();
    if (isBusy) stall.during = std::max(stall.during, now - last);
    else if (wasBusy) stall.ending = now - last;
    last = now;
    wasBusy = isBusy;
  });
  tick.start();
  // Until a tick has seen busy end: that tick measured the gap in which it ended.
  while (wasBusy && total.elapsed() < limitMs) QTest::qWait(5);
  return stall;
}

// The bound on a stall of the window's own: `quietMs` on a quiet machine, plus twice the longest
// gap the event loop shows on this machine now with nothing of tdfx's running (one second of an
// idle loop, measured once per run). A loaded CI machine delays a 10 ms timer by itself; the
// bound follows it instead of failing on it, and still catches a handler that blocks for long.
qint64 stallBound(qint64 quietMs) {
  static const qint64 idle = [] {
    QElapsedTimer clock;
    clock.start();
    return longestStall([&] { return clock.elapsed() < 1000; }, 5000).longest();
  }();
  return quietMs + 2 * idle;
}

TEST(HostileGui, TheStallBoundFollowsTheMachinesOwnDelay) {
  const qint64 bound = stallBound(100);
  EXPECT_GE(bound, 100);
  // An idle loop on this machine stays within the bound it set (the bound is not too tight to pass)...
  QElapsedTimer clock;
  clock.start();
  EXPECT_LT(longestStall([&] { return clock.elapsed() < 500; }, 5000).longest(), bound);
  // ...and a 1.5 s block of the GUI thread is far outside it, unless the machine itself stalls
  // that long (then every bound here would mean nothing, and this says so).
  EXPECT_LT(bound, 1500) << "the idle event loop itself stalled " << bound << " ms on this machine";
}

TEST(HostileGui, TheStallMeasureSeesAHandlerThatSaysDoneOnlyAfterItsWork) {
  // As showError does: 300 ms of work on the GUI thread, then the signal that ends busy.
  bool done = false;
  QTimer::singleShot(50, [&] {
    QThread::msleep(300);
    done = true;
  });
  EXPECT_GE(longestStall([&] { return !done; }, 5000).longest(), 250);
}

TEST(HostileGui, DenseGraphFallsBackToTheLayeredLayoutWhileTheWindowResponds) {
  MainWindow w(/*interactive=*/false);
  w.show();
  QSignalSpy loaded(&w, &MainWindow::modelLoaded);
  QSignalSpy failed(&w, &MainWindow::loadFailed);
  w.openFile(QString::fromStdString(fixture("dense_layout.pt")));
  // While the file is handled (loaded, traced, laid out: all in other processes). Showing the
  // 3,000 nodes afterwards is the window's own work (about 0.1 s here).
  const Stall stall = longestStall([&] { return w.isLoading(); }, 120000);
  for (int i = 0; i < 600 && loaded.isEmpty() && failed.isEmpty(); ++i) QTest::qWait(50);
  ASSERT_FALSE(loaded.isEmpty()) << w.lastError().toStdString();
  EXPECT_LT(stall.during, stallBound(100)) << "the GUI thread stalled while the model was loaded and laid out";
  // Showing the 3,000 nodes is the window's own work, in the gap that ends the load: 0.1 s on a
  // quiet machine, 0.5 s under CI's load (2026-12-04). A bound, not a goal (benchmarks: gui_bench).
  EXPECT_LT(stall.ending, 3000) << "showing the dense graph took the GUI thread " << stall.ending << " ms";
  EXPECT_NE(w.statusText().toStdString().find("dot did not finish within 3 s: a simpler layered layout is shown"),
            std::string::npos)
      << w.statusText().toStdString();
  EXPECT_EQ(w.scene()->nodeCount(), static_cast<int>(w.session()->view.nodes.size()));
}

TEST(HostileGui, CancelStopsTheLayoutAndTheNextModelOpens) {
  MainWindow w(/*interactive=*/false);
  w.show();
  w.openFile(QString::fromStdString(fixture("dense_layout.pt")));
  QTest::qWait(1500);  // loading, tracing or laying out: Cancel stops whichever runs
  ASSERT_TRUE(w.isLoading());
  QSignalSpy cancelled(&w, &MainWindow::loadCancelled);
  w.cancelLoad();
  EXPECT_EQ(cancelled.size(), 1);
  EXPECT_FALSE(w.isLoading());
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt"))) << w.lastError().toStdString();
  EXPECT_NE(w.statusText().toStdString().find("nodes"), std::string::npos);
}

// tests/model/make_hostile_text.py's archives in a fresh folder.
QString hostileText(const QTemporaryDir& dir, const char* name) {
  const std::string cmd = std::string("/usr/bin/python3 ") + tdfx::testing::kSourceDir + "/tests/model/make_hostile_text.py " +
                          fixture("seed_sequential.pt") + " " + dir.path().toStdString();
  if (!QFile::exists(dir.filePath(QStringLiteral("long_error.pt"))) && std::system(cmd.c_str()) != 0) return {};
  return dir.filePath(QString::fromLatin1(name));
}

TEST(HostileGui, MarkupInAModelsErrorIsShownAsText) {
  QTemporaryDir dir;
  const QString file = hostileText(dir, "markup_error.pt");
  ASSERT_FALSE(file.isEmpty());
  MainWindow w(/*interactive=*/false);
  w.show();
  EXPECT_FALSE(openAndWait(w, file.toStdString()));
  const auto* status = w.findChild<QLabel*>(QStringLiteral("status"));
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->textFormat(), Qt::PlainText);
  EXPECT_TRUE(w.statusText().contains(QStringLiteral("<h1 style=color:red>owned</h1><a href=https://example.com>")))
      << w.statusText().toStdString();
  // Its tooltip is rich text only to show the same characters: the markup is escaped.
  EXPECT_TRUE(status->toolTip().contains(QStringLiteral("&lt;h1 style=color:red&gt;owned&lt;/h1&gt;")))
      << status->toolTip().toStdString();
}

TEST(HostileGui, AThirtyMegabyteErrorIsCappedAndTheWindowResponds) {
  QTemporaryDir dir;
  const QString file = hostileText(dir, "long_error.pt");
  ASSERT_FALSE(file.isEmpty());
  MainWindow w(/*interactive=*/false);
  w.show();
  QSignalSpy failed(&w, &MainWindow::loadFailed);
  w.openFile(file);
  const Stall stall = longestStall([&] { return failed.isEmpty(); }, 120000);
  ASSERT_EQ(failed.size(), 1);
  EXPECT_LT(stall.longest(), stallBound(100)) << "the GUI thread stalled while the error was shown";
  EXPECT_GT(w.lastError().size(), 15 << 20);  // the whole message is kept (Details, lazily)
  EXPECT_LE(w.statusText().size(), 300);
  const auto* status = w.findChild<QLabel*>(QStringLiteral("status"));
  ASSERT_NE(status, nullptr);
  EXPECT_LT(status->toolTip().size(), 20000);
  EXPECT_TRUE(status->toolTip().contains(QStringLiteral("more bytes]"))) << status->toolTip().left(200).toStdString();
}

}  // namespace
}  // namespace tdfx::ui
