// SelectionHistory without a window: the steps Back and Forward take, what is a new step and what
// is not, and entries that are not drawn now.
#include <QSet>
#include <QSignalSpy>
#include <gtest/gtest.h>

#include "tdfx/ui/selection_history.h"

namespace tdfx::ui {
namespace {

const SelectionHistory::Shown itself = [](const QString& id) { return id; };

TEST(SelectionHistory, BackAndForwardRetraceTheSelectionsAndANewOneDropsForward) {
  SelectionHistory h;
  QSignalSpy changed(&h, &SelectionHistory::changed);
  for (const char* id : {"a", "b", "c"}) h.selected(QString::fromUtf8(id), itself);
  EXPECT_EQ(h.current(), QStringLiteral("c"));
  EXPECT_TRUE(h.canGoBack());
  EXPECT_FALSE(h.canGoForward());
  const auto all = [](const QString&) { return true; };
  EXPECT_EQ(h.step(true, all), QStringLiteral("b"));
  EXPECT_EQ(h.step(true, all), QStringLiteral("a"));
  EXPECT_FALSE(h.canGoBack());
  EXPECT_EQ(h.step(true, all), std::nullopt);
  EXPECT_EQ(h.step(false, all), QStringLiteral("b"));
  h.selected(QStringLiteral("d"), itself);  // a new choice: c is no longer ahead
  EXPECT_FALSE(h.canGoForward());
  EXPECT_EQ(h.step(true, all), QStringLiteral("b"));
  EXPECT_EQ(h.step(false, all), QStringLiteral("d"));
  ASSERT_FALSE(changed.isEmpty());
  EXPECT_EQ(changed.last().at(0).toBool(), true);
  EXPECT_EQ(changed.last().at(1).toBool(), false);
  h.clear();
  EXPECT_TRUE(h.current().isEmpty());
  EXPECT_FALSE(h.canGoBack());
}

TEST(SelectionHistory, TheWindowsOwnSelectionsAndTheSameNodeRedrawnAreNoSteps) {
  SelectionHistory h;
  h.selected(QStringLiteral("conv1"), itself);
  {
    const SelectionHistory::Revisiting revisiting(h);
    h.selected(QStringLiteral("scope:layer1"), itself);  // the window selects the collapsed module
  }
  EXPECT_EQ(h.current(), QStringLiteral("conv1")) << "the node the user chose is kept";
  EXPECT_FALSE(h.canGoBack());
  // conv1 drawn inside scope:layer1: selecting that scope is the same selection.
  const SelectionHistory::Shown inLayer1 = [](const QString& id) { return id == "conv1" ? QStringLiteral("scope:layer1") : id; };
  h.selected(QStringLiteral("scope:layer1"), inLayer1);
  EXPECT_FALSE(h.canGoBack());
  {
    const SelectionHistory::Revisiting redrawn(h);
    h.selected(QString(), itself);  // the picture redrawn: the selection lost with it is no step
  }
  EXPECT_EQ(h.current(), QStringLiteral("conv1"));
  EXPECT_FALSE(h.canGoBack());
  // The user clearing it (issue 57, G): nothing current, and Back returns to the node.
  h.selected(QString(), itself);
  EXPECT_TRUE(h.current().isEmpty());
  ASSERT_TRUE(h.canGoBack());
  EXPECT_EQ(h.step(true, [](const QString&) { return true; }), QStringLiteral("conv1"));
}

TEST(SelectionHistory, EntriesNotDrawnNowArePassedOverAndKeptInOrder) {
  SelectionHistory h;
  for (const char* id : {"a", "b", "c", "d"}) h.selected(QString::fromUtf8(id), itself);
  QSet<QString> hidden{QStringLiteral("b"), QStringLiteral("c")};  // inside a module collapsed since
  const auto drawn = [&](const QString& id) { return !hidden.contains(id); };
  EXPECT_EQ(h.step(true, drawn), QStringLiteral("a"));
  // Forward from a walks over b and c again once they are drawn.
  hidden.clear();
  EXPECT_EQ(h.step(false, drawn), QStringLiteral("b"));
  EXPECT_EQ(h.step(false, drawn), QStringLiteral("c"));
  EXPECT_EQ(h.step(false, drawn), QStringLiteral("d"));
  // Nothing drawn back: the history stays as it was.
  const auto none = [](const QString&) { return false; };
  EXPECT_EQ(h.step(true, none), std::nullopt);
  EXPECT_TRUE(h.canGoBack());
  EXPECT_EQ(h.step(true, drawn), QStringLiteral("c"));
}

}  // namespace
}  // namespace tdfx::ui
