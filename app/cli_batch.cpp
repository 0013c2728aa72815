#include "cli_batch.h"


#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/runtime/verify.h"
#include "tdfx/util/display_text.h"

namespace fs = std::filesystem;

namespace {

// One archive to trace, and the inputs its verify uses beyond the file's example inputs.
struct BatchModel {
  std::string path;
  std::vector<std::string> inputs;
};

// A --from line: `PATH [--input KEY=SHAPE[:DTYPE]]...`.
BatchModel modelLine(const std::string& line) {
  static const std::string flag = " --input ";
  BatchModel m;
  size_t at = line.find(flag);
  m.path = line.substr(0, at);
  while (at != std::string::npos) {
    const size_t start = at + flag.size();
    at = line.find(flag, start);
    m.inputs.push_back(line.substr(start, at == std::string::npos ? std::string::npos : at - start));
  }
  return m;
}

std::vector<BatchModel> batchModels(const BatchTraceOptions& o) {
  std::vector<BatchModel> models;
  for (const auto& path : o.models) models.push_back({path, {}});
  if (!o.listFile.empty()) {
    std::ifstream in(o.listFile);
    if (!in) throw tdfx::Error("--from " + o.listFile + ": cannot read it (expected a file with one archive path per line)");
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) models.push_back(modelLine(line));
  }
  if (models.empty()) throw tdfx::Error("trace --out-dir: no model given (name archives, or --from a list of them)");
  for (auto& m : models) m.inputs.insert(m.inputs.begin(), o.inputs.begin(), o.inputs.end());
  return models;
}

// The file name without its extension; two models of the same stem would overwrite each other's
// results, so that is refused before any work.
std::vector<std::string> uniqueStems(const std::vector<BatchModel>& models) {
  std::vector<std::string> stems;
  std::set<std::string> seen;
  for (const auto& m : models) {
    const std::string& p = m.path;
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

void noteFxDifference(const std::string& path, const tdfx::TracedModel& model) {
  const tdfx::Node* output = model.traced.graph->outputNode();
  if (!output || output->meta().fxDifference.empty()) return;
  std::istringstream lines(output->meta().fxDifference);
  for (std::string line; std::getline(lines, line);)
    std::cerr << "tdfx-cli: note: " << tdfx::escapeControls(path) << ": " << tdfx::escapeControls(line) << "\n";
}

int runBatchTrace(const BatchTraceOptions& o, const tdfx::WorkerLimits& limits) {
  const std::vector<BatchModel> models = batchModels(o);
  const std::vector<std::string> stems = uniqueStems(models);
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  if (!fs::is_directory(o.outDir)) throw tdfx::Error("--out-dir " + o.outDir + ": cannot create the folder");
  if (o.fxDot) tdfx::prepareGraphviz(tdfx::exportFormatForPath("x.dot"));
  tdfx::ModelWorker worker(limits);
  size_t failed = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string& path = models[i].path;
    const std::string base = (fs::path(o.outDir) / stems[i]).string();
    for (const char* ext : {".graph.txt", ".code.txt", ".error.txt", ".dot", ".verify.txt"}) fs::remove(base + ext, ec);
    try {
      const tdfx::TracedModel model = worker.open(path);
      tdfx::writeFileAtomically(base + ".graph.txt", tdfx::printGraph(*model.traced.graph));
      tdfx::writeFileAtomically(base + ".code.txt", model.code.text);
      noteFxDifference(path, model);
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
        options.randomSeed = o.seed;
        std::vector<tdfx::InputSpec> inputs;
        for (const auto& spec : models[i].inputs) inputs.push_back(tdfx::parseInputSpec(spec));
        const tdfx::VerifyReport report = worker.verify(inputs, o.seed, options, {}, tdfx::VerifyRecords::ReportOnly).report;
        tdfx::writeFileAtomically(base + ".verify.txt", tdfx::formatReport(report));
        if (!report.passed()) {
          // The verdict line (the report's last), FAILED or NOT PROVEN.
          std::string text = tdfx::formatReport(report);
          text.pop_back();
          throw tdfx::Error("verify: " + text.substr(text.rfind('\n') + 1));
        }
      }
    } catch (const std::exception& e) {
      ++failed;
      tdfx::writeFileAtomically(base + ".error.txt", std::string(e.what()) + "\n");
      const std::string what = firstLine(e.what());  // most errors name the file already
      std::cerr << "tdfx-cli: "
                << tdfx::escapeControls(tdfx::capText((what.rfind(path, 0) == 0 ? "" : path + ": ") + what)) << "\n";
    }
  }
  std::cout << "traced " << models.size() - failed << " of " << models.size() << " models into " << o.outDir << "\n";
  return failed == 0 ? 0 : 1;
}
