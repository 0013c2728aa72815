// Internal: facts about the Graphviz library loaded at run time.
#pragma once

#include <string>

namespace tdfx {

// gvcVersion() of the process's Graphviz context, taken under the Graphviz lock.
std::string graphvizRuntimeVersion();

}  // namespace tdfx
