// The model worker: one load per open, results as plain data, limits, cancel, crashes and the
// sandbox, all against real model files in real worker processes.
#include "tdfx/worker/model_worker.h"

#include <signal.h>

#include <chrono>
#include <map>
#include <filesystem>
#include <thread>

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "tdfx/worker/model_diff.h"
#include "tdfx/model/model_file.h"
#include "tdfx/ir/graph_printer.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

TEST(ModelWorker, OpensTracesAndVerifiesInAnotherProcess) {
  ModelWorker worker;
  const TracedModel m = worker.open(fixture("seed_sequential.pt"));
  EXPECT_TRUE(worker.alive());
  EXPECT_NE(worker.pid(), ::getpid());
  const ModelFile local = loadModelFile(fixture("seed_sequential.pt"));
  const GraphModule gm = symbolicTrace(*local.module);
  EXPECT_EQ(printGraph(*m.traced.graph), gm.graphText());
  EXPECT_EQ(m.code.text, gm.code().text);
  EXPECT_EQ(m.model.exampleInputs.size(), local.exampleInputs.size());
  // Parameter statistics come from the worker, which holds the tensors, when asked.
  const Node* fc1 = m.traced.graph->findNode("_0_fc1");
  ASSERT_NE(fc1, nullptr);
  ASSERT_FALSE(fc1->meta().parameters.empty());
  EXPECT_FALSE(fc1->meta().parameters[0].hasStats);
  const std::vector<ParameterStats> stats = worker.parameterStats();
  applyParameterStats(*m.traced.graph, stats);
  const at::Tensor weight =
      local.root.attr("0").toModule().attr("module").toModule().attr("fc1").toModule().attr("weight").toTensor();
  const ParameterInfo& w = fc1->meta().parameters[0];
  ASSERT_EQ(w.name, "weight");
  EXPECT_TRUE(w.hasStats);
  EXPECT_EQ(w.min, weight.min().item<double>());
  EXPECT_EQ(w.max, weight.max().item<double>());
  EXPECT_NEAR(w.mean, weight.mean().item<double>(), 1e-6);

  const WorkerVerifyResult v = worker.verify({}, 0, {});
  EXPECT_TRUE(v.report.passed()) << formatReport(v.report);
  EXPECT_EQ(v.records.size(), m.traced.graph->size());
  const auto records = worker.run({}, 1);
  ASSERT_EQ(records.size(), m.traced.graph->size());
  EXPECT_EQ(records[fc1->index()].outputs.at(0).shape, (std::vector<int64_t>{32, 50}));
}

// What `tdfx-cli diff` asks for: the same graph and module facts, without the code and each node's
// source text and schema (most of a large graph's bytes).
TEST(ModelWorker, AComparisonOpenLeavesOutCodeAndSourceButKeepsTheGraph) {
  ModelWorker full, lean;
  const TracedModel f = full.open(fixture("seed_sequential.pt"));
  const TracedModel c = lean.open(fixture("seed_sequential.pt"), GraphDetail::Comparison);
  EXPECT_EQ(printGraph(*c.traced.graph), printGraph(*f.traced.graph));
  EXPECT_FALSE(f.code.text.empty());
  EXPECT_TRUE(c.code.text.empty());
  EXPECT_TRUE(c.code.nodeLines.empty());
  size_t withSource = 0;
  for (const auto& n : f.traced.graph->nodes()) {
    const Node* other = c.traced.graph->findNode(n->name());
    ASSERT_NE(other, nullptr) << n->name();
    if (!n->meta().sourceText.empty()) ++withSource;
    EXPECT_TRUE(other->meta().sourceText.empty()) << n->name();
    EXPECT_TRUE(other->meta().schema.empty()) << n->name();
    EXPECT_EQ(other->meta().moduleType, n->meta().moduleType) << n->name();
    EXPECT_EQ(other->meta().parameters.size(), n->meta().parameters.size()) << n->name();
  }
  EXPECT_GT(withSource, 0u);  // the full open has source text to leave out
  EXPECT_EQ(c.model.inKeys, f.model.inKeys);
  EXPECT_EQ(c.traced.outKeys, f.traced.outKeys);
}

TEST(ModelWorker, ErrorsKeepTheirTypeAndTheWorkerStaysUsable) {
  ModelWorker worker;
  EXPECT_THROW(worker.open(fixture("no-such-model.pt")), ModelFileError);
  EXPECT_THROW(worker.open(fixture("root_loop.pt")), TraceError);
  worker.open(fixture("seed_module.pt"));
  try {
    worker.verify({parseInputSpec("input=7x3")}, 0, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(worker.verify({}, 0, {}).report.passed());
}

// A verify of an endless forward on a worker whose request limit is 1 s: it ends with that limit
// named, well before 10 s.
void expectVerifyEndsAtOneSecond(ModelWorker& worker) {
  const auto start = std::chrono::steady_clock::now();
  try {
    worker.verify({}, 0, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("verify did not finish within 1 s (the time limit; --timeout)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(ModelWorker, AnEndlessRunEndsAtTheTimeLimit) {
  WorkerLimits limits;
  limits.requestSeconds = 1;
  ModelWorker worker(limits);
  worker.open(fixture("endless.pt"));
  expectVerifyEndsAtOneSecond(worker);
  EXPECT_FALSE(worker.alive());
}

TEST(ModelWorker, AnEndlessRunWhoseWeightsAreStillUnreadEndsAtItsOwnLimit) {
  // Hostile round five, 17: the first request after an open reads the weights the open left; that
  // read had the open's limit added to the request's (verify's 60 s became 180 s).
  WorkerLimits limits;
  limits.requestSeconds = 1;
  limits.openSeconds = 30;
  ModelWorker worker(limits);
  worker.open(fixture("endless_weighted.pt"));
  ASSERT_TRUE(worker.weightsPending());
  expectVerifyEndsAtOneSecond(worker);
  EXPECT_FALSE(worker.weightsPending());
}

TEST(ModelWorker, APreparedWorkerServesTheNextOpen) {
  ModelWorker worker;
  EXPECT_FALSE(worker.prepared());
  worker.prepare();  // started and warmed with a module of its own
  ASSERT_TRUE(worker.prepared());
  const pid_t spare = worker.pid();
  worker.prepare();  // already prepared: the same process
  EXPECT_EQ(worker.pid(), spare);
  const TracedModel m = worker.open(fixture("seed_sequential.pt"));
  EXPECT_EQ(worker.pid(), spare) << "the open used the prepared process";
  EXPECT_FALSE(worker.prepared());
  EXPECT_GT(m.traced.graph->size(), 5u);  // the model's graph, not the warm-up's
  EXPECT_TRUE(worker.verify({}, 0, {}).report.passed());
  // One model per worker still: the next open starts a fresh process.
  worker.open(fixture("seed_module.pt"));
  EXPECT_NE(worker.pid(), spare);
  EXPECT_TRUE(testing::processEnds(spare));
  // A prepared worker that was killed is not used: the open starts another.
  ModelWorker killed;
  killed.prepare();
  const pid_t dead = killed.pid();
  ::kill(dead, SIGKILL);
  EXPECT_TRUE(testing::processEnds(dead));
  EXPECT_NO_THROW(killed.open(fixture("seed_module.pt")));
  EXPECT_NE(killed.pid(), dead);
}

// The open leaves the parameters' values unread (the graph comes back first); the first request
// that needs them reads them: they are the file's, as an in-process load has them.
TEST(ModelWorker, TheFirstRequestAfterAnOpenGetsTheFilesWeights) {
  ModelWorker worker;
  worker.open(fixture("conv_bn.pt"));
  const std::vector<ParameterValues> values = worker.parameterValues();
  const ModelFile eager = loadModelFile(fixture("conv_bn.pt"));
  std::map<std::string, at::Tensor> expected;
  for (const auto& p : eager.root.named_parameters()) expected[p.name] = p.value;
  for (const auto& b : eager.root.named_buffers()) expected[b.name] = b.value;
  ASSERT_EQ(values.size(), 13u);
  for (const ParameterValues& v : values) {
    ASSERT_TRUE(expected.count(v.name)) << v.name;
    const at::Tensor want = expected.at(v.name).to(at::kDouble).flatten().contiguous();
    if (v.values.empty()) continue;  // num_batches_tracked: an integer
    ASSERT_EQ(static_cast<int64_t>(v.values.size()), want.numel()) << v.name;
    EXPECT_TRUE(std::equal(v.values.begin(), v.values.end(), want.data_ptr<double>())) << v.name;
  }
}

class ModelWorkerFiles : public testing::ScratchDir {};

TEST_F(ModelWorkerFiles, AFileCutShortAfterItsOpenFailsEveryRequestThatNeedsItsWeights) {
  const std::string path = (dir_ / "model.pt").string();
  std::filesystem::copy_file(fixture("conv_bn.pt"), path);
  ModelWorker worker;
  worker.open(path);
  std::filesystem::resize_file(path, 100);
  for (int i = 0; i < 2; ++i) {
    try {
      worker.parameterStats();
      ADD_FAILURE() << "statistics of weights that are not in the file";
    } catch (const ModelFileError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ": the file changed while it was open", 0), 0u) << e.what();
    }
    // The worker holds a model without its weights: it is stopped, so that serve's cache (which
    // keeps a worker only while it answers) opens the file afresh instead of repeating the error.
    EXPECT_FALSE(worker.alive());
    EXPECT_FALSE(worker.idleAndConnected());
  }
  // The next open is a fresh start.
  std::filesystem::copy_file(fixture("conv_bn.pt"), path, std::filesystem::copy_options::overwrite_existing);
  worker.open(path);
  EXPECT_FALSE(worker.parameterValues().empty());
}

TEST(ModelWorker, CancelStopsARunningRequestAndOpenStartsAgain) {
  ModelWorker worker;
  worker.open(fixture("endless.pt"));
  const pid_t pid = worker.pid();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    worker.cancel();
  });
  EXPECT_THROW(worker.verify({}, 0, {}), WorkerCancelled);
  canceller.join();
  EXPECT_FALSE(worker.alive());
  EXPECT_TRUE(testing::processEnds(pid)) << "the cancelled worker is gone";
  EXPECT_THROW(worker.verify({}, 0, {}), Error);  // nothing open until the next open()
  EXPECT_THROW(worker.open(fixture("seed_module.pt")), WorkerCancelled);  // cancelled until reset
  worker.resetCancel();
  worker.open(fixture("seed_module.pt"));
  EXPECT_TRUE(worker.verify({}, 0, {}).report.passed());
}

TEST(ModelWorker, ACancelBeforeTheWorkerStartsIsNotLost) {
  ModelWorker worker;
  worker.cancel();  // e.g. Esc while the load job waits in its queue
  EXPECT_THROW(worker.open(fixture("seed_module.pt")), WorkerCancelled);
  EXPECT_FALSE(worker.alive());
}

TEST(ModelWorker, AnAllocationBombEndsAsAnErrorNamingTheLimit) {
  WorkerLimits limits;
  limits.memoryBytes = uint64_t{3} << 30;
  ModelWorker worker(limits);
  worker.open(fixture("allocation_bomb.pt"));
  try {
    worker.verify({}, 0, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("may use at most 3.0 GiB of memory; --memory-limit"), std::string::npos)
        << e.what();
  }
}

// Issue 22, finding 8: the limit counted the whole address space, LibTorch's 0.8 GiB of libraries
// included, so `--memory-limit 1` could not allocate even 176 MB. It counts what the work adds,
// and not the 64 MiB arenas malloc reserves for threads (which failed this test on CI).
TEST(ModelWorker, TheMemoryLimitCountsWhatTheModelAdds) {
  WorkerLimits limits;
  limits.memoryBytes = uint64_t{256} << 20;
  ModelWorker worker(limits);
  worker.open(fixture("allocates_176mib.pt"));
  EXPECT_TRUE(worker.verify({}, 0, {}).report.passed());
  // And it still bites: the same model past a limit below its tensor fails, naming the limit.
  limits.memoryBytes = uint64_t{128} << 20;
  ModelWorker small(limits);
  small.open(fixture("allocates_176mib.pt"));
  try {
    small.verify({}, 0, {});
    ADD_FAILURE() << "184 MiB fit in a 128 MiB limit";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--memory-limit"), std::string::npos) << e.what();
  }
}

TEST(ModelWorker, ACrashInLibTorchIsAnErrorNamingTheSignal) {
  // Found by tests/fuzz: a class body line `__buffers__ = []` cut to `__= []` makes LibTorch 1.13's
  // importer crash with SIGSEGV. Only the worker dies.
  caffe2::serialize::PyTorchStreamReader reader(fixture("nested_sequential.pt"));
  const std::string from = "  __buffers__ = []";
  const std::string dir = ::testing::TempDir();
  int crashes = 0;
  for (const std::string& record : reader.getAllRecords()) {
    auto [ptr, size] = reader.getRecord(record);
    const std::string code(static_cast<const char*>(ptr.get()), size);
    if (record.rfind("code/", 0) != 0 || code.find(from) == std::string::npos) continue;
    const std::string path = dir + "/crash-" + std::to_string(crashes) + ".pt";
    {
      caffe2::serialize::PyTorchStreamWriter writer(path);
      for (const std::string& r : reader.getAllRecords()) {
        if (r == "version" || r == ".data/version") continue;
        auto [p, n] = reader.getRecord(r);
        std::string data(static_cast<const char*>(p.get()), n);
        if (r == record) data.replace(data.find(from), from.size(), "  __= []");
        writer.writeRecord(r, data.data(), data.size());
      }
      writer.writeEndOfFile();
    }
    ModelWorker worker;
    try {
      worker.open(path);
    } catch (const WorkerCrash& e) {
      // The worker's signal handler names the stage it died in: LibTorch's importer.
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path + ": the model worker died by signal 11 (SIGSEGV) in LibTorch's importer"), std::string::npos)
          << msg;
      ++crashes;
    } catch (const Error&) {
    }
    EXPECT_FALSE(worker.alive());
  }
  EXPECT_GT(crashes, 0);
  ModelWorker after;
  EXPECT_NO_THROW(after.open(fixture("nested_sequential.pt")));  // and this process carries on
}

TEST(ModelWorker, TheSandboxRefusesWritesSocketsExecPtraceForkAndSignals) {
  ModelWorker worker;
  worker.open(fixture("seed_module.pt"));
  const auto results = worker.probeSandbox();
  for (const char* action : {"open", "socket", "exec", "ptrace", "fork", "kill"}) {
    ASSERT_TRUE(results.count(action)) << action;
    EXPECT_EQ(results.at(action), EPERM) << action;
  }
  // And the model still runs under it.
  EXPECT_TRUE(worker.verify({}, 0, {}).report.passed());
}

}  // namespace
}  // namespace tdfx
