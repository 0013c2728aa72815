// ModelLoader without a window: real fixtures opened in real worker processes. Only the newest open
// is delivered, a cancelled one never is, a reload carries what changed, a compare its report, and
// the statistics come from the open model's worker.
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include "tdfx/ui/model_loader.h"
#include "support/test_paths.h"
#include "ui/wait_until.h"

namespace tdfx::ui {
namespace {

QString fixture(const char* name) { return QString::fromUtf8(tdfx::testing::kFixturesDir) + QLatin1Char('/') + QString::fromUtf8(name); }

bool waitFor(QSignalSpy& spy) {
  for (int i = 0; i < 1500 && spy.isEmpty(); ++i) QTest::qWait(20);
  return !spy.isEmpty();
}

LoadOutcome loadedOnce(QSignalSpy& spy) {
  EXPECT_TRUE(waitFor(spy));
  return spy.isEmpty() ? LoadOutcome() : spy.takeFirst().at(0).value<LoadOutcome>();
}

TEST(ModelLoader, OnlyTheNewestOpenIsDeliveredWithTheVersionItRead) {
  ModelLoader loader;
  QSignalSpy loaded(&loader, &ModelLoader::loaded);
  loader.load(fixture("plain.pt"), ViewOptions());
  loader.load(fixture("scoped.pt"), ViewOptions());  // replaces the first: its worker is stopped
  EXPECT_TRUE(loader.loading());
  const LoadOutcome outcome = loadedOnce(loaded);
  ASSERT_TRUE(waitUntil([&] { return loader.idle(); })) << "the replaced open's job never ended";
  EXPECT_TRUE(loaded.isEmpty()) << "the replaced open was delivered too";
  ASSERT_NE(outcome.session, nullptr) << outcome.error.toStdString();
  EXPECT_EQ(QFileInfo(QString::fromStdString(outcome.session->traced.model.path)).fileName(), QStringLiteral("scoped.pt"));
  EXPECT_FALSE(outcome.reload);
  EXPECT_EQ(outcome.stamp, FileStamp::of(fixture("scoped.pt")));
  EXPECT_FALSE(outcome.session->view.nodes.empty());
  EXPECT_FALSE(outcome.session->viewIdOfIr.empty()) << "the picture's index of IR nodes is built with it";
  EXPECT_FALSE(loader.loading());
}

// A followed file rewritten in place (the same inode) before the shown version's weights were read
// (they are read when first needed): the reload shows the new version, without the list of what
// changed, since the old weights are gone from the file. Read before the rewrite, the list comes.
TEST(ModelLoader, AReloadWhoseShownVersionsWeightsWereNeverReadComesWithoutItsChanges) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString path = dir.filePath(QStringLiteral("model.pt"));
  const auto rewriteInPlace = [&](const char* name) {
    QFile from(fixture(name)), to(path);
    ASSERT_TRUE(from.open(QIODevice::ReadOnly));
    ASSERT_TRUE(to.open(QIODevice::ReadWrite));  // no rename: the open descriptor sees the new bytes
    ASSERT_TRUE(to.resize(0));
    to.write(from.readAll());
  };
  for (const bool readFirst : {false, true}) {
    rewriteInPlace("plain.pt");
    ModelLoader loader;
    QSignalSpy loaded(&loader, &ModelLoader::loaded);
    loader.load(path, ViewOptions());
    const LoadOutcome first = loadedOnce(loaded);
    ASSERT_NE(first.session, nullptr) << first.error.toStdString();
    if (readFirst) {
      EXPECT_FALSE(first.session->worker->parameterValues().empty());
    }
    rewriteInPlace("jit_traced.pt");  // the same net, retrained
    loader.load(path, ViewOptions(), first.session);
    const LoadOutcome second = loadedOnce(loaded);
    ASSERT_NE(second.session, nullptr) << second.error.toStdString();
    EXPECT_TRUE(second.reload);
    if (readFirst) {
      EXPECT_NE(second.changes, nullptr) << "the weights read before the rewrite are compared";
    } else {
      EXPECT_EQ(second.changes, nullptr) << "a list of changes against weights that were never read";
    }
  }
}

TEST(ModelLoader, ACancelledOpenIsNeverDeliveredAndAFailedOneSaysWhy) {
  ModelLoader loader;
  QSignalSpy loaded(&loader, &ModelLoader::loaded);
  loader.load(fixture("scoped.pt"), ViewOptions());
  loader.cancel();
  EXPECT_FALSE(loader.loading());
  // Until the cancelled job has ended and its result has had every chance to arrive.
  ASSERT_TRUE(waitUntil([&] { return loader.idle(); })) << "the job never ended";
  EXPECT_TRUE(loaded.isEmpty());
  loader.load(fixture("no_such_model.pt"), ViewOptions());
  const LoadOutcome failed = loadedOnce(loaded);
  EXPECT_EQ(failed.session, nullptr);
  EXPECT_TRUE(failed.error.contains(QStringLiteral("no_such_model.pt"))) << failed.error.toStdString();
  EXPECT_FALSE(failed.stamp.exists);
}

TEST(ModelLoader, AReloadCarriesItsChangesACompareItsReportAndStatsComeFromTheWorker) {
  ModelLoader loader;
  QSignalSpy loaded(&loader, &ModelLoader::loaded);
  QSignalSpy compared(&loader, &ModelLoader::compared);
  QSignalSpy stats(&loader, &ModelLoader::statsArrived);
  loader.load(fixture("seed_sequential.pt"), ViewOptions());
  const LoadOutcome first = loadedOnce(loaded);
  ASSERT_NE(first.session, nullptr) << first.error.toStdString();

  loader.fetchStats(first.session);
  ASSERT_TRUE(waitFor(stats));
  EXPECT_EQ(stats.first().at(0).value<std::shared_ptr<ModelSession>>(), first.session);
  EXPECT_FALSE(stats.first().at(1).value<std::vector<ParameterStats>>().empty());

  loader.load(fixture("seed_sequential.pt"), ViewOptions(), first.session);  // the same file again
  const LoadOutcome again = loadedOnce(loaded);
  ASSERT_NE(again.session, nullptr) << again.error.toStdString();
  EXPECT_TRUE(again.reload);
  ASSERT_NE(again.changes, nullptr);
  EXPECT_TRUE(again.changes->identical());

  loader.compare(first.session, fixture("seed_module.pt"), ViewOptions());
  EXPECT_TRUE(loader.comparing());
  ASSERT_TRUE(waitFor(compared));
  const auto outcome = compared.first().at(0).value<CompareOutcome>();
  ASSERT_TRUE(outcome.error.isEmpty()) << outcome.error.toStdString();
  EXPECT_EQ(outcome.session, first.session);
  ASSERT_NE(outcome.other, nullptr);
  ASSERT_NE(outcome.diff, nullptr);
  EXPECT_FALSE(outcome.diff->identical());
  EXPECT_TRUE(outcome.report.contains(QStringLiteral("seed_module.pt"))) << outcome.report.toStdString();
}

}  // namespace
}  // namespace tdfx::ui
