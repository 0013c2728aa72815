#include "tdfx/ui/model_loader.h"

#include <QFileInfo>
#include <QtConcurrent/QtConcurrent>

#include "tdfx/ui/spare_worker.h"

namespace tdfx::ui {

namespace {

// A finished job's result, the watcher's future let go. A future keeps its result, and with it the
// sessions it names (their worker processes), until it is replaced: the last compare's two models
// kept their workers after their window closed and other models were opened (issue 57, P).
template <typename Outcome>
Outcome taken(QFutureWatcher<Outcome>& watcher) {
  Outcome outcome = watcher.result();
  watcher.setFuture(QFuture<Outcome>());
  return outcome;
}

}  // namespace

ModelLoader::ModelLoader(QObject* parent) : QObject(parent), spare_(new SpareWorker(this)) {
  pool_.setMaxThreadCount(2);  // a cancelled load ends in a moment; the next need not wait for it
  connect(&loads_, &QFutureWatcher<LoadOutcome>::finished, this, [this] {
    if (loads_.future().resultCount() == 0) return;  // cancelled: the watcher holds an empty future
    worker_.reset();
    layouter_.reset();
    Q_EMIT loaded(taken(loads_));
  });
  connect(&compares_, &QFutureWatcher<CompareOutcome>::finished, this, [this] {
    compareWorker_.reset();  // its worker process ends with it
    if (compares_.future().resultCount() > 0) Q_EMIT compared(taken(compares_));
  });
  connect(&stats_, &QFutureWatcher<StatsOutcome>::finished, this, [this] {
    if (stats_.future().resultCount() == 0) return;
    const StatsOutcome outcome = taken(stats_);
    if (!outcome.stats.empty()) Q_EMIT statsArrived(outcome.session, outcome.stats);
  });
}

ModelLoader::~ModelLoader() {
  // Whatever the models are doing (an endless loop, a huge allocation), their worker processes
  // are killed, so the jobs waiting on them end at once.
  if (worker_) worker_->cancel();
  if (layouter_) layouter_->cancel();
  if (compareWorker_) compareWorker_->cancel();
  pool_.waitForDone();
}

void ModelLoader::load(const QString& path, const ViewOptions& options, std::shared_ptr<ModelSession> previous) {
  const FileStamp stamp = FileStamp::of(path);  // before the worker reads it: a later save is newer
  const std::string file = path.toStdString();
  // A new future replaces the one watched: a previous load's result is never delivered, and its
  // worker is stopped. Each model gets a worker process of its own.
  if (worker_) worker_->cancel();
  if (layouter_) layouter_->cancel();
  auto worker = spare_->take(limits_);  // the warmed spares when there are
  auto layouter = spare_->takeLayouter();
  worker_ = worker;
  layouter_ = layouter;
  loads_.setFuture(QtConcurrent::run(&pool_, [worker, layouter, file, options, path, previous, stamp]() -> LoadOutcome {
    try {
      auto session = openSession(worker, file, options, labelMeasure(), *layouter);
      // A followed file: what changed against the version shown, by the compare engine.
      std::shared_ptr<const ModelDiff> changes;
      if (previous && previous->worker->alive()) {
        try {
          const auto [before, now] = parametersToCompare(*previous->worker, *worker);
          changes = std::make_shared<ModelDiff>(diffModels(previous->traced, session->traced, before, now));
        } catch (const ModelFileError&) {
          // The version shown had its weights still unread when the file was rewritten: the new
          // version is shown, without the list of what changed.
        }
      }
      return {session, {}, path, previous != nullptr, changes, stamp};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromStdString(e.what()), path, previous != nullptr, nullptr, stamp};
    }
  }));
}

void ModelLoader::cancel() {
  // The load runs in its own worker process: killing it stops LibTorch wherever it is. The job
  // waiting on it ends at once and its result is dropped; the open model and its worker stay.
  if (worker_) worker_->cancel();
  if (layouter_) layouter_->cancel();
  worker_.reset();
  layouter_.reset();
  loads_.setFuture(QFuture<LoadOutcome>());
}

void ModelLoader::compare(std::shared_ptr<ModelSession> session, const QString& path, const ViewOptions& options) {
  const std::string other = path.toStdString();
  // B opens, and is laid out, in processes of its own; A's values come from the open model's worker.
  auto workerB = std::make_shared<ModelWorker>(limits_);
  auto layouterB = std::make_shared<LayoutProcess>();
  if (compareWorker_) compareWorker_->cancel();  // a newer compare replaces it, and only its result counts
  compareWorker_ = workerB;  // closing the window kills it
  compares_.setFuture(QtConcurrent::run(&pool_, [session, workerB, layouterB, other, options]() -> CompareOutcome {
    try {
      auto b = openSession(workerB, other, options, labelMeasure(), *layouterB);
      if (!session->worker->alive()) session->worker->open(session->traced.model.path);
      const auto [valuesA, valuesB] = parametersToCompare(*session->worker, *workerB);
      auto diff = std::make_shared<ModelDiff>(diffModels(session->traced, b->traced, valuesA, valuesB));
      const std::string nameA = QFileInfo(QString::fromStdString(session->traced.model.path)).fileName().toStdString();
      const std::string nameB = QFileInfo(QString::fromStdString(other)).fileName().toStdString();
      return {QString::fromStdString(formatModelDiff(*diff, nameA, nameB)), {}, diff, session, b};
    } catch (const std::exception& e) {
      return {{}, QString::fromStdString(e.what()), nullptr, session, nullptr};
    }
  }));
}

void ModelLoader::fetchStats(std::shared_ptr<ModelSession> session) {
  stats_.setFuture(QtConcurrent::run(&pool_, [session]() -> StatsOutcome {
    try {
      return {session, session->worker->parameterStats()};
    } catch (const std::exception&) {  // cancelled or ended: the inspector goes without them
      return {session, {}};
    }
  }));
}

void ModelLoader::setLimits(const WorkerLimits& limits) {
  limits_ = limits;
  spare_->refill(limits);  // a spare warmed under other limits gives way
}

void ModelLoader::refillSpare() { spare_->refill(limits_); }

}  // namespace tdfx::ui
