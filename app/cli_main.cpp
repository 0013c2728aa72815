// tdfx-cli: headless tracing and verification of TensorDict model files.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_batch.h"
#include "cli_serve.h"
#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/layout/graphviz_layout.h"
#include "tdfx/layout/layout_process.h"
#include "tdfx/layout/view_graph.h"
#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"
#include "tdfx/runtime/verify.h"
#include "tdfx/util/display_text.h"
#include "tdfx/version.h"
#include "tdfx/worker/graph_format.h"
#include "tdfx/worker/model_diff.h"
#include "tdfx/worker/model_worker.h"

namespace {

std::vector<tdfx::InputSpec> parseInputs(const std::vector<std::string>& flags) {
  std::vector<tdfx::InputSpec> specs;
  for (const auto& f : flags) specs.push_back(tdfx::parseInputSpec(f));
  return specs;
}

// --input-values FILE (none: empty), read whole here and unpickled by the model worker.
std::vector<char> readInputValues(const std::string& path) {
  return path.empty() ? std::vector<char>() : tdfx::readInputValuesFile(path, "--input-values " + path);
}

// Limits of the model worker, shared by every subcommand.
struct WorkerFlags {
  double timeout = 0;       // 0: the defaults (120 s to open, 60 s per request)
  double memoryGiB = 0;     // 0: half of physical memory

  tdfx::WorkerLimits limits() const {
    tdfx::WorkerLimits l;
    if (timeout > 0) l.openSeconds = l.requestSeconds = timeout;
    if (memoryGiB > 0) l.memoryBytes = static_cast<uint64_t>(memoryGiB * static_cast<double>(uint64_t{1} << 30));
    return l;
  }
};

// What the user should know about a model just opened: how it was exported, where its graph
// knowingly differs from FX's.
void noteOpened(const std::string& path, const tdfx::TracedModel& model) {
  if (model.model.exportedWith == "torch.jit.trace")
    std::cerr << "tdfx-cli: note: " << tdfx::escapeControls(path)
              << " was exported with torch.jit.trace: it keeps the operations run on the example inputs, not the "
                 "Python calls, so the graph's call forms are approximate\n";
  noteFxDifference(path, model);
}

// Loads and traces MODEL in a model worker (the only process that reads it or runs its code), or
// finds it open already (serve).
OpenedModel openModel(const std::string& path, const tdfx::WorkerLimits& limits) {
  OpenedModel opened = openModelFor(path, limits);
  noteOpened(path, *opened.model);
  return opened;
}

// --shapes: one run in the worker on the file's example inputs (or --input overrides) records each
// node's outputs into the graph's metadata.
void recordShapes(tdfx::ModelWorker& worker, tdfx::TracedModel& model, const std::vector<std::string>& inputs,
                  uint64_t seed, const std::vector<char>& inputValues = {}) {
  tdfx::applyRunRecords(*model.traced.graph, worker.run(parseInputs(inputs), seed, inputValues));
}

struct TraceOptions {
  std::string model;
  bool graph = false, code = false, shapes = false;
  std::vector<std::string> inputs;
  uint64_t seed = 0;
};

int runTrace(const TraceOptions& o, const WorkerFlags& w) {
  OpenedModel opened = openModel(o.model, w.limits());
  const bool both = !o.graph && !o.code;
  std::optional<tdfx::TracedModel> withShapes;
  if (o.shapes) {
    withShapes = ownCopy(opened);
    forgetModel(opened);  // its forward ran: serve opens it afresh for the next command
    recordShapes(*opened.worker, *withShapes, o.inputs, o.seed);
  }
  const tdfx::TracedModel& model = withShapes ? *withShapes : *opened.model;
  const tdfx::Graph& graph = *model.traced.graph;
  // FX's text, byte for byte, into a file, pipe or serve's reply; control characters escaped on a
  // terminal.
  const auto out = [tty = !serving() && ::isatty(STDOUT_FILENO) == 1](const std::string& text) {
    std::cout << (tty ? tdfx::escapeControls(text) : text);
  };
  if (o.graph || both) out((o.shapes ? tdfx::printGraphWithShapes(graph) : tdfx::printGraph(graph)) + "\n");
  if (o.code || both) out(model.code.text);
  return 0;
}

struct VerifyFlags {
  std::string model, inputValues;
  std::vector<std::string> inputs;
  uint64_t seed = 0;
  double atol = 0.0, rtol = 0.0;
  bool json = false, noRandomSeed = false, time = false;
};

int runVerify(const VerifyFlags& f, const WorkerFlags& w) {
  const std::vector<char> values = readInputValues(f.inputValues);  // a wrong path is said before the model loads
  const OpenedModel opened = openModel(f.model, w.limits());
  tdfx::VerifyOptions options;
  options.atol = f.atol;
  options.rtol = f.rtol;
  options.time = f.time;
  if (f.noRandomSeed) options.randomSeed = std::nullopt;
  else options.randomSeed = f.seed;
  // verify puts back the state its passes changed when it ends; not when it fails, and torch's
  // generator only when it seeded it: serve then opens the model afresh for the next command.
  if (f.noRandomSeed) forgetModel(opened);
  tdfx::VerifyReport report;
  try {
    report = opened.worker->verify(parseInputs(f.inputs), f.seed, options, values, tdfx::VerifyRecords::ReportOnly).report;
  } catch (...) {
    forgetModel(opened);
    throw;
  }
  if (!report.passed()) forgetModel(opened);
  std::cout << (f.json ? tdfx::reportToJson(report) + "\n" : tdfx::escapeControls(tdfx::formatReport(report)));
  // The verdict is the exit status: 0 PASSED, 3 FAILED, 4 NOT PROVEN (docs/cli.md).
  switch (report.verdict()) {
    case tdfx::Verdict::Passed: return 0;
    case tdfx::Verdict::NotProven: return 4;
    case tdfx::Verdict::Failed: break;
  }
  return 3;
}

struct ExportFlags {
  std::string model, output, style = "tdfx", rankdir = "TB", inputValues;
  int depth = -1;
  size_t maxNodes = 0;  // 0: no limit
  bool expandAll = false, shapes = false, checks = false, shapeArithmetic = false;
  std::vector<std::string> inputs;
  uint64_t seed = 0;
};

// Whether `output` names the same file as `input` (an export must never overwrite the model).
bool sameFile(const std::string& input, const std::string& output) {
  std::error_code ec;
  if (std::filesystem::equivalent(input, output, ec)) return true;
  return std::filesystem::weakly_canonical(input, ec) == std::filesystem::weakly_canonical(output, ec);
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool isGraphDocument(const std::string& path) { return endsWith(path, ".json"); }
// A TorchScript archive of the traced graph (torch.jit.save's format).
bool isTorchScript(const std::string& path) { return endsWith(path, ".pt") || endsWith(path, ".pth"); }

// --max-nodes: a picture over the limit is refused before Graphviz runs (its layout of tens of
// thousands of nodes takes minutes, and the SVG tens of megabytes), naming the depth that fits.
[[noreturn]] void refuseLargeDrawing(const tdfx::TracedGraph& traced, tdfx::ViewOptions options,
                                     const tdfx::ViewGraph& view, size_t maxNodes) {
  std::string hint;
  options.hierarchy.expandAll = false;
  options.hierarchy.depth = tdfx::autoDepth(*traced.graph, static_cast<int>(std::min<size_t>(maxNodes, INT_MAX)));
  const size_t folded = tdfx::buildView(traced, options).nodes.size();
  if (folded <= maxNodes && *options.hierarchy.depth < view.depth)
    hint = "; --depth " + std::to_string(*options.hierarchy.depth) + " draws " + std::to_string(folded);
  else if (folded < view.nodes.size())
    hint = "; even --depth " + std::to_string(*options.hierarchy.depth) + " draws " + std::to_string(folded);
  else
    hint = "; its nodes are in no module scope that --depth could fold";
  throw tdfx::Error("the drawing has " + std::to_string(view.nodes.size()) + " nodes, over --max-nodes " +
                    std::to_string(maxNodes) + hint + " (.json and .pt outputs have no limit)");
}

int runExport(const ExportFlags& f, const WorkerFlags& w) {
  if (!isGraphDocument(f.output) && !isTorchScript(f.output)) {
    try {
      tdfx::exportFormatForPath(f.output);  // fail before any work
    } catch (const tdfx::Error& e) {
      throw tdfx::Error(std::string(e.what()) + ", .json for the graph document or .pt for TorchScript");
    }
  }
  if (sameFile(f.model, f.output))
    throw tdfx::Error("-o " + f.output + " names the model file itself; choose another output file");
  const std::vector<char> values = readInputValues(f.inputValues);  // a wrong path is said before the model loads
  OpenedModel opened = openModel(f.model, w.limits());
  std::optional<tdfx::TracedModel> withShapes;
  if (f.shapes) {
    withShapes = ownCopy(opened);
    forgetModel(opened);  // its forward ran: serve opens it afresh for the next command
    recordShapes(*opened.worker, *withShapes, f.inputs, f.seed, values);
  }
  const tdfx::TracedModel& model = withShapes ? *withShapes : *opened.model;
  if (isTorchScript(f.output)) {
    // The worker builds the archive (it runs the model's code); this process writes the file.
    const tdfx::TorchScriptArchive archive = opened.worker->torchScript();
    tdfx::writeFileAtomically(f.output, archive.bytes);
    std::cout << "wrote " << f.output << " (TorchScript, " << model.traced.graph->size() << " nodes, "
              << archive.bytes.size() << " bytes; " << archive.signature << ")\n";
    return 0;
  }
  if (isGraphDocument(f.output)) {
    tdfx::writeFileAtomically(f.output, tdfx::tracedModelToJson(model, 1) + "\n");
    std::cout << "wrote " << f.output << " (graph document, format version " << tdfx::kGraphFormatVersion << ", "
              << model.traced.graph->size() << " nodes)\n";
    return 0;
  }
  tdfx::ViewOptions options;
  options.style = f.style == "fx" ? tdfx::ViewStyle::Fx : tdfx::ViewStyle::Tdfx;
  options.rankdir = f.rankdir;
  options.shapes = f.shapes;
  options.checks = f.checks;
  options.shapeArithmetic = f.shapeArithmetic;
  options.hierarchy.expandAll = f.expandAll;
  if (f.depth >= 0) options.hierarchy.depth = f.depth;
  tdfx::ViewGraph view = tdfx::buildView(model.traced, options);
  if (f.maxNodes > 0 && view.nodes.size() > f.maxNodes) refuseLargeDrawing(model.traced, options, view, f.maxNodes);
  const std::string base = f.model.substr(f.model.find_last_of('/') + 1);
  view.name = base.substr(0, base.rfind('.'));
  // Graphviz runs in a layout process, stopped at the time limit (an SVG then gets the layered layout).
  const std::string note = tdfx::exportViewWithin(view, f.output, w.limits().requestSeconds);
  if (!note.empty()) std::cerr << "tdfx-cli: note: " << note << "\n";
  std::cout << "wrote " << f.output << " (" << view.nodes.size() << " nodes, " << view.edges.size() << " edges, depth "
            << (f.expandAll ? std::string("all") : std::to_string(view.depth)) << ")\n";
  return 0;
}

// diff: each model in a worker of its own; the structure and the parameter values compared here.
// Exit status as diff(1)'s: 0 equal, 1 different, 2 trouble (scripts and CI jobs rely on it).
struct DiffFlags {
  std::string a, b;
  bool exitCode = false;  // accepted and ignored: the status is diff(1)'s without it
  bool json = false;
};

int runDiff(const DiffFlags& f, const WorkerFlags& w) {
  try {
    tdfx::ModelWorker workerA(w.limits()), workerB(w.limits());
    // Both models load and trace at once, each in its own worker (a 100k-node model takes seconds),
    // and send only what the comparison reads (no code, no source text); parameters as digests,
    // values only where the digests differ (parametersToCompare).
    // B's thread only talks to its worker; the notes are written in order once both are open, and
    // when A fails, B's worker is cancelled rather than waited for.
    auto openingB = std::async(std::launch::async, [&workerB, &f] { return workerB.open(f.b, tdfx::GraphDetail::Comparison); });
    tdfx::TracedModel a;
    try {
      a = workerA.open(f.a, tdfx::GraphDetail::Comparison);
    } catch (...) {
      workerB.cancel();
      openingB.wait();
      throw;
    }
    const tdfx::TracedModel b = openingB.get();
    const auto [valuesA, valuesB] = tdfx::parametersToCompare(workerA, workerB);
    noteOpened(f.a, a);
    noteOpened(f.b, b);
    const tdfx::ModelDiff diff = tdfx::diffModels(a, b, valuesA, valuesB);
    if (f.json) std::cout << tdfx::modelDiffToJson(diff, f.a, f.b);
    else std::cout << tdfx::escapeControls(tdfx::formatModelDiff(diff, f.a, f.b));
    return diff.identical() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "tdfx-cli: error: " << tdfx::escapeControls(tdfx::capText(e.what())) << "\n";
    return 2;
  }
}

// A number flag's check: finite and within [low, high] (`high` infinite: no upper bound), with a
// message in plain numbers. CLI11's Range lets NaN through (every comparison with it is false),
// and prints an unbounded range as DBL_MAX's 309 digits (issue 35, finding 11).
CLI::Validator finiteNumber(double low, double high) {
  const auto text = [](double v) {
    std::ostringstream s;
    s << std::setprecision(12) << v;
    return s.str();
  };
  const std::string expected = "a finite number " + (std::isinf(high) ? ">= " + text(low) : "from " + text(low) + " to " + text(high));
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(input, v) || !std::isfinite(v) || v < low || v > high)
          return expected + " is expected, not '" + input + "'";
        return {};
      },
      "NUMBER");
}

}  // namespace

int runCli(int argc, char** argv) {
  CLI::App app{"tdfx-cli: trace PyTorch TensorDict modules saved as TorchScript into FX graphs, and verify them"};
  // A function, so Graphviz is only asked for its version when --version is given.
  app.set_version_flag("--version", std::function<std::string()>([] {
    std::string report = tdfx::versionReport("tdfx-cli", TDFX_QT_VERSION " (used by tdfx, the GUI)");
    return report.substr(0, report.size() - 1);  // CLI11 adds the final newline
  }));
  app.require_subcommand(1);
  app.fallthrough();  // --timeout and --memory-limit may follow the subcommand
  WorkerFlags w;
  app.add_option("--timeout", w.timeout,
                 "Seconds a model may take to load and trace, or to run a verify (default 120 and 60); past it the "
                 "model worker is stopped")
      ->check(finiteNumber(1e-3, 86400.0));
  app.add_option("--memory-limit", w.memoryGiB, "GiB of memory the model worker may use (default: half of physical memory)")
      ->check(finiteNumber(1e-3, 1048576.0));

  TraceOptions t;
  BatchTraceOptions batch;
  auto* trace = app.add_subcommand("trace", "Print the traced FX graph and/or the generated Python code");
  trace->add_option("MODEL", batch.models,
                    "TorchScript archive (.pt), with or without tensordict.json; several with --out-dir");
  trace->add_option("--out-dir", batch.outDir,
                    "Trace every MODEL (and --from's) in this one process, writing NAME.graph.txt and NAME.code.txt, "
                    "or NAME.error.txt, into this folder");
  trace->add_option("--from", batch.listFile,
                    "With --out-dir: a file naming one archive per line; a line may add --input KEY=SHAPE[:DTYPE] "
                    "flags for that model's verify");
  trace->add_flag("--fx-dot", batch.fxDot, "With --out-dir: also NAME.dot, as export --style fx --expand-all draws it");
  trace->add_flag("--verify", batch.verify, "With --out-dir: also verify each model (NAME.verify.txt); a failure counts");
  trace->add_flag("--graph", t.graph, "Print the graph (print(graph_module.graph))");
  trace->add_flag("--code", t.code, "Print the generated code (graph_module.code)");
  trace->add_flag("--shapes", t.shapes, "Run the graph once and show each node's output shapes and dtypes");
  trace->add_option("--input", t.inputs,
                    "With --shapes or --out-dir --verify: input KEY=SHAPE[:DTYPE], e.g. input.x=32x100:float32");
  trace->add_option("--seed", t.seed, "With --shapes or --out-dir --verify: seed for the random inputs");

  VerifyFlags v;
  auto* verify = app.add_subcommand("verify", "Run eager and traced on the same inputs and compare every out key");
  verify->add_option("MODEL", v.model, "TorchScript archive (.pt)")->required();
  verify->add_option("--input", v.inputs,
                     "Input KEY=SHAPE[:DTYPE] (key parts joined by '.'), e.g. input.x=2x3x224x224:float32; "
                     "overrides the file's example_inputs");
  verify->add_option("--input-values", v.inputValues,
                     "Tensors saved with torch.save, e.g. torch.save(((\"input.x\", x),), FILE) (a dict of two or more "
                     "keys too): those inputs are these tensors, values included (the others are drawn from --seed)");
  verify->add_option("--seed", v.seed, "Seed for the random inputs (default 0)");
  verify->add_option("--atol", v.atol, "Absolute tolerance (default 0: bitwise)")->check(finiteNumber(0, HUGE_VAL));
  verify->add_option("--rtol", v.rtol, "Relative tolerance (default 0: bitwise)")->check(finiteNumber(0, HUGE_VAL));
  verify->add_flag("--json", v.json, "Print the report as JSON");
  verify->add_flag("--time", v.time,
                   "Also time the eager module and the traced graph: each runs twice more, the faster run reported");
  verify->add_flag("--no-random-seed", v.noRandomSeed,
                   "Leave torch's generator as it is; by default it is seeded with --seed before each pass, so "
                   "random ops draw the same numbers in eager and traced");

  ExportFlags x;
  auto* exportCmd = app.add_subcommand("export", "Draw the traced graph to SVG, DOT, PNG or PDF, or save it as TorchScript (.pt) or a graph document (.json); the format is -o's extension");
  exportCmd->add_option("MODEL", x.model, "TorchScript archive (.pt)")->required();
  exportCmd->add_option("-o,--output", x.output,
                        "Output file: .svg, .dot/.gv, .png or .pdf, or .json for the graph document (docs/graph-format.md)")
      ->required();
  exportCmd->add_option("--style", x.style, "fx (FxGraphDrawer's picture) or tdfx (default)")
      ->check(CLI::IsMember({"fx", "tdfx"}));
  auto* depthOpt = exportCmd->add_option("--depth", x.depth, "Expand module scopes down to this depth (default: at most ~300 nodes)")
      ->check(CLI::NonNegativeNumber);
  exportCmd->add_flag("--expand-all", x.expandAll, "Expand every module scope")->excludes(depthOpt);
  exportCmd->add_option("--max-nodes", x.maxNodes,
                        "Refuse a picture of more than N nodes, naming the --depth that fits (default: no limit)")
      ->check(CLI::PositiveNumber);
  exportCmd->add_option("--rankdir", x.rankdir, "Layout direction")->check(CLI::IsMember({"TB", "LR"}));
  auto* shapesOpt = exportCmd->add_flag("--shapes", x.shapes, "Run once and show output shapes and dtypes");
  exportCmd->add_flag("--checks", x.checks,
                      "tdfx style: draw input checks (torch._assert and what only feeds it) instead of a badge");
  exportCmd->add_flag("--shape-arithmetic", x.shapeArithmetic,
                      "tdfx style: draw size computations (x.shape, getitem, //, * on sizes) as nodes instead of one "
                      "shape node per use");
  exportCmd->add_option("--input", x.inputs, "With --shapes: input KEY=SHAPE[:DTYPE]");
  exportCmd->add_option("--input-values", x.inputValues,
                        "With --shapes: tensors saved with torch.save, run as they are (see verify)")
      ->needs(shapesOpt);
  exportCmd->add_option("--seed", x.seed, "With --shapes: seed for the random inputs");

  DiffFlags d;
  auto* diffCmd = app.add_subcommand("diff", "Compare two models: nodes added, removed and changed, and every parameter's values");
  diffCmd->add_option("A", d.a, "The first TorchScript archive (.pt)")->required();
  diffCmd->add_option("B", d.b, "The second TorchScript archive (.pt)")->required();
  diffCmd->add_flag("--exit-code", d.exitCode, "Accepted for compatibility: the exit status is always 0 equal, 1 different, 2 trouble");
  diffCmd->add_flag("--json", d.json, "Write the report as JSON (docs/cli.md)");

  size_t servedModels = 3;
  auto* serveCmd = app.add_subcommand(
      "serve", "Answer tdfx-cli commands sent as JSON lines on stdin, one reply line each on stdout, keeping "
               "models open between them (docs/cli.md, \"serve\"); ends at the end of input");
  serveCmd->add_option("--models", servedModels,
                       "How many models stay open, each in its worker, between commands (default 3; 0: none)")
      ->check(CLI::Range(0, 64));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    // diff's trouble is 2, as diff(1)'s, a usage error included.
    return rc != 0 && diffCmd->parsed() ? 2 : rc;
  }
  try {
    if (app.got_subcommand(trace)) {
      if (!batch.outDir.empty()) {
        batch.inputs = t.inputs;
        batch.seed = t.seed;
        return runBatchTrace(batch, w.limits());
      }
      if (!batch.listFile.empty() || batch.fxDot || batch.verify)
        throw tdfx::Error("trace: --from, --fx-dot and --verify go with --out-dir");
      if (batch.models.size() != 1)
        throw tdfx::Error("trace: name one MODEL (" + std::to_string(batch.models.size()) +
                          " given); several are traced with --out-dir DIR");
      t.model = batch.models.front();
      return runTrace(t, w);
    }
    if (app.got_subcommand(verify)) return runVerify(v, w);
    if (app.got_subcommand(exportCmd)) return runExport(x, w);
    if (app.got_subcommand(diffCmd)) return runDiff(d, w);
    if (app.got_subcommand(serveCmd)) {
      if (w.timeout > 0 || w.memoryGiB > 0)
        throw tdfx::Error("serve: --timeout and --memory-limit go with each request's command, not with serve");
      return serveRequests(runCli, servedModels);
    }
  } catch (const tdfx::Error& e) {
    // A model's message may be megabytes and hold terminal escapes: capped, and shown as text.
    std::cerr << "tdfx-cli: error: " << tdfx::escapeControls(tdfx::capText(e.what())) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tdfx-cli: unexpected error: " << tdfx::escapeControls(tdfx::capText(e.what())) << "\n";
    return 2;
  }
  return 0;
}

int main(int argc, char** argv) {
  // First, while this process has one thread: the zygote that forks a model worker per command.
  // A server's requests and replies are kept from the workers the zygote forks (cli_serve.h).
  if (servesRequests(argc, argv)) reserveProtocolDescriptors();
  tdfx::startWorkerZygote();
  const int rc = runCli(argc, argv);
  // Everything is written (exports are fsynced and renamed) once the output is flushed. Skipping
  // the static destructors saves LibTorch's teardown, about 0.3 s, made slower still by the
  // copy-on-write page faults every write costs while the zygote shares this process's pages.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}
