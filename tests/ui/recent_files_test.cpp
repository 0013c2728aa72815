// RecentFiles without a window: newest first, no twins, at most ten, the named file (tdfx.show's
// temporary copy) never remembered, and the menu lists what the list holds.
#include <QMenu>
#include <QSignalSpy>
#include <gtest/gtest.h>

#include "tdfx/ui/recent_files.h"

namespace tdfx::ui {
namespace {

TEST(RecentFiles, NewestFirstNoTwinsAtMostTenAndTheNamedFileIsNeverRemembered) {
  RecentFiles recent(false);
  QMenu menu;
  recent.setMenu(&menu);
  EXPECT_FALSE(menu.isEnabled()) << "an empty list";
  for (int i = 0; i < 12; ++i) recent.remember(QStringLiteral("/models/m%1.pt").arg(i));
  recent.remember(QStringLiteral("/models/m5.pt"));
  ASSERT_EQ(recent.files().size(), RecentFiles::kMax);
  EXPECT_EQ(recent.files().first(), QStringLiteral("/models/m5.pt"));
  EXPECT_EQ(recent.files().count(QStringLiteral("/models/m5.pt")), 1);
  EXPECT_FALSE(recent.files().contains(QStringLiteral("/models/m0.pt"))) << "the oldest goes";

  recent.nameFile(QStringLiteral("/tmp/tdfx-1/ResNet-7f.pt"), QStringLiteral("ResNet"));
  recent.remember(QStringLiteral("/tmp/tdfx-1/ResNet-7f.pt"));
  EXPECT_FALSE(recent.files().contains(QStringLiteral("/tmp/tdfx-1/ResNet-7f.pt")));
  EXPECT_EQ(recent.nameOf(QStringLiteral("/tmp/tdfx-1/ResNet-7f.pt")), QStringLiteral("ResNet"));
  EXPECT_EQ(recent.nameOf(QStringLiteral("/models/m5.pt")), QStringLiteral("m5.pt"));

  // The menu: one entry per file, then a separator and "Clear list".
  ASSERT_TRUE(menu.isEnabled());
  ASSERT_EQ(menu.actions().size(), RecentFiles::kMax + 2);
  EXPECT_TRUE(menu.actions().first()->text().endsWith(QStringLiteral("m5.pt")));
  QSignalSpy chosen(&recent, &RecentFiles::chosen);
  menu.actions().at(1)->trigger();
  ASSERT_EQ(chosen.size(), 1);
  EXPECT_EQ(chosen.first().at(0).toString(), recent.files().at(1));
  menu.actions().last()->trigger();  // Clear list
  EXPECT_TRUE(recent.files().isEmpty());
  EXPECT_FALSE(menu.isEnabled());
}

}  // namespace
}  // namespace tdfx::ui
