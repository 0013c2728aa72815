#include "tdfx/ui/main_window.h"
#include "status_line.h"
#include "tdfx/ui/relayouter.h"
#include "tdfx/ui/model_loader.h"
#include "tdfx/ui/recent_files.h"
#include "view_toggles.h"
#include "wheel_focus.h"
#include "tdfx/ui/code_panel.h"
#include "tdfx/ui/search_controller.h"
#include "tdfx/ui/selection_history.h"

#include <QListWidget>
#include <QDialog>
#include <QFontDatabase>
#include <QDockWidget>
#include <QVBoxLayout>
#include <QGraphicsItem>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QStatusBar>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QUrl>
#include <QToolBar>
#include <QSignalBlocker>
#include <QTimer>

#include "error_text.h"
#include "model_summary_text.h"
#include "node_description.h"
#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/worker/model_diff.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/keys_panel.h"
#include "dock_share.h"
#include "tdfx/ui/spare_worker.h"
#include "tdfx/ui/verify_panel.h"

namespace tdfx::ui {

namespace {

QDockWidget* addDock(QMainWindow* window, const QString& title, const QString& name, QWidget* widget,
                     Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, window);
  dock->setObjectName(name);  // saveState/restoreState find docks by name
  dock->setWidget(widget);
  window->addDockWidget(area, dock);
  return dock;
}

}  // namespace

MainWindow::MainWindow(bool interactive, QWidget* parent)
    : QMainWindow(parent), interactive_(interactive), scene_(new GraphScene(this)), view_(new GraphView(this)),
      code_(new CodePanel(this)), inspector_(new QTextBrowser(this)), modelPanel_(new QTextBrowser(this)),
      keys_(new KeysPanel(this)), verify_(new VerifyPanel(this)), status_(new StatusLine(statusBar())) {
  setWindowTitle(QStringLiteral("tdfx"));
  setAcceptDrops(true);
  history_ = new SelectionHistory(this);
  recent_ = new RecentFiles(interactive_, this);
  connect(recent_, &RecentFiles::chosen, this, &MainWindow::openFile);
  toggles_ = std::make_unique<ViewToggles>();
  QSpinBox* depthBox = toggles_->depth = new QSpinBox(this);
  wheelOnlyWhenFocused(depthBox);  // a wheel over the toolbar does not change the depth
  layouts_ = new Relayouter(this);
  loader_ = new ModelLoader(this);
  exports_ = new ExportJobs(this);
  connect(exports_, &ExportJobs::finished, this, &MainWindow::onExported);
  loader_->spare()->setEnabled(interactive_);  // tests and benchmarks turn it on themselves
  loader_->refillSpare();
  view_->setScene(scene_);
  setCentralWidget(view_);
  dockShare_ = new DockShare(this, view_);
  inspector_->setOpenLinks(false);  // links go to nodes, frames and code lines of this window
  connect(inspector_, &QTextBrowser::anchorClicked, this, &MainWindow::followInspectorLink);

  QDockWidget* codeDock = addDock(this, tr("Code"), QStringLiteral("code"), code_, Qt::RightDockWidgetArea);
  QDockWidget* inspectorDock = addDock(this, tr("Inspector"), QStringLiteral("inspector"), inspector_, Qt::RightDockWidgetArea);
  QDockWidget* modelDock = addDock(this, tr("Model"), QStringLiteral("model"), modelPanel_, Qt::RightDockWidgetArea);
  tabifyDockWidget(inspectorDock, modelDock);  // the inspector in front; the Model tab beside it
  inspectorDock->raise();
  QDockWidget* keysDock = addDock(this, tr("Keys"), QStringLiteral("keys"), keys_, Qt::LeftDockWidgetArea);
  // The panel scrolls its own inputs, options and results, under a bar that stays in sight.
  QDockWidget* verifyDock = addDock(this, tr("Verify"), QStringLiteral("verify"), verify_, Qt::BottomDockWidgetArea);
  dockShare_->foldBelow(verifyDock, 600);  // F5 or View > Panels > Verify brings it back
  // The graph gets most of the window; restoreSettings() may replace these sizes.
  resizeDocks({keysDock, codeDock}, {200, 440}, Qt::Horizontal);
  // At least its minimum: a dock asked to be smaller than that follows its size hint from then on,
  // and grows whenever its content (a result table) does.
  resizeDocks({verifyDock}, {std::max(240, verify_->minimumSizeHint().height() + 8)}, Qt::Vertical);

  // Status bar: counts and timings, and while loading a busy indicator with Cancel.
  connect(status_, &StatusLine::cancelled, this, &MainWindow::cancelLoad);

  // Search: live as you type (debounced); Enter = next, Shift+Enter = previous; every match is marked.
  search_ = new SearchController(
      scene_, [this] { return static_cast<const ModelSession*>(session_.get()); },
      [this](const QString& id) { selectAndCenter(id); }, this);
  connect(search_, &SearchController::noMatch, this,
          [this](const QString& text) { status_->setText(tr("No match for \"%1\"").arg(text)); });
  QToolBar* toolbar = addToolBar(tr("Search"));
  toolbar->setObjectName(QStringLiteral("search"));
  search_->addTo(toolbar);
  toolbar->addSeparator();
  auto* depthLabel = new QLabel(tr(" Depth "), this);
  depthLabel->setBuddy(depthBox);
  toolbar->addWidget(depthLabel);
  toolbar->addWidget(depthBox);
  depthBox->setRange(0, 0);
  depthBox->setEnabled(false);
  depthBox->setKeyboardTracking(false);  // typing "12" asks for depth 12, not 1 then 12
  connect(depthBox, &QSpinBox::valueChanged, this, [this](int depth) {
    if (session_ && depth != session_->view.depth) setDepth(depth);
  });

  buildMenus();
  connect(scene_, &GraphScene::nodeActivated, this, &MainWindow::expandScope);
  connect(scene_, &GraphScene::marksChanged, this, &MainWindow::refreshLegend);
  scene_->setHoverCards([this](const QString& id) { return session_ ? hoverCardHtml(*session_, id) : QString(); });
  connect(scene_, &GraphScene::nodeSelected, this, &MainWindow::showNode);
  connect(scene_, &GraphScene::nodeContextMenu, this, &MainWindow::showNodeMenu);
  connect(code_, &CodePanel::nodeChosen, this, &MainWindow::onCodeNodeChosen);
  connect(keys_, &KeysPanel::keysSelected, this, &MainWindow::markKeys);
  connect(verify_, &VerifyPanel::finished, this, &MainWindow::onVerified);
  connect(loader_, &ModelLoader::loaded, this, &MainWindow::onLoaded);
  connect(loader_, &ModelLoader::compared, this, &MainWindow::onCompared);
  connect(loader_, &ModelLoader::statsArrived, this, &MainWindow::onParameterStats);
  connect(layouts_, &Relayouter::laidOut, this, &MainWindow::showLayout);
  connect(layouts_, &Relayouter::failed, this, [this](const QString& error) {
    if (session_) showError(error, false);
  });
  resize(1400, 900);
  verify_->setRememberInputs(interactive_);
  if (interactive_) restoreSettings();
}

MainWindow::~MainWindow() {
  // Whatever the models are doing (an endless loop, a huge allocation), their worker processes
  // are killed, so the jobs waiting on them end at once and the window closes without delay.
  if (session_) session_->worker->cancel();
  delete loader_;  // kills the workers of its jobs and waits for them
  loader_ = nullptr;
  delete exports_;  // waits for an export in progress (a TorchScript one ends with the worker)
  exports_ = nullptr;
  delete layouts_;  // stops its layout and waits for the job, which reads the open model's graph
  layouts_ = nullptr;
}

QTableWidget* MainWindow::verifyTable() const { return verify_->resultTable(); }

QString MainWindow::statusText() const { return status_->text(); }

QSpinBox* MainWindow::depthBox() const { return toggles_->depth; }

// ---- Opening -------------------------------------------------------------------------------

void MainWindow::openFile(const QString& path) {
  // A new model starts at its own default depth; expansions of the previous one do not apply.
  options_.hierarchy.depth.reset();
  options_.hierarchy.expanded.clear();
  options_.hierarchy.collapsed.clear();
  options_.shapesExpanded.clear();
  startLoad(path, nullptr);
}

void MainWindow::startLoad(const QString& path, std::shared_ptr<ModelSession> previous) {
  status_->setBusy(tr(previous ? "Reloading %1 ..." : "Loading %1 ...").arg(nameOf(path)));
  loader_->load(path, options_, std::move(previous));
}

void MainWindow::cancelLoad() {
  if (!isLoading()) return;
  // The load runs in its own worker process: killing it stops LibTorch wherever it is. The job
  // waiting on it ends at once and its result is dropped; the open model and its worker stay.
  loader_->cancel();
  status_->setIdle();
  status_->setText(tr("Cancelled; %1").arg(session_ ? tr("the open model stays") : tr("nothing is open")));
  Q_EMIT loadCancelled();
}

bool MainWindow::isLoading() const { return status_->busy(); }

void MainWindow::onLoaded(const LoadOutcome& outcome) {
  status_->setIdle();
  loader_->refillSpare();  // the next open's worker, warmed while the window is idle
  if (outcome.reload) return showReload(outcome);
  if (!outcome.session) {
    showError(outcome.error, true);
    return;
  }
  showLoaded(outcome);
}

void MainWindow::showLoaded(const LoadOutcome& outcome) {
  const auto shown = std::chrono::steady_clock::now();
  session_ = std::move(outcome.session);
  layouts_->forget();  // a layout of the previous model must not land on this one
  {
    const QSignalBlocker quiet(keys_);  // the previous model's keys mark nothing here (setKeys refills it)
    keys_->clear();
  }
  diffMarks_ = {};  // a reload's changes are marked again after this
  // They were the previous version's (or another file's): a reload lists its own after this.
  changesList_->clear();
  changesList_->parentWidget()->hide();
  // The previous model's query and count mean nothing here. Not behind a signal blocker: the
  // field's clear button follows its textChanged signal, and stayed on an empty field.
  search_->clear();
  code_->highlight({});  // the previous model's highlighted line
  verify_->setSession(session_);  // at once: a run started now must use this model
  lastError_.clear();
  history_->clear();
  resetRunOverlays();
  showSession();
  syncDepthBox();
  inspector_->clear();
  showModelSummary();
  setWindowTitle(QStringLiteral("%1 - tdfx").arg(nameOf(outcome.path)));
  recent_->remember(outcome.path);  // not the named file
  followFile(outcome.path, outcome.stamp);
  view_->showStart();
  const double drawMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - shown).count();
  status_->setText(tr("%1 nodes, %2 edges; load %3 ms, trace %4 ms, layout %5 ms, scene %6 ms")
                       .arg(scene_->nodeCount())
                       .arg(scene_->edgeCount())
                       .arg(session_->loadSeconds * 1e3, 0, 'f', 0)
                       .arg(session_->traceSeconds * 1e3, 0, 'f', 1)
                       .arg(session_->layoutSeconds * 1e3, 0, 'f', 0)
                       .arg(drawMs, 0, 'f', 0) +
                   layoutNote());
  // Style, direction or "expand all" changed while the file loaded: lay it out as now asked.
  if (session_->options.style != options_.style || session_->options.rankdir != options_.rankdir ||
      session_->options.checks != options_.checks || session_->options.shapeArithmetic != options_.shapeArithmetic ||
      session_->options.hierarchy.expandAll != options_.hierarchy.expandAll)
    relayoutCurrent();
  // The panels fill in later turns of the event loop, so the graph paints first and no single
  // step holds the GUI thread long (a 6,000-line highlighted code listing takes tens of ms).
  const std::shared_ptr<ModelSession> session = session_;
  QTimer::singleShot(0, this, [this, session] {
    if (session != session_) return;  // another model arrived meanwhile
    code_->setCode(QString::fromStdString(session_->traced.code.text), session_->traced.code.nodeLines);
    showCodeStart();
    QTimer::singleShot(0, this, [this, session] {
      if (session != session_) return;
      code_->setGraphText(QString::fromStdString(printGraph(session_->graph())));
      keys_->setKeys(session_->traced.traced, session_->traced.model.inKeys);
      Q_EMIT modelLoaded();
      loader_->fetchStats(session_);
    });
  });
}

void MainWindow::onParameterStats(const std::shared_ptr<ModelSession>& session, const std::vector<ParameterStats>& stats) {
  if (session != session_) return;  // another model is open now
  session_->stats = statsMap(stats);  // beside the graph: layout jobs reading it need not be waited for
  if (const Node* shown = session_->graph().findNode(history_->current().toStdString()))
    inspector_->setHtml(describeNodeHtml(*shown, session_->traced.code, session_->run.get(), &session_->stats));
  Q_EMIT parameterStatsShown();
}

void MainWindow::showModelSummary() {
  if (session_) modelPanel_->setHtml(modelSummaryHtml(*session_, lastReport()));
  else modelPanel_->clear();
}

void MainWindow::showError(const QString& message, bool failedLoad) {
  lastError_ = message;
  // A model's message may be megabytes (a 15 MB module path): the window shows its first 4 KB,
  // the rest only when asked for. The status bar keeps one line: the cause, with the shown message
  // in its tooltip and the dialog. All of it is plain text, whatever markup it holds.
  const QString shown = capMessage(message);
  const ErrorText error = splitError(shown);
  status_->setText(error.cause.left(300));
  status_->setToolTip(plainToolTip(shown));
  if (interactive_) {
    QMessageBox box(QMessageBox::Critical, tr("tdfx"), error.cause, QMessageBox::Ok, this);
    box.setTextFormat(Qt::PlainText);
    box.setDetailedText(error.detail);
    QPushButton* whole = shown.size() == message.size() ? nullptr : box.addButton(tr("Whole message..."), QMessageBox::ActionRole);
    box.exec();
    if (whole && box.clickedButton() == whole) showWholeMessage(this, message);
  }
  if (failedLoad) Q_EMIT loadFailed(message);
}

}  // namespace tdfx::ui
