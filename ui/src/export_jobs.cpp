#include "tdfx/ui/export_jobs.h"

#include <QtConcurrent/QtConcurrent>

namespace tdfx::ui {

ExportJobs::ExportJobs(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);
  connect(&watcher_, &QFutureWatcher<ExportResult>::finished, this, [this] {
    running_ = false;
    if (watcher_.future().resultCount() > 0) Q_EMIT finished(watcher_.result());
  });
}

ExportJobs::~ExportJobs() { pool_.waitForDone(); }

bool ExportJobs::start(const QString& path, std::function<std::string()> write) {
  if (running_) return false;
  running_ = true;
  watcher_.setFuture(QtConcurrent::run(&pool_, [path, write = std::move(write)]() -> ExportResult {
    try {
      return {path, write(), {}};
    } catch (const std::exception& e) {
      return {path, {}, e.what()};
    }
  }));
  return true;
}

}  // namespace tdfx::ui
