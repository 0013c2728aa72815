#include "tdfx/ui/relayouter.h"

#include <QtConcurrent/QtConcurrentRun>
#include <utility>

namespace tdfx::ui {

Relayouter::Relayouter(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, &Relayouter::onFinished);
}

Relayouter::~Relayouter() {
  if (process_) process_->cancel();
  pool_.waitForDone();
}

void Relayouter::request(std::shared_ptr<const ModelSession> session, const ViewOptions& options,
                         const QString& selectAfter) {
  const int generation = ++generation_;
  if (!selectAfter.isEmpty() || !pending_) selectAfter_ = selectAfter;  // a request in between keeps it
  pending_ = true;
  if (process_) process_->cancel();  // a newer picture is asked for: the older layout stops
  auto process = std::make_shared<LayoutProcess>();
  process_ = process;
  watcher_.setFuture(QtConcurrent::run(&pool_, [session, options, generation, process]() -> Outcome {
    try {
      return {std::make_shared<SessionLayout>(layoutSession(session->traced.traced, options, labelMeasure(), *process)),
              {}, generation};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromStdString(e.what()), generation};
    }
  }));
}

void Relayouter::forget() {
  ++generation_;  // a layout of the previous model must not land on this one
  pending_ = false;
  if (process_) process_->cancel();  // nor keep Graphviz busy
  selectAfter_.clear();
}

void Relayouter::onFinished() {
  if (watcher_.future().resultCount() == 0) return;
  Outcome outcome = watcher_.result();
  if (outcome.generation != generation_) return;  // a newer request is on its way
  pending_ = false;
  const QString selectAfter = std::exchange(selectAfter_, QString());
  if (!outcome.layout) return Q_EMIT failed(outcome.error);
  Q_EMIT laidOut(std::move(outcome.layout), selectAfter);
}

}  // namespace tdfx::ui
