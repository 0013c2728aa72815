// One picture, two views: the main view and the overview draw the same scene, and every change
// of a node's look (time colours, verify and compare marks, hover) shows in both (issue 57, A:
// the overview turned red while the main view stayed yellow until a zoom re-rendered it).
#include <QApplication>
#include <QGraphicsItem>
#include <QImage>
#include <cmath>
#include <gtest/gtest.h>

#include "tdfx/ui/graph_scene.h"
#include "tdfx/ui/graph_view.h"
#include "tdfx/ui/minimap.h"
#include "ui/window_driver.h"

namespace tdfx::ui {
namespace {

// The share of `item`'s inner box, as `view` draws it now, whose pixels are `colour` (within a few
// steps a channel): the fill, whatever the label and outline cover.
double shareDrawnIn(QGraphicsView* view, const QGraphicsItem* item, const QColor& colour) {
  const QImage image = view->viewport()->grab().toImage();
  const QRectF box = item->sceneBoundingRect().adjusted(8, 12, -10, -7);  // the node, not its halo room
  const QRect at = view->mapFromScene(box).boundingRect().intersected(image.rect());
  if (at.isEmpty()) return 0;
  int same = 0;
  for (int y = at.top(); y <= at.bottom(); ++y)
    for (int x = at.left(); x <= at.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - colour.red()) < 8 && std::abs(c.green() - colour.green()) < 8 &&
          std::abs(c.blue() - colour.blue()) < 8)
        ++same;
    }
  return static_cast<double>(same) / (at.width() * at.height());
}

// How the overview draws `colour` under its frame (the translucent orange of the part in sight).
QColor underTheFrame(const QColor& colour) {
  const double a = 40.0 / 255.0;
  const auto mix = [a](int c, int tint) { return static_cast<int>(std::lround(c * (1 - a) + tint * a)); };
  return QColor(mix(colour.red(), 211), mix(colour.green(), 84), mix(colour.blue(), 0));
}

TEST(PictureState, AChangedLookIsDrawnInTheMainViewAndInTheOverviewAlike) {
  SyntheticView v(/*nodes=*/80, 1200, 900);
  v.view.setZoom(1.0);
  QApplication::processEvents();
  Minimap* overview = v.view.minimap();
  ASSERT_TRUE(overview && overview->isVisible()) << "the whole graph is not in sight: the overview shows";
  // A node in sight in the main view (the overview shows them all).
  const QRectF shown = v.view.mapToScene(v.view.viewport()->rect()).boundingRect();
  const QGraphicsItem* node = nullptr;
  QHash<QString, double> heat;
  for (const ViewNode& n : v.graph.nodes) {
    const QGraphicsItem* item = v.scene.nodeItem(QString::fromStdString(n.id));
    if (!item) continue;
    heat.insert(QString::fromStdString(n.id), 1.0);
    if (!node && shown.contains(item->sceneBoundingRect()) && item->sceneBoundingRect().width() > 60) node = item;
  }
  ASSERT_NE(node, nullptr);
  // Both views draw it (and keep it in their caches) before the change, as a user's screen has.
  ASSERT_LT(shareDrawnIn(&v.view, node, GraphScene::heatColor(1)), 0.1);
  ASSERT_LT(shareDrawnIn(overview, node, underTheFrame(GraphScene::heatColor(1))), 0.1);

  v.scene.setHeat(heat);  // View > Colour nodes by time: the slowest red
  QApplication::processEvents();
  EXPECT_GT(shareDrawnIn(&v.view, node, GraphScene::heatColor(1)), 0.5) << "the main view shows the time colour";
  EXPECT_GT(shareDrawnIn(overview, node, underTheFrame(GraphScene::heatColor(1))), 0.5) << "the overview shows the time colour";

  v.scene.setHeat({});  // and off again
  v.scene.setMarked({node->data(0).toString()}, GraphScene::DiffWeights);  // a compare's changed weights: blue
  QApplication::processEvents();
  const QColor blue = GraphScene::markColor(GraphScene::DiffWeights);
  EXPECT_GT(shareDrawnIn(&v.view, node, blue), 0.4) << "the main view shows the compare mark";
  EXPECT_GT(shareDrawnIn(overview, node, underTheFrame(blue)), 0.4) << "the overview shows the compare mark";
}

}  // namespace
}  // namespace tdfx::ui
