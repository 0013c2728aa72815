// Verify's errors and verdicts: the one-line cause first, the traceback behind Details, and
// panels that keep their size whatever the message.
#include <cstdio>

#include <QCheckBox>
#include <QDockWidget>
#include <QFile>
#include <QCoreApplication>
#include <QLabel>
#include <QSettings>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTextBrowser>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "tdfx/ui/main_window.h"
#include "tdfx/ui/verify_panel.h"
#include "test_support.h"
#include "ui/window_driver.h"

namespace tdfx::ui {
namespace {

using tdfx::testing::fixture;

QToolButton* detailsButton(VerifyPanel* panel) {
  for (QToolButton* b : panel->findChildren<QToolButton*>())
    if (b->text() == QStringLiteral("Details")) return b;
  return nullptr;
}

TEST(VerifyErrors, AWrongShapeShowsItsCauseOnOneLineAndTheTracebackOnDemand) {
  MainWindow w(/*interactive=*/false);
  w.resize(1400, 900);
  w.show();
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  VerifyPanel* panel = w.verifyPanel();
  QDockWidget* dock = nullptr;  // the panel sits in a scroll area in the dock
  for (QWidget* p = panel->parentWidget(); p && !dock; p = p->parentWidget()) dock = qobject_cast<QDockWidget*>(p);
  ASSERT_NE(dock, nullptr);
  QTest::qWait(100);  // the window's first layout settles
  const int dockHeight = dock->height();

  panel->inputTable()->item(0, 1)->setText(QStringLiteral("32x99"));  // fc1 takes 100 features
  EXPECT_FALSE(verifyAndWait(w));
  const std::string cause = panel->summary().toStdString();
  EXPECT_EQ(cause.find('\n'), std::string::npos) << cause;
  EXPECT_NE(cause.find("mat1 and mat2 shapes cannot be multiplied (32x99 and 100x50)"), std::string::npos) << cause;
  EXPECT_EQ(cause.find("Traceback"), std::string::npos) << cause;
  EXPECT_NE(panel->errorDetail().toStdString().find("Traceback of TorchScript"), std::string::npos);
  QToolButton* details = detailsButton(panel);
  ASSERT_NE(details, nullptr);
  EXPECT_TRUE(details->isVisible());
  EXPECT_FALSE(panel->detailShown());
  details->click();
  EXPECT_TRUE(panel->detailShown());
  QTest::qWait(50);
  EXPECT_EQ(dock->height(), dockHeight);

  // A good run afterwards: PASSED, no details, and the dock as tall as before.
  panel->inputTable()->item(0, 1)->setText(QStringLiteral("32x100"));
  EXPECT_TRUE(verifyAndWait(w));
  EXPECT_EQ(panel->summary().left(6).toStdString(), "PASSED");
  EXPECT_FALSE(details->isVisible());
  EXPECT_FALSE(panel->detailShown());
  QTest::qWait(50);
  EXPECT_EQ(dock->height(), dockHeight);
}

TEST(VerifyErrors, AMultiLineLoadErrorKeepsTheStatusBarOneLineTall) {
  MainWindow w(/*interactive=*/false);
  w.resize(1400, 900);
  w.show();
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  QTest::qWait(50);
  const int barHeight = w.statusBar()->height();
  QTemporaryDir dir;
  const QString bad = dir.filePath(QStringLiteral("bad.pt"));
  ASSERT_TRUE(writeFile(bad, "not a model"));
  EXPECT_FALSE(openAndWait(w, bad.toStdString()));
  EXPECT_EQ(w.statusText().indexOf('\n'), -1) << w.statusText().toStdString();
  EXPECT_FALSE(w.statusText().isEmpty());
  QTest::qWait(50);
  EXPECT_EQ(w.statusBar()->height(), barHeight);
}

TEST(VerifyErrors, APlainArchiveGetsAShapeFromItsFirstLayerAndKeepsTheOneThatRan) {
  QTemporaryDir settingsDir;  // this test's own settings, not the user's
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settingsDir.path());
  QCoreApplication::setOrganizationName(QStringLiteral("tdfx-test"));
  MainWindow w(/*interactive=*/false);
  w.verifyPanel()->setRememberInputs(true);
  ASSERT_TRUE(openAndWait(w, fixture("plain.pt")));  // Net(8, 6, 2): its first layer is Linear(8, ...)
  VerifyPanel* panel = w.verifyPanel();
  ASSERT_EQ(panel->inputTable()->rowCount(), 1);
  EXPECT_EQ(panel->inputTable()->item(0, 1)->text().toStdString(), "1x8");
  EXPECT_NE(panel->summary().toStdString().find("Linear (in_features 8)"), std::string::npos)
      << panel->summary().toStdString();
  // The file has no example: the Model panel has no input shape until a run.
  EXPECT_TRUE(w.modelPanel()->toPlainText().contains(QStringLiteral("shapes after a run")));
  EXPECT_TRUE(verifyAndWait(w)) << panel->summary().toStdString();
  {  // the "result" column holds its text whole, however narrow the dock
    const QTableWidget* results = panel->resultTable();
    ASSERT_GE(results->rowCount(), 1);
    const QString text = results->item(0, 6)->text();
    EXPECT_GE(results->columnWidth(6), results->fontMetrics().horizontalAdvance(text)) << text.toStdString();
  }
  panel->inputTable()->item(0, 1)->setText(QStringLiteral("5x8"));
  EXPECT_TRUE(verifyAndWait(w));
  {  // the Model panel shows the input shape the run used
    const std::string model = w.modelPanel()->toPlainText().toStdString();
    EXPECT_NE(model.find("[5, 8] float32"), std::string::npos) << model;
    EXPECT_NE(model.find("as last run"), std::string::npos) << model;
  }
  // Another file, then this one again: the shape last run is back.
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  ASSERT_TRUE(openAndWait(w, fixture("plain.pt")));
  ASSERT_EQ(panel->inputTable()->rowCount(), 1);
  EXPECT_EQ(panel->inputTable()->item(0, 1)->text().toStdString(), "5x8");
  // A shape that fails (Linear(8, ...) cannot take 7 features) is not what comes back.
  panel->inputTable()->item(0, 1)->setText(QStringLiteral("1x7"));
  EXPECT_FALSE(verifyAndWait(w));
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  ASSERT_TRUE(openAndWait(w, fixture("plain.pt")));
  EXPECT_EQ(panel->inputTable()->item(0, 1)->text().toStdString(), "5x8");
  QCoreApplication::setOrganizationName(QString());
}

// Issue 57, H: an Embedding + TransformerEncoder model got "1x128 float32" from its Linear head,
// and failed ("Expected ... Long, Int"); an LSTM got no guess, and its empty shape ran and failed
// "Dimension specified as 0".
TEST(VerifyErrors, TheInputGuessComesFromTheLayerThatReadsTheInputAndAnEmptyShapeIsAsked) {
  MainWindow w(/*interactive=*/false);
  VerifyPanel* panel = w.verifyPanel();
  ASSERT_TRUE(openAndWait(w, fixture("embeds_tokens.pt")));
  ASSERT_EQ(panel->inputTable()->rowCount(), 1);
  EXPECT_EQ(panel->inputTable()->item(0, 1)->text().toStdString(), "1x16");
  EXPECT_EQ(panel->inputTable()->item(0, 2)->text().toStdString(), "int64");
  EXPECT_NE(panel->summary().toStdString().find("Embedding (num_embeddings 100)"), std::string::npos)
      << panel->summary().toStdString();
  EXPECT_TRUE(verifyAndWait(w)) << panel->summary().toStdString();

  ASSERT_TRUE(openAndWait(w, fixture("recurrent.pt")));
  ASSERT_EQ(panel->inputTable()->rowCount(), 1);
  EXPECT_EQ(panel->inputTable()->item(0, 1)->text().toStdString(), "1x16x12");
  EXPECT_TRUE(verifyAndWait(w)) << panel->summary().toStdString();
  panel->inputTable()->item(0, 1)->setText(QString());  // no shape: the run is not started
  w.runVerify();
  EXPECT_FALSE(panel->isRunning());
  EXPECT_NE(panel->summary().toStdString().find("has no shape: type one in the shape column"), std::string::npos)
      << panel->summary().toStdString();
}

// The window's verify, records and all, runs the model twice: once each side. counts_forwards.pt's
// leaf prints a line each time it runs, to the worker's stderr, which is this process's at its
// start: verify_verdicts_cli_test.py runs this test alone and counts the lines between the marks.
TEST(VerifyErrors, TheWindowsVerifyRunsEachSideOnce) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("counts_forwards.pt")));
  VerifyPanel* panel = w.verifyPanel();
  ASSERT_EQ(panel->inputTable()->rowCount(), 1);
  panel->inputTable()->item(0, 1)->setText(QStringLiteral("4x3"));
  std::fprintf(stderr, "tdfx-test: verify starts\n");
  std::fflush(stderr);
  EXPECT_TRUE(verifyAndWait(w)) << panel->summary().toStdString();
  std::fprintf(stderr, "tdfx-test: verify ended\n");
  std::fflush(stderr);
  EXPECT_EQ(panel->summary().left(6).toStdString(), "PASSED") << panel->summary().toStdString();
  EXPECT_FALSE(panel->timeBox()->isChecked());  // the default: no timed runs
}

// NOT PROVEN in the window: the verdict first, then the nodes without proof, each reason said once
// (a loop's nodes share one), so that a narrow dock shows which nodes.
TEST(VerifyErrors, NotProvenNamesTheNodesAndEachReasonOnce) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("halves_thrice.pt")));
  VerifyPanel* panel = w.verifyPanel();
  ASSERT_EQ(panel->inputTable()->rowCount(), 1);
  panel->inputTable()->item(0, 1)->setText(QStringLiteral("2x4"));
  verifyAndWait(w);
  const std::string summary = panel->summary().toStdString();
  EXPECT_EQ(summary.rfind("NOT PROVEN: nothing differs, but 5 node(s) have no proof: mul, add, mul_1, add_1, mul_2 (", 0), 0u)
      << summary;
  const std::string reason = "could not be read";
  const size_t first = summary.find(reason);
  ASSERT_NE(first, std::string::npos) << summary;
  EXPECT_EQ(summary.find(reason, first + 1), std::string::npos) << summary;  // once, not five times
}

// tdfx-cli verify --input-values in the window: tensors of the user's own, values included.
TEST(VerifyErrors, InputValuesFromAFileAreTheRunsInputs) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("plain.pt")));  // Net(8, 6, 2), one input
  VerifyPanel* panel = w.verifyPanel();
  ASSERT_EQ(panel->inputTable()->rowCount(), 1);
  const std::string key = panel->inputTable()->item(0, 0)->text().toStdString();
  QTemporaryDir dir;
  const QString values = dir.filePath(QStringLiteral("values.pt"));
  const auto save = [&values](const c10::IValue& v) {
    const std::vector<char> bytes = torch::jit::pickle_save(v);
    QFile f(values);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(bytes.data(), static_cast<qint64>(bytes.size()));
  };
  save(c10::ivalue::Tuple::create({c10::ivalue::Tuple::create({key, at::ones({3, 8})})}));
  panel->setInputValuesFile(values);
  EXPECT_TRUE(verifyAndWait(w)) << panel->summary().toStdString();
  const std::string model = w.modelPanel()->toPlainText().toStdString();
  EXPECT_NE(model.find("[3, 8] float32"), std::string::npos) << model;  // the file's tensor, not the row's 1x8
  save(at::ones({3, 8}));  // not a dict or tuple of pairs: said on one line
  EXPECT_FALSE(verifyAndWait(w));
  EXPECT_EQ(panel->summary().toStdString().rfind("input values: expected a dict", 0), 0u) << panel->summary().toStdString();
  ASSERT_TRUE(openAndWait(w, fixture("seed_sequential.pt")));
  EXPECT_TRUE(panel->inputValuesFile().isEmpty());  // another model: not its values
}

}  // namespace
}  // namespace tdfx::ui
