// The layout process: Graphviz (and the layered fallback) in a child of the worker zygote.
#include "tdfx/layout/layout_process.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "layout_codec.h"
#include "svg_writer.h"
#include "tdfx/worker/model_worker.h"

namespace tdfx {

using nlohmann::json;

namespace {

// Text sizes measured by the caller, for the lines layoutView measures (a node's label lines).
json measuredLines(const ViewGraph& view, const TextMeasure& measure) {
  std::map<std::string, TextSize> sizes;
  for (const ViewNode& n : view.nodes)
    for (const std::string& line : n.lines)
      if (!sizes.count(line)) sizes.emplace(line, measure(line));
  json out = json::object();
  for (const auto& [line, size] : sizes) out[line] = json::array({size.width, size.height});
  return out;
}

TextMeasure tableMeasure(const json& sizes) {
  const TextMeasure fallback = defaultTextMeasure();
  return [sizes, fallback](const std::string& line) {
    const auto it = sizes.find(line);
    if (it == sizes.end()) return fallback(line);
    return TextSize{it->at(0).get<double>(), it->at(1).get<double>()};
  };
}

// A spare layout process's warm-up, while the window is idle: a fresh process's first layout pays
// for Graphviz's plugins, the text layout's fonts (fontconfig) and new heap pages. A small
// picture with every kind of label goes through them; then a heap of 64 MiB is touched once and
// kept (reuseFreedMemory), so the next layout's allocations find pages already there.
json warmUp() {
  ViewGraph view;
  view.clusters = {{"cluster_a", "a (Block)", ""}, {"cluster_a.b", "a.b (Linear)", "cluster_a"}};
  ViewNode x, linear, out;
  x.id = "x", x.lines = {"x"}, x.shape = "ellipse", x.fillColor = "#9CCBF0";
  linear.id = "linear", linear.lines = {"Linear 8->8", "a.b"}, linear.cluster = "cluster_a.b", linear.fillColor = "#FFE9A8";
  out.id = "output", out.lines = {"output"}, out.shape = "ellipse", out.fillColor = "#F4B6AE";
  view.nodes = {x, linear, out};
  view.edges = {{"x", "linear", "float32[2, 8]"}, {"linear", "output", "float32[2, 8]"}};
  (void)layoutView(view, defaultTextMeasure());
  reuseFreedMemory();
  constexpr size_t kBlock = size_t{1} << 20, kBlocks = 64;
  std::vector<char*> blocks;
  for (size_t i = 0; i < kBlocks; ++i)
    if (char* b = static_cast<char*>(std::malloc(kBlock))) {
      volatile char* page = b;  // written through volatile: the compiler may not drop the touch
      for (size_t at = 0; at < kBlock; at += 4096) page[at] = 0;
      blocks.push_back(b);
    }
  for (char* b : blocks) std::free(b);
  return {{"ok", true}};
}

json answerLayoutRequest(const json& request) {
  const std::string op = request.at("op").get<std::string>();
  if (op == "warm") return warmUp();
  const ViewGraph view = layout::viewFromJson(request.at("view"));
  if (op == "layout") {
    const TextMeasure measure = tableMeasure(request.at("sizes"));
    const LayoutResult result =
        request.at("method") == "dot" ? layoutView(view, measure) : layeredLayout(view, measure);
    return {{"ok", true}, {"layout", layout::layoutToJson(result)}};
  }
  if (op == "render") {
    const std::string bytes = renderView(view, static_cast<ExportFormat>(request.at("format").get<int>()));
    return {{"ok", true}, {"bytes", json::binary(std::vector<uint8_t>(bytes.begin(), bytes.end()))}};
  }
  return {{"ok", false}, {"error", "unknown layout request " + op}};
}

void serveLayout(int fd, uint64_t memoryBytes) {
  ::dup2(STDERR_FILENO, STDOUT_FILENO);  // Graphviz's warnings are never the app's stdout
  limitWorkerMemory(memoryBytes);
  serveJsonRequests(fd, answerLayoutRequest);
}

const bool kLayoutServiceRegistered = registerWorkerService("layout", &serveLayout);

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

LayoutProcess::LayoutProcess() : process_("layout", "the layout process") { (void)kLayoutServiceRegistered; }

namespace {

json call(WorkerProcess& process, const json& request, double limit, const std::string& what) {
  return process.requestJson(request, limit, WorkerLimits{}.effectiveMemoryBytes(), "the graph", what);
}

}  // namespace

void LayoutProcess::warm() {
  const std::lock_guard<std::mutex> lock(requestMutex_);
  call(process_, json{{"op", "warm"}}, 30, "warm-up");
  warmed_ = true;
}

LayoutOutcome LayoutProcess::layout(const ViewGraph& view, const TextMeasure& measure, const LayoutBudget& budget) {
  const std::lock_guard<std::mutex> lock(requestMutex_);
  json request = {{"op", "layout"}, {"view", layout::viewToJson(view)}, {"sizes", measuredLines(view, measure)}};
  LayoutOutcome outcome;
  if (view.nodes.size() > budget.dotMaxNodes || view.edges.size() > budget.dotMaxEdges) {
    outcome.note = std::to_string(view.nodes.size()) + " nodes and " + std::to_string(view.edges.size()) +
                   " edges are more than dot lays out quickly";
  } else {
    try {
      request["method"] = "dot";
      outcome.layout = layout::layoutFromJson(call(process_, request, budget.dotSeconds, "layout").at("layout"));
      return outcome;
    } catch (const WorkerTimeout&) {
      outcome.note = "dot did not finish within " + seconds(budget.dotSeconds) + " s";
    }
  }
  request["method"] = "layered";
  outcome.layout = layout::layoutFromJson(call(process_, request, budget.fallbackSeconds, "layered layout").at("layout"));
  outcome.fallback = true;
  outcome.note += ": a simpler layered layout is shown";
  return outcome;
}

std::string LayoutProcess::render(const ViewGraph& view, ExportFormat format, double limit, std::string* fallbackNote) {
  if (format == ExportFormat::Dot) return renderView(view, format);  // not laid out: linear in the graph
  const json request = {{"op", "render"}, {"view", layout::viewToJson(view)}, {"format", static_cast<int>(format)}};
  try {
    const std::lock_guard<std::mutex> lock(requestMutex_);
    const json answer = call(process_, request, limit, "render");
    const auto& bytes = answer.at("bytes").get_binary();
    return std::string(bytes.begin(), bytes.end());
  } catch (const WorkerTimeout&) {
    if (format != ExportFormat::Svg) throw;
  }
  // SVG: dot ran out of time; draw the layered layout (measured with the default font estimate).
  LayoutBudget budget;
  budget.dotMaxNodes = budget.dotMaxEdges = 0;
  budget.fallbackSeconds = limit;
  const LayoutOutcome outcome = layout(view, defaultTextMeasure(), budget);
  if (fallbackNote) *fallbackNote = "dot did not finish within " + seconds(limit) + " s: a simpler layered layout was drawn";
  return svgFromLayout(view, outcome.layout);
}

std::string exportViewWithin(const ViewGraph& view, const std::string& path, double limit) {
  const ExportFormat format = exportFormatForPath(path);
  LayoutProcess process;
  std::string note;
  std::string bytes;
  try {
    bytes = process.render(view, format, limit, &note);
  } catch (const Error& e) {
    throw Error("cannot export " + path + ": " + e.what());
  }
  writeFileAtomically(path, bytes);
  return note;
}

}  // namespace tdfx
