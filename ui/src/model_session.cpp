#include "tdfx/ui/model_session.h"

#include <QFontMetricsF>

#include "tdfx/ui/graph_scene.h"

#include <chrono>

namespace tdfx::ui {

TextMeasure labelMeasure() {
  const QFont font = GraphScene::labelFont();
  return [font](const std::string& line) {
    const QFontMetricsF metrics(font);
    return TextSize{metrics.horizontalAdvance(QString::fromStdString(line)), metrics.height()};
  };
}
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

std::shared_ptr<ModelSession> openSession(const std::shared_ptr<ModelWorker>& worker, const std::string& path,
                                          const ViewOptions& options, const TextMeasure& measure,
                                          LayoutProcess& layouter) {
  auto session = std::make_shared<ModelSession>();
  session->worker = worker;
  session->traced = worker->open(path);
  session->loadSeconds = worker->loadSeconds();
  session->traceSeconds = worker->traceSeconds();
  applyLayout(*session, layoutSession(session->traced.traced, options, measure, layouter));
  return session;
}

SessionLayout layoutSession(const TracedGraph& traced, const ViewOptions& options, const TextMeasure& measure,
                            LayoutProcess& layouter) {
  const auto start = Clock::now();
  SessionLayout result;
  result.options = options;
  result.view = buildView(traced, options);
  LayoutOutcome outcome = layouter.layout(result.view, measure);
  result.layout = std::move(outcome.layout);
  result.note = std::move(outcome.note);
  result.seconds = since(start);
  return result;
}

void applyLayout(ModelSession& session, SessionLayout layout) {
  session.options = std::move(layout.options);
  session.view = std::move(layout.view);
  session.layout = std::move(layout.layout);
  session.layoutSeconds = layout.seconds;
  session.layoutNote = std::move(layout.note);
}

}  // namespace tdfx::ui
