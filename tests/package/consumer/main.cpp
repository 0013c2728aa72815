// consumer MODEL.pt: traces a TensorDict model file with the installed tdfx::core, prints the FX graph,
// and checks that the traced graph computes what the eager module computes.
#include <iostream>

#include <tdfx/error.h>
#include <tdfx/model/model_file.h>
#include <tdfx/runtime/graph_module.h>
#include <tdfx/runtime/verify.h>
#include <tdfx/version.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer MODEL.pt\n";
    return 64;
  }
  try {
    const tdfx::ModelFile model = tdfx::loadModelFile(argv[1]);
    const tdfx::GraphModule traced = tdfx::symbolicTrace(*model.module);
    std::cout << "tdfx " << tdfx::tdfxVersion() << "\n" << traced.graphText() << "\n\n";
    const tdfx::TensorDict inputs = tdfx::verificationInputs(model, {}, 7);
    const tdfx::VerifyReport report = tdfx::verify(*model.module, traced, inputs, {0.0, 0.0});
    std::cout << tdfx::formatReport(report);
    return report.passed() ? 0 : 3;
  } catch (const tdfx::Error& e) {
    std::cerr << "consumer: " << e.what() << "\n";
    return 1;
  }
}
