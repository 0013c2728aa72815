// SearchController without a window: a scene of a real traced fixture, the session it searches and
// a function that records where it went.
#include <QLabel>
#include <QLineEdit>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QToolBar>
#include <gtest/gtest.h>

#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/runtime/graph_module.h"
#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/model_session.h"
#include "tdfx/ui/search_controller.h"
#include "test_support.h"

namespace tdfx::ui {
namespace {

struct Searched {
  ModelSession session;
  GraphScene scene;
  QWidget parent;
  QToolBar toolbar;
  QStringList visited;
  SearchController search{&scene, [this] { return &session; },
                          [this](const QString& id) {
                            visited << id;
                            scene.selectNode(id);
                          },
                          &parent};
  explicit Searched(const char* fixture) {
    const GraphModule gm = tdfx::testing::traceFixture(fixture);
    session.traced.traced = gm.traced();
    ViewOptions options;
    options.hierarchy.expandAll = true;
    session.view = buildView(session.traced.traced, options);
    scene.showGraph(session.view, layoutView(session.view));
    search.addTo(&toolbar);
  }
};

TEST(SearchController, FindWalksEveryMatchBothWaysAndMarksThem) {
  Searched s("scoped.pt");
  const QStringList linear = SearchController::matchingNodes(s.session, QStringLiteral("linear"), false);
  ASSERT_GE(linear.size(), 2) << "module types match";
  EXPECT_EQ(s.search.find(QStringLiteral("LINEAR"), +1), linear[0]) << "case-insensitive";
  EXPECT_EQ(s.search.countText(), QStringLiteral(" 1 of %1 ").arg(linear.size()));
  EXPECT_EQ(s.search.find(QStringLiteral("linear"), +1), linear[1]);
  EXPECT_EQ(s.search.find(QStringLiteral("linear"), -1), linear[0]);
  EXPECT_EQ(s.search.find(QStringLiteral("linear"), -1), linear.last()) << "wraps around";
  const QStringList marked = s.scene.markedNodes(GraphScene::SearchMatch);
  EXPECT_EQ(QSet<QString>(marked.begin(), marked.end()), QSet<QString>(linear.begin(), linear.end()));
  EXPECT_EQ(s.visited.size(), 4);
  EXPECT_TRUE(s.search.find(QStringLiteral("no such node"), +1).isEmpty());
  EXPECT_EQ(s.search.countText(), QStringLiteral(" no match "));
  EXPECT_TRUE(s.scene.markedNodes(GraphScene::SearchMatch).isEmpty());
}

TEST(SearchController, ARegularExpressionThatDoesNotCompileSaysWhy) {
  Searched s("scoped.pt");
  s.search.setRegex(true);
  EXPECT_FALSE(s.search.find(QStringLiteral("^(lin"), +1).size());
  EXPECT_TRUE(s.search.countText().startsWith(QStringLiteral(" invalid pattern: "))) << s.search.countText().toStdString();
  EXPECT_FALSE(s.search.find(QStringLiteral("^linear"), +1).isEmpty());
}

TEST(SearchController, TypingSearchesLiveAndEnterFindingNothingSaysSo) {
  Searched s("scoped.pt");
  QSignalSpy noMatch(&s.search, &SearchController::noMatch);
  s.search.field()->setText(QStringLiteral("relu"));
  for (int i = 0; i < 100 && s.visited.isEmpty(); ++i) QTest::qWait(10);  // after the typing pause
  ASSERT_EQ(s.visited.size(), 1);
  EXPECT_TRUE(s.search.matches().contains(s.visited[0]));
  s.search.field()->setText(QStringLiteral("zzz"));
  QTest::keyClick(s.search.field(), Qt::Key_Return);
  ASSERT_EQ(noMatch.size(), 1);
  EXPECT_EQ(noMatch.first().first().toString(), QStringLiteral("zzz"));
  s.search.clear();
  EXPECT_TRUE(s.search.field()->text().isEmpty());
  EXPECT_TRUE(s.search.matches().isEmpty());
}

TEST(SearchController, AfterACompareF3WalksTheChangesWithTheFieldEmpty) {
  Searched s("scoped.pt");
  const QStringList changes{QString::fromStdString(s.session.view.nodes[1].id), QString::fromStdString(s.session.view.nodes[2].id)};
  s.search.walk(changes, QStringLiteral(" 3 difference(s), 2 node(s) marked "));
  EXPECT_EQ(s.search.countText(), QStringLiteral(" 3 difference(s), 2 node(s) marked "));
  EXPECT_TRUE(s.search.searchMarks().isEmpty()) << "compare marks them, not the search";
  EXPECT_EQ(s.search.find(QString(), +1), changes[0]);
  EXPECT_EQ(s.search.find(QString(), +1), changes[1]);
  // A search replaces the changes.
  EXPECT_FALSE(s.search.find(QStringLiteral("relu"), +1).isEmpty());
  EXPECT_FALSE(s.search.searchMarks().isEmpty());
}

}  // namespace
}  // namespace tdfx::ui
