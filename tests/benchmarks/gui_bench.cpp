// GUI benchmarks, rendered offscreen (QT_QPA_PLATFORM=offscreen is set unless a platform is given):
//   tdfx_gui_bench --open [--expand-all] [--spare] [--repeat N] FILE...
//       time from MainWindow::openFile to the first frame of the whole window (load, trace,
//       layout, scene, paint), per file, median of N runs, one window per run; and the GUI
//       thread's longest stall during the open and a relayout. --spare: as the app opens a file
//       after the window was idle, served by the spare worker warmed meanwhile.
//   tdfx_gui_bench --cancel [--repeat N] FILE
//       FILE's forward never ends (tests/fixtures' endless.pt): a verify runs 0.5 s, then Cancel;
//       time from Cancel to the panel saying so and to the worker process gone, and the GUI
//       thread's longest stall from the verify's start to the end (issue 11: <= 1 s, responsive).
//   tdfx_gui_bench --compare [--repeat N] A B
//       File > Compare: with A open (the spare worker off, as after a cold start), time from
//       compareWith(B) to the compare window's first frame; beside it, in the same run, A's own
//       open-to-first-frame (issue 57, B: within 1.5x of an open).
//   tdfx_gui_bench --reload [--repeat N] A B
//       Follow file changes: a copy of A open, B saved over it (a new file renamed into place); time
//       from the save settling (the follower's report, after its quiet time) to the new version's
//       first frame with its changes listed; beside it, in the same run, the open of A.
//   tdfx_gui_bench --frames [--nodes N]
//       frame time while panning a synthetic transformer-like graph of N nodes, fully expanded,
//       in a 1600x1000 view at three zoom levels (level-of-detail painting keeps far views cheap).
// Prints one line per measurement; tests/benchmarks/report puts them in the report.
#include <QApplication>
#include <QFile>
#include <QListWidget>
#include <QTemporaryDir>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>
#include <signal.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "support/process_state.h"
#include "support/synthetic_graph.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/ui/compare_window.h"
#include "tdfx/ui/file_follower.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "tdfx/ui/spare_worker.h"
#include "tdfx/ui/verify_panel.h"
#include "tdfx/worker/model_worker.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// The GUI thread's longest stall since construction: the largest gap between ticks of a 5 ms timer.
class StallMeter {
 public:
  StallMeter() {
    QObject::connect(&ticker_, &QTimer::timeout, [this] {
      longest_ = std::max(longest_, sinceTick_.nsecsElapsed() / 1e6);
      sinceTick_.restart();
    });
    sinceTick_.start();
    ticker_.start(5);
  }
  double longestMs() const { return std::max(longest_, sinceTick_.nsecsElapsed() / 1e6); }

 private:
  QElapsedTimer sinceTick_;
  double longest_ = 0;
  QTimer ticker_;
};

// Opens `file` in `w` and waits for it; false (with the error printed) when the open failed.
bool openAndWait(tdfx::ui::MainWindow& w, const std::string& file) {
  QSignalSpy loaded(&w, &tdfx::ui::MainWindow::modelLoaded);
  QSignalSpy failed(&w, &tdfx::ui::MainWindow::loadFailed);
  w.openFile(QString::fromStdString(file));
  while (loaded.isEmpty() && failed.isEmpty()) QTest::qWait(1);
  if (failed.isEmpty()) return true;
  std::fprintf(stderr, "%s: %s\n", file.c_str(), qPrintable(failed.first().first().toString()));
  return false;
}

int openBenchmark(const std::vector<std::string>& files, bool expandAll, int repeat, bool spare) {
  for (const std::string& file : files) {
    std::vector<double> seconds, stalls;
    int nodes = 0;
    std::string breakdown;  // the status bar's own split of the last open
    for (int r = 0; r < repeat; ++r) {
      tdfx::ui::MainWindow w(/*interactive=*/false);
      w.resize(1600, 1000);
      w.show();
      if (expandAll) w.setExpandAll(true);
      if (spare) {  // as in the app: a worker warmed while the window was idle serves the open
        w.spareWorker()->setEnabled(true);
        QSignalSpy readied(w.spareWorker(), &tdfx::ui::SpareWorker::readied);
        w.spareWorker()->refill(tdfx::WorkerLimits{}, 0);
        if (!readied.wait(60000)) return 1;
      }
      QCoreApplication::processEvents();
      // The GUI thread's longest stall while the file loads (worker), the scene is built and first
      // painted (GUI thread), then expands again.
      const StallMeter stall;
      QElapsedTimer timer;
      timer.start();
      if (!openAndWait(w, file)) return 1;
      (void)w.grab();  // paints every widget of the window once: the first frame
      seconds.push_back(timer.nsecsElapsed() / 1e9);
      nodes = w.scene()->nodeCount();
      breakdown = w.statusText().toStdString();
      // A relayout (collapse everything to depth 1) runs on a worker too.
      QSignalSpy changed(&w, &tdfx::ui::MainWindow::viewChanged);
      w.setDepth(1);
      while (changed.isEmpty()) QTest::qWait(1);
      (void)w.grab();
      stalls.push_back(stall.longestMs());
    }
    const std::string name = file.substr(file.find_last_of('/') + 1);
    std::printf("open-to-first-frame %-24s %6d nodes  %7.3f s  (median of %d%s%s); longest GUI stall %.0f ms\n",
                name.c_str(), nodes, median(seconds), repeat, expandAll ? ", expanded" : "",
                spare ? ", spare worker" : "", median(stalls));
    std::printf("  last open: %s\n", breakdown.c_str());
  }
  return 0;
}

// One window with `file` open, its first frame painted; the open's seconds in `openSeconds`.
bool openWindow(tdfx::ui::MainWindow& w, const std::string& file, double* openSeconds) {
  w.resize(1600, 1000);
  w.show();
  QCoreApplication::processEvents();
  QElapsedTimer timer;
  timer.start();
  if (!openAndWait(w, file)) return false;
  (void)w.grab();
  *openSeconds = timer.nsecsElapsed() / 1e9;
  return true;
}

std::string baseName(const std::string& file) { return file.substr(file.find_last_of('/') + 1); }

int compareBenchmark(const std::string& a, const std::string& b, int repeat) {
  std::vector<double> opens, compares;
  for (int r = 0; r < repeat; ++r) {
    tdfx::ui::MainWindow w(/*interactive=*/false);
    double open = 0;
    if (!openWindow(w, a, &open)) return 1;
    opens.push_back(open);
    QSignalSpy compared(&w, &tdfx::ui::MainWindow::compared);
    QElapsedTimer timer;
    timer.start();
    w.compareWith(QString::fromStdString(b));
    while (compared.isEmpty()) QTest::qWait(1);
    if (!compared.first().at(1).toBool() || !w.compareWindow()) {
      std::fprintf(stderr, "compare %s with %s failed: %s\n", a.c_str(), b.c_str(),
                   qPrintable(compared.first().first().toString()));
      return 1;
    }
    (void)w.compareWindow()->grab();  // both panes and the list painted: the first frame
    compares.push_back(timer.nsecsElapsed() / 1e9);
  }
  std::printf("compare %-20s with %-20s  open %.3f s, compare window %.3f s, ratio %.2f  (medians of %d)\n",
              baseName(a).c_str(), baseName(b).c_str(), median(opens), median(compares), median(compares) / median(opens), repeat);
  return 0;
}

bool copyBytes(const QString& from, const QString& to) {
  QFile::remove(to);
  return QFile::copy(from, to);
}

int reloadBenchmark(const std::string& a, const std::string& b, int repeat) {
  std::vector<double> opens, reloads, saves;
  for (int r = 0; r < repeat; ++r) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("model.pt"));
    if (!copyBytes(QString::fromStdString(a), path)) return 1;
    tdfx::ui::MainWindow w(/*interactive=*/false);
    QSignalSpy statsShown(&w, &tdfx::ui::MainWindow::parameterStatsShown);
    double open = 0;
    if (!openWindow(w, path.toStdString(), &open)) return 1;
    opens.push_back(open);
    // The shown version's weights are read after the first frame; the reload compares with them.
    if (statsShown.isEmpty() && !statsShown.wait(60000)) return 1;
    if (!copyBytes(QString::fromStdString(b), path + ".part")) return 1;
    QSignalSpy loaded(&w, &tdfx::ui::MainWindow::modelLoaded);
    auto* follower = w.findChild<tdfx::ui::FileFollower*>();
    if (!follower) return 1;
    // The follower waits for the writes to stop (its quiet time) before it reports the save; the
    // reload is timed from that report.
    QElapsedTimer timer, sinceSettled;
    QObject::connect(follower, &tdfx::ui::FileFollower::settled, [&sinceSettled] { sinceSettled.start(); });
    timer.start();
    QFile::remove(path);
    QFile::rename(path + ".part", path);
    while (loaded.isEmpty() && timer.elapsed() < 120000) QTest::qWait(1);
    if (loaded.isEmpty() || w.changesList()->count() == 0) {
      std::fprintf(stderr, "the reload of %s as %s did not come with its changes\n", a.c_str(), b.c_str());
      return 1;
    }
    (void)w.grab();
    saves.push_back(timer.nsecsElapsed() / 1e9);
    reloads.push_back(sinceSettled.isValid() ? sinceSettled.nsecsElapsed() / 1e9 : 0);
  }
  std::printf("reload  %-20s as   %-20s  open %.3f s, reload with changes %.3f s from the save settling (%.3f s from the "
              "rename), ratio %.2f  (medians of %d)\n",
              baseName(a).c_str(), baseName(b).c_str(), median(opens), median(reloads), median(saves), median(reloads) / median(opens),
              repeat);
  return 0;
}

int cancelBenchmark(const std::string& file, int repeat) {
  std::vector<double> toReport, toGone, stalls;
  for (int r = 0; r < repeat; ++r) {
    tdfx::ui::MainWindow w(/*interactive=*/false);
    w.resize(1600, 1000);
    w.show();
    if (!openAndWait(w, file)) return 1;
    QSignalSpy verified(&w, &tdfx::ui::MainWindow::verified);
    const StallMeter stall;
    w.runVerify();
    QTest::qWait(500);
    if (!w.verifyPanel()->isRunning() || !verified.isEmpty()) {
      std::fprintf(stderr, "%s: the verify was not running after 0.5 s (not an endless model?)\n", file.c_str());
      return 1;
    }
    const pid_t pid = w.session()->worker->pid();
    QElapsedTimer timer;
    timer.start();
    w.verifyPanel()->cancel();
    while (verified.isEmpty()) QTest::qWait(1);
    toReport.push_back(timer.nsecsElapsed() / 1e9);
    while (!tdfx::testing::processHasEnded(pid)) QTest::qWait(1);  // gone, or a zombie not reaped yet
    toGone.push_back(timer.nsecsElapsed() / 1e9);
    stalls.push_back(stall.longestMs());
  }
  const std::string name = file.substr(file.find_last_of('/') + 1);
  std::printf("cancel endless verify %-16s  report %.3f s, worker gone %.3f s  (median of %d); longest GUI stall %.0f ms\n",
              name.c_str(), median(toReport), median(toGone), repeat, median(stalls));
  return 0;
}

int frameBenchmark(int targetNodes) {
  tdfx::ViewOptions options;
  options.hierarchy.expandAll = true;
  const tdfx::TracedGraph traced = tdfx::testing::syntheticTransformer(targetNodes);
  const tdfx::ViewGraph view = tdfx::buildView(traced, options);
  const tdfx::LayoutResult layout = tdfx::layoutView(view);
  tdfx::ui::GraphScene scene;
  scene.showGraph(view, layout);
  tdfx::ui::GraphView graphView;
  graphView.setScene(&scene);
  graphView.resize(1600, 1000);
  graphView.show();
  graphView.sceneChanged();
  QCoreApplication::processEvents();
  struct Level {
    const char* name;
    double scale;
  };
  for (const Level& level : {Level{"whole graph (fit)", 0.0}, Level{"far (scale 0.05)", 0.05}, Level{"far (scale 0.1)", 0.1}, Level{"overview (scale 0.3)", 0.3}, Level{"reading (scale 1.0)", 1.0}}) {
    graphView.resetTransform();
    if (level.scale == 0.0) graphView.fitAll();
    else graphView.scale(level.scale, level.scale);
    graphView.centerOn(scene.sceneRect().center());
    std::printf("  scene %.0fx%.0f, scale %.4f\n", scene.sceneRect().width(), scene.sceneRect().height(), graphView.transform().m11());
    graphView.viewport()->repaint();  // warm the item caches
    std::vector<double> ms;
    QScrollBar* bar = graphView.verticalScrollBar();
    for (int i = 0; i < 60; ++i) {
      QElapsedTimer t;
      t.start();
      bar->setValue(bar->value() + (i % 20 < 10 ? 40 : -40));  // pan down then up
      graphView.viewport()->repaint();
      ms.push_back(t.nsecsElapsed() / 1e6);
    }
    std::printf("pan frame %-22s %6d nodes  median %6.1f ms  p95 %6.1f ms\n", level.name, scene.nodeCount(), median(ms),
                percentile(ms, 0.95));
  }
  return 0;
}

}  // namespace

constexpr const char* kUsage =
    "usage: tdfx_gui_bench --open [--expand-all] [--spare] [--repeat N] FILE... | --cancel [--repeat N] FILE | "
    "--compare|--reload [--repeat N] A B | --frames [--nodes N]\n";

int main(int argc, char** argv) {
  tdfx::startWorkerZygote();  // first, while the process has one thread
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  bool open = false, frames = false, cancel = false, compare = false, reload = false, expandAll = false, spare = false;
  int repeat = 3, nodes = 10000;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--open") open = true;
    else if (a == "--frames") frames = true;
    else if (a == "--cancel") cancel = true;
    else if (a == "--compare") compare = true;
    else if (a == "--reload") reload = true;
    else if (a == "--expand-all") expandAll = true;
    else if (a == "--spare") spare = true;
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--nodes" && i + 1 < argc) nodes = std::max(10, std::atoi(argv[++i]));
    else if (!a.empty() && a[0] == '-') {
      std::fputs(kUsage, stderr);
      return 64;
    } else files.push_back(a);
  }
  if (open) return openBenchmark(files, expandAll, repeat, spare);
  if (frames) return frameBenchmark(nodes);
  if (cancel && files.size() == 1) return cancelBenchmark(files[0], repeat);
  if (compare && files.size() == 2) return compareBenchmark(files[0], files[1], repeat);
  if (reload && files.size() == 2) return reloadBenchmark(files[0], files[1], repeat);
  std::fputs(kUsage, stderr);
  return 64;
}
