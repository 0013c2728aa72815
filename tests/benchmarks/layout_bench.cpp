// Layout and export times: zoo models (default view and fully expanded) and synthetic
// transformer-like graphs of 1k-20k nodes, fully expanded. Prints a table.
//   tdfx_layout_bench [--synthetic N,N,...] [--zoo-only] [MODEL...]
#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <vector>

#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"
#include "support/synthetic_graph.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

long peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

struct Row {
  std::string name, view;
  size_t nodes = 0;
  double buildS = 0, layoutS = 0, svgS = 0;
  long rssMiB = 0;
};

Row measure(const std::string& name, const std::string& viewName, const tdfx::TracedGraph& t, const tdfx::ViewOptions& o,
            bool svg) {
  Row r{name, viewName};
  auto start = Clock::now();
  const tdfx::ViewGraph view = tdfx::buildView(t, o);
  r.buildS = seconds(start);
  r.nodes = view.nodes.size();
  start = Clock::now();
  const tdfx::LayoutResult layout = tdfx::layoutView(view);
  r.layoutS = seconds(start);
  if (svg) {
    start = Clock::now();
    const std::string bytes = tdfx::renderView(view, tdfx::ExportFormat::Svg);
    r.svgS = seconds(start);
  }
  r.rssMiB = peakRssMiB();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  std::vector<std::string> models;
  bool svg = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--synthetic" && i + 1 < argc) {
      std::stringstream ss(argv[++i]);
      for (std::string n; std::getline(ss, n, ',');) sizes.push_back(std::stoi(n));
    } else if (a == "--no-svg") {
      svg = false;
    } else {
      models.push_back(a);
    }
  }
  std::vector<Row> rows;
  try {
    for (const std::string& path : models) {
      const tdfx::ModelFile model = tdfx::loadModelFile(path);
      const tdfx::GraphModule gm = tdfx::symbolicTrace(*model.module);
      std::string name = path.substr(path.find_last_of('/') + 1);
      name = name.substr(0, name.rfind('.'));
      tdfx::ViewOptions o;
      rows.push_back(measure(name, "default", gm.traced(), o, svg));
      o.hierarchy.expandAll = true;
      rows.push_back(measure(name, "expanded", gm.traced(), o, svg));
    }
    for (int n : sizes) {
      tdfx::ViewOptions o;
      o.hierarchy.expandAll = true;
      rows.push_back(measure("synthetic-" + std::to_string(n), "expanded", tdfx::testing::syntheticTransformer(n), o, svg));
    }
  } catch (const std::exception& e) {
    std::cerr << "tdfx_layout_bench: " << e.what() << "\n";
    return 1;
  }
  std::cout << std::left << std::setw(22) << "graph" << std::setw(10) << "view" << std::right << std::setw(8) << "nodes"
            << std::setw(11) << "view ms" << std::setw(12) << "layout ms" << std::setw(10) << "svg ms" << std::setw(12)
            << "peak MiB\n";
  for (const Row& r : rows)
    std::cout << std::left << std::setw(22) << r.name << std::setw(10) << r.view << std::right << std::setw(8) << r.nodes
              << std::fixed << std::setprecision(1) << std::setw(11) << r.buildS * 1e3 << std::setw(12)
              << r.layoutS * 1e3 << std::setw(10) << r.svgS * 1e3 << std::setw(11) << r.rssMiB << "\n";
  return 0;
}
