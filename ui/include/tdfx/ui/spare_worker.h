#pragma once
// A model worker and a layout process kept started and warmed while the window is idle, so that
// the next open is served by them: a first load in a fresh worker process is slower than a load
// in one that already ran LibTorch's importer, and a fresh layout process's first layout pays for
// Graphviz's plugins and fonts (docs/benchmarks.md). One job: hand out processes, keep one spare
// of each.
#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QTimer>
#include <memory>

#include "tdfx/layout/layout_process.h"
#include "tdfx/worker/model_worker.h"

namespace tdfx::ui {

class SpareWorker : public QObject {
  Q_OBJECT
 public:
  explicit SpareWorker(QObject* parent = nullptr);
  /// Stops the spare (and waits for a warm-up in progress to end).
  ~SpareWorker() override;

  /// Off: take() always starts a new worker, and no spare is kept.
  void setEnabled(bool on);
  bool enabled() const { return enabled_; }
  /// A worker for an open with `limits`: the spare when there is one with those limits (still
  /// warming or not: its open waits for the warm-up), else a new one. Then another spare is
  /// warmed once the window has been idle a moment.
  std::shared_ptr<ModelWorker> take(const WorkerLimits& limits);
  /// A layout process for an open: the spare when there is one that can run, else a new one.
  std::shared_ptr<LayoutProcess> takeLayouter();
  /// Warms a spare with `limits` after `idleMs` unless one is kept already (the window calls it
  /// when it starts and after each load).
  void refill(const WorkerLimits& limits, int idleMs = 400);
  /// Whether a spare worker and a spare layout process are warmed and waiting.
  bool ready() const;
  /// The spare worker's process id (tests), -1 for none.
  pid_t sparePid() const;
  /// The spare layout process's id (tests), -1 for none.
  pid_t spareLayoutPid() const;

 Q_SIGNALS:
  /// A spare finished warming up.
  void readied();

 private:
  void warm();

  bool enabled_ = false;
  WorkerLimits limits_;
  std::shared_ptr<ModelWorker> spare_;
  std::shared_ptr<LayoutProcess> layouter_;
  QThreadPool pool_;  // its own: a warm-up never holds a thread a load or layout needs
  QFutureWatcher<bool> warming_;
  QTimer idle_;
};

}  // namespace tdfx::ui
