// First frame of hostile graphs: dense (each node reads the previous one and two random earlier
// ones, so dot's crossing minimisation has no end) and wide (one layer of thousands), laid out as
// the GUI does (LayoutProcess: dot within its budget, else the layered layout). The goal of issue
// 22: every graph up to 20,000 nodes and 60,000 edges within 5 s. Prints a table; exit status 1
// when a graph misses the goal.
//   tdfx_first_frame_bench [--goal SECONDS]
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tdfx/layout/layout_process.h"

namespace {

tdfx::ViewGraph chain(size_t n) {
  tdfx::ViewGraph v;
  for (size_t i = 0; i < n; ++i) {
    tdfx::ViewNode node;
    node.id = "n" + std::to_string(i);
    node.lines = {node.id, "call_function add"};
    v.nodes.push_back(std::move(node));
  }
  return v;
}

// Each node reads the previous node and `extra` random earlier ones.
tdfx::ViewGraph dense(size_t n, int extra) {
  tdfx::ViewGraph v = chain(n);
  std::mt19937 rng(7);
  for (size_t i = 1; i < n; ++i) {
    v.edges.push_back({v.nodes[i - 1].id, v.nodes[i].id, ""});
    for (int k = 0; k < extra && i > 1; ++k) v.edges.push_back({v.nodes[rng() % (i - 1)].id, v.nodes[i].id, ""});
  }
  return v;
}

// One input feeding n - 2 nodes that all feed one output, plus each middle node's neighbour.
tdfx::ViewGraph wide(size_t n) {
  tdfx::ViewGraph v = chain(n);
  for (size_t i = 1; i + 1 < n; ++i) {
    v.edges.push_back({v.nodes[0].id, v.nodes[i].id, ""});
    v.edges.push_back({v.nodes[i].id, v.nodes[n - 1].id, ""});
    if (i > 1) v.edges.push_back({v.nodes[i - 1].id, v.nodes[i].id, ""});
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  tdfx::startWorkerZygote();
  double goal = 5;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--goal") goal = std::stod(argv[i + 1]);
  struct Case {
    std::string name;
    tdfx::ViewGraph view;
  };
  std::vector<Case> cases = {{"dense_1000", dense(1000, 2)},   {"dense_3000", dense(3000, 1)},
                             {"dense_20000", dense(20000, 2)}, {"wide_20000", wide(20000)},
                             {"chain_300", dense(300, 0)}};
  int missed = 0;
  std::printf("%-12s %7s %7s %9s  %s\n", "graph", "nodes", "edges", "seconds", "layout");
  for (const Case& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    tdfx::LayoutProcess process;
    const tdfx::LayoutOutcome outcome = process.layout(c.view);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > goal) ++missed;
    std::printf("%-12s %7zu %7zu %9.2f  %s%s\n", c.name.c_str(), c.view.nodes.size(), c.view.edges.size(), s,
                outcome.fallback ? "layered: " : "dot", outcome.note.c_str());
  }
  if (missed) std::printf("%d graph(s) missed the %g s goal\n", missed, goal);
  return missed ? 1 : 0;
}
