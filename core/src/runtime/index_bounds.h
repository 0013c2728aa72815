#pragma once
// Integer inputs that index a tensor whose size is known before running: verify draws their
// values in range (index_bounds.cpp).
#include <string>
#include <vector>

#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"

namespace tdfx::runtime {

struct IndexBound {
  NestedKey key;     ///< the input
  int64_t size = 0;  ///< its values must lie in [0, size)
  std::string node;  ///< the node that indexes with it
};

/// Every use of an input as an index into a module's tensor or an input of known shape (`inputs`:
/// the shapes the passes will run on), one row per use, in graph order.
std::vector<IndexBound> indexBounds(const GraphModule& module, const std::vector<InputSpec>& inputs);

}  // namespace tdfx::runtime
