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

/// A new view and layout of an open session for other options (style, hierarchy, direction).
void relayout(ModelSession& session, const ViewOptions& options, const TextMeasure& measure);

}  // namespace tdfx::ui
