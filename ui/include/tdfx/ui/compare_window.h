#pragma once
// File > Compare...: the two models side by side, each with its overview and an inspector, nodes
// filled and badged by what the diff found, the panes zoomed and scrolled together, and a list of
// the differences, grouped by module, that moves both pictures. It opens on the first difference.
#include <QHash>
#include <QWidget>
#include <memory>

#include "tdfx/ui/model_session.h"
#include "tdfx/worker/model_diff.h"

class QTextBrowser;

namespace tdfx::ui {

class DifferenceList;
class GraphScene;
class GraphView;

/// The legend of the compare marks `scene` carries, each said as drawn ("weights differ (blue fill, Δ)").
QList<QPair<QString, QColor>> compareLegend(const GraphScene& scene);

class CompareWindow : public QWidget {
  Q_OBJECT
 public:
  /// `a` is the open model, `b` the other file (both traced and laid out), `diff` from diffModels.
  CompareWindow(std::shared_ptr<const ModelSession> a, std::shared_ptr<const ModelSession> b, ModelDiff diff,
                const QString& nameA, const QString& nameB, QWidget* parent = nullptr);

  /// The models compared: A the open one, B the other file.
  const std::shared_ptr<const ModelSession>& sessionB() const { return sides_[1].session; }
  GraphScene* sceneA() const { return sides_[0].scene; }
  GraphScene* sceneB() const { return sides_[1].scene; }
  GraphView* viewA() const { return sides_[0].view; }
  GraphView* viewB() const { return sides_[1].view; }
  QTextBrowser* inspectorA() const { return sides_[0].inspector; }
  QTextBrowser* inspectorB() const { return sides_[1].inspector; }
  /// The differences, grouped by module ("identical" alone when there are none).
  DifferenceList* differences() const { return list_; }
  /// Selects view node `id` of side A (or B) and the node it matches on the other side.
  void selectOnA(const QString& id);
  void selectOnB(const QString& id);

 Q_SIGNALS:
  /// A model file was dropped on side 0 (A, the open model) or 1 (B): compare with it in its place.
  void fileDropped(int side, const QString& path);

 protected:
  void showEvent(QShowEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  /// One pane: its model, picture and inspector, and how its IR names map to what it draws.
  struct Side {
    std::shared_ptr<const ModelSession> session;
    GraphScene* scene = nullptr;
    GraphView* view = nullptr;
    QTextBrowser* inspector = nullptr;
    QHash<QString, QString> viewIdOfIr;   ///< IR node name -> view node id
    QHash<QString, QString> partner;      ///< IR node name -> the matched IR node on the other side
    QHash<QString, QString> match;        ///< view node id -> the other side's view node it matches
  };

  void buildSide(Side& side, const DiffMarks& marks);
  /// Side::match of both sides (once both are built).
  void matchViewNodes(int from);
  void showDifference(const QString& irA, const QString& irB);
  /// Selects, on the other side, what `id` on side `from` matches.
  /// Puts `partner` (on the other side) where `id` is in its pane; centred when `id` is not in sight.
  void showBeside(int from, const QString& id, const QString& partner);
  void follow(int from, const QString& id);
  /// The other side's view node that the nodes `id` stands for match; for an added or removed node,
  /// the match of the nearest node before it that has one (where the block would be).
  QString anchorOnOtherSide(int from, const QString& id) const;
  /// Moves the other pane to where side `from` is: the same zoom, the node nearest the centre at the
  /// same place.
  void keepTogether(int from);
  void inspect(int side, const QString& id);

  Side sides_[2];
  ModelDiff diff_;
  DifferenceList* list_ = nullptr;
  bool syncing_ = false;
  bool shownOnce_ = false;
};

}  // namespace tdfx::ui
