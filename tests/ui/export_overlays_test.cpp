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
  ASSERT_TRUE(exportAndWait(w, [&] { return w.exportTo(path); })) << w.lastError().toStdString();
  const QString svg = readAll(path);
  EXPECT_TRUE(svg.contains(legend.last().toHtmlEscaped())) << "the time legend is in the export";
  EXPECT_TRUE(svg.contains(GraphScene::heatColor(1).name(), Qt::CaseInsensitive)) << "the slowest node's red";
  EXPECT_FALSE(svg.contains(QStringLiteral("tensordict read"))) << "the kind legend gives way to the time scale";

  // Every frame's title sits at its top edge (y grows downwards in the SVG's own numbers too), and
  // is drawn after every edge (Graphviz draws frames first; an edge enters a frame through its title).
  static const QRegularExpression cluster(
      QStringLiteral("class=\"cluster\">\\s*<title>([^<]*)</title>\\s*<path[^>]* d=\"([^\"]+)\"/>"));
  static const QRegularExpression title(
      QStringLiteral("class=\"frame-title\"><title>([^<]*)</title>\\s*<text[^>]*paint-order[^>]* y=\"([-0-9.]+)\""));
  static const QRegularExpression number(QStringLiteral("[-0-9.]+,([-0-9.]+)"));
  QHash<QString, double> frameTop;
  for (auto it = cluster.globalMatch(svg); it.hasNext();) {
    const auto m = it.next();
    double top = 1e18;
    for (auto p = number.globalMatch(m.captured(2)); p.hasNext();) top = std::min(top, p.next().captured(1).toDouble());
    frameTop.insert(m.captured(1), top);
  }
  int frames = 0;
  for (auto it = title.globalMatch(svg); it.hasNext(); ++frames) {
    const auto m = it.next();
    ASSERT_TRUE(frameTop.contains(m.captured(1))) << m.captured(1).toStdString();
    const double y = m.captured(2).toDouble(), top = frameTop.value(m.captured(1));
    EXPECT_GT(y, top) << m.captured(1).toStdString();
    EXPECT_LT(y - top, 20) << "title at y " << y << " in a frame from " << top;
    EXPECT_GT(m.capturedStart(), svg.lastIndexOf(QStringLiteral("class=\"edge\""))) << "a title under an edge";
  }
  EXPECT_EQ(frames, frameTop.size());
  EXPECT_GE(frames, 3);
}

TEST(ExportOverlays, FrameTitlesFitTheirFramesInTheWindow) {
  MainWindow w(/*interactive=*/false);
  ASSERT_TRUE(openAndWait(w, fixture("scoped.pt")));
  ASSERT_TRUE(relayoutAndWait(w, [&] { w.setExpandAll(true); }));
  EXPECT_TRUE(w.scene()->clippedFrameTitles().isEmpty()) << w.scene()->clippedFrameTitles().join('|').toStdString();
  // The edge into a frame passes through its title's band; the title is drawn over it.
  const QList<GraphScene::TitleCrossing> crossings = w.scene()->frameTitleCrossings();
  EXPECT_FALSE(crossings.isEmpty()) << "scoped.pt's frames are entered from above, through their titles";
  for (const auto& c : crossings) EXPECT_FALSE(c.edgeOnTop) << "an edge drawn over the title " << c.title.toStdString();
}

}  // namespace
}  // namespace tdfx::ui
