// MainWindow's File > Compare with...: the open model against another file, each in a worker.
#include <QDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/main_window.h"
#include "tdfx/worker/model_diff.h"

namespace tdfx::ui {

void MainWindow::compareWith(const QString& path) {
  if (!session_ || comparer_.isRunning()) return;
  status_->setText(tr("Comparing with %1 ...").arg(QFileInfo(path).fileName()));
  const std::shared_ptr<ModelSession> session = session_;
  const WorkerLimits limits = workerLimits_;
  const std::string other = path.toStdString();
  // B opens in a worker of its own; A's values come from the open model's worker.
  auto workerB = std::make_shared<ModelWorker>(limits);
  compareWorker_ = workerB;  // closing the window kills it
  comparer_.setFuture(QtConcurrent::run(&loadPool_, [session, workerB, other]() -> CompareOutcome {
    try {
      const TracedModel b = workerB->open(other);
      if (!session->worker->alive()) session->worker->open(session->traced.model.path);
      const ModelDiff diff = diffModels(session->traced, b, session->worker->parameterValues(), workerB->parameterValues());
      const std::string nameA = QFileInfo(QString::fromStdString(session->traced.model.path)).fileName().toStdString();
      const std::string nameB = QFileInfo(QString::fromStdString(other)).fileName().toStdString();
      return {QString::fromStdString(formatModelDiff(diff, nameA, nameB)), {}, diff.changedInA(), session};
    } catch (const std::exception& e) {
      return {{}, QString::fromStdString(e.what()), {}, session};
    }
  }));
}

void MainWindow::onCompared() {
  const CompareOutcome outcome = comparer_.result();
  compareWorker_.reset();  // its worker process ends with it
  if (outcome.session != session_) return;  // another model was opened meanwhile
  if (!outcome.error.isEmpty()) {
    showError(outcome.error, false);
    Q_EMIT compared(outcome.error, false);
    return;
  }
  lastComparison_ = outcome.report;
  // The changed and removed nodes as search matches: marked, and F3 goes through them.
  QStringList ids;
  for (const QString& id : viewIdsOf(outcome.changedInA)) ids << id;
  ids.sort();
  matches_ = ids;
  matchedText_.clear();
  scene_->setMarked(QSet<QString>(ids.begin(), ids.end()), GraphScene::SearchMatch);
  matchCount_->setText(tr(" %1 changed ").arg(ids.size()));
  status_->setText(outcome.report.trimmed().section('\n', -1));
  if (interactive_) {
    auto* dialog = new QDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Comparison"));
    auto* text = new QPlainTextEdit(outcome.report, dialog);
    text->setReadOnly(true);
    text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(text);
    dialog->resize(800, 500);
    dialog->show();
  }
  Q_EMIT compared(outcome.report, true);
}

}  // namespace tdfx::ui
