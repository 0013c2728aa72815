#pragma once
// A generated fixture loaded, and its traced graph, to edit before building a GraphModule on it.
#include <string>

#include "test_support.h"

namespace tdfx::testing {

struct TracedFixture {
  ModelFile model;
  TracedGraph traced;
};

inline TracedFixture loadTraced(const std::string& name) {
  ModelFile model = loadModelFile(fixture(name));
  TracedGraph traced = traceGraph(*model.module);
  return {std::move(model), std::move(traced)};
}

}  // namespace tdfx::testing
