// MainWindow's File > Compare with...: the open model against another file, each in a worker.
#include <QFileInfo>
#include <QLabel>

#include "tdfx/ui/compare_window.h"
#include "tdfx/ui/difference_list.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/main_window.h"
#include "status_line.h"
#include "tdfx/ui/search_controller.h"
#include "tdfx/worker/model_diff.h"

namespace tdfx::ui {

void MainWindow::compareWith(const QString& path) {
  if (!session_ || loader_->comparing()) return;
  status_->setText(tr("Comparing with %1 ...").arg(QFileInfo(path).fileName()));
  loader_->compare(session_, path, options_);
}

CompareWindow* MainWindow::compareWindow() const { return compareWindow_; }

void MainWindow::compareDropped(int side, const QString& path) {
  if (!compareWindow_) return;
  if (loader_->comparing() || isLoading()) {  // it would be dropped in silence
    status_->setText(tr("A comparison or an open is running; drop %1 again once it has finished").arg(QFileInfo(path).fileName()));
    return;
  }
  if (side == 1) return compareWith(path);  // B replaced: the open model against the dropped file
  // A replaced: the dropped file becomes the open model, then is compared with B as before.
  const QString other = QString::fromStdString(compareWindow_->sessionB()->traced.model.path);
  auto* once = new QObject(this);  // the follow-up of this open only, whatever its outcome
  connect(this, &MainWindow::modelLoaded, once, [this, once, other, path] {
    once->deleteLater();
    // Another file opened meanwhile (Open Recent) is not the one dropped: no compare.
    if (session_ && QFileInfo(QString::fromStdString(session_->traced.model.path)) == QFileInfo(path)) compareWith(other);
  });
  connect(this, &MainWindow::loadFailed, once, &QObject::deleteLater);
  connect(this, &MainWindow::loadCancelled, once, &QObject::deleteLater);
  openFile(path);
}

void MainWindow::onCompared(const CompareOutcome& outcome) {
  if (outcome.session != session_) return;  // another model was opened meanwhile
  if (!outcome.error.isEmpty()) {
    showError(outcome.error, false);
    Q_EMIT compared(outcome.error, false);
    return;
  }
  lastComparison_ = outcome.report;
  // This model's side of the findings, drawn as compare draws them; F3 walks them.
  diffMarks_ = outcome.diff->marksA;
  QStringList ids;
  for (const QString& id : viewIdsOf(outcome.diff->changedInA())) ids << id;
  ids.sort();
  search_->walk(ids);
  applyOverlays();
  status_->setText(outcome.report.trimmed().section('\n', -1));
  // Side by side in a window of its own; a new comparison replaces the last one.
  if (compareWindow_) compareWindow_->deleteLater();
  const QString nameA = nameOf(QString::fromStdString(session_->traced.model.path));
  const QString nameB = QFileInfo(QString::fromStdString(outcome.other->traced.model.path)).fileName();
  // A copy of the picture as drawn now: a relayout here rewrites session_'s view, and the compare
  // window maps names and follows edges on the picture it draws (the graph and worker are shared).
  auto drawnA = std::make_shared<const ModelSession>(*session_);
  compareWindow_ = new CompareWindow(drawnA, outcome.other, *outcome.diff, nameA, nameB, this);
  compareWindow_->setAttribute(Qt::WA_DeleteOnClose);
  compareWindow_->setAcceptDrops(true);
  connect(compareWindow_, &CompareWindow::fileDropped, this, &MainWindow::compareDropped);
  if (interactive_) compareWindow_->show();
  // The count is compare's: every difference, not only the nodes marked here.
  const int differences = compareWindow_->differences()->rowCount();
  search_->walk(ids, differences == 0 ? tr(" identical ") : tr(" %1 difference(s), %2 node(s) marked ").arg(differences).arg(ids.size()));
  Q_EMIT compared(outcome.report, true);
}

}  // namespace tdfx::ui
