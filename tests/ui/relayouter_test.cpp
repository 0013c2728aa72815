// Relayouter without a window: a real traced fixture laid out in a layout process; of quick
// requests only the newest is delivered, with the node to select; forget() drops what is coming.
#include <QSignalSpy>
#include <QTest>
#include <gtest/gtest.h>

#include "tdfx/runtime/graph_module.h"
#include "tdfx/ui/relayouter.h"
#include "test_support.h"
#include "ui/wait_until.h"

namespace tdfx::ui {
namespace {

std::shared_ptr<ModelSession> sessionOf(const char* fixture) {
  auto session = std::make_shared<ModelSession>();
  session->traced.traced = tdfx::testing::traceFixture(fixture).traced();
  return session;
}

bool waitFor(QSignalSpy& spy) {
  for (int i = 0; i < 600 && spy.isEmpty(); ++i) QTest::qWait(20);
  return !spy.isEmpty();
}

TEST(Relayouter, OfQuickRequestsOnlyTheNewestIsShownWithItsSelection) {
  const auto session = sessionOf("scoped.pt");
  Relayouter layouts;
  QSignalSpy laidOut(&layouts, &Relayouter::laidOut);
  ViewOptions collapsed, expanded, lr;
  collapsed.hierarchy.depth = 0;
  expanded.hierarchy.expandAll = true;
  lr.hierarchy.expandAll = true;
  lr.rankdir = "LR";
  layouts.request(session, collapsed, QStringLiteral("fc1"));
  layouts.request(session, expanded);  // keeps the selection asked for before
  layouts.request(session, lr);
  EXPECT_TRUE(layouts.busy());
  ASSERT_TRUE(waitFor(laidOut));
  QTest::qWait(200);  // nothing else arrives
  ASSERT_EQ(laidOut.size(), 1);
  const auto layout = laidOut.first().at(0).value<std::shared_ptr<SessionLayout>>();
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(layout->options.rankdir, "LR");
  EXPECT_EQ(layout->view.rankdir, "LR");
  EXPECT_GT(layout->layout.width, 0);
  EXPECT_EQ(laidOut.first().at(1).toString(), QStringLiteral("fc1"));
  EXPECT_FALSE(layouts.busy());
}

TEST(Relayouter, AForgottenRequestIsNeverDelivered) {
  const auto session = sessionOf("scoped.pt");
  Relayouter layouts;
  QSignalSpy laidOut(&layouts, &Relayouter::laidOut);
  layouts.request(session, ViewOptions(), QStringLiteral("fc1"));
  layouts.forget();  // another model is shown
  // Until the forgotten job has ended and its result has had every chance to arrive: bounded by
  // the work, not by a time that a loaded machine may not give it.
  ASSERT_TRUE(waitUntil([&] { return layouts.idle(); })) << "the job never ended";
  EXPECT_TRUE(laidOut.isEmpty());
  layouts.request(session, ViewOptions());
  ASSERT_TRUE(waitFor(laidOut));
  EXPECT_TRUE(laidOut.first().at(1).toString().isEmpty()) << "the forgotten selection is not handed on";
}

}  // namespace
}  // namespace tdfx::ui
