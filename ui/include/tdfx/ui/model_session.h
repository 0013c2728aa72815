#pragma once
// Everything the window shows for one open model, built off the GUI thread.
#include <map>
#include <memory>
#include <string>

#include "tdfx/codegen/python_code.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/layout_process.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/worker/model_worker.h"

namespace tdfx::ui {

/// The min, max and mean of each parameter the worker read, by node name and parameter name.
using ParameterStatsMap = std::map<std::pair<std::string, std::string>, ParameterStats>;

/// One open model. The model file is loaded, traced and run only in `worker`, its own process;
/// the window holds the traced graph as plain data (`traced`), never the model's TorchScript.
/// `traced` is not written once the session is shown: what the window learns later (a run, the
/// parameter statistics) is kept beside it in `run` and `stats`, written by the GUI thread only,
/// so the jobs reading the graph (layouts, compares) never have to be waited for.
struct ModelSession {
  std::shared_ptr<ModelWorker> worker;
  TracedModel traced;
  std::shared_ptr<const RunOverlay> run;  ///< the last run's shapes and times; null before one
  ParameterStatsMap stats;
  std::shared_ptr<const VerifyReport> report;  ///< the last verify run's report; null before one
  ViewOptions options;
  ViewGraph view;
  /// IR node name -> the view node showing it in `view` (a folded check: the node it checks; a
  /// size folded into two shape nodes: the first). Kept by applyLayout.
  std::map<std::string, std::string> viewIdOfIr;
  LayoutResult layout;
  double loadSeconds = 0, traceSeconds = 0, layoutSeconds = 0;
  std::string layoutNote;  ///< why the layered fallback layout is shown; "" for dot's

  const Graph& graph() const { return *traced.traced.graph; }
  const PythonCode& code() const { return traced.code; }
  /// The view node showing IR node `ir`; "" when none does.
  std::string viewIdOf(const std::string& ir) const {
    const auto it = viewIdOfIr.find(ir);
    return it == viewIdOfIr.end() ? std::string() : it->second;
  }
};

/// The overlay of `records` (by node index, as ModelWorker::verify and run answer). Throws
/// tdfx::Error when they are not one per node of `graph`.
std::shared_ptr<const RunOverlay> runOverlay(const std::vector<NodeRunRecord>& records, const Graph& graph);
/// The statistics by node and parameter name.
ParameterStatsMap statsMap(const std::vector<ParameterStats>& stats);

/// Opens `path` in `worker` (load and trace there), then lays the graph out in `layouter`'s
/// process (safe to run on a worker thread; `worker->cancel()` or `layouter->cancel()` from
/// another thread ends it with tdfx::WorkerCancelled). Throws tdfx::Error.
std::shared_ptr<ModelSession> openSession(const std::shared_ptr<ModelWorker>& worker, const std::string& path,
                                          const ViewOptions& options, const TextMeasure& measure,
                                          LayoutProcess& layouter);

/// A picture of a traced graph: the view for some options and its layout.
struct SessionLayout {
  ViewOptions options;
  ViewGraph view;
  LayoutResult layout;
  double seconds = 0;
  std::string note;  ///< why the layered fallback layout is shown; "" for dot's
};

/// Builds the view of `traced` for `options` and lays it out in `layouter`'s process (dot within
/// its budget, else the layered layout). Only reads the graph, so it may run on a worker thread
/// while the GUI shows the previous layout. Throws tdfx::Error (WorkerCancelled after cancel).
SessionLayout layoutSession(const TracedGraph& traced, const ViewOptions& options, const TextMeasure& measure,
                            LayoutProcess& layouter);

/// How wide and high a node label is drawn (GraphScene::labelFont): layouts are measured with it.
TextMeasure labelMeasure();

/// Stores `layout` as the session's current picture.
void applyLayout(ModelSession& session, SessionLayout layout);

}  // namespace tdfx::ui
