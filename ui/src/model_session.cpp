#include "tdfx/ui/model_session.h"

#include <chrono>

namespace tdfx::ui {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

std::shared_ptr<ModelSession> openSession(const std::string& path, const ViewOptions& options, const TextMeasure& measure) {
  auto session = std::make_shared<ModelSession>();
  auto start = Clock::now();
  session->model = loadModelFile(path);
  session->loadSeconds = since(start);
  start = Clock::now();
  session->graphModule = std::make_unique<GraphModule>(symbolicTrace(*session->model.module));
  session->traceSeconds = since(start);
  relayout(*session, options, measure);
  return session;
}

void relayout(ModelSession& session, const ViewOptions& options, const TextMeasure& measure) {
  const auto start = Clock::now();
  session.options = options;
  session.view = buildView(session.graphModule->traced(), options);
  session.layout = layoutView(session.view, measure);
  session.layoutSeconds = since(start);
}

}  // namespace tdfx::ui
