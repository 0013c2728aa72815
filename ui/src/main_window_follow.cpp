// MainWindow's View > Follow file changes: the open file reopened when it changes on disk, the view
// kept where it was, and what changed against the previous version marked and listed.
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMenu>

#include "tdfx/ui/difference_rows.h"
#include "error_text.h"
#include "tdfx/ui/file_follower.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "status_line.h"
#include "tdfx/ui/recent_files.h"
#include "tdfx/ui/search_controller.h"
#include "view_toggles.h"

namespace tdfx::ui {

void MainWindow::buildFollowing(QMenu* viewMenu) {
  follower_ = new FileFollower(this);
  connect(follower_, &FileFollower::settled, this, [this](const QString& path) {
    // A load in progress (the user's, or the last change's) finishes first: when it lands, the file
    // is followed from the version that load read (its stamp), so this newer one is reported
    // again then. Marking it seen here would leave the window on the older model for good.
    if (!session_ || QFileInfo(path) != QFileInfo(QString::fromStdString(session_->traced.model.path))) return;
    if (isLoading()) return;
    startLoad(path, session_);
  });
  connect(follower_, &FileFollower::gone, this, &MainWindow::onFileGone);
  QAction* follow = toggles_->follow =
      viewMenu->addAction(tr("Follo&w file changes"), this, [this](bool on) { setFollowFileChanges(on); });
  follow->setCheckable(true);
  follow->setChecked(true);
  follow->setToolTip(tr("Reopen the model when its file changes on disk, and mark what changed"));

  changesList_ = new QListWidget(this);
  changesList_->setObjectName(QStringLiteral("changes"));
  auto* dock = new QDockWidget(tr("Changes since last version"), this);
  dock->setObjectName(QStringLiteral("changesDock"));
  dock->setWidget(changesList_);
  // A tab beside Verify along the window's bottom: its rows are long (a parameter's name, how it
  // differs, its node), and under Keys they were cut at 200 px (issue 36, defect 10).
  addDockWidget(Qt::BottomDockWidgetArea, dock);
  if (auto* verifyDock = findChild<QDockWidget*>(QStringLiteral("verify"))) tabifyDockWidget(verifyDock, dock);
  dock->hide();  // shown when a followed file changed
  connect(changesList_, &QListWidget::currentRowChanged, this, [this](int row) {
    const QListWidgetItem* item = changesList_->item(row);
    const QString ir = item ? item->data(Qt::UserRole).toString() : QString();
    if (!ir.isEmpty()) selectAndCenter(shownAs(ir));
  });
}

void MainWindow::nameFile(const QString& path, const QString& name) { recent_->nameFile(path, name); }

QString MainWindow::nameOf(const QString& path) const { return recent_->nameOf(path); }

QStringList MainWindow::recentFiles() const { return recent_->files(); }

void MainWindow::onFileGone(const QString& path) {
  // tdfx.show's file goes when its Python session ends; a user's when it is deleted or moved. The
  // window went on following it in silence, and Open Recent said "no such file" later.
  if (!session_ || QFileInfo(path) != QFileInfo(QString::fromStdString(session_->traced.model.path))) return;
  setWindowTitle(tr("%1 (file gone) - tdfx").arg(nameOf(path)));
  status_->setText(tr("%1 is gone (deleted or moved): this is its last version; it is reopened if it comes back")
                       .arg(nameOf(path)));
  Q_EMIT followedFileGone(path);
}

void MainWindow::setFollowFileChanges(bool on) {
  if (toggles_->follow->isChecked() != on) toggles_->follow->setChecked(on);
  followFile(session_ && on ? QString::fromStdString(session_->traced.model.path) : QString());
}

bool MainWindow::followsFileChanges() const { return toggles_->follow->isChecked(); }

void MainWindow::followFile(const QString& path, const std::optional<FileStamp>& seen) {
  const QString followed = toggles_->follow->isChecked() ? path : QString();
  if (seen) follower_->follow(followed, *seen);
  else follower_->follow(followed);
}

void MainWindow::showReload(const LoadOutcome& outcome) {
  if (!outcome.session) {
    // A broken intermediate save: the last good graph stays, and the status bar says why.
    lastError_ = outcome.error;
    status_->setText(tr("%1 changed but cannot be opened; the last good version stays: %2")
                         .arg(nameOf(outcome.path), outcome.error.section('\n', 0, 0).left(300)));
    status_->setToolTip(plainToolTip(capMessage(outcome.error)));  // the model's text, as text
    followFile(QString::fromStdString(session_->traced.model.path), outcome.stamp);  // a save since then is reported
    Q_EMIT loadFailed(outcome.error);
    return;
  }
  // Where the user was: the selection and zoom (the collapsed modules are in options_, kept).
  const QString selected = scene_->selectedNode();
  const QTransform zoom = view_->transform();
  const QPointF centre = view_->mapToScene(view_->viewport()->rect().center());
  const std::shared_ptr<const ModelDiff> changes = outcome.changes;
  showLoaded(outcome);
  view_->setTransform(zoom);
  view_->centerOn(centre);
  view_->sceneChanged();
  if (!selected.isEmpty() && scene_->nodeItem(selected)) scene_->selectNode(selected);
  if (changes) markChanges(*changes);
}

void MainWindow::markChanges(const ModelDiff& changes) {
  diffMarks_ = changes.marksB;
  changesList_->clear();
  // The rows compare lists; each selects its node in this (the new) version.
  for (const DifferenceRow& row : differenceRows(changes, session_->graph(), session_->graph())) {
    auto* item = new QListWidgetItem(row.text, changesList_);
    item->setData(Qt::UserRole, row.irB);
  }
  if (changesList_->count() == 0) changesList_->addItem(tr("no difference from the previous version"));
  changesList_->parentWidget()->show();
  changesList_->parentWidget()->raise();  // in front of Verify
  // F3 with an empty search field walks them, as after a compare.
  QStringList walk;
  for (const auto* list : {&changes.marksB.added, &changes.marksB.changed, &changes.marksB.weights})
    for (const QString& id : viewIdsOf(*list)) walk << id;
  walk.sort();
  walk.removeDuplicates();
  search_->walk(walk);
  applyOverlays();
  status_->setText(tr("Reloaded %1: %2").arg(nameOf(QString::fromStdString(session_->traced.model.path)),
                                             QString::fromStdString(formatModelDiff(changes, "", "")).trimmed().section('\n', -1)));
}

}  // namespace tdfx::ui
