#pragma once
// Every job that opens a model file in a worker process, for the window: an open, a reload of the
// followed file (with what changed against the version shown), a compare with another file, and
// the parameter statistics asked of the open model's worker after its first frame. The jobs wait
// on their worker processes on a pool of their own, never on the global pool that painting also
// uses; only the newest job of each kind is delivered, and cancel() kills the open's worker, so a
// load stops wherever LibTorch is. Testable without a window.
#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <memory>
#include <vector>

#include "tdfx/ui/file_follower.h"
#include "tdfx/ui/model_session.h"
#include "tdfx/worker/model_diff.h"

namespace tdfx::ui {

class SpareWorker;

/// What an open or reload hands back: a session, or the error message (exceptions stay on the
/// worker thread).
struct LoadOutcome {
  std::shared_ptr<ModelSession> session;
  QString error;
  QString path;
  bool reload = false;                       ///< the followed file again (the view is kept)
  std::shared_ptr<const ModelDiff> changes;  ///< reload: against the version shown before
  FileStamp stamp;                           ///< the file as the load began: the version it read
};

/// What a compare hands back: the report and the diff, or the error.
struct CompareOutcome {
  QString report, error;
  std::shared_ptr<const ModelDiff> diff;
  std::shared_ptr<ModelSession> session;  ///< the open model, side A
  std::shared_ptr<ModelSession> other;    ///< the file compared with, traced and laid out
};

class ModelLoader : public QObject {
  Q_OBJECT
 public:
  explicit ModelLoader(QObject* parent = nullptr);
  /// Kills the workers of the jobs in progress and waits for them: closing never waits on a model.
  ~ModelLoader() override;

  /// Opens `path` (load, trace, layout for `options`) in a worker of its own: the warmed spare when
  /// there is one. With `previous`, a reload: the outcome carries what changed against it. A load in
  /// progress is stopped and never delivered.
  void load(const QString& path, const ViewOptions& options, std::shared_ptr<ModelSession> previous = nullptr);
  /// Stops the load in progress (its worker is killed); nothing is delivered for it.
  void cancel();
  bool loading() const { return loads_.isRunning() || worker_ != nullptr; }
  /// Whether no job runs on the loader's threads, the cancelled ones included (a cancelled load's
  /// job ends once its killed worker is reaped): what a test waits for before it checks that a
  /// cancelled result was never delivered.
  bool idle() const { return pool_.activeThreadCount() == 0; }

  /// Opens `path` in another worker and compares it with `session`; emits compared. A compare in
  /// progress is stopped (its worker killed) and never delivered.
  void compare(std::shared_ptr<ModelSession> session, const QString& path, const ViewOptions& options);
  bool comparing() const { return compares_.isRunning(); }

  /// Asks `session`'s worker for its parameter statistics; emits statsArrived unless none came.
  void fetchStats(std::shared_ptr<ModelSession> session);

  /// Time and memory limits of the worker processes started from now on.
  void setLimits(const WorkerLimits& limits);
  const WorkerLimits& limits() const { return limits_; }
  /// The warmed worker kept for the next open.
  SpareWorker* spare() const { return spare_; }
  /// Warms a spare for the next open once the window is idle.
  void refillSpare();

 Q_SIGNALS:
  void loaded(const tdfx::ui::LoadOutcome& outcome);
  void compared(const tdfx::ui::CompareOutcome& outcome);
  void statsArrived(std::shared_ptr<tdfx::ui::ModelSession> session, std::vector<tdfx::ParameterStats> stats);

 private:
  struct StatsOutcome {
    std::shared_ptr<ModelSession> session;
    std::vector<ParameterStats> stats;
  };
  QThreadPool pool_;
  QFutureWatcher<LoadOutcome> loads_;
  QFutureWatcher<CompareOutcome> compares_;
  QFutureWatcher<StatsOutcome> stats_;
  std::shared_ptr<ModelWorker> worker_;          ///< the load in progress's: cancel() kills it
  std::shared_ptr<LayoutProcess> layouter_;      ///< the load in progress's: cancel() stops Graphviz
  std::shared_ptr<ModelWorker> compareWorker_;   ///< the compare in progress's file B
  WorkerLimits limits_;
  SpareWorker* spare_;
};

}  // namespace tdfx::ui
