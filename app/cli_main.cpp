// tdfx-cli: headless tracing of TensorDict model files.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "tdfx/error.h"
#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"

namespace {

int runTrace(const std::string& modelPath, bool showGraph, bool showCode) {
  const tdfx::ModelFile model = tdfx::loadModelFile(modelPath);
  const tdfx::GraphModule gm = tdfx::symbolicTrace(*model.module);
  if (!showGraph && !showCode) showGraph = showCode = true;
  if (showGraph) std::cout << gm.graphText() << "\n";
  if (showCode) std::cout << gm.code().text;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tdfx-cli: trace PyTorch TensorDict modules saved as TorchScript into FX graphs"};
  app.set_version_flag("--version", std::string("tdfx-cli ") + TDFX_VERSION);
  app.require_subcommand(1);

  std::string model;
  bool graph = false, code = false;
  auto* trace = app.add_subcommand("trace", "Print the traced FX graph and/or the generated Python code");
  trace->add_option("MODEL", model, "TorchScript archive (.pt), with or without tensordict.json")->required();
  trace->add_flag("--graph", graph, "Print the graph (print(graph_module.graph))");
  trace->add_flag("--code", code, "Print the generated code (graph_module.code)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (app.got_subcommand(trace)) return runTrace(model, graph, code);
  } catch (const tdfx::Error& e) {
    std::cerr << "tdfx-cli: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tdfx-cli: unexpected error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
