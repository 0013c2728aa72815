#include "cli_batch.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/runtime/verify.h"
#include "tdfx/util/display_text.h"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> modelPaths(const BatchTraceOptions& o) {
  std::vector<std::string> paths = o.models;
  if (!o.listFile.empty()) {
    std::ifstream in(o.listFile);
    if (!in) throw tdfx::Error("--from " + o.listFile + ": cannot read it (expected a file with one archive path per line)");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) paths.push_back(line);
  }
  if (paths.empty()) throw tdfx::Error("trace --out-dir: no model given (name archives, or --from a list of them)");
  return paths;
}

// The file name without its extension; two models of the same stem would overwrite each other's
// results, so that is refused before any work.
std::vector<std::string> uniqueStems(const std::vector<std::string>& paths) {
  std::vector<std::string> stems;
  std::set<std::string> seen;
  for (const auto& p : paths) {
    std::string stem = fs::path(p).stem().string();
    if (!seen.insert(stem).second)
      throw tdfx::Error("trace --out-dir: two models are named " + stem + " (" + p +
                        " and an earlier one); their results would overwrite each other");
    stems.push_back(stem);
  }
  return stems;
}

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

int runBatchTrace(const BatchTraceOptions& o, const tdfx::WorkerLimits& limits) {
  const std::vector<std::string> paths = modelPaths(o);
  const std::vector<std::string> stems = uniqueStems(paths);
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  if (!fs::is_directory(o.outDir)) throw tdfx::Error("--out-dir " + o.outDir + ": cannot create the folder");
  if (o.fxDot) tdfx::prepareGraphviz(tdfx::exportFormatForPath("x.dot"));
  tdfx::ModelWorker worker(limits);
  size_t failed = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string base = (fs::path(o.outDir) / stems[i]).string();
    for (const char* ext : {".graph.txt", ".code.txt", ".error.txt", ".dot", ".verify.txt"}) fs::remove(base + ext, ec);
    try {
      const tdfx::TracedModel model = worker.open(paths[i]);
      tdfx::writeFileAtomically(base + ".graph.txt", tdfx::printGraph(*model.traced.graph));
      tdfx::writeFileAtomically(base + ".code.txt", model.code.text);
      if (o.fxDot) {
        tdfx::ViewOptions view;
        view.style = tdfx::ViewStyle::Fx;
        view.hierarchy.expandAll = true;
        tdfx::ViewGraph graph = tdfx::buildView(model.traced, view);
        graph.name = stems[i];
        tdfx::exportView(graph, base + ".dot");
      }
      if (o.verify) {
        tdfx::VerifyOptions options;
        options.randomSeed = 0;
        const tdfx::VerifyReport report = worker.verify({}, 0, options).report;
        tdfx::writeFileAtomically(base + ".verify.txt", tdfx::formatReport(report));
        if (!report.passed()) throw tdfx::Error("verify failed: " + firstLine(tdfx::formatReport(report)));
      }
    } catch (const std::exception& e) {
      ++failed;
      tdfx::writeFileAtomically(base + ".error.txt", std::string(e.what()) + "\n");
      const std::string what = firstLine(e.what());  // most errors name the file already
      std::cerr << "tdfx-cli: "
                << tdfx::escapeControls(tdfx::capText((what.rfind(paths[i], 0) == 0 ? "" : paths[i] + ": ") + what)) << "\n";
    }
  }
  std::cout << "traced " << paths.size() - failed << " of " << paths.size() << " models into " << o.outDir << "\n";
  return failed == 0 ? 0 : 1;
}
