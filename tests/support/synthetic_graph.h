#pragma once
// Synthetic graphs for layout tests and benchmarks (no TorchScript needed).
#include <memory>
#include <string>
#include <vector>

#include "tdfx/trace/symbolic_trace.h"

namespace tdfx::testing {

// A transformer-like stack: per layer, attention (q, k, v projections, two matmuls, softmax,
// output projection, residual add, norm) and an MLP (two linears, gelu, residual add, norm).
inline tdfx::TracedGraph syntheticTransformer(int targetNodes) {
  auto g = std::make_shared<tdfx::Graph>();
  tdfx::Node* td = g->createNode(tdfx::OpKind::Placeholder, "tensordict");
  tdfx::Node* x = g->createNode(tdfx::OpKind::CallFunction, "operator.getitem", {td, "x"});
  x->meta().tensordictKey = tdfx::NestedKey("x");
  const auto module = [&](const std::string& path, tdfx::Node* in) {
    tdfx::Node* n = g->createNode(tdfx::OpKind::CallModule, path, {in});
    n->meta().modulePath = path;
    n->meta().moduleType = "torch.nn.modules.linear.Linear";
    return n;
  };
  const auto fn = [&](const std::string& target, std::vector<tdfx::Argument> args, const std::string& scope) {
    tdfx::Node* n = g->createNode(tdfx::OpKind::CallFunction, target, std::move(args));
    n->meta().modulePath = scope;
    return n;
  };
  for (int layer = 0; static_cast<int>(g->size()) < targetNodes; ++layer) {
    const std::string p = "layers." + std::to_string(layer);
    tdfx::Node* q = module(p + ".attn.q", x);
    tdfx::Node* k = module(p + ".attn.k", x);
    tdfx::Node* v = module(p + ".attn.v", x);
    tdfx::Node* s = fn("torch.matmul", {q, k}, p + ".attn");
    tdfx::Node* a = fn("torch.softmax", {s, int64_t(-1)}, p + ".attn");
    tdfx::Node* o = module(p + ".attn.out", fn("torch.matmul", {a, v}, p + ".attn"));
    tdfx::Node* r = fn("operator.add", {x, o}, p);
    tdfx::Node* n1 = module(p + ".norm1", r);
    tdfx::Node* h = fn("torch.nn.functional.gelu", {module(p + ".mlp.fc1", n1)}, p + ".mlp");
    tdfx::Node* r2 = fn("operator.add", {n1, module(p + ".mlp.fc2", h)}, p);
    x = module(p + ".norm2", r2);
  }
  g->createNode(tdfx::OpKind::Output, "output", {x});
  tdfx::TracedGraph t;
  t.graph = g;
  t.outKeys = {tdfx::NestedKey("y")};
  return t;
}

}  // namespace tdfx::testing
