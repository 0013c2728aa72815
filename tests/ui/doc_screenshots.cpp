// tdfx_doc_screenshots OUT_DIR FIXTURES_DIR ZOO_DIR: drives the real main window offscreen into the
// states the user guide shows and saves each window as a PNG (docs/images/make_screenshots.sh).
#include <QApplication>
#include <QDir>
#include <QPlainTextEdit>
#include <QGraphicsItem>
#include <QHelpEvent>
#include <QPainter>
#include <cstdio>

#include "tdfx/ui/compare_window.h"
#include "tdfx/ui/difference_list.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include <QListWidget>
#include "tdfx/ui/keys_panel.h"
#include "tdfx/ui/main_window.h"
#include "tdfx/ui/verify_panel.h"
#include <QTableWidget>
#include "tdfx/worker/model_worker.h"
#include "ui/window_driver.h"

using tdfx::ui::MainWindow;

namespace {

bool save(MainWindow& w, const QString& path) {
  QTest::qWait(200);
  const bool ok = w.grab().save(path);
  std::printf("%s %s\n", ok ? "wrote" : "FAILED", qPrintable(path));
  return ok;
}

// The compare window of `a` against `b` as it opens (on the first difference), saved to `path`.
bool compareShot(const std::string& a, const std::string& b, const QString& path) {
  MainWindow w(false);
  if (!tdfx::ui::openAndWait(w, a)) return false;
  QSignalSpy done(&w, &MainWindow::compared);
  w.compareWith(QString::fromStdString(b));
  for (int i = 0; i < 1200 && done.isEmpty(); ++i) QTest::qWait(50);
  tdfx::ui::CompareWindow* c = w.compareWindow();
  if (!c) return false;
  c->resize(1500, 920);
  c->show();
  QTest::qWait(300);
  const bool saved = c->grab().save(path);
  std::printf("%s %s\n", saved ? "wrote" : "FAILED", qPrintable(path));
  return saved;
}

}  // namespace

int main(int argc, char** argv) {
  tdfx::startWorkerZygote();  // first, while the process has one thread
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: tdfx_doc_screenshots OUT_DIR FIXTURES_DIR ZOO_DIR\n");
    return 64;
  }
  const QDir out(QString::fromLocal8Bit(argv[1]));
  const std::string fixtures = argv[2], zoo = argv[3];
  bool ok = true;
  {  // The seed example after a verify run, a node selected: graph, code, inspector, keys, verify.
    MainWindow w(false);
    w.resize(1500, 920);
    w.show();
    ok &= tdfx::ui::openAndWait(w, fixtures + "/seed_sequential.pt");
    ok &= tdfx::ui::verifyAndWait(w);
    tdfx::ui::relayoutAndWait(w, [&] { w.setShapesShown(true); });
    w.selectNode(QStringLiteral("_0_fc2"));
    ok &= save(w, out.filePath(QStringLiteral("gui-verify.png")));
  }
  {  // The seed example in FxGraphDrawer's style: record labels as the fx export draws them.
    MainWindow w(false);
    w.resize(1500, 920);
    w.show();
    ok &= tdfx::ui::openAndWait(w, fixtures + "/seed_sequential.pt");
    ok &= tdfx::ui::relayoutAndWait(w, [&] { w.setStyle(tdfx::ViewStyle::Fx); });
    w.selectNode(QStringLiteral("_0_fc1"));
    ok &= save(w, out.filePath(QStringLiteral("gui-fx-style.png")));
  }
  {  // resnet18: search marks every match; the Keys panel; the overview in the corner.
    MainWindow w(false);
    w.resize(1500, 920);
    w.show();
    ok &= tdfx::ui::openAndWait(w, zoo + "/resnet18.pt");
    tdfx::ui::relayoutAndWait(w, [&] { w.setExpandAll(true); });
    w.findNext(QStringLiteral("relu"));
    w.view()->zoomBy(0.55);  // several matches in sight
    w.findNext(QStringLiteral("relu"));
    ok &= save(w, out.filePath(QStringLiteral("gui-search.png")));
  }
  {  // A wrong input shape on vit_b_16: the cause on one line, the traceback behind Details.
    MainWindow w(false);
    w.resize(1500, 920);
    w.show();
    ok &= tdfx::ui::openAndWait(w, zoo + "/vit_b_16.pt");
    w.verifyPanel()->inputTable()->item(0, 1)->setText(QStringLiteral("1x3x200x200"));
    tdfx::ui::verifyAndWait(w);  // fails by design
    ok &= save(w, out.filePath(QStringLiteral("gui-verify-error.png")));
  }
  {  // resnet50 coloured by time after a run, with the legend.
    MainWindow w(false);
    w.resize(1500, 920);
    w.show();
    ok &= tdfx::ui::openAndWait(w, zoo + "/resnet50.pt");
    w.verifyPanel()->inputTable()->item(0, 1)->setText(QStringLiteral("1x3x224x224"));
    ok &= tdfx::ui::verifyAndWait(w);
    w.setTimeOverlay(true);
    ok &= save(w, out.filePath(QStringLiteral("gui-time.png")));
  }
  {  // resnet18 coloured by time at 100 %: the main view and the overview in the same colours (issue 57, A).
    MainWindow w(false);
    w.resize(1500, 920);
    w.show();
    ok &= tdfx::ui::openAndWait(w, zoo + "/resnet18.pt");
    ok &= tdfx::ui::verifyAndWait(w);
    w.view()->setZoom(1.0);
    w.setTimeOverlay(true);
    ok &= save(w, out.filePath(QStringLiteral("gui-time-overview.png")));
  }
  {  // A model whose traced graph differs from eager: differing nodes in red; the dark theme.
    MainWindow w(false);
    w.resize(1500, 920);
    w.show();
    w.setTheme(MainWindow::Theme::Dark);
    ok &= tdfx::ui::openAndWait(w, fixtures + "/updates_buffer_once.pt");
    tdfx::ui::verifyAndWait(w);  // fails by design
    ok &= save(w, out.filePath(QStringLiteral("gui-differs-dark.png")));
    w.setTheme(MainWindow::Theme::System);
  }
  {  // A small window (710x444) on resnet18: the graph keeps half of it, the code starts at def.
    MainWindow w(false);
    w.resize(710, 444);
    w.show();
    ok &= tdfx::ui::openAndWait(w, zoo + "/resnet18.pt");
    QTest::qWait(100);
    ok &= save(w, out.filePath(QStringLiteral("gui-small-window.png")));
  }
  {  // resnet18 after a run, a node hovered: its card (op, shapes in and out, parameters, source).
    MainWindow w(false);
    w.resize(1300, 800);
    w.show();
    ok &= tdfx::ui::openAndWait(w, zoo + "/resnet18.pt");
    ok &= tdfx::ui::verifyAndWait(w);
    QGraphicsItem* item = w.scene()->nodeItem(QStringLiteral("layer1_0_conv2"));
    ok &= item != nullptr;
    if (item) {
      w.view()->setZoom(1.0);
      w.view()->centerOn(item);
      QTest::qWait(100);
      const QPoint at = w.view()->mapFromScene(item->sceneBoundingRect().center());
      QHelpEvent event(QEvent::ToolTip, at, w.view()->viewport()->mapToGlobal(at));
      QApplication::sendEvent(w.view()->viewport(), &event);
      QTest::qWait(300);
      // The card is a window of its own: drawn onto the window's picture where it stands.
      QPixmap shot = w.grab();
      for (QWidget* top : QApplication::topLevelWidgets())
        if (top->inherits("QTipLabel") && top->isVisible()) {
          QPainter painter(&shot);
          painter.drawPixmap(top->geometry().topLeft() - w.geometry().topLeft(), top->grab());
        }
      const QString path = out.filePath(QStringLiteral("gui-hover-card.png"));
      const bool saved = shot.save(path);
      std::printf("%s %s\n", saved ? "wrote" : "FAILED", qPrintable(path));
      ok &= saved;
    }
  }
  // resnet18 against a fine-tuned copy: it opens on the first difference, filled and badged. Then
  // against resnet34 holding its weights (tests/app/make_diff_models.py): the first added block.
  ok &= compareShot(zoo + "/diff/resnet18.pt", zoo + "/diff/resnet18_finetuned.pt", out.filePath(QStringLiteral("gui-compare-tuned.png")));
  ok &= compareShot(zoo + "/diff/resnet18.pt", zoo + "/diff/resnet34_grown.pt", out.filePath(QStringLiteral("gui-compare.png")));
  return ok ? 0 : 1;
}
