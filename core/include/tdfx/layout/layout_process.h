#pragma once
// Layout where it can be stopped. How long Graphviz takes is up to the graph, and so up to the
// model: a 3,000-node graph with long-range edges keeps `dot` busy for minutes. So layout and
// rendering run in a layout process forked from the worker zygote (like the model worker), with a
// deadline, and cancel() kills it. When dot does not finish within its budget, a fast layered
// layout (layeredLayout) takes its place and the result says so.
#include <atomic>
#include <mutex>
#include <string>

#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/worker/worker_process.h"

namespace tdfx {

/// The fallback layout: longest-path layers, one ordering sweep, straight edges. Linear in the
/// graph's size; clusters are drawn as the boxes around their nodes (they may overlap).
LayoutResult layeredLayout(const ViewGraph& view, const TextMeasure& measure = defaultTextMeasure());

/// How long a layout may take.
struct LayoutBudget {
  double dotSeconds = 3;        ///< dot's share; past it the layered layout is used
  double fallbackSeconds = 30;  ///< the layered layout's limit (an error past it)
  /// Graphs past these sizes go straight to the layered layout: dot would not finish in time.
  size_t dotMaxNodes = 6000, dotMaxEdges = 18000;
};

/// A layout and how it was made.
struct LayoutOutcome {
  LayoutResult layout;
  bool fallback = false;  ///< the layered layout, not dot's
  std::string note;       ///< why the fallback was used, for the status bar ("" with dot)
};

/// One layout process (started on first use, reused by later requests). Requests block the
/// calling thread and run one at a time; cancel() from any thread stops the one in progress with
/// WorkerCancelled.
class LayoutProcess {
 public:
  LayoutProcess();
  /// Lays the view out: text is measured here with `measure` (the GUI's fonts), placement runs in
  /// the layout process.
  LayoutOutcome layout(const ViewGraph& view, const TextMeasure& measure = defaultTextMeasure(),
                       const LayoutBudget& budget = {});
  /// renderView in the layout process, within `seconds`. An SVG that dot cannot make in time is
  /// drawn from the layered layout instead (`fallbackNote` then says so); other formats fail.
  std::string render(const ViewGraph& view, ExportFormat format, double seconds, std::string* fallbackNote = nullptr);
  /// Starts the process and takes it through a first layout (Graphviz's plugins, the fonts, heap
  /// pages), so the next layout is as fast as a later one: a spare's warm-up while the window is idle.
  void warm();
  /// Whether warm() finished (any thread).
  bool warmed() const { return warmed_; }
  void cancel() { process_.cancel(); }
  void resetCancel() { process_.resetCancel(); }
  /// The layout process's id while one runs, else -1.
  pid_t pid() const { return process_.pid(); }

 private:
  WorkerProcess process_;
  std::atomic<bool> warmed_{false};
  std::mutex requestMutex_;  // one request at a time: a spare's warm-up and its first layout
};

/// exportView through a LayoutProcess with a time limit (tdfx-cli export --timeout); writes
/// atomically. Returns the fallback note, "" when dot drew it.
std::string exportViewWithin(const ViewGraph& view, const std::string& path, double seconds);

}  // namespace tdfx
