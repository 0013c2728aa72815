#pragma once
// The window's exports (picture, code, TorchScript) as asynchronous jobs: each writes its file
// atomically on a thread of its own and reports when done, while the window goes on as usual. No
// nested event loop waits for one, so nothing re-enters the window meanwhile; one export runs at a
// time, and another asked for then is refused with a reason.
#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <functional>
#include <string>

namespace tdfx::ui {

/// How an export went: the file, and a note for the status bar or the error.
struct ExportResult {
  QString path;
  std::string note, error;
  bool ok() const { return error.empty(); }
};

class ExportJobs : public QObject {
  Q_OBJECT
 public:
  explicit ExportJobs(QObject* parent = nullptr);
  /// Waits for the export in progress (its file is written whole or not at all).
  ~ExportJobs() override;

  /// Starts `write` for `path` (it returns a note; it throws on failure); emits finished. False,
  /// and nothing started, while another export runs.
  bool start(const QString& path, std::function<std::string()> write);
  bool running() const { return running_; }

 Q_SIGNALS:
  void finished(const tdfx::ui::ExportResult& result);

 private:
  QThreadPool pool_;
  QFutureWatcher<ExportResult> watcher_;
  bool running_ = false;
};

}  // namespace tdfx::ui
