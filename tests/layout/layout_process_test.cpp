// The layout process (issue 22, finding 1): Graphviz runs where it can be stopped, within a
// budget, and a graph dot cannot lay out in time gets the layered layout instead.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "tdfx/layout/layout_process.h"
#include "support/layout_geometry.h"
#include "test_support.h"

namespace tdfx {
namespace {

namespace fs = std::filesystem;
using testing::geometryIsSane;
using testing::readFile;

ViewGraph nodesOnly(size_t n) {
  ViewGraph v;
  for (size_t i = 0; i < n; ++i) {
    ViewNode node;
    node.id = "n" + std::to_string(i);
    node.lines = {node.id, "add"};
    v.nodes.push_back(std::move(node));
  }
  return v;
}

// Each node reads the previous one and `extra` random earlier ones: dot needs minutes for 1,000.
ViewGraph dense(size_t n, int extra) {
  ViewGraph v = nodesOnly(n);
  std::mt19937 rng(7);
  for (size_t i = 1; i < n; ++i) {
    v.edges.push_back({v.nodes[i - 1].id, v.nodes[i].id, ""});
    for (int k = 0; k < extra && i > 1; ++k) v.edges.push_back({v.nodes[rng() % (i - 1)].id, v.nodes[i].id, ""});
  }
  return v;
}

bool processGone(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    if (::kill(pid, 0) != 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(LayoutProcess, SmallGraphsGetDotsLayout) {
  ViewGraph view = dense(40, 1);
  view.clusters.push_back({"cluster_a", "a", ""});
  for (size_t i = 5; i < 15; ++i) view.nodes[i].cluster = "cluster_a";
  LayoutProcess process;
  const LayoutOutcome outcome = process.layout(view);
  EXPECT_FALSE(outcome.fallback);
  EXPECT_EQ(outcome.note, "");
  EXPECT_TRUE(geometryIsSane(view, outcome.layout));
  // The same geometry as in this process: the layout process only moves the work.
  const LayoutResult here = layoutView(view);
  ASSERT_EQ(here.nodes.size(), outcome.layout.nodes.size());
  for (size_t i = 0; i < here.nodes.size(); ++i) {
    EXPECT_EQ(here.nodes[i].id, outcome.layout.nodes[i].id);
    EXPECT_DOUBLE_EQ(here.nodes[i].x, outcome.layout.nodes[i].x);
    EXPECT_DOUBLE_EQ(here.nodes[i].y, outcome.layout.nodes[i].y);
  }
}

TEST(LayoutProcess, DotPastItsBudgetGivesWayToTheLayeredLayout) {
  const ViewGraph view = dense(1000, 2);
  LayoutBudget budget;
  budget.dotSeconds = 1;
  LayoutProcess process;
  const LayoutOutcome outcome = process.layout(view, defaultTextMeasure(), budget);
  EXPECT_TRUE(outcome.fallback);
  EXPECT_EQ(outcome.note, "dot did not finish within 1 s: a simpler layered layout is shown");
  EXPECT_TRUE(geometryIsSane(view, outcome.layout));
  // Every edge points down: layers follow the graph's order.
  std::map<std::string, double> y;
  for (const auto& b : outcome.layout.nodes) y[b.id] = b.y;
  for (const ViewEdge& e : view.edges) EXPECT_LT(y.at(e.from), y.at(e.to)) << e.from << " -> " << e.to;
}

TEST(LayoutProcess, GraphsPastDotsSizeGoStraightToTheLayeredLayout) {
  const ViewGraph view = dense(20000, 2);
  LayoutProcess process;
  const LayoutOutcome outcome = process.layout(view);
  EXPECT_TRUE(outcome.fallback);
  EXPECT_EQ(outcome.note, "20000 nodes and 59995 edges are more than dot lays out quickly: a simpler layered layout is shown");
  EXPECT_EQ(outcome.layout.nodes.size(), 20000u);
  EXPECT_EQ(outcome.layout.edges.size(), view.edges.size());
}

TEST(LayoutProcess, LayeredLayoutTakesCyclesClustersAndUnknownEnds) {
  ViewGraph view = nodesOnly(6);
  view.edges = {{"n0", "n1", "f32[2]"}, {"n1", "n2", ""}, {"n2", "n1", ""}, {"n3", "n3", ""}, {"n4", "nowhere", ""},
                {"n2", "n5", ""}};
  view.clusters = {{"cluster_outer", "outer", ""}, {"cluster_inner", "inner", "cluster_outer"}};
  view.nodes[1].cluster = "cluster_inner";
  view.nodes[2].cluster = "cluster_outer";
  view.rankdir = "LR";
  const LayoutResult layout = layeredLayout(view);
  ASSERT_EQ(layout.nodes.size(), 6u);
  EXPECT_EQ(layout.edges.size(), 5u);  // the edge to an unknown node is left out
  EXPECT_EQ(layout.edges[0].label, "f32[2]");
  ASSERT_EQ(layout.clusters.size(), 2u);
  view.edges.erase(view.edges.begin() + 4);
  EXPECT_TRUE(geometryIsSane(view, layout));
}

TEST(LayoutProcess, CancelStopsGraphvizAtOnce) {
  const ViewGraph view = dense(1000, 2);
  LayoutBudget budget;
  budget.dotSeconds = 600;
  LayoutProcess process;
  pid_t running = -1;
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    running = process.pid();
    process.cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(process.layout(view, defaultTextMeasure(), budget), WorkerCancelled);
  canceller.join();
  // Within the time the kill takes, not dot's minutes (a hang guard, not a speed goal).
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60.0);
  ASSERT_GT(running, 0);
  EXPECT_TRUE(processGone(running));
  EXPECT_THROW(process.layout(nodesOnly(2)), WorkerCancelled);  // until resetCancel
  process.resetCancel();
  EXPECT_FALSE(process.layout(nodesOnly(2)).fallback);
}

using ExportWithin = testing::ScratchDir;

TEST_F(ExportWithin, InTimeItIsGraphvizsOwnPicture) {
  const ViewGraph view = dense(30, 1);
  for (const char* name : {"small.svg", "small.pdf", "small.dot"}) {
    const std::string file = path(name);
    EXPECT_EQ(exportViewWithin(view, file, 60), "");
    const std::string bytes = readFile(file);
    if (std::string(name) == "small.pdf") {
      EXPECT_EQ(bytes.rfind("%PDF", 0), 0u);  // cairo stamps the time: compare the header only
    } else {
      EXPECT_EQ(bytes, renderView(view, exportFormatForPath(file))) << name;
    }
  }
}

TEST_F(ExportWithin, SvgPastTheLimitIsDrawnFromTheLayeredLayout) {
  const ViewGraph view = dense(1000, 2);
  const std::string file = path("dense.svg");
  EXPECT_EQ(exportViewWithin(view, file, 1), "dot did not finish within 1 s: a simpler layered layout was drawn");
  const std::string svg = readFile(file);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("id=\"n999\""), std::string::npos);
}

TEST_F(ExportWithin, PngPastTheLimitFailsAndLeavesTheFileAlone) {
  const std::string file = path("dense.png");
  std::ofstream(file) << "mine";
  try {
    exportViewWithin(dense(1000, 2), file, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), ("cannot export " + file + ": the graph: render did not finish within 1 s (the time limit; "
                            "--timeout); the layout process was stopped").c_str());
  }
  EXPECT_EQ(readFile(file), "mine");
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1u);  // no temporary file left
}

// Issue 22, finding 7: an export over a 0600 file left it 0644; new files follow the umask.
TEST_F(ExportWithin, WrittenFilesKeepTheirModeAndNewOnesFollowTheUmask) {
  const std::string existing = path("private.txt");
  std::ofstream(existing) << "old";
  fs::permissions(existing, fs::perms::owner_read | fs::perms::owner_write);
  writeFileAtomically(existing, "new");
  EXPECT_EQ(readFile(existing), "new");
  EXPECT_EQ(fs::status(existing).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  const mode_t old = ::umask(077);
  writeFileAtomically(path("new077.txt"), "x");
  ::umask(022);
  writeFileAtomically(path("new022.txt"), "x");
  ::umask(old);
  EXPECT_EQ(fs::status(path("new077.txt")).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(path("new022.txt")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
}

// Issue 35, finding 3: `export -o link.pt`, the link pointing to /dev/full, replaced the link by a
// regular file with the device's mode, 0666 (world-writable). A device lends no mode; the link is
// replaced by a file with the umask's mode, and /dev/full is untouched.
TEST_F(ExportWithin, ALinkToADeviceLendsNoMode) {
  const std::string link = path("link.pt");
  fs::create_symlink("/dev/full", link);
  const mode_t old = ::umask(022);
  writeFileAtomically(link, "archive");
  ::umask(old);
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_regular_file(link));
  EXPECT_EQ(readFile(link), "archive");
  EXPECT_EQ(fs::status(link).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

// Issue 22, finding 7: SIGTERM during an export left `.tdfx-XXXXXX` files. The file is written
// unnamed (O_TMPFILE) and named only for the rename, so a signal at any moment leaves none.
TEST_F(ExportWithin, ASignalMidWriteLeavesNoTemporaryFile) {
  const std::string bytes(size_t{256} << 20, 'x');  // long enough to be cut off while it is written
  const std::string target = path("big.svg");
  for (int delayMs : {1, 5, 20, 60}) {
    const pid_t child = ::fork();
    if (child == 0) {
      writeFileAtomically(target, bytes);
      ::_exit(0);
    }
    ASSERT_GT(child, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
    ::kill(child, SIGTERM);
    int status = 0;
    ::waitpid(child, &status, 0);
    for (const auto& entry : fs::directory_iterator(dir_))
      EXPECT_EQ(entry.path().filename().string().rfind(".tdfx-", 0), std::string::npos)
          << entry.path() << " left after SIGTERM at " << delayMs << " ms";
  }
}

}  // namespace
}  // namespace tdfx
