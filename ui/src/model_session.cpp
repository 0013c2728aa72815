#include "tdfx/ui/model_session.h"

#include <QFontMetricsF>

#include "tdfx/error.h"
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
std::shared_ptr<const RunOverlay> runOverlay(const std::vector<NodeRunRecord>& records, const Graph& graph) {
  if (records.size() != graph.size())
    throw Error("run records are for a graph of " + std::to_string(records.size()) + " nodes, this one has " +
                std::to_string(graph.size()));
  auto run = std::make_shared<RunOverlay>();
  run->outputs.reserve(records.size());
  run->seconds.reserve(records.size());
  for (const NodeRunRecord& r : records) {
    run->outputs.push_back(r.outputs);
    run->seconds.push_back(r.seconds);
  }
  return run;
}

ParameterStatsMap statsMap(const std::vector<ParameterStats>& stats) {
  ParameterStatsMap map;
  for (const ParameterStats& s : stats) map[{s.node, s.parameter}] = s;
  return map;
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
  session.viewIdOfIr.clear();
  for (const ViewNode& v : session.view.nodes) {
    // emplace keeps the first: a size folded into two shape nodes is shown by the first, as the
    // picture's edges say, and a folded check's line of code selects the first node it checks.
    for (const std::string& ir : v.irNodes) session.viewIdOfIr.emplace(ir, v.id);
    for (const std::string& ir : v.checks) session.viewIdOfIr.emplace(ir, v.id);
  }
  session.layout = std::move(layout.layout);
  session.layoutSeconds = layout.seconds;
  session.layoutNote = std::move(layout.note);
}

}  // namespace tdfx::ui
