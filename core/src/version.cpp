#include "tdfx/version.h"

#include <torch/version.h>

#include "layout/graphviz_runtime.h"

#ifndef TDFX_VERSION
#error "TDFX_VERSION must be defined by the build"
#endif

namespace tdfx {

std::string tdfxVersion() { return TDFX_VERSION; }

std::string libtorchVersion() { return TORCH_VERSION; }

std::string graphvizVersion() { return graphvizRuntimeVersion(); }

std::string versionReport(const std::string& program, const std::string& qtVersion) {
  return program + " " + tdfxVersion() + "\n" +            //
         "LibTorch " + libtorchVersion() + "\n" +           //
         "Qt " + (qtVersion.empty() ? std::string("(not linked)") : qtVersion) + "\n" +  //
         "Graphviz " + graphvizVersion() + "\n";
}

}  // namespace tdfx
