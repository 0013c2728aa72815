#pragma once
// The graph drawn from layout geometry as QGraphicsItems: nodes, edges with arrowheads, cluster
// frames with titles. The scene holds no model logic; it maps items back to view node ids.
#include <QGraphicsScene>
#include <QHash>

#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/view_graph.h"

namespace tdfx::ui {

class NodeItem;

class GraphScene : public QGraphicsScene {
  Q_OBJECT
 public:
  explicit GraphScene(QObject* parent = nullptr);
  ~GraphScene() override;

  /// Replaces the scene's contents with `view` drawn at `layout`'s positions.
  void showGraph(const ViewGraph& view, const LayoutResult& layout);
  /// The item drawing view node `id`, or null.
  QGraphicsItem* nodeItem(const QString& id) const;
  int nodeCount() const { return nodes_.size(); }
  int edgeCount() const { return edgeCount_; }
  /// Selects view node `id` (and highlights its producers and consumers); "" clears.
  void selectNode(const QString& id);
  QString selectedNode() const;

  /// The font node labels use; layouts are measured with it.
  static QFont labelFont();

 Q_SIGNALS:
  void nodeSelected(const QString& id);
  /// A node was double-clicked (collapsed scopes expand on it).
  void nodeActivated(const QString& id);

 private:
  void onSelectionChanged();

  QHash<QString, NodeItem*> nodes_;
  QHash<QString, QList<QGraphicsItem*>> edgesOf_;
  int edgeCount_ = 0;
};

}  // namespace tdfx::ui
