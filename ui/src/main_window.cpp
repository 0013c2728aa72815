#include "tdfx/ui/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QLineEdit>
#include <QToolBar>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QStatusBar>
#include <QTextBlock>
#include <QtConcurrent/QtConcurrent>

#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/util/dtype.h"

namespace tdfx::ui {

namespace {

TextMeasure fontMeasure() {
  const QFont font = GraphScene::labelFont();
  return [font](const std::string& line) {
    const QFontMetricsF metrics(font);
    return TextSize{metrics.horizontalAdvance(QString::fromStdString(line)), metrics.height()};
  };
}

std::string describeNode(const Node& n, const PythonCode& code) {
  std::string s = "name: " + n.name() + "\nop: " + opKindName(n.op()) + "\ntarget: " + printedTarget(n) + "\n";
  if (!n.args().empty()) s += "args: " + formatGraphArgument(ArgumentTuple{n.args()}) + "\n";
  if (!n.kwargs().empty()) {
    s += "kwargs:";
    for (const auto& [k, v] : n.kwargs()) s += " " + k + "=" + formatGraphArgument(v);
    s += "\n";
  }
  s += "users:";
  for (const Node* u : n.users()) s += " " + u->name();
  s += "\n";
  const NodeMeta& m = n.meta();
  if (m.tensordictKey) s += "tensordict key: " + keyToString(*m.tensordictKey) + "\n";
  if (!m.modulePath.empty()) s += "module: " + m.modulePath + " (" + m.moduleType + ")\n";
  for (const auto& [k, v] : m.moduleConstants) s += "  " + k + ": " + v + "\n";
  for (const ParameterInfo& p : m.parameters) {
    int64_t count = 1;
    for (int64_t d : p.shape) count *= d;
    std::string shape;
    for (size_t i = 0; i < p.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(p.shape[i]);
    s += std::string("  ") + (p.isBuffer ? "buffer " : "parameter ") + p.name + ": " + dtypeToString(p.dtype) + "[" +
         shape + "] (" + std::to_string(count) + " values)\n";
  }
  if (!m.leafReason.empty()) s += "kept whole: " + m.leafReason + "\n";
  if (!m.sourceFile.empty()) s += "source: " + m.sourceFile + ":" + std::to_string(m.sourceLine) + "\n";
  if (!m.sourceText.empty()) s += "  " + m.sourceText + "\n";
  if (!m.schema.empty()) s += "schema: " + m.schema + "\n";
  for (const TensorMeta& t : m.outputs) s += "output: " + formatTensorMeta(t) + "\n";
  auto line = code.nodeLines.find(n.name());
  if (line != code.nodeLines.end()) s += "code line " + std::to_string(line->second) + "\n";
  return s;
}

}  // namespace

MainWindow::MainWindow(bool interactive, QWidget* parent)
    : QMainWindow(parent), interactive_(interactive), scene_(new GraphScene(this)), view_(new GraphView(this)),
      code_(new QPlainTextEdit(this)), inspector_(new QPlainTextEdit(this)), status_(new QLabel(this)),
      search_(new QLineEdit(this)), verifyTable_(new QTableWidget(this)), verifySummary_(new QLabel(this)) {
  setWindowTitle(QStringLiteral("tdfx"));
  view_->setScene(scene_);
  setCentralWidget(view_);
  code_->setReadOnly(true);
  code_->setLineWrapMode(QPlainTextEdit::NoWrap);
  code_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  inspector_->setReadOnly(true);
  auto* codeDock = new QDockWidget(tr("Code"), this);
  codeDock->setObjectName(QStringLiteral("code"));
  codeDock->setWidget(code_);
  addDockWidget(Qt::RightDockWidgetArea, codeDock);
  auto* inspectorDock = new QDockWidget(tr("Inspector"), this);
  inspectorDock->setObjectName(QStringLiteral("inspector"));
  inspectorDock->setWidget(inspector_);
  addDockWidget(Qt::RightDockWidgetArea, inspectorDock);
  // Verify: eager vs traced on the example inputs, one row per out key.
  auto* verifyPanel = new QWidget(this);
  auto* verifyLayout = new QVBoxLayout(verifyPanel);
  auto* runButton = new QPushButton(tr("Run eager vs traced"), verifyPanel);
  verifyTable_->setColumnCount(7);
  verifyTable_->setHorizontalHeaderLabels(
      {tr("key"), tr("shape"), tr("dtype"), tr("max |\u0394|"), tr("max rel \u0394"), tr("bitwise"), tr("result")});
  verifyTable_->horizontalHeader()->setStretchLastSection(true);
  verifyTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  verifyLayout->addWidget(runButton);
  verifyLayout->addWidget(verifyTable_);
  verifyLayout->addWidget(verifySummary_);
  auto* verifyDock = new QDockWidget(tr("Verify"), this);
  verifyDock->setObjectName(QStringLiteral("verify"));
  verifyDock->setWidget(verifyPanel);
  addDockWidget(Qt::BottomDockWidgetArea, verifyDock);
  connect(runButton, &QPushButton::clicked, this, &MainWindow::runVerify);
  connect(&verifier_, &QFutureWatcher<VerifyOutcome>::finished, this, &MainWindow::onVerified);
  statusBar()->addWidget(status_, 1);
  search_->setPlaceholderText(tr("Find node, target, module type or key (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  QToolBar* toolbar = addToolBar(tr("Search"));
  toolbar->setObjectName(QStringLiteral("search"));
  toolbar->addWidget(search_);
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    if (findNext(search_->text()).isEmpty()) status_->setText(tr("No match for \"%1\"").arg(search_->text()));
  });
  auto* find = new QAction(this);
  find->setShortcut(QKeySequence::Find);
  connect(find, &QAction::triggered, search_, [this] {
    search_->setFocus();
    search_->selectAll();
  });
  addAction(find);
  buildMenus();
  connect(scene_, &GraphScene::nodeActivated, this, &MainWindow::expandScope);
  connect(scene_, &GraphScene::nodeSelected, this, &MainWindow::showNode);
  connect(code_, &QPlainTextEdit::cursorPositionChanged, this, &MainWindow::onCodeCursorMoved);
  connect(&loader_, &QFutureWatcher<LoadOutcome>::finished, this, &MainWindow::onLoaded);
  resize(1400, 900);
}

MainWindow::~MainWindow() {
  loader_.waitForFinished();
  verifier_.waitForFinished();
}

void MainWindow::runVerify() {
  if (!session_ || verifier_.isRunning()) return;
  verifySummary_->setText(tr("Running both passes..."));
  const std::shared_ptr<ModelSession> session = session_;  // kept alive by the worker
  verifier_.setFuture(QtConcurrent::run([session]() -> VerifyOutcome {
    try {
      const TensorDict inputs = verificationInputs(session->model, {}, 0);
      return {std::make_shared<VerifyReport>(verify(*session->model.module, *session->graphModule, inputs)), {}};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromStdString(e.what())};
    }
  }));
}

void MainWindow::onVerified() {
  VerifyOutcome outcome = verifier_.result();
  if (!outcome.report) {
    verifySummary_->setText(outcome.error);
    Q_EMIT verified(false);
    return;
  }
  report_ = outcome.report;
  verifyTable_->setRowCount(static_cast<int>(report_->keys.size()));
  for (int row = 0; row < static_cast<int>(report_->keys.size()); ++row) {
    const KeyComparison& k = report_->keys[row];
    std::string shape = "[";
    for (size_t i = 0; i < k.eagerShape.size(); ++i) shape += (i ? ", " : "") + std::to_string(k.eagerShape[i]);
    shape += "]";
    const QStringList cells{QString::fromStdString(keyToString(k.key)), QString::fromStdString(shape),
                            QString::fromStdString(k.eagerDtype), QString::number(k.maxAbsDiff, 'g', 4),
                            QString::number(k.maxRelDiff, 'g', 4), k.bitwiseEqual ? QStringLiteral("\u2713") : QStringLiteral("\u2717"),
                            k.matches ? tr("equal") : tr("DIFFERS %1").arg(QString::fromStdString(k.problem))};
    for (int c = 0; c < cells.size(); ++c) verifyTable_->setItem(row, c, new QTableWidgetItem(cells[c]));
  }
  QString summary = tr("%1: eager %2 ms, traced %3 ms")
                        .arg(report_->passed() ? tr("traced outputs equal eager outputs") : tr("outputs differ"))
                        .arg(report_->eagerSeconds * 1e3, 0, 'f', 2)
                        .arg(report_->tracedSeconds * 1e3, 0, 'f', 2);
  if (report_->divergence) {
    summary += tr("; first differing node: %1").arg(QString::fromStdString(report_->divergence->node));
    selectNode(QString::fromStdString(report_->divergence->node));
  }
  verifySummary_->setText(summary);
  Q_EMIT verified(report_->passed());
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), {}, tr("TorchScript archives (*.pt *.pth *.zip);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
  });
  file->addAction(tr("&Export picture..."), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export picture"), {}, tr("SVG (*.svg);;PNG (*.png);;PDF (*.pdf);;DOT (*.dot)"));
    if (!path.isEmpty()) exportTo(path);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
  viewMenu->addAction(tr("&Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), view_, &GraphView::fitAll);
  viewMenu->addAction(tr("Zoom &in"), QKeySequence::ZoomIn, view_, [this] { view_->zoomBy(1.25); });
  viewMenu->addAction(tr("Zoom &out"), QKeySequence::ZoomOut, view_, [this] { view_->zoomBy(0.8); });
  viewMenu->addSeparator();
  auto* styles = new QActionGroup(this);
  QAction* tdfxStyle = viewMenu->addAction(tr("tdfx style"), this, [this] { setStyle(ViewStyle::Tdfx); });
  QAction* fxStyle = viewMenu->addAction(tr("FX style (FxGraphDrawer)"), this, [this] { setStyle(ViewStyle::Fx); });
  for (QAction* a : {tdfxStyle, fxStyle}) {
    a->setCheckable(true);
    styles->addAction(a);
  }
  tdfxStyle->setChecked(true);
  QAction* lr = viewMenu->addAction(tr("Left to right"), this, [this](bool on) {
    options_.rankdir = on ? "LR" : "TB";
    relayoutCurrent();
  });
  lr->setCheckable(true);
  QAction* all = viewMenu->addAction(tr("Expand all"), this, [this](bool on) {
    options_.hierarchy.expandAll = on;
    relayoutCurrent();
  });
  all->setCheckable(true);
  viewMenu->addAction(tr("Collapse to depth..."), this, [this] {
    bool ok = false;
    const int depth = QInputDialog::getInt(this, tr("Collapse to depth"), tr("Show module scopes down to depth:"),
                                           session_ ? session_->view.depth : 1, 0, 100, 1, &ok);
    if (ok) setDepth(depth);
  });
}

void MainWindow::openFile(const QString& path) {
  if (loader_.isRunning()) loader_.waitForFinished();
  pendingPath_ = path;
  status_->setText(tr("Loading %1 ...").arg(path));
  const std::string file = path.toStdString();
  const ViewOptions options = options_;
  loader_.setFuture(QtConcurrent::run([file, options]() -> LoadOutcome {
    try {
      return {openSession(file, options, fontMeasure()), {}};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromStdString(e.what())};
    }
  }));
}

void MainWindow::onLoaded() {
  LoadOutcome outcome = loader_.result();
  if (!outcome.session) {
    showError(outcome.error);
    return;
  }
  session_ = std::move(outcome.session);
  lastError_.clear();
  scene_->showGraph(session_->view, session_->layout);
  {
    syncingCode_ = true;
    code_->setPlainText(QString::fromStdString(session_->graphModule->code().text));
    syncingCode_ = false;
  }
  inspector_->clear();
  setWindowTitle(QStringLiteral("%1 - tdfx").arg(QFileInfo(pendingPath_).fileName()));
  status_->setText(tr("%1 nodes, %2 edges; load %3 ms, trace %4 ms, layout %5 ms")
                       .arg(scene_->nodeCount())
                       .arg(scene_->edgeCount())
                       .arg(session_->loadSeconds * 1e3, 0, 'f', 0)
                       .arg(session_->traceSeconds * 1e3, 0, 'f', 1)
                       .arg(session_->layoutSeconds * 1e3, 0, 'f', 0));
  view_->fitAll();
  Q_EMIT modelLoaded();
}

void MainWindow::showError(const QString& message) {
  lastError_ = message;
  status_->setText(message);
  if (interactive_) QMessageBox::critical(this, tr("tdfx"), message);
  Q_EMIT loadFailed(message);
}

void MainWindow::relayoutCurrent() {
  if (!session_) return;
  try {
    relayout(*session_, options_, fontMeasure());
  } catch (const std::exception& e) {
    showError(QString::fromStdString(e.what()));
    return;
  }
  scene_->showGraph(session_->view, session_->layout);
  view_->fitAll();
}

void MainWindow::setDepth(int depth) {
  options_.hierarchy.expandAll = false;
  options_.hierarchy.depth = depth;
  options_.hierarchy.expanded.clear();
  options_.hierarchy.collapsed.clear();
  relayoutCurrent();
}

void MainWindow::setStyle(ViewStyle style) {
  options_.style = style;
  relayoutCurrent();
}

bool MainWindow::exportTo(const QString& path) {
  if (!session_) return false;
  try {
    exportView(session_->view, path.toStdString());
  } catch (const std::exception& e) {
    showError(QString::fromStdString(e.what()));
    return false;
  }
  status_->setText(tr("Wrote %1").arg(path));
  return true;
}

void MainWindow::selectNode(const QString& id) { scene_->selectNode(id); }

QString MainWindow::findNext(const QString& text) {
  if (!session_ || text.isEmpty()) return {};
  const auto& nodes = session_->view.nodes;
  const QString current = scene_->selectedNode();
  size_t start = 0;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (QString::fromStdString(nodes[i].id) == current) start = i + 1;
  const auto matches = [&](const ViewNode& n) {
    QStringList fields{QString::fromStdString(n.id), QString::fromStdString(n.recordLabel)};
    for (const auto& l : n.lines) fields << QString::fromStdString(l);
    for (const auto& ir : n.irNodes) {
      fields << QString::fromStdString(ir);
      if (const Node* node = session_->graphModule->graph().findNode(ir)) {
        fields << QString::fromStdString(node->target()) << QString::fromStdString(node->meta().moduleType)
               << opKindName(node->op());
        if (node->meta().tensordictKey) fields << QString::fromStdString(keyToString(*node->meta().tensordictKey));
      }
    }
    for (const QString& f : fields)
      if (f.contains(text, Qt::CaseInsensitive)) return true;
    return false;
  };
  for (size_t k = 0; k < nodes.size(); ++k) {
    const ViewNode& n = nodes[(start + k) % nodes.size()];
    if (!matches(n)) continue;
    const QString id = QString::fromStdString(n.id);
    scene_->selectNode(id);
    if (QGraphicsItem* item = scene_->nodeItem(id)) view_->centerOn(item);
    return id;
  }
  return {};
}

void MainWindow::expandScope(const QString& nodeId) {
  if (!session_) return;
  const ViewNode* v = session_->view.findNode(nodeId.toStdString());
  if (!v || v->kind != ViewNode::Kind::Collapsed) return;
  options_.hierarchy.depth = session_->view.depth;  // keep the rest as it is
  options_.hierarchy.collapsed.erase(v->scope);
  options_.hierarchy.expanded.insert(v->scope);
  relayoutCurrent();
}

void MainWindow::showNode(const QString& id) {
  if (!session_ || id.isEmpty()) return;
  const Graph& g = session_->graphModule->graph();
  const Node* node = g.findNode(id.toStdString());
  if (!node) {
    const ViewNode* v = session_->view.findNode(id.toStdString());
    inspector_->setPlainText(v ? QString::fromStdString((v->scope.empty() ? v->id : "scope " + v->scope) + "\n" +
                                                        std::to_string(v->irNodes.size()) + " node(s)")
                               : id);
    return;
  }
  inspector_->setPlainText(QString::fromStdString(describeNode(*node, session_->graphModule->code())));
  // Scroll the code to the node's statement and highlight it.
  const auto& lines = session_->graphModule->code().nodeLines;
  auto it = lines.find(node->name());
  if (it == lines.end()) return;
  QTextBlock block = code_->document()->findBlockByNumber(it->second - 1);
  syncingCode_ = true;
  QTextCursor cursor(block);
  code_->setTextCursor(cursor);
  syncingCode_ = false;
  QTextEdit::ExtraSelection line;
  line.format.setBackground(QColor("#FFF3C4"));
  line.format.setProperty(QTextFormat::FullWidthSelection, true);
  line.cursor = cursor;
  code_->setExtraSelections({line});
  code_->centerCursor();
}

void MainWindow::onCodeCursorMoved() {
  if (syncingCode_ || !session_) return;
  const int line = code_->textCursor().blockNumber() + 1;
  for (const auto& [name, l] : session_->graphModule->code().nodeLines)
    if (l == line && scene_->nodeItem(QString::fromStdString(name))) {
      scene_->selectNode(QString::fromStdString(name));
      view_->centerOn(scene_->nodeItem(QString::fromStdString(name)));
      return;
    }
}

}  // namespace tdfx::ui
