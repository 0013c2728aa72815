#pragma once
// Everything the window shows for one open model, built off the GUI thread.
#include <memory>
#include <string>

#include "tdfx/codegen/python_code.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"

namespace tdfx::ui {

struct ModelSession {
  ModelFile model;
  std::unique_ptr<GraphModule> graphModule;
  ViewOptions options;
  ViewGraph view;
  LayoutResult layout;
  double loadSeconds = 0, traceSeconds = 0, layoutSeconds = 0;
};

/// Loads, traces and lays out `path` (safe to run on a worker thread). Throws tdfx::Error.
std::shared_ptr<ModelSession> openSession(const std::string& path, const ViewOptions& options, const TextMeasure& measure);

/// A picture of a traced graph: the view for some options and its layout.
struct SessionLayout {
  ViewOptions options;
  ViewGraph view;
  LayoutResult layout;
  double seconds = 0;
};

/// Builds and lays out the view of `graphModule` for `options`. Only reads the graph, so it may
/// run on a worker thread while the GUI shows the previous layout. Throws tdfx::Error.
SessionLayout layoutSession(const GraphModule& graphModule, const ViewOptions& options, const TextMeasure& measure);

/// Stores `layout` as the session's current picture.
void applyLayout(ModelSession& session, SessionLayout layout);

}  // namespace tdfx::ui
