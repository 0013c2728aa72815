// The real main window, driven offscreen: open, select, code <-> graph, export, bad files.
#include <csignal>

#include <QApplication>
#include <QScreen>
#include <QCheckBox>
#include <QFile>
#include <QPlainTextEdit>
#include <QTextBrowser>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTest>
#include <gtest/gtest.h>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/main_window.h"
#include "tdfx/ui/spare_worker.h"
#include "tdfx/ui/verify_panel.h"
#include "test_support.h"
#include "ui/window_driver.h"

namespace tdfx::ui {
namespace {

using tdfx::testing::fixture;

TEST(MainWindow, OpensSelectsAndLinksCodeToGraph) {
  MainWindow w(/*interactive=*/false);
  w.show();
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt"))) << w.lastError().toStdString();
  const ModelSession* s = w.session();
  ASSERT_NE(s, nullptr);
  // One item per visible node and edge of the view.
  EXPECT_EQ(w.scene()->nodeCount(), static_cast<int>(s->view.nodes.size()));
  EXPECT_EQ(w.scene()->edgeCount(), static_cast<int>(s->layout.edges.size()));
  EXPECT_NE(w.codeEditor()->toPlainText().toStdString().find("softmax = torch.softmax(mul, dim = 1)"), std::string::npos);

  // Selecting a node fills the inspector and puts the code cursor on its line.
  w.selectNode(QStringLiteral("softmax"));
  const std::string inspector = w.inspector()->toPlainText().toStdString();
  EXPECT_NE(inspector.find("target: torch.softmax"), std::string::npos) << inspector;
  EXPECT_NE(inspector.find("source: "), std::string::npos) << inspector;
  EXPECT_EQ(w.codeEditor()->textCursor().blockNumber() + 1, s->code().nodeLines.at("softmax"));

  // Clicking a code line selects its node.
  const int reluLine = s->code().nodeLines.at("relu");
  QTextCursor cursor(w.codeEditor()->document()->findBlockByNumber(reluLine - 1));
  w.codeEditor()->setTextCursor(cursor);
  EXPECT_EQ(w.scene()->selectedNode().toStdString(), "relu");
}

TEST(MainWindow, ExportsAndKeepsTheModelOnABadFile) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("seed_module.pt")));
  QTemporaryDir dir;
  const QString svg = dir.filePath(QStringLiteral("shown.svg"));
  EXPECT_TRUE(exportAndWait(w, [&] { return w.exportTo(svg); }));
  EXPECT_EQ(std::system(("xmllint --noout " + svg.toStdString()).c_str()), 0);
  EXPECT_FALSE(exportAndWait(w, [&] { return w.exportTo(dir.filePath(QStringLiteral("missing/x.svg"))); }));
  EXPECT_NE(w.lastError().toStdString().find("cannot write in"), std::string::npos);

  const int nodes = w.scene()->nodeCount();
  const QString bad = dir.filePath(QStringLiteral("bad.pt"));
  ASSERT_TRUE(writeFile(bad, "not a model"));
  EXPECT_FALSE(openAndWait(w, bad.toStdString()));
  EXPECT_NE(w.lastError().toStdString().find("not a TorchScript archive"), std::string::npos);
  EXPECT_EQ(w.scene()->nodeCount(), nodes);  // the open model is still shown
  ASSERT_NE(w.session(), nullptr);
}

TEST(MainWindow, AStoppedSpareWorkerIsReplacedNotWaitedFor) {
  // Issue 35, finding 8: a spare stopped with SIGSTOP held the next open for the whole open
  // timeout (121 s on "Reloading..."). The open now starts a worker of its own at once.
  MainWindow w(/*interactive=*/false);
  SpareWorker* spare = w.spareWorker();
  spare->setEnabled(true);
  QSignalSpy readied(spare, &SpareWorker::readied);
  spare->refill(WorkerLimits{}, 0);
  ASSERT_TRUE(readied.wait(30000));
  const pid_t stopped = spare->sparePid();
  ASSERT_GT(stopped, 0);
  ASSERT_EQ(::kill(stopped, SIGSTOP), 0);
  // The signal takes effect when the process next runs: wait until the kernel reports it stopped.
  const auto state = [stopped] {
    QFile stat(QStringLiteral("/proc/%1/stat").arg(stopped));
    const QByteArray text = stat.open(QIODevice::ReadOnly) ? stat.readAll() : QByteArray();
    const auto close = text.lastIndexOf(')');
    return close >= 0 && close + 2 < text.size() ? text.at(close + 2) : '?';
  };
  for (int i = 0; i < 250 && state() != 'T'; ++i) QTest::qWait(20);
  ASSERT_EQ(state(), 'T');
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  EXPECT_NE(w.session()->worker->pid(), stopped);
  EXPECT_TRUE(testing::processEnds(stopped)) << "the stopped spare is ended, not left behind";
}

TEST(MainWindow, AnOpenUsesTheSpareWorkerWarmedWhileTheWindowWasIdle) {
  MainWindow w(/*interactive=*/false);
  SpareWorker* spare = w.spareWorker();
  ASSERT_NE(spare, nullptr);
  EXPECT_FALSE(spare->enabled()) << "off in tests unless asked for";
  spare->setEnabled(true);
  QSignalSpy readied(spare, &SpareWorker::readied);
  spare->refill(WorkerLimits{}, 0);
  ASSERT_TRUE(readied.wait(30000));
  ASSERT_TRUE(spare->ready());
  const pid_t warmed = spare->sparePid(), warmedLayout = spare->spareLayoutPid();
  ASSERT_GT(warmed, 0);
  ASSERT_GT(warmedLayout, 0);
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  EXPECT_EQ(w.session()->worker->pid(), warmed) << "the open was served by the spare";
  // The spare layout process laid the open's picture out, and ended with that load.
  EXPECT_TRUE(testing::processEnds(warmedLayout)) << "the spare layout process was not used";
  EXPECT_TRUE(verifyAndWait(w));
  // Idle again: other spares are warmed for the next open, processes of their own.
  ASSERT_TRUE(readied.wait(30000));
  EXPECT_TRUE(spare->ready());
  EXPECT_NE(spare->sparePid(), warmed);
  EXPECT_GT(spare->spareLayoutPid(), 0);
  EXPECT_NE(spare->spareLayoutPid(), warmedLayout);
  const pid_t next = spare->sparePid();
  ASSERT_TRUE(openAndWait(w, fixture("plain.pt")));
  EXPECT_EQ(w.session()->worker->pid(), next);
  // Turned off, the spare is stopped and opens start their own worker.
  QSignalSpy again(spare, &SpareWorker::readied);
  ASSERT_TRUE(again.wait(30000));
  const pid_t dropped = spare->sparePid(), droppedLayout = spare->spareLayoutPid();
  spare->setEnabled(false);
  EXPECT_FALSE(spare->ready());
  EXPECT_TRUE(testing::processEnds(dropped));
  EXPECT_TRUE(testing::processEnds(droppedLayout));
  ASSERT_TRUE(openAndWait(w, fixture("seed_module.pt")));
  EXPECT_NE(w.session()->worker->pid(), dropped);
}

TEST(MainWindow, StyleSwitchRedrawsTheFxPicture) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  const int tdfxNodes = w.scene()->nodeCount();
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setStyle(ViewStyle::Fx); }));
  EXPECT_NE(w.scene()->nodeCount(), tdfxNodes);
  EXPECT_NE(w.scene()->nodeItem(QStringLiteral("_0_fc1.weight")), nullptr);  // FxGraphDrawer's parameter nodes
  // Each node draws FxGraphDrawer's record, field by field, as the fx export writes it.
  const QStringList fc1 = w.scene()->recordText(QStringLiteral("_0_fc1"));
  EXPECT_EQ(fc1, (QStringList{QStringLiteral("name=%_0_fc1"), QStringLiteral("op_code=call_module"), QString(),
                              QStringLiteral("torch.nn.modules.linear.Linear"), QStringLiteral("in_features: 100"),
                              QStringLiteral("out_features: 50")}))
      << fc1.join('|').toStdString();
  const QStringList weight = w.scene()->recordText(QStringLiteral("_0_fc1.weight"));
  // FxGraphDrawer's label runs `get_parametertorch.float32[...]` together; the picture breaks it.
  EXPECT_EQ(weight, (QStringList{QStringLiteral("_0_fc1.weight"), QStringLiteral("op_code=get_parameter"),
                                 QStringLiteral("torch.float32[50, 100]")}));
  // Back to tdfx style: plain boxes again.
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setStyle(ViewStyle::Tdfx); }));
  EXPECT_TRUE(w.scene()->recordText(QStringLiteral("softmax")).isEmpty());
}

TEST(MainWindow, SearchFindsAndDoubleClickExpands) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  // Search by op name, module type and key; repeated searches move to the next match.
  EXPECT_EQ(w.findNext(QStringLiteral("(obs, x)")).toStdString(), "getitem");
  EXPECT_FALSE(w.findNext(QStringLiteral("LayerNorm")).isEmpty());
  const QString first = w.findNext(QStringLiteral("relu"));
  const QString second = w.findNext(QStringLiteral("relu"));
  EXPECT_FALSE(first.isEmpty());
  EXPECT_NE(first, second);
  EXPECT_TRUE(w.findNext(QStringLiteral("no such thing")).isEmpty());

  // At depth 2 the stages are collapsed; expanding one shows more items and keeps the rest.
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setDepth(2); }));
  const ModelSession* s = w.session();
  std::string collapsed;
  for (const auto& n : s->view.nodes)
    if (n.kind == ViewNode::Kind::Collapsed) collapsed = n.id;
  ASSERT_FALSE(collapsed.empty()) << "the default view of scoped.pt should collapse something";
  const int before = w.scene()->nodeCount();
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.expandScope(QString::fromStdString(collapsed)); }));
  EXPECT_GT(w.scene()->nodeCount(), before);
  EXPECT_EQ(w.session()->view.findNode(collapsed), nullptr);
}

TEST(MainWindow, VerifyPanelReportsEveryKeyEqual) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  EXPECT_TRUE(verifyAndWait(w));
  ASSERT_EQ(w.verifyTable()->rowCount(), 2);
  EXPECT_EQ(w.verifyTable()->item(0, 0)->text().toStdString(), "(intermediate, x)");
  EXPECT_EQ(w.verifyTable()->item(1, 6)->text().toStdString(), "equal");
  // A model FX traces unfaithfully (a buffer updated once, while tracing) differs, and the first differing node gets selected.
  ASSERT_TRUE(openAndWait(w, fixture("updates_buffer_once.pt")));
  EXPECT_FALSE(verifyAndWait(w));
  ASSERT_NE(w.lastReport(), nullptr);
  EXPECT_EQ(w.scene()->selectedNode().toStdString(), "count");
}

// A geometry saved on a larger screen (or at QT_SCALE_FACTOR=1.5) put Verify and the status bar
// off-screen: it is shrunk and moved into the screen's available area.
TEST(MainWindow, AWindowLargerThanTheScreenIsKeptOnIt) {
  MainWindow w(/*interactive=*/false);
  w.show();
  const QRect available = w.screen()->availableGeometry();
  w.setGeometry(available.x() + 100, available.y() + 50, available.width() * 3 / 2, available.height() * 3 / 2);
  w.keepOnScreen();
  EXPECT_TRUE(available.contains(w.frameGeometry())) << w.frameGeometry().width() << "x" << w.frameGeometry().height()
                                                     << " in " << available.width() << "x" << available.height();
}

}  // namespace
}  // namespace tdfx::ui
