// MainWindow's navigation: history of selections (back/forward), the inspector's links, search with
// every match marked, the nodes that read or write the keys selected in the Keys panel, and the
// selected node in the inspector and the code.
#include <QGraphicsItem>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTextBrowser>
#include <QAction>
#include <QTextBlock>
#include <QUrl>
#include <QLineEdit>
#include <algorithm>

#include "node_description.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/keys_panel.h"
#include "tdfx/ui/main_window.h"
#include "status_line.h"
#include "tdfx/ui/code_panel.h"
#include "tdfx/ui/search_controller.h"
#include "tdfx/ui/selection_history.h"

namespace tdfx::ui {

void MainWindow::selectAndCenter(const QString& id) {
  scene_->selectNode(id);
  view_->showItem(scene_->nodeItem(id));  // centred, and zoomed in to where its label reads
}

QString MainWindow::shownAs(const QString& id) const {
  if (scene_->nodeItem(id)) return id;
  const QString shown = viewIdOf(id);
  return shown.isEmpty() ? id : shown;
}

void MainWindow::revisit(const QString& id) {
  {
    const SelectionHistory::Revisiting revisiting(*history_);  // a step through the history is not a new selection
    // After a collapse the node may be inside a collapsed scope: select that instead.
    selectAndCenter(shownAs(id));
  }
  showNode(scene_->selectedNode());  // the inspector and the code even when the picture already selected it
}

void MainWindow::goBack() { stepThroughHistory(true); }
void MainWindow::goForward() { stepThroughHistory(false); }

void MainWindow::stepThroughHistory(bool back) {
  if (const auto id = history_->step(back, [this](const QString& entry) { return scene_->nodeItem(shownAs(entry)) != nullptr; }))
    revisit(*id);
}

void MainWindow::openInspectorLink(const QString& href) { followInspectorLink(QUrl(href)); }

void MainWindow::followInspectorLink(const QUrl& url) {
  if (!session_) return;
  const QString target = url.toString(QUrl::FullyDecoded).section(':', 1);
  const QString kind = url.scheme();
  if (kind == QStringLiteral("node")) {
    selectAndCenter(shownAs(target));
  } else if (kind == QStringLiteral("code")) {
    showCodeLine(target.toInt());
  } else if (kind == QStringLiteral("scope")) {
    // Collapsed: its node. Expanded: its frame, fitted in the window (at most at 100 %).
    const QString collapsed = QStringLiteral("scope:") + target;
    if (scene_->nodeItem(collapsed)) return selectAndCenter(collapsed);
    for (const auto& c : session_->layout.clusters)
      if (c.id == "cluster_" + target.toStdString()) {
        const QRectF frame(c.x, c.y, c.width, c.height);
        view_->fitInView(frame.adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
        if (view_->transform().m11() > 1.0) {  // a small frame: at 100 %, not magnified
          view_->setTransform(QTransform());
          view_->centerOn(frame.center());
        }
        view_->sceneChanged();
        return;
      }
  }
}

void MainWindow::showCodeLine(int line) { code_->showLine(line); }
QPlainTextEdit* MainWindow::codeEditor() const { return code_->code(); }
QPlainTextEdit* MainWindow::graphText() const { return code_->graphText(); }

// ---- Search and keys ---------------------------------------------------------------------------

QString MainWindow::findNext(const QString& text) { return search_->find(text, +1); }
QString MainWindow::findPrevious(const QString& text) { return search_->find(text, -1); }
QStringList MainWindow::searchMatches() const { return search_->matches(); }
QLineEdit* MainWindow::searchField() const { return search_->field(); }
void MainWindow::setSearchRegex(bool on) { search_->setRegex(on); }
QString MainWindow::searchCountText() const { return search_->countText(); }

void MainWindow::markKeys(const std::vector<NestedKey>& keys) {
  const QSet<QString> ids = keyUseNodes(keys);
  scene_->setMarked(ids, GraphScene::KeyUse);
  if (!ids.isEmpty())
    if (QGraphicsItem* item = scene_->nodeItem(*ids.begin())) view_->ensureVisible(item);
  if (!keys.empty()) status_->setText(tr("%1 node(s) read or write the selected key(s)").arg(ids.size()));
}

QSet<QString> MainWindow::keyUseNodes(const std::vector<NestedKey>& keys) const {
  QSet<QString> ids;
  if (!session_) return ids;
  for (const QString& id : viewIdsUsingKeys(keys))
    if (scene_->nodeItem(id)) ids.insert(id);  // out-key nodes exist only in the tdfx style
  return ids;
}

// ---- Selection, inspector, code ---------------------------------------------------------------

void MainWindow::selectNode(const QString& id) { scene_->selectNode(id); }

void MainWindow::showNode(const QString& id) {
  // A selection the user makes is a step in the history. One the window makes (a step back, the
  // same node drawn inside a collapsed module after a relayout) is not, and keeps the node the
  // user chose, so expanding the module again shows that node, not the module.
  history_->selected(id, [this](const QString& entry) { return shownAs(entry); });
  if (!session_) return;
  if (id.isEmpty()) {
    // The user cleared it (not the picture redrawn): the inspector and the code show no node.
    if (!history_->revisiting()) clearInspector();
    return;
  }
  inspectViewNode(inspector_, *session_, id);
  const Node* node = session_->graph().findNode(id.toStdString());
  if (!node) {
    // A collapsed module stands for its statements: those are highlighted, not one inside it.
    const ViewNode* v = session_->view.findNode(id.toStdString());
    code_->highlight(v ? v->irNodes : std::vector<std::string>{});
    return;
  }
  code_->highlight({node->name()});
}

void MainWindow::showCodeStart() {
  // A reload keeps the selected node: its line stays highlighted and in view.
  if (const QString id = scene_->selectedNode(); !id.isEmpty()) {
    const ViewNode* v = session_->view.findNode(id.toStdString());
    if (session_->graph().findNode(id.toStdString())) return code_->highlight({id.toStdString()});
    if (v) return code_->highlight(v->irNodes);
  }
  code_->showStart();  // else the listing from `def forward`
}

void MainWindow::clearInspector() {
  inspector_->clear();
  code_->highlight({});
}

void MainWindow::showSelectionAfterRelayout() {
  if (!scene_->selectedNode().isEmpty() || history_->current().isEmpty()) return;
  // What the inspector showed is not drawn under its id any more: inside a collapsed module now
  // (select that), or a node of the other style (an FX-style parameter node): nothing to show.
  const QString shown = shownAs(history_->current());
  if (!scene_->nodeItem(shown)) return clearInspector();
  const SelectionHistory::Revisiting redrawn(*history_);  // the same selection, drawn differently: not a step
  scene_->selectNode(shown);
}

void MainWindow::onCodeNodeChosen(const QString& name) {
  const QString id = viewIdOf(name);  // collapsed: its scope node
  if (session_ && scene_->nodeItem(id)) selectAndCenter(id);
}

}  // namespace tdfx::ui
