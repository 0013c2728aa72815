// What is exported is what is shown: overlays and their legend, titles at the top of frames, a
// suggested file name; and frames whose titles fit them in the window.
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/main_window.h"
#include "test_support.h"
#include "ui/window_driver.h"

namespace tdfx::ui {
namespace {

using tdfx::testing::fixture;

QString readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

TEST(ExportOverlays, TheExportHasTheTimeColoursAndLegendShownAndTitlesAtTheTopOfFrames) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  EXPECT_TRUE(w.suggestedExportPath(QStringLiteral("svg")).endsWith(QStringLiteral("/scoped.svg")))
      << w.suggestedExportPath(QStringLiteral("svg")).toStdString();
  EXPECT_TRUE(w.view()->legendLabels().contains(QStringLiteral("tensordict read")));  // the tdfx style's legend

  ASSERT_TRUE(verifyAndWait(w));
  w.setTimeOverlay(true);
  const QStringList legend = w.view()->legendLabels();
  ASSERT_EQ(legend.size(), 3) << legend.join('|').toStdString();
  EXPECT_TRUE(legend.last().startsWith(QStringLiteral("slowest ("))) << legend.last().toStdString();

  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("scoped.svg"));
  ASSERT_TRUE(w.exportTo(path)) << w.lastError().toStdString();
  const QString svg = readAll(path);
  EXPECT_TRUE(svg.contains(legend.last().toHtmlEscaped())) << "the time legend is in the export";
  EXPECT_TRUE(svg.contains(GraphScene::heatColor(1).name(), Qt::CaseInsensitive)) << "the slowest node's red";
  EXPECT_FALSE(svg.contains(QStringLiteral("tensordict read"))) << "the kind legend gives way to the time scale";

  // Every frame's title sits at its top edge (y grows downwards in the SVG's own numbers too).
  static const QRegularExpression cluster(
      QStringLiteral("class=\"cluster\">\\s*<title>[^<]*</title>\\s*<path[^>]* d=\"([^\"]+)\"/>\\s*<text[^>]* y=\"([-0-9.]+)\""));
  static const QRegularExpression number(QStringLiteral("[-0-9.]+,([-0-9.]+)"));
  int frames = 0;
  for (auto it = cluster.globalMatch(svg); it.hasNext(); ++frames) {
    const auto m = it.next();
    double top = 1e18, bottom = -1e18;
    for (auto p = number.globalMatch(m.captured(1)); p.hasNext();) {
      const double y = p.next().captured(1).toDouble();
      top = std::min(top, y);
      bottom = std::max(bottom, y);
    }
    const double title = m.captured(2).toDouble();
    EXPECT_LT(title - top, 20) << "title at y " << title << " in a frame from " << top << " to " << bottom;
  }
  EXPECT_GE(frames, 3);
}

TEST(ExportOverlays, FrameTitlesFitTheirFramesInTheWindow) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setExpandAll(true); }));
  EXPECT_TRUE(w.scene()->clippedFrameTitles().isEmpty()) << w.scene()->clippedFrameTitles().join('|').toStdString();
}

}  // namespace
}  // namespace tdfx::ui
