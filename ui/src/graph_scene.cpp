#include "tdfx/ui/graph_scene.h"

#include "error_text.h"

#include <QGraphicsItem>
#include <algorithm>
#include <QGraphicsSceneContextMenuEvent>
#include <QGraphicsSceneHelpEvent>
#include <QToolTip>
#include <QPainterPath>
#include <QPainter>
#include <QSignalBlocker>
#include <QStyleOptionGraphicsItem>

namespace tdfx::ui {

namespace {

QColor colorOf(const std::string& name) { return QColor(QString::fromStdString(colorToHex(name))); }

// Level of detail (scene-to-device scale) below which text is not drawn, and below which shapes
// are drawn as plain rectangles and edges as straight lines: a 10,000-node graph seen whole.
constexpr double kTextDetail = 0.35;
constexpr double kTinyDetail = 0.12;

QFont edgeLabelFont() {
  QFont font(QStringLiteral("Sans Serif"));
  font.setPointSizeF(10 * 0.75 * 0.92);  // Graphviz's 10 points in scene units, a little under its estimate
  return font;
}

/// An edge: the spline, its arrowhead and its label (shape and dtype), each drawn only when
/// large enough to see.
class EdgeItem : public QGraphicsItem {
 public:
  EdgeItem(QPainterPath path, QPolygonF arrow, QString label, QPointF labelPos, QColor color, QColor labelColor)
      : path_(std::move(path)), arrow_(std::move(arrow)), label_(std::move(label)), labelPos_(labelPos),
        color_(color), labelColor_(labelColor) {
    bounds_ = path_.boundingRect().united(arrow_.boundingRect());
    if (!label_.isEmpty()) {
      // Graphviz gives the centre of the space it kept free for the label, sized for 10 points:
      // the text is drawn centred there at that size, so labels neither drift nor overlap.
      const QSizeF size = QFontMetricsF(edgeLabelFont()).size(0, label_);
      labelRect_ = QRectF(labelPos_.x() - size.width() / 2, labelPos_.y() - size.height() / 2, size.width(), size.height());
      bounds_ = bounds_.united(labelRect_);
    }
    bounds_.adjust(-2, -2, 2, 2);
    setZValue(-0.5);
  }
  QRectF boundingRect() const override { return bounds_; }
  const QRectF& labelRect() const { return labelRect_; }
  bool passesThrough(const QRectF& rect) const { return path_.intersects(rect); }
  void setHighlighted(bool on) {
    if (on == highlighted_) return;
    highlighted_ = on;
    setZValue(on ? -0.4 : -0.5);
    update();
  }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override {
    const double lod = option->levelOfDetailFromTransform(p->worldTransform());
    const QColor color = highlighted_ ? QColor("#2471A3") : color_;
    // Width 0 is one device pixel, the cheapest pen: for far views.
    p->setPen(QPen(color, highlighted_ ? 2.5 : (lod < kTinyDetail ? 0.0 : 1.0)));
    p->setBrush(Qt::NoBrush);
    if (lod < kTinyDetail) {
      p->drawLine(QPointF(path_.elementAt(0)), path_.currentPosition());
      return;
    }
    p->drawPath(path_);
    if (lod < kTextDetail) return;
    p->setPen(Qt::NoPen);
    p->setBrush(color);
    p->drawPolygon(arrow_);
    if (label_.isEmpty()) return;
    p->setPen(labelColor_);
    p->setFont(edgeLabelFont());
    p->drawText(labelRect_, Qt::AlignCenter, label_);
  }

 private:
  QPainterPath path_;
  QPolygonF arrow_;
  QString label_;
  QPointF labelPos_;
  QRectF labelRect_;
  QColor color_, labelColor_;
  QRectF bounds_;
  bool highlighted_ = false;
};

/// A cluster frame. Its title is a FrameTitleItem of its own, drawn above the edges.
class ClusterItem : public QGraphicsItem {
 public:
  ClusterItem(QRectF rect, bool dark) : rect_(rect), dark_(dark) { setZValue(-2); }
  QRectF boundingRect() const override { return rect_.adjusted(-1, -1, 1, 1); }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override {
    const double lod = option->levelOfDetailFromTransform(p->worldTransform());
    p->setPen(QPen(QColor(dark_ ? "#5C6773" : "#9AA5B1"), 0.0));
    // Far out, nested translucent fills blend over most of the window once per cluster: frames only.
    p->setBrush(lod < kTinyDetail ? QBrush(Qt::NoBrush) : QBrush(dark_ ? QColor(255, 255, 255, 18) : QColor(20, 40, 80, 12)));
    p->drawRect(rect_);
  }

 private:
  QRectF rect_;
  bool dark_;
};

/// A frame's title at the top of the frame. An edge into the frame enters through the band Graphviz
/// keeps for the title (on resnet18, every one of 15 frames), so the title is drawn above the
/// edges with a halo of the background: the text stays whole and readable where an edge passes.
/// It is skipped when too small to read.
class FrameTitleItem : public QGraphicsItem {
 public:
  FrameTitleItem(QRectF frame, QString title, bool dark)
      : frame_(frame), title_(std::move(title)), dark_(dark), font_(titleFont(frame_.width() - 8, title_)) {
    const QFontMetricsF metrics(font_);
    const double width = metrics.horizontalAdvance(title_);
    text_ = QRectF(frame_.center().x() - width / 2, frame_.top() + 2, width, metrics.height());
    setZValue(-0.3);  // above edges (-0.5, lit -0.4), below nodes
  }
  /// Graphviz sized the frame for its title at 9 points: the same size here, smaller only where
  /// this machine's font is wider, so a title is never cut.
  static QFont titleFont(double width, const QString& title) {
    QFont font(QStringLiteral("Sans Serif"));
    font.setPointSizeF(9 * 0.75);  // points at 96 dpi -> scene units
    const double w = QFontMetricsF(font).horizontalAdvance(title);
    if (w > width && width > 0) font.setPointSizeF(font.pointSizeF() * std::max(width / w, 0.3));
    return font;
  }
  QString title() const { return title_; }
  /// Whether the title fits the frame as drawn (tests).
  bool titleFits() const { return text_.width() <= frame_.width() - 8 + 0.5; }
  /// Where the text is drawn, in scene coordinates.
  QRectF textRect() const { return text_; }
  QRectF boundingRect() const override { return text_.adjusted(-2, -2, 2, 2); }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override {
    if (option->levelOfDetailFromTransform(p->worldTransform()) < kTextDetail) return;
    p->setPen(Qt::NoPen);
    p->setBrush(dark_ ? QColor(40, 44, 52, 230) : QColor(246, 248, 250, 230));
    p->drawRoundedRect(text_.adjusted(-1.5, 0, 1.5, 0), 2, 2);
    p->setPen(dark_ ? QColor("#D0D7DE") : QColor("#222222"));
    p->setFont(font_);
    p->drawText(text_, Qt::AlignCenter, title_);
  }

 private:
  QRectF frame_, text_;
  QString title_;
  bool dark_;
  QFont font_;
};

}  // namespace

/// One node: a box or ellipse with its label lines. Text is skipped when the view is zoomed far
/// out (level of detail), and the item caches its rendering.
class NodeItem : public QGraphicsItem {
 public:
  NodeItem(const ViewNode& node, const LayoutResult::NodeBox& box)
      : id_(QString::fromStdString(node.id)), ellipse_(node.shape == "ellipse"), fill_(colorOf(node.fillColor)),
        rect_(-box.width / 2, -box.height / 2, box.width, box.height), fields_(box.fields),
        recordFont_(recordFont(box)) {
    for (const auto& line : node.lines) lines_ << QString::fromStdString(line);
    if (lines_.isEmpty()) lines_ << id_;
    setPos(box.x, box.y);
    setFlags(ItemIsSelectable);
    setAcceptHoverEvents(true);
    setCacheMode(DeviceCoordinateCache);
    QString tip = id_;
    if (!node.checks.empty()) {
      QStringList names;
      for (const auto& c : node.checks) names << QString::fromStdString(c);
      tip += QObject::tr("\nchecked by %1 (View > Show input checks draws them)").arg(names.join(QStringLiteral(", ")));
      badge_ = node.checkAsserts > 0 ? QStringLiteral("\u2713%1").arg(node.checkAsserts) : QStringLiteral("\u2713");
    }
    if (!node.fxDifference.empty()) {
      // The graph follows code torch.fx does not run: an amber "≠ FX" tag, the reason in the tip.
      tip += QObject::tr("\nnot torch.fx's graph here: %1").arg(QString::fromStdString(node.fxDifference));
      badge_ = QStringLiteral("\u2260 FX");
      fxBadge_ = true;
    }
    notes_ = tip.section('\n', 1);  // the card's last lines (plain text)
    setToolTip(plainToolTip(tip));
    setData(0, id_);
  }
  QRectF boundingRect() const override { return rect_.adjusted(-5, -10, 8, 5); }  // room for the halo and badge
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override {
    const double lod = option->levelOfDetailFromTransform(p->worldTransform());
    if (lod < kTinyDetail && !marks_ && !isSelected() && !highlighted_) {  // a far view: a coloured dot
      p->fillRect(rect_, heat_ >= 0 ? GraphScene::heatColor(heat_) : fill_);
      return;
    }
    if (marks_ & GraphScene::SearchMatch) {  // a halo behind the node
      p->setPen(Qt::NoPen);
      p->setBrush(GraphScene::markColor(GraphScene::SearchMatch));
      p->drawRoundedRect(rect_.adjusted(-5, -5, 5, 5), 6, 6);
    }
    const GraphScene::NodeLook drawn = look();
    QPen pen(drawn.outline);
    pen.setWidthF(drawn.outlineWidth);
    p->setPen(pen);
    p->setBrush(drawn.fill);
    if (ellipse_) p->drawEllipse(rect_);
    else p->drawRoundedRect(rect_, 3, 3);
    if (!fields_.empty()) {
      paintRecord(p, lod);
    } else if (lod >= kTextDetail) {  // else too small to read
      if (!badge_.isEmpty()) paintBadge(p);
      p->setFont(GraphScene::labelFont());
      p->setPen(Qt::black);
      p->drawText(rect_, Qt::AlignCenter, lines_.join('\n'));
    }
    if (!drawn.diffBadge.isEmpty()) paintDiffBadge(p, drawn.diffBadge);  // over the text: a finding stays seen
  }
  /// The input checks folded onto this node: a small green tag on its top right corner.
  void paintBadge(QPainter* p) {
    QFont font = GraphScene::labelFont();
    font.setPointSizeF(font.pointSizeF() * 0.85);
    const QFontMetricsF metrics(font);
    const QSizeF size(metrics.horizontalAdvance(badge_) + 6, metrics.height() + 1);
    const QRectF tag(rect_.right() - size.width() + 4, rect_.top() - size.height() / 2, size.width(), size.height());
    p->setPen(QPen(QColor(fxBadge_ ? "#B9770E" : "#1E8449"), 1.0));
    p->setBrush(QColor(fxBadge_ ? "#FCF3CF" : "#D5F5E3"));
    p->drawRoundedRect(tag, 4, 4);
    p->setFont(font);
    p->setPen(QColor(fxBadge_ ? "#7E5109" : "#145A32"));
    p->drawText(tag, Qt::AlignCenter, badge_);
  }
  /// The outline says what the user is doing (selected: orange; a neighbour of the selection: blue;
  /// under the pointer: near-black; a verify mark or a selected key: red, violet); a compare's finding is a fill and
  /// a badge, which no selection or hover changes (issue 36: a changed node under the selection
  /// outline looked unchanged, and its lit neighbours looked changed).
  GraphScene::NodeLook look() const {
    GraphScene::NodeLook l;
    l.outline = QColor("#333333");
    l.outlineWidth = 1.0;
    if (marks_ & GraphScene::KeyUse) l.outline = GraphScene::markColor(GraphScene::KeyUse), l.outlineWidth = 3.0;
    if (marks_ & GraphScene::Differs) l.outline = GraphScene::markColor(GraphScene::Differs), l.outlineWidth = 3.5;
    if (highlighted_ && !(marks_ & GraphScene::Differs)) l.outline = QColor("#2471A3"), l.outlineWidth = 2.5;
    // The pointer's node: near-black and a little heavier, not the neighbours' blue (issue 57, O).
    if (hovered_ && !(marks_ & GraphScene::Differs)) l.outline = QColor("#0B0F14"), l.outlineWidth = 2.5;
    if (isSelected()) l.outline = QColor("#D35400"), l.outlineWidth = 3.0;
    l.fill = fill_;
    for (const auto mark : {GraphScene::DiffWeights, GraphScene::DiffAdded, GraphScene::DiffRemoved, GraphScene::DiffChanged})
      if (marks_ & mark) l.fill = GraphScene::markColor(mark);
    if (heat_ >= 0) l.fill = GraphScene::heatColor(heat_);
    l.diffBadge = GraphScene::diffBadge(marks_);
    return l;
  }
  /// A compare's finding: a dark tag with its sign on the node's top left corner (the input checks'
  /// tag has the right).
  void paintDiffBadge(QPainter* p, const QString& text) {
    QFont font = GraphScene::labelFont();
    font.setBold(true);
    const QFontMetricsF metrics(font);
    const QSizeF size(metrics.horizontalAdvance(text) + 8, metrics.height() + 1);
    const QRectF tag(rect_.left() - 4, rect_.top() - size.height() / 2, size.width(), size.height());
    p->setPen(Qt::NoPen);
    p->setBrush(QColor("#1B2631"));
    p->drawRoundedRect(tag, 4, 4);
    p->setFont(font);
    p->setPen(Qt::white);
    p->drawText(tag, Qt::AlignCenter, text);
  }
  const QString& badge() const { return badge_; }
  /// FxGraphDrawer's record: the fields Graphviz placed, separated by lines, text justified as
  /// its label asks (\l lines left-aligned).
  void paintRecord(QPainter* p, double lod) {
    p->setPen(QPen(QColor("#333333"), 0.0));
    p->setBrush(Qt::NoBrush);
    for (const auto& f : fields_)  // each field's outline: the outer edges overlap the node's
      p->drawRect(QRectF(f.x, f.y, f.width, f.height));
    if (lod < kTextDetail) return;
    p->setFont(recordFont_);
    p->setPen(Qt::black);
    const double lineHeight = QFontMetricsF(recordFont_).height();
    for (const auto& f : fields_) {
      const double top = f.y + (f.height - lineHeight * static_cast<double>(f.lines.size())) / 2;
      for (size_t i = 0; i < f.lines.size(); ++i) {
        const char just = i < f.justify.size() ? f.justify[i] : 'n';
        const Qt::Alignment align = just == 'l' ? Qt::AlignLeft : just == 'r' ? Qt::AlignRight : Qt::AlignHCenter;
        p->drawText(QRectF(f.x + 4, top + lineHeight * static_cast<double>(i), f.width - 8, lineHeight),
                    align | Qt::AlignVCenter, QString::fromStdString(f.lines[i]));
      }
    }
  }
  /// The font of a record's text: Graphviz's size, shrunk where this machine's serif font is wider
  /// than the one Graphviz measured with, so no line overflows its field.
  static QFont recordFont(const LayoutResult::NodeBox& box) {
    QFont font(QStringLiteral("Serif"));
    font.setPointSizeF((box.fontSize > 0 ? box.fontSize : 14.0) * 0.75);  // points at 96 dpi -> scene units
    double shrink = 1.0;
    const QFontMetricsF metrics(font);
    for (const auto& f : box.fields)
      for (const auto& line : f.lines) {
        const double w = metrics.horizontalAdvance(QString::fromStdString(line));
        if (w > f.width - 8 && w > 0) shrink = std::min(shrink, (f.width - 8) / w);
      }
    if (shrink < 1.0) font.setPointSizeF(font.pointSizeF() * std::max(shrink, 0.3));
    return font;
  }
  /// The text of every record field, line by line (tests read what is drawn).
  QStringList recordLines() const {
    QStringList out;
    for (const auto& f : fields_)
      for (const auto& line : f.lines) out << QString::fromStdString(line);
    return out;
  }
  void setHighlighted(bool on) {
    if (on == highlighted_) return;  // an update() would re-render the cached item
    highlighted_ = on;
    lookChanged();
  }
  /// Repaints the node in every view. Qt keeps a device cache per view but one "exposed" mark per
  /// item, which the first view to paint clears: the main view and the overview drew the same node
  /// in two looks until a zoom re-rendered it (issue 57, A). Dropping the cache repaints it in all.
  void lookChanged() {
    setCacheMode(NoCache);
    setCacheMode(DeviceCoordinateCache);
    update();
  }
  const QString& id() const { return id_; }
  /// What the tooltip says besides the id (input checks, where the graph is not FX's), plain text.
  const QString& notes() const { return notes_; }
  unsigned marks() const { return marks_; }
  void setMark(unsigned mark, bool on) {
    const unsigned next = on ? (marks_ | mark) : (marks_ & ~mark);
    if (next == marks_) return;
    marks_ = next;
    lookChanged();
  }
  void setHeat(double fraction) {
    if (fraction == heat_) return;
    heat_ = fraction;
    lookChanged();
  }

 protected:
  void hoverEnterEvent(QGraphicsSceneHoverEvent*) override {
    hovered_ = true;
    lookChanged();
    if (auto* s = dynamic_cast<GraphScene*>(scene())) s->setEdgesHighlighted(id_, true);
  }
  void hoverLeaveEvent(QGraphicsSceneHoverEvent*) override {
    hovered_ = false;
    lookChanged();
    if (auto* s = dynamic_cast<GraphScene*>(scene()); s && !isSelected()) {
      s->setEdgesHighlighted(id_, false);
      s->setEdgesHighlighted(s->selectedNode(), true);  // an edge shared with the selection stays lit
    }
  }
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override {
    if (change == ItemSelectedHasChanged) lookChanged();  // the selection's outline
    return QGraphicsItem::itemChange(change, value);
  }
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent*) override {
    if (auto* s = dynamic_cast<GraphScene*>(scene())) Q_EMIT s->nodeActivated(id_);
  }
  void contextMenuEvent(QGraphicsSceneContextMenuEvent* event) override {
    if (auto* s = dynamic_cast<GraphScene*>(scene())) {
      s->selectNode(id_);
      Q_EMIT s->nodeContextMenu(id_, event->screenPos());
    }
  }

 private:
  QString id_;
  QString notes_;
  bool ellipse_;
  QColor fill_;
  QRectF rect_;
  std::vector<LayoutResult::RecordField> fields_;
  QFont recordFont_;
  QString badge_;  ///< "✓2": input checks folded onto the node; "≠ FX": see ViewNode::fxDifference
  bool fxBadge_ = false;
  QStringList lines_;
  bool highlighted_ = false, hovered_ = false;
  unsigned marks_ = 0;
  double heat_ = -1;  // < 0: the view's fill colour
};

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent) {
  connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::onSelectionChanged);
}

QColor GraphScene::heatColor(double fraction) { return QColor::fromHsvF(0.0, 0.1 + 0.8 * fraction, 1.0); }

QColor GraphScene::markColor(Mark mark) {
  switch (mark) {
    case SearchMatch: return QColor(255, 200, 0, 200);
    case KeyUse: return QColor("#8E44AD");
    case Differs: return QColor("#E01B24");
    // Compare's fills: stronger than any op colour of either style, so they read as findings.
    case DiffAdded: return QColor("#52BE80");
    case DiffRemoved: return QColor("#EC7063");
    case DiffChanged: return QColor("#AF7AC5");
    case DiffWeights: return QColor("#5DADE2");
  }
  return Qt::black;
}

QString GraphScene::diffBadge(unsigned marks) {
  QString badge;
  if (marks & DiffRemoved) badge += QStringLiteral("\u2212");
  if (marks & DiffAdded) badge += QStringLiteral("+");
  if (marks & DiffChanged) badge += QStringLiteral("~");
  if (marks & DiffWeights) badge += QStringLiteral("\u0394");
  return badge;
}

GraphScene::NodeLook GraphScene::nodeLook(const QString& id) const {
  const NodeItem* item = nodes_.value(id);
  return item ? item->look() : NodeLook{};
}

QFont GraphScene::labelFont() {
  QFont f(QStringLiteral("Sans Serif"));
  f.setPointSizeF(8);
  return f;
}

GraphScene::~GraphScene() {
  // Deleting a selected item emits selectionChanged: not while half destroyed.
  blockSignals(true);
  nodes_.clear();
  clusters_.clear();
  clear();
}

namespace {
constexpr size_t kIndexedEdgesAtMost = 15000;
}  // namespace

void GraphScene::showGraph(const ViewGraph& view, const LayoutResult& layout) {
  nodes_.clear();
  edgesOf_.clear();
  neighboursOf_.clear();
  producersOf_.clear();
  usersOf_.clear();
  highlightedEdgesOf_.clear();
  {
    const QSignalBlocker blocker(this);  // clearing a selection must not reach the old items
    clear();
  }
  edgeCount_ = 0;
  // Qt's BSP index files an item under every leaf its bounding box covers: tens of thousands of
  // long edges (a layered fallback layout) cost it seconds of the GUI thread. Such pictures are
  // painted without an index.
  setItemIndexMethod(layout.edges.size() > kIndexedEdgesAtMost ? NoIndex : BspTreeIndex);
  setSceneRect(-20, -20, layout.width + 40, layout.height + 40);
  clusters_.clear();
  for (const auto& c : layout.clusters) {
    const QRectF frame(c.x, c.y, c.width, c.height);
    addItem(new ClusterItem(frame, dark_));
    auto* title = new FrameTitleItem(frame, QString::fromStdString(c.title), dark_);
    addItem(title);
    clusters_.append(title);
  }
  QHash<QString, const ViewNode*> byId;
  for (const ViewNode& n : view.nodes) byId.insert(QString::fromStdString(n.id), &n);
  for (const auto& box : layout.nodes) {
    const ViewNode* v = byId.value(QString::fromStdString(box.id));
    if (!v) continue;
    auto* item = new NodeItem(*v, box);
    addItem(item);
    nodes_.insert(item->id(), item);
  }
  for (const auto& e : layout.edges) {
    if (e.points.empty()) continue;
    QPainterPath path(QPointF(e.points[0].x, e.points[0].y));
    for (size_t i = 1; i + 2 < e.points.size(); i += 3)
      path.cubicTo(e.points[i].x, e.points[i].y, e.points[i + 1].x, e.points[i + 1].y, e.points[i + 2].x, e.points[i + 2].y);
    const QPointF end = path.currentPosition();
    QPolygonF arrow;
    if (e.arrowTip) {
      const QPointF tip(e.arrowTip->x, e.arrowTip->y);
      path.lineTo(tip);
      // Arrowhead: a small filled triangle along the last segment (the curve itself stays unfilled).
      QLineF back(tip, end);
      if (back.length() < 1e-3) back = QLineF(tip, tip + QPointF(0, -1));
      back.setLength(7);
      QLineF left = back, right = back;
      left.setAngle(back.angle() + 25);
      right.setAngle(back.angle() - 25);
      arrow << tip << left.p2() << right.p2();
    }
    auto* item = new EdgeItem(path, arrow, QString::fromStdString(e.label), QPointF(e.labelPos.x, e.labelPos.y),
                              QColor(dark_ ? "#A8B3BD" : "#444444"), QColor(dark_ ? "#C0C8D0" : "#555555"));
    addItem(item);
    const QString from = QString::fromStdString(e.from), to = QString::fromStdString(e.to);
    edgesOf_[from].append(item);
    edgesOf_[to].append(item);
    neighboursOf_[from].append(to);
    neighboursOf_[to].append(from);
    if (!usersOf_[from].contains(to)) usersOf_[from].append(to);
    if (!producersOf_[to].contains(from)) producersOf_[to].append(from);
    ++edgeCount_;
  }
}

QGraphicsItem* GraphScene::nodeItem(const QString& id) const { return nodes_.value(id); }

QList<QRectF> GraphScene::edgeLabelRects() const {
  QList<QRectF> rects;
  QSet<const QGraphicsItem*> seen;  // each edge is listed under both of its ends
  for (const auto& edges : edgesOf_)
    for (const QGraphicsItem* e : edges)
      if (!seen.contains(e) && !static_cast<const EdgeItem*>(e)->labelRect().isEmpty()) {
        seen.insert(e);
        rects << static_cast<const EdgeItem*>(e)->labelRect();
      }
  return rects;
}

QStringList GraphScene::clippedFrameTitles() const {
  QStringList out;
  for (const QGraphicsItem* item : clusters_)
    if (const auto* c = static_cast<const FrameTitleItem*>(item); !c->titleFits()) out << c->title();
  return out;
}

QList<GraphScene::TitleCrossing> GraphScene::frameTitleCrossings() const {
  QList<TitleCrossing> out;
  QSet<const QGraphicsItem*> seen;
  for (const auto& edges : edgesOf_)
    for (const QGraphicsItem* e : edges) {
      if (seen.contains(e)) continue;
      seen.insert(e);
      for (const QGraphicsItem* item : clusters_) {
        const auto* title = static_cast<const FrameTitleItem*>(item);
        if (static_cast<const EdgeItem*>(e)->passesThrough(title->textRect()))
          out.append({title->title(), e->zValue() >= title->zValue()});
      }
    }
  return out;
}

QString GraphScene::checkBadge(const QString& id) const {
  const NodeItem* item = nodes_.value(id);
  return item ? item->badge() : QString();
}

QStringList GraphScene::recordText(const QString& id) const {
  const NodeItem* item = nodes_.value(id);
  return item ? item->recordLines() : QStringList();
}

void GraphScene::setMarked(const QSet<QString>& ids, Mark mark) {
  for (NodeItem* n : nodes_) n->setMark(mark, ids.contains(n->id()));
  Q_EMIT marksChanged();
}

QStringList GraphScene::markedNodes(Mark mark) const {
  QStringList ids;
  for (NodeItem* n : nodes_)
    if (n->marks() & mark) ids << n->id();
  ids.sort();
  return ids;
}

void GraphScene::setHeat(const QHash<QString, double>& fraction) {
  for (NodeItem* n : nodes_) n->setHeat(fraction.isEmpty() ? -1.0 : fraction.value(n->id(), 0.0));
}

void GraphScene::selectNode(const QString& id) {
  clearSelection();
  if (NodeItem* item = nodes_.value(id)) item->setSelected(true);
}

QString GraphScene::step(const QString& id, int key) const {
  const NodeItem* at = nodes_.value(id);
  if (!at) return {};
  // The nearest of `candidates` by position: the one above or below first in the reading order.
  const auto nearest = [&](const QStringList& candidates, auto&& accept) {
    QString best;
    double bestDistance = 0;
    for (const QString& c : candidates) {
      const NodeItem* item = nodes_.value(c);
      if (!item || c == id || !accept(item->pos())) continue;
      const double d = QLineF(item->pos(), at->pos()).length();
      if (best.isEmpty() || d < bestDistance) best = c, bestDistance = d;
    }
    return best;
  };
  const auto any = [](const QPointF&) { return true; };
  switch (key) {
    case Qt::Key_Up: return nearest(producersOf_.value(id), any);
    case Qt::Key_Down: return nearest(usersOf_.value(id), any);
    case Qt::Key_Left:
    case Qt::Key_Right: {
      QStringList siblings;
      for (const QString& p : producersOf_.value(id)) siblings += usersOf_.value(p);
      const double x = at->pos().x();
      if (key == Qt::Key_Left) return nearest(siblings, [x](const QPointF& p) { return p.x() < x; });
      return nearest(siblings, [x](const QPointF& p) { return p.x() > x; });
    }
    default: return {};
  }
}

QString GraphScene::hoverCard(const QString& id) const {
  const NodeItem* item = nodes_.value(id);
  if (!item) return {};
  const QString card = hoverCard_ ? hoverCard_(id) : QString();
  if (card.isEmpty()) return item->toolTip();
  // The node's own notes (input checks, where it is not torch.fx's graph) under the card.
  if (item->notes().isEmpty()) return card;
  return card + QStringLiteral("<br>") + item->notes().toHtmlEscaped().replace('\n', QStringLiteral("<br>"));
}

void GraphScene::helpEvent(QGraphicsSceneHelpEvent* event) {
  // A card with what the node does, built when it is hovered (the session knows shapes, the scene
  // does not); the items' own tooltips for everything else.
  for (QGraphicsItem* item : items(event->scenePos()))
    if (const auto* node = dynamic_cast<const NodeItem*>(item)) {
      QToolTip::showText(event->screenPos(), hoverCard(node->id()), event->widget());
      event->setAccepted(true);
      return;
    }
  QGraphicsScene::helpEvent(event);
}

QString GraphScene::selectedNode() const {
  for (QGraphicsItem* item : selectedItems())
    if (auto* node = dynamic_cast<NodeItem*>(item)) return node->id();
  return {};
}

void GraphScene::setEdgesHighlighted(const QString& id, bool on) {
  for (QGraphicsItem* edge : edgesOf_.value(id)) static_cast<EdgeItem*>(edge)->setHighlighted(on);
}

void GraphScene::setNeighboursHighlighted(const QString& id, bool on) {
  for (const QString& other : neighboursOf_.value(id))
    if (other != id)
      if (NodeItem* item = nodes_.value(other)) item->setHighlighted(on);
}

void GraphScene::onSelectionChanged() {
  // Only the previous selection's edges and neighbours are lit: unlight those, light the new ones.
  setEdgesHighlighted(highlightedEdgesOf_, false);
  setNeighboursHighlighted(highlightedEdgesOf_, false);
  const QString id = selectedNode();
  highlightedEdgesOf_ = id;
  setEdgesHighlighted(id, true);
  setNeighboursHighlighted(id, true);  // its producers and consumers
  Q_EMIT nodeSelected(id);
}

}  // namespace tdfx::ui
