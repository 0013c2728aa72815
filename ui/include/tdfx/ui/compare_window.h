#pragma once
// File > Compare...: the two models side by side, nodes coloured by what the diff found, and a list
// of the differences that navigates both pictures.
#include <QHash>
#include <QWidget>
#include <memory>

#include "tdfx/ui/model_session.h"
#include "tdfx/worker/model_diff.h"

class QListWidget;
class QLabel;

namespace tdfx::ui {

class GraphScene;
class GraphView;

class CompareWindow : public QWidget {
  Q_OBJECT
 public:
  /// `a` is the open model, `b` the other file (both traced and laid out), `diff` from diffModels.
  CompareWindow(std::shared_ptr<const ModelSession> a, std::shared_ptr<const ModelSession> b, ModelDiff diff,
                const QString& nameA, const QString& nameB, QWidget* parent = nullptr);

  GraphScene* sceneA() const { return sceneA_; }
  GraphScene* sceneB() const { return sceneB_; }
  GraphView* viewA() const { return viewA_; }
  GraphView* viewB() const { return viewB_; }
  /// The list of differences, one row each ("identical" alone when there are none).
  QListWidget* differences() const { return list_; }
  /// Selects row `row` of the list: both pictures go to its nodes.
  void showDifference(int row);
  /// Selects view node `id` of side A (or B) and the node it matches on the other side.
  void selectOnA(const QString& id);
  void selectOnB(const QString& id);

 private:
  void mark(GraphScene* scene, const ModelSession& session, const std::vector<std::string>& ir, unsigned mark);
  void addRow(const QString& text, const std::string& irA, const std::string& irB);
  QString viewIdOn(const ModelSession& session, const std::string& ir) const;
  // Selects, on the other side, what `id` on this side matches.
  void follow(const ModelSession& from, const QString& id, const QHash<QString, QString>& partner,
              const ModelSession& to, GraphScene* scene, GraphView* view);

  std::shared_ptr<const ModelSession> a_, b_;
  ModelDiff diff_;
  GraphScene* sceneA_ = nullptr;
  GraphScene* sceneB_ = nullptr;
  GraphView* viewA_ = nullptr;
  GraphView* viewB_ = nullptr;
  QListWidget* list_ = nullptr;
  QHash<QString, QString> aToB_, bToA_;  ///< matched IR node names
  bool syncing_ = false;
};

}  // namespace tdfx::ui
