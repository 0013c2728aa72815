#pragma once
// New pictures of the open model: each request builds the view for its options and lays it out
// in a layout process, on a thread of its own, while the window keeps showing the old picture.
// A newer request stops the older one's Graphviz, and only the newest result is delivered, so a
// quick series of changes (depth, style, an expand) shows the last one asked for.
#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <memory>

#include "tdfx/ui/model_session.h"

namespace tdfx::ui {

class Relayouter : public QObject {
  Q_OBJECT
 public:
  explicit Relayouter(QObject* parent = nullptr);
  /// Stops the layout in progress and waits for the jobs (they read the session's graph).
  ~Relayouter() override;

  /// Lays out `session`'s graph for `options`; `selectAfter` is handed back with the result (a
  /// node to select in the new picture, such as the first node of a scope just expanded).
  void request(std::shared_ptr<const ModelSession> session, const ViewOptions& options, const QString& selectAfter = {});
  /// Another model is shown: no result of an earlier request is delivered.
  void forget();
  /// Whether a request's result is still to come.
  bool busy() const { return pending_; }
  /// Whether no layout job runs, the forgotten ones included: what a test waits for before it
  /// checks that a forgotten result was never delivered.
  bool idle() const { return pool_.activeThreadCount() == 0; }

 Q_SIGNALS:
  void laidOut(std::shared_ptr<SessionLayout> layout, const QString& selectAfter);
  void failed(const QString& error);

 private:
  struct Outcome {
    std::shared_ptr<SessionLayout> layout;
    QString error;
    int generation = 0;
  };
  void onFinished();

  QFutureWatcher<Outcome> watcher_;
  /// Layouts run one at a time on their own pool, so waiting for it waits for every layout job,
  /// including ones whose results were superseded (they still read node metadata).
  QThreadPool pool_;
  std::shared_ptr<LayoutProcess> process_;  ///< the newest request's: cancel() stops Graphviz
  int generation_ = 0;
  bool pending_ = false;
  QString selectAfter_;  ///< handed back with the next result delivered
};

}  // namespace tdfx::ui
