// Versions of tdfx and of the libraries it runs on, for `--version`, the About box and bug reports.
#pragma once

#include <string>

namespace tdfx {

// tdfx's own version (the CMake project version), e.g. "0.1.0".
std::string tdfxVersion();

// The LibTorch version tdfx was compiled against (LibTorch has no run-time version query).
std::string libtorchVersion();

// The Graphviz version loaded at run time (gvcVersion). Creates the process's Graphviz context on first use.
std::string graphvizVersion();

// The lines `--version` prints: "<program> <tdfx version>", then LibTorch, Qt and Graphviz, one per line.
// `qtVersion` comes from the caller because core never links Qt; empty means "not linked".
std::string versionReport(const std::string& program, const std::string& qtVersion);

}  // namespace tdfx
