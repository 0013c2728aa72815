#pragma once
// The graph drawn from layout geometry as QGraphicsItems: nodes, edges with arrowheads, cluster
// frames with titles. The scene holds no model logic; it maps items back to view node ids.
#include <QGraphicsScene>
#include <QHash>
#include <QSet>
#include <QStringList>
#include <functional>

#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/view_graph.h"

namespace tdfx::ui {

class NodeItem;

class GraphScene : public QGraphicsScene {
  Q_OBJECT
 public:
  /// Marks drawn on nodes, independent of the selection; a node may carry several.
  enum Mark : unsigned {
    SearchMatch = 1,  ///< matches the search text (yellow halo)
    KeyUse = 2,       ///< reads or writes the key selected in the Keys panel (violet outline)
    Differs = 4,      ///< its value differs between eager and traced (red)
    DiffAdded = 8,    ///< compare: a node the first model does not have (green fill, "+" badge)
    DiffRemoved = 16, ///< compare: only this model has it (red fill, "−" badge)
    DiffChanged = 32, ///< compare: matched, but its op, target, args or module differ (violet fill, "~")
    DiffWeights = 64, ///< compare: uses a parameter or buffer whose values differ (blue fill, "Δ")
  };
  /// How a node is drawn now. Selection, hover and neighbours change only the outline; a compare's
  /// findings only the fill and the badge.
  struct NodeLook {
    QColor fill, outline;
    double outlineWidth = 0;
    QString diffBadge;  ///< the compare marks' signs ("~Δ"), empty for none
  };

  explicit GraphScene(QObject* parent = nullptr);
  ~GraphScene() override;

  /// Replaces the scene's contents with `view` drawn at `layout`'s positions.
  void showGraph(const ViewGraph& view, const LayoutResult& layout);
  /// The item drawing view node `id`, or null.
  QGraphicsItem* nodeItem(const QString& id) const;
  /// The lines drawn in node `id`'s record fields (fx style), in reading order; empty otherwise.
  QStringList recordText(const QString& id) const;
  /// The badge of input checks drawn on node `id` ("✓2"), empty for none.
  QString checkBadge(const QString& id) const;
  /// Where each edge label is drawn (scene coordinates).
  QList<QRectF> edgeLabelRects() const;
  /// Frame titles that do not fit their frame as drawn (none, normally).
  QStringList clippedFrameTitles() const;
  /// An edge passing through a frame title's text, and whether it is drawn over the text.
  struct TitleCrossing {
    QString title;
    bool edgeOnTop = false;
  };
  /// Every edge that passes through a frame title (tests: the title must stay on top).
  QList<TitleCrossing> frameTitleCrossings() const;
  int nodeCount() const { return nodes_.size(); }
  int edgeCount() const { return edgeCount_; }
  /// Where an arrow key goes from node `id` along the edges: Up its producer, Down its first user,
  /// Left / Right the next user of the same producers to that side; "" where there is none.
  QString step(const QString& id, int key) const;
  /// Selects view node `id` (and highlights its producers and consumers); "" clears.
  void selectNode(const QString& id);
  QString selectedNode() const;

  /// Gives exactly the nodes in `ids` the mark `mark` (others lose it).
  void setMarked(const QSet<QString>& ids, Mark mark);
  QStringList markedNodes(Mark mark) const;
  NodeLook nodeLook(const QString& id) const;
  /// The badge of a node carrying `marks`: one sign per compare mark.
  static QString diffBadge(unsigned marks);
  /// Time overlay: fills nodes by `fraction` in [0, 1] (white to red); an empty map restores colours.
  void setHeat(const QHash<QString, double>& fraction);
  /// Draws the edges of node `id` highlighted (hover and selection do).
  void setEdgesHighlighted(const QString& id, bool on);
  /// Colours of frames, edges and titles for a dark window background; takes effect at showGraph.
  void setDarkBackground(bool dark) { dark_ = dark; }

  /// The time overlay's fill for `fraction` of the slowest node's time (white to red).
  static QColor heatColor(double fraction);
  /// The colour `mark` is drawn in (the halo's, or the outline's), shared with the view's legend.
  static QColor markColor(Mark mark);
  /// Hover cards: what hovering node `id` shows (rich text); without one, or where it gives "",
  /// the node's own tooltip (its id, its checks).
  void setHoverCards(std::function<QString(const QString& id)> card) { hoverCard_ = std::move(card); }
  /// The card hovering `id` shows now.
  QString hoverCard(const QString& id) const;
  /// The font node labels use; layouts are measured with it.
  static QFont labelFont();

 Q_SIGNALS:
  void nodeSelected(const QString& id);
  /// A node was double-clicked (collapsed scopes expand on it).
  void nodeActivated(const QString& id);
  /// setMarked changed which nodes carry a mark (the legend lists the marks in use).
  void marksChanged();
  /// A node was right-clicked at `screenPos` (the window offers collapse/expand there).
  void nodeContextMenu(const QString& id, const QPoint& screenPos);

 protected:
  void helpEvent(QGraphicsSceneHelpEvent* event) override;

 private:
  void onSelectionChanged();
  std::function<QString(const QString&)> hoverCard_;
  void setNeighboursHighlighted(const QString& id, bool on);

  QHash<QString, NodeItem*> nodes_;
  QList<QGraphicsItem*> clusters_;
  QHash<QString, QList<QGraphicsItem*>> edgesOf_;
  QHash<QString, QStringList> neighboursOf_;  ///< the other ends of each node's edges
  QHash<QString, QStringList> producersOf_, usersOf_;  ///< by edge direction, in the layout's order
  int edgeCount_ = 0;
  bool dark_ = false;
  QString highlightedEdgesOf_;
};

}  // namespace tdfx::ui
