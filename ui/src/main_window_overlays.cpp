// MainWindow's runs and overlays: a verify run's result, differing nodes, time colouring and its
// legend, shapes and input checks, and the picture as shown (what File > Export writes).
#include <QAction>
#include <QLabel>
#include <QSignalBlocker>
#include <algorithm>
#include <set>

#include "tdfx/runtime/graph_module.h"
#include "tdfx/ui/compare_window.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/keys_panel.h"
#include <QDockWidget>

#include "dock_share.h"
#include "tdfx/ui/main_window.h"
#include "status_line.h"
#include "view_toggles.h"
#include "tdfx/ui/search_controller.h"
#include "tdfx/ui/verify_panel.h"

namespace tdfx::ui {

void MainWindow::resetRunOverlays() {
  options_.shapes = false;
  toggles_->reflect(options_);
  toggles_->time->setChecked(false);
}

QSet<QString> MainWindow::viewIdsUsingKeys(const std::vector<NestedKey>& keys) const {
  std::vector<std::string> ir;
  QSet<QString> ids;
  for (const NestedKey& k : keys) {
    for (const std::string& n : nodesUsingKey(session_->traced.traced, k)) ir.push_back(n);
    ids.insert(QString::fromStdString("out:" + keyToString(k)));  // the out-key node, where drawn
  }
  return ids.unite(viewIdsOf(ir));
}

void MainWindow::applyOverlays() {
  if (!session_) return;
  // Red: the first differing node, and the nodes computing every out key that differs.
  QSet<QString> differs;
  if (const VerifyReport* report = lastReport(); report && !report->passed()) {
    std::vector<NestedKey> differingKeys;
    for (const KeyComparison& k : report->keys)
      if (!k.matches) differingKeys.push_back(k.key);
    differs = viewIdsUsingKeys(differingKeys);
    if (report->divergence) differs.unite(viewIdsOf({report->divergence->node}));
  }
  {
    const QSignalBlocker oneLegend(scene_);  // three marks, one legend (it copies the view once)
    scene_->setMarked(differs, GraphScene::Differs);
    scene_->setHeat(timeFractions());
    // The compared changes F3 walks are marked as compare marks them, not as search matches.
    const QStringList searched = search_->searchMarks();
    scene_->setMarked(QSet<QString>(searched.begin(), searched.end()), GraphScene::SearchMatch);
    scene_->setMarked(keyUseNodes(keys_->selectedKeys()), GraphScene::KeyUse);
    scene_->setMarked(viewIdsOf(diffMarks_.removed), GraphScene::DiffRemoved);
    scene_->setMarked(viewIdsOf(diffMarks_.added), GraphScene::DiffAdded);
    scene_->setMarked(viewIdsOf(diffMarks_.changed), GraphScene::DiffChanged);
    scene_->setMarked(viewIdsOf(diffMarks_.weights), GraphScene::DiffWeights);
  }
  refreshLegend();
}

void MainWindow::refreshLegend() {
  QList<QPair<QString, QColor>> legend;
  if (session_) {
    // Only the kinds the picture has (resnet18 has no methods or attributes); the time scale whole.
    const ViewGraph shown = shownView();
    const bool timeScale = !timeFractions().isEmpty();  // shownView then holds the time scale
    std::set<std::string> drawn;
    for (const ViewNode& n : shown.nodes) drawn.insert(n.fillColor);
    for (const auto& [label, colour] : shown.legend)
      if (timeScale || drawn.count(colour))
        legend.append({QString::fromStdString(label), QColor(QString::fromStdString(colorToHex(colour)))});
  }
  // The marks drawn now, each named once; they are the window's own, so exports leave them out.
  static const std::pair<GraphScene::Mark, const char*> marks[] = {
      {GraphScene::Differs, QT_TR_NOOP("red outline: differs from eager")},
      {GraphScene::KeyUse, QT_TR_NOOP("violet outline: uses the selected key")},
      {GraphScene::SearchMatch, QT_TR_NOOP("yellow halo: search match")}};
  for (const auto& [mark, label] : marks)
    if (!scene_->markedNodes(mark).isEmpty()) legend.append({tr(label), GraphScene::markColor(mark)});
  legend.append(compareLegend(*scene_));
  view_->setLegend(legend);
}

QHash<QString, double> MainWindow::timeFractions() const {
  QHash<QString, double> heat;
  if (!session_ || !toggles_->time->isChecked()) return heat;
  QHash<QString, double> seconds;
  double most = 0;
  if (!session_->run) return heat;
  for (const auto& node : session_->graph().nodes()) {
    const double s = session_->run->secondsOf(*node);
    if (s <= 0) continue;
    const std::string shown = session_->viewIdOf(node->name());
    if (shown.empty()) continue;
    const QString id = QString::fromStdString(shown);
    seconds[id] += s;
    most = std::max(most, seconds[id]);
  }
  for (auto it = seconds.cbegin(); it != seconds.cend(); ++it) heat[it.key()] = most > 0 ? it.value() / most : 0.0;
  return heat;
}

ViewGraph MainWindow::shownView() const {
  if (!session_) return {};
  ViewGraph view = session_->view;
  const QHash<QString, double> heat = timeFractions();
  if (heat.isEmpty()) return view;
  double slowest = 0;  // seconds of the slowest view node, for the legend
  for (const auto& node : session_->graph().nodes()) slowest = std::max(slowest, session_->run->secondsOf(*node));
  for (ViewNode& n : view.nodes)
    n.fillColor = GraphScene::heatColor(heat.value(QString::fromStdString(n.id), 0.0)).name().toStdString();
  // Time replaces the kind colours, so their legend gives way to the time scale.
  view.legend = {{"time: not measured or fastest", GraphScene::heatColor(0).name().toStdString()},
                 {"half the slowest", GraphScene::heatColor(0.5).name().toStdString()},
                 {QString(tr("slowest (%1 ms)")).arg(slowest * 1e3, 0, 'f', 3).toStdString(),
                  GraphScene::heatColor(1).name().toStdString()}};
  return view;
}

void MainWindow::setShapeArithmeticShown(bool on) {
  options_.shapeArithmetic = on;
  options_.shapesExpanded.clear();
  toggles_->reflect(options_);
  relayoutCurrent();
}

void MainWindow::setChecksShown(bool on) {
  options_.checks = on;
  toggles_->reflect(options_);
  relayoutCurrent();
}

void MainWindow::setShapesShown(bool on) {
  toggles_->shapes->setChecked(on);
  if (on && session_ && !session_->report) {  // shapes come from a run: make one, then show them
    options_.shapes = true;
    verify_->run();  // the Verify panel stays as it is (folded in a small window)
    return;
  }
  options_.shapes = on;
  relayoutCurrent();
}

void MainWindow::setTimeOverlay(bool on) {
  toggles_->time->setChecked(on);
  if (on && session_ && !session_->report) {
    verify_->run();
    return;
  }
  applyOverlays();
}

// ---- Verify -----------------------------------------------------------------------------------

void MainWindow::runVerify() {
  dockShare_->unfold();  // the results are shown in it, in front of the Changes tab
  if (auto* dock = findChild<QDockWidget*>(QStringLiteral("verify"))) dock->raise();
  verify_->run();
}

void MainWindow::onVerified(const VerifyRun& run) {
  if (!session_ || run.session != session_) return;  // a run of a model no longer open
  if (!run.report) {
    resetRunOverlays();  // nothing to show: the overlays asked for stay off
    Q_EMIT verified(false);
    return;
  }
  session_->report = run.report;
  const VerifyReport& report = *run.report;
  try {
    // Kept beside the graph, which layout jobs may be reading now: nothing waits for them.
    session_->run = runOverlay(run.records, session_->graph());
  } catch (const Error& e) {
    status_->setText(QString::fromStdString(e.what()));
  }
  showModelSummary();  // the shapes of this run, inputs (from the records) and outputs
  if (options_.shapes) {
    relayoutCurrent(report.divergence ? QString::fromStdString(report.divergence->node) : QString());
  } else {
    applyOverlays();
    if (report.divergence) selectAndCenter(shownAs(QString::fromStdString(report.divergence->node)));
  }
  Q_EMIT verified(report.passed());
}

}  // namespace tdfx::ui
