// The habits a Netron or Model Explorer user brings: Esc leaves the search for the graph, Ctrl+C
// copies the selected node's name and Ctrl+Shift+C its line of code, Z zooms to the selection, the
// wheel scrolls (Ctrl+wheel zooms; View > Wheel zooms keeps the old way).
#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QSettings>
#include <QShortcut>
#include <QTextBlock>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "status_line.h"
#include "tdfx/ui/code_panel.h"
#include "tdfx/ui/search_controller.h"

namespace tdfx::ui {

void MainWindow::buildHabits(QMenu* viewMenu, QMenu* go) {
  // Esc in the search field or the graph: the search is cleared and the graph has the keys.
  const auto leaveSearch = [this] {
    search_->clear();
    view_->setFocus();
  };
  auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), search_->field(), leaveSearch, Qt::WidgetShortcut);
  escape->setObjectName(QStringLiteral("leaveSearch"));
  connect(view_, &GraphView::escapePressed, this, leaveSearch);

  QAction* zoom = viewMenu->addAction(tr("&Zoom to selection"), QKeySequence(Qt::Key_Z), view_, &GraphView::zoomToSelection);
  zoom->setToolTip(tr("The selected node large in the middle of the view"));
  QAction* wheel = viewMenu->addAction(tr("&Wheel zooms"), this, [this](bool on) {
    view_->setWheelZooms(on);
    if (interactive_) QSettings().setValue(QStringLiteral("wheelZooms"), on);
  });
  wheel->setCheckable(true);
  wheel->setToolTip(tr("Off: the wheel scrolls and Ctrl+wheel zooms"));
  if (interactive_) view_->setWheelZooms(QSettings().value(QStringLiteral("wheelZooms"), false).toBool());
  wheel->setChecked(view_->wheelZooms());

  // Only while the graph has the focus: elsewhere Ctrl+C copies the text selected there.
  go->addSeparator();
  QAction* copyName = go->addAction(tr("&Copy node name"), this, [this] { copySelected(false); });
  QAction* copyLine = go->addAction(tr("Copy node's code &line"), this, [this] { copySelected(true); });
  copyName->setShortcut(QKeySequence::Copy);
  copyLine->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  for (QAction* a : {copyName, copyLine}) {
    a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    view_->addAction(a);
  }
}

QString MainWindow::copySelected(bool codeLine) {
  const QString id = scene_->selectedNode();
  if (!session_ || id.isEmpty()) return {};
  QString text = id;
  if (codeLine) {
    text = code_->lineOf(id.toStdString());
    if (text.isEmpty()) return {};  // a collapsed module or a key: no one line
  }
  QGuiApplication::clipboard()->setText(text);
  status_->setText(tr("Copied %1").arg(text.left(200)));
  return text;
}

}  // namespace tdfx::ui
