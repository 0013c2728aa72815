#include "tdfx/ui/spare_worker.h"

#include <QFile>
#include <QtConcurrent/QtConcurrent>

namespace tdfx::ui {

namespace {
bool sameLimits(const WorkerLimits& a, const WorkerLimits& b) {
  return a.openSeconds == b.openSeconds && a.requestSeconds == b.requestSeconds && a.memoryBytes == b.memoryBytes;
}

// Whether the process can run now: not stopped (SIGSTOP, a debugger) and not dead. A spare that
// cannot would hold the next open for the whole open timeout; asked of the kernel, this costs
// no wait.
bool canRun(pid_t pid) {
  if (pid <= 0) return false;
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return false;
  const QByteArray text = stat.readAll();
  const auto close = text.lastIndexOf(')');  // the command name may hold spaces and parentheses
  if (close < 0 || close + 2 >= text.size()) return false;
  const char state = text.at(close + 2);
  return state != 'T' && state != 't' && state != 'Z' && state != 'X';
}
}  // namespace

SpareWorker::SpareWorker(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);
  idle_.setSingleShot(true);
  connect(&idle_, &QTimer::timeout, this, &SpareWorker::warm);
  connect(&warming_, &QFutureWatcher<bool>::finished, this, [this] {
    if (warming_.future().resultCount() > 0 && warming_.result()) Q_EMIT readied();
  });
}

SpareWorker::~SpareWorker() {
  idle_.stop();
  if (spare_) spare_->cancel();  // a warm-up in progress ends at once
  if (layouter_) layouter_->cancel();
  pool_.waitForDone();
}

void SpareWorker::setEnabled(bool on) {
  enabled_ = on;
  if (on) return;
  idle_.stop();
  if (spare_) spare_->cancel();
  if (layouter_) layouter_->cancel();
  spare_.reset();
  layouter_.reset();
}

std::shared_ptr<ModelWorker> SpareWorker::take(const WorkerLimits& limits) {
  idle_.stop();  // warmed again after this load, not during it
  std::shared_ptr<ModelWorker> worker = std::move(spare_);  // leaves spare_ empty
  if (worker && sameLimits(limits_, limits) && canRun(worker->pid())) return worker;
  if (worker) worker->cancel();  // warmed for other limits, or stopped: a new one serves this open
  return std::make_shared<ModelWorker>(limits);
}

std::shared_ptr<LayoutProcess> SpareWorker::takeLayouter() {
  std::shared_ptr<LayoutProcess> layouter = std::move(layouter_);
  // Still warming, or not started yet: its requests run in turn, the layout after the warm-up.
  if (layouter && (layouter->pid() < 0 || canRun(layouter->pid()))) return layouter;
  if (layouter) layouter->cancel();
  return std::make_shared<LayoutProcess>();
}

void SpareWorker::refill(const WorkerLimits& limits, int idleMs) {
  if (!enabled_) return;
  if (spare_ && !sameLimits(limits_, limits)) {
    spare_->cancel();
    spare_.reset();
  }
  limits_ = limits;
  if (!spare_ || !layouter_) idle_.start(idleMs);
}

void SpareWorker::warm() {
  if (!enabled_ || (spare_ && layouter_)) return;
  if (!spare_) spare_ = std::make_shared<ModelWorker>(limits_);
  if (!layouter_) layouter_ = std::make_shared<LayoutProcess>();
  const std::shared_ptr<ModelWorker> worker = spare_;
  const std::shared_ptr<LayoutProcess> layouter = layouter_;
  warming_.setFuture(QtConcurrent::run(&pool_, [worker, layouter]() -> bool {
    // Cancelled, or a process could not start: the next open starts its own.
    bool warmed = true;
    try {
      worker->prepare();
    } catch (const std::exception&) {
      warmed = false;
    }
    try {
      if (!layouter->warmed()) layouter->warm();
    } catch (const std::exception&) {
      warmed = false;
    }
    return warmed;
  }));
}

bool SpareWorker::ready() const { return spare_ && spare_->prepared() && layouter_ && layouter_->warmed(); }

pid_t SpareWorker::sparePid() const { return spare_ ? spare_->pid() : -1; }

pid_t SpareWorker::spareLayoutPid() const { return layouter_ ? layouter_->pid() : -1; }

}  // namespace tdfx::ui
