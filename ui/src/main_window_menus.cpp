// MainWindow's menus, context menu, settings, recent files, theme, drag and drop and export.
#include <QListWidget>
#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QLineEdit>
#include <QSpinBox>
#include <QDir>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QScreen>
#include <QSettings>
#include <QGuiApplication>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>

#include "error_text.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/layout_process.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "dock_share.h"
#include "tdfx/ui/main_window.h"
#include "status_line.h"
#include "view_toggles.h"
#include "tdfx/ui/code_panel.h"
#include "tdfx/ui/search_controller.h"
#include "tdfx/ui/selection_history.h"
#include "tdfx/ui/spare_worker.h"
#include "tdfx/ui/recent_files.h"
#include "tdfx/ui/model_loader.h"
#include "tdfx/ui/minimap.h"
#include "tdfx/version.h"

namespace tdfx::ui {

namespace {


QPalette darkPalette() {
  QPalette p;
  const QColor window("#2B2D30"), base("#1E1F22"), text("#DFE1E5"), disabled("#7A7E85");
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, window);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Highlight, QColor("#2F65CA"));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor("#589DF6"));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  return p;
}

// The docks' layout saved by an older tdfx is not restored: version 1 moved the Changes panel from
// under Keys to a tab beside Verify (issue 36), which an old state would undo.
constexpr int kWindowStateVersion = 1;

bool isModelFile(const QUrl& url) {
  return url.isLocalFile() && QFileInfo(url.toLocalFile()).isFile();
}

}  // namespace

QString MainWindow::aboutText() {
  return QStringLiteral("tdfx traces PyTorch TensorDict modules into FX graphs and shows them.\n\n") +
         QString::fromStdString(versionReport("tdfx", qVersion()));
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), modelFolder(),
                                                      tr("TorchScript archives (*.pt *.pth *.zip);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
  });
  recent_->setMenu(file->addMenu(tr("Open &Recent")));
  file->addAction(tr("Co&mpare with..."), this, [this] {
    if (!session_) return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Compare with"), modelFolder(),
                                                      tr("TorchScript archives (*.pt *.pth *.zip);;All files (*)"));
    if (!path.isEmpty()) compareWith(path);
  });
  file->addSeparator();
  file->addAction(tr("&Export picture..."), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export picture"), suggestedExportPath(QStringLiteral("svg")),
                                                      tr("SVG (*.svg);;PNG (*.png);;PDF (*.pdf);;DOT (*.dot)"));
    if (!path.isEmpty()) exportTo(path);
  });
  file->addAction(tr("Export &code..."), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export code"), suggestedExportPath(QStringLiteral("py")), tr("Python (*.py)"));
    if (!path.isEmpty()) exportCode(path);
  });
  file->addAction(tr("Export as &TorchScript..."), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export as TorchScript"),
                                                      suggestedExportPath(QStringLiteral("traced.pt")),
                                                      tr("TorchScript archives (*.pt)"));
    if (!path.isEmpty()) exportTorchScript(path);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
  viewMenu->addAction(tr("&Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), view_, &GraphView::fit);
  viewMenu->addAction(tr("Fit &whole graph"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_0), view_, &GraphView::fitAll);
  viewMenu->addAction(tr("Zoom &in"), QKeySequence::ZoomIn, view_, [this] { view_->zoomBy(1.25); });
  viewMenu->addAction(tr("Zoom &out"), QKeySequence::ZoomOut, view_, [this] { view_->zoomBy(0.8); });
  viewMenu->addSeparator();
  auto* styles = new QActionGroup(this);
  QAction* tdfxStyle = viewMenu->addAction(tr("tdfx style"), this, [this] { setStyle(ViewStyle::Tdfx); });
  toggles_->fxStyle = viewMenu->addAction(tr("FX style (FxGraphDrawer)"), this, [this] { setStyle(ViewStyle::Fx); });
  for (QAction* a : {tdfxStyle, toggles_->fxStyle}) {
    a->setCheckable(true);
    styles->addAction(a);
  }
  tdfxStyle->setChecked(true);
  toggles_->leftToRight = viewMenu->addAction(tr("&Left to right"), QKeySequence(Qt::CTRL | Qt::Key_L), this,
                                  [this](bool on) { setRankdir(on ? QStringLiteral("LR") : QStringLiteral("TB")); });
  toggles_->leftToRight->setCheckable(true);
  viewMenu->addSeparator();
  toggles_->expandAll = viewMenu->addAction(tr("E&xpand all"), this, [this](bool on) { setExpandAll(on); });
  toggles_->expandAll->setCheckable(true);
  viewMenu->addAction(tr("&Collapse to depth..."), this, [this] {
    toggles_->depth->setFocus();  // the toolbar's depth box
    toggles_->depth->selectAll();
  });
  viewMenu->addSeparator();
  toggles_->shapes = viewMenu->addAction(tr("Show &shapes on edges"), this, [this](bool on) { setShapesShown(on); });
  toggles_->shapes->setCheckable(true);
  toggles_->shapes->setToolTip(tr("Each value's shape and dtype, from a run on the Verify panel's inputs"));
  toggles_->checks = viewMenu->addAction(tr("Show input &checks"), this, [this](bool on) { setChecksShown(on); });
  toggles_->checks->setCheckable(true);
  toggles_->checks->setToolTip(tr("Draw torch._assert and the nodes that only feed it; off, they fold into a ✓ badge "
                               "on the node they check (the Code tabs always show them)"));
  QAction* sizes = toggles_->shapeArithmetic =
      viewMenu->addAction(tr("Show shape &arithmetic"), this, [this](bool on) { setShapeArithmeticShown(on); });
  sizes->setCheckable(true);
  sizes->setToolTip(tr("Draw size computations (x.shape, getitem, //, * on sizes) as nodes; off, the ones each node "
                       "uses fold into one \"shape\" node beside it (double-click one to open it)"));
  buildFollowing(viewMenu);
  toggles_->time = viewMenu->addAction(tr("Colour nodes by &time"), this, [this](bool on) { setTimeOverlay(on); });
  toggles_->time->setCheckable(true);
  QAction* minimap = viewMenu->addAction(tr("Over&view"), this, [this](bool on) { view_->setOverviewEnabled(on); });
  minimap->setCheckable(true);
  minimap->setChecked(true);
  QMenu* themes = viewMenu->addMenu(tr("&Theme"));
  auto* themeGroup = toggles_->themes = new QActionGroup(this);
  const std::pair<QString, Theme> themeNames[] = {
      {tr("System"), Theme::System}, {tr("Light"), Theme::Light}, {tr("Dark"), Theme::Dark}};
  for (const auto& [name, theme] : themeNames) {
    QAction* a = themes->addAction(name, this, [this, theme = theme] { setTheme(theme); });
    a->setCheckable(true);
    a->setChecked(theme == Theme::System);
    a->setData(static_cast<int>(theme));
    themeGroup->addAction(a);
  }
  QMenu* panels = viewMenu->addMenu(tr("&Panels"));
  for (QDockWidget* dock : findChildren<QDockWidget*>()) panels->addAction(dock->toggleViewAction());

  QMenu* go = menuBar()->addMenu(tr("&Go"));
  QAction* back = go->addAction(tr("&Back"), QKeySequence::Back, this, &MainWindow::goBack);
  QAction* forward = go->addAction(tr("&Forward"), QKeySequence::Forward, this, &MainWindow::goForward);
  back->setEnabled(false);
  forward->setEnabled(false);
  connect(history_, &SelectionHistory::changed, this, [back, forward](bool canGoBack, bool canGoForward) {
    back->setEnabled(canGoBack);
    forward->setEnabled(canGoForward);
  });
  go->addSeparator();
  go->addAction(tr("&Find..."), QKeySequence::Find, this, [this] {
    search_->field()->setFocus();
    search_->field()->selectAll();
  });
  go->addAction(tr("Find &next"), QKeySequence::FindNext, this, [this] { findNext(search_->field()->text()); });
  go->addAction(tr("Find &previous"), QKeySequence::FindPrevious, this, [this] { findPrevious(search_->field()->text()); });
  go->addSeparator();
  go->addAction(tr("&Run eager vs traced"), QKeySequence(Qt::Key_F5), this, &MainWindow::runVerify);
  buildHabits(viewMenu, go);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About tdfx"), this, [this] { QMessageBox::about(this, tr("About tdfx"), aboutText()); });
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

// ---- Context menu on a node -----------------------------------------------------------------

void MainWindow::showNodeMenu(const QString& id, const QPoint& screenPos) {
  if (!session_) return;
  const ViewNode* v = session_->view.findNode(id.toStdString());
  if (!v) return;
  QMenu menu(this);
  if (v->kind == ViewNode::Kind::Collapsed)
    menu.addAction(tr("Expand %1").arg(QString::fromStdString(v->scope)), this, [this, id] { expandScope(id); });
  if (v->kind == ViewNode::Kind::Shape)
    menu.addAction(tr("Expand shape arithmetic"), this, [this, id] { expandScope(id); });
  // The scopes the node sits in, innermost first: each can be collapsed into one node.
  std::vector<std::string> scopes;
  if (const Node* node = session_->graph().findNode(v->irNodes.empty() ? v->id : v->irNodes.front()))
    scopes = scopesOf(*node);
  if (v->kind == ViewNode::Kind::Collapsed) {
    while (!scopes.empty() && scopes.back() != v->scope) scopes.pop_back();
    if (!scopes.empty()) scopes.pop_back();  // the node itself is that scope
  }
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    const QString scope = QString::fromStdString(*it);
    menu.addAction(tr("Collapse %1").arg(scope), this, [this, scope] { collapseScope(scope); });
  }
  if (!menu.isEmpty()) menu.addSeparator();
  menu.addAction(tr("Copy name"), this, [id] { QGuiApplication::clipboard()->setText(id); });
  menu.exec(screenPos);
}

// ---- Recent files and settings --------------------------------------------------------------

void MainWindow::restoreSettings() {
  QSettings settings;
  recent_->restore();
  restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("windowState")).toByteArray(), kWindowStateVersion);
  // The Changes tab lists a reload's changes: saved open, it came back empty, in front of Verify
  // (issue 57, C). It opens with the next reload.
  if (changesList_) changesList_->parentWidget()->hide();
  keepOnScreen();
  options_.style = settings.value(QStringLiteral("style")).toString() == QStringLiteral("fx") ? ViewStyle::Fx : ViewStyle::Tdfx;
  options_.rankdir = settings.value(QStringLiteral("rankdir")).toString() == QStringLiteral("LR") ? "LR" : "TB";
  toggles_->reflect(options_);
  const int theme = settings.value(QStringLiteral("theme"), 0).toInt();
  if (theme != 0) setTheme(theme == 2 ? Theme::Dark : Theme::Light);
}

void MainWindow::keepOnScreen() {
  // A geometry saved on a larger screen, or at another scale (QT_SCALE_FACTOR=1.5 on 1600x1000),
  // would put Verify and the status bar off-screen: the window is made to fit where it is shown.
  const QScreen* shown = screen() ? screen() : QGuiApplication::primaryScreen();
  if (!shown) return;
  const QRect available = shown->availableGeometry();
  const QMargins frame(geometry().left() - frameGeometry().left(), geometry().top() - frameGeometry().top(),
                       frameGeometry().right() - geometry().right(), frameGeometry().bottom() - geometry().bottom());
  const QRect room = available.marginsRemoved(frame);
  if (isMaximized() || isFullScreen() || room.isEmpty()) return;
  QRect wanted = geometry();
  wanted.setSize(wanted.size().boundedTo(room.size()));
  if (wanted.right() > room.right()) wanted.moveRight(room.right());
  if (wanted.bottom() > room.bottom()) wanted.moveBottom(room.bottom());
  if (wanted.left() < room.left()) wanted.moveLeft(room.left());
  if (wanted.top() < room.top()) wanted.moveTop(room.top());
  if (wanted != geometry()) setGeometry(wanted);
}

void MainWindow::setWorkerLimits(const WorkerLimits& limits) {
  loader_->setLimits(limits);
}

QString MainWindow::modelFolder() const {
  // Where the open model is, as Netron's dialogs start: its neighbours are what a user compares.
  return session_ ? QFileInfo(QString::fromStdString(session_->traced.model.path)).absolutePath() : QString();
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  giveTheGraphItsShare();
}

void MainWindow::giveTheGraphItsShare() { dockShare_->apply(); }

void MainWindow::saveSettings() const {
  QSettings settings;
  settings.setValue(QStringLiteral("geometry"), saveGeometry());
  settings.setValue(QStringLiteral("windowState"), saveState(kWindowStateVersion));
  settings.setValue(QStringLiteral("style"), options_.style == ViewStyle::Fx ? QStringLiteral("fx") : QStringLiteral("tdfx"));
  settings.setValue(QStringLiteral("rankdir"), QString::fromStdString(options_.rankdir));
  settings.setValue(QStringLiteral("theme"), toggles_->theme());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (interactive_) {
    dockShare_->unfold();  // Verify folded for a small window is not the user's choice to save
    saveSettings();
  }
  QMainWindow::closeEvent(event);
}

// ---- Theme ----------------------------------------------------------------------------------

void MainWindow::setTheme(Theme theme) {
  static const QPalette systemPalette = QApplication::palette();
  static const QString systemStyle = QApplication::style()->name();
  toggles_->reflectTheme(static_cast<int>(theme));
  if (theme == Theme::System) {
    QApplication::setStyle(QStyleFactory::create(systemStyle));
    QApplication::setPalette(systemPalette);
  } else {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(theme == Theme::Dark ? darkPalette() : QApplication::style()->standardPalette());
  }
  const bool dark = QApplication::palette().color(QPalette::Window).lightness() < 128;
  scene_->setDarkBackground(dark);
  view_->setBackground(QApplication::palette().color(QPalette::Base));
  code_->setDark(dark);
  if (session_) showSession();
}

// ---- Drag and drop ---------------------------------------------------------------------------

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() == 1 && isModelFile(urls.first())) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() != 1 || !isModelFile(urls.first())) return;
  event->acceptProposedAction();
  openFile(urls.first().toLocalFile());
}

// ---- Export ----------------------------------------------------------------------------------

QString MainWindow::suggestedExportPath(const QString& extension) const {
  if (!session_) return {};
  const QFileInfo model(QString::fromStdString(session_->traced.model.path));
  return model.absoluteDir().filePath(model.completeBaseName() + "." + extension);
}

bool MainWindow::startExport(const QString& path, std::function<std::string()> write) {
  if (!exports_->start(path, std::move(write))) {
    showError(tr("%1 is still being written; export again once it is done").arg(QFileInfo(path).fileName()), false);
    return false;
  }
  status_->setText(tr("Writing %1 ...").arg(path));
  return true;
}

void MainWindow::onExported(const ExportResult& result) {
  if (!result.ok()) {
    showError(QString::fromStdString(result.error), false);
  } else {
    status_->setText(result.note.empty() ? tr("Wrote %1").arg(result.path)
                                         : tr("Wrote %1 (%2)").arg(result.path, QString::fromStdString(result.note)));
  }
  Q_EMIT exported(result.path, result.ok());
}

bool MainWindow::exportTo(const QString& path) {
  if (!session_) return false;
  // Graphviz renders in a layout process, within the request time limit (an SVG past it is drawn
  // from the layered layout); the picture shown, overlays included.
  return startExport(path, [view = shownView(), file = path.toStdString(), limit = loader_->limits().requestSeconds] {
    return exportViewWithin(view, file, limit);
  });
}

bool MainWindow::exportTorchScript(const QString& path) {
  if (!session_) return false;
  if (QFileInfo(path) == QFileInfo(QString::fromStdString(session_->traced.model.path))) {
    showError(tr("%1 is the model file itself; choose another file").arg(path), false);
    return false;
  }
  // The model's worker builds the archive (it runs the model's code); this process writes it.
  session_->worker->resetCancel();
  return startExport(path, [worker = session_->worker, file = path.toStdString()] {
    const TorchScriptArchive archive = worker->torchScript();
    writeFileAtomically(file, archive.bytes);
    return "TorchScript, " + archive.signature;
  });
}

bool MainWindow::exportCode(const QString& path) {
  if (!session_) return false;
  return startExport(path, [text = session_->traced.code.text, file = path.toStdString()] {
    writeFileAtomically(file, text);
    return std::string();
  });
}

}  // namespace tdfx::ui
