// Loading model files: tdfx archives, plain TorchScript archives, and every kind of bad input.
#include "tdfx/model/model_file.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "tdfx/util/dtype.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;
namespace fs = std::filesystem;

std::string loadError(const std::string& path) {
  try {
    loadModelFile(path);
  } catch (const ModelFileError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string metadataError(const std::string& json) {
  const ModelFile seed = loadModelFile(fixture("seed_sequential.pt"));
  try {
    modelFromMetadata(seed.root, json, "m.pt");
  } catch (const ModelFileError& e) {
    return e.what();
  }
  return "(no error)";
}

using TempDir = testing::ScratchDir;

TEST(ModelFile, SeedArchiveHasSpecBatchAndExampleInputs) {
  const ModelFile m = loadModelFile(fixture("seed_sequential.pt"));
  EXPECT_TRUE(m.hasTensorDictMetadata);
  EXPECT_EQ(m.batchSize, (std::vector<int64_t>{32}));
  ASSERT_EQ(m.exampleInputs.size(), 2u);
  EXPECT_EQ(m.exampleInputs[0].key, (NestedKey{"input", "x"}));
  EXPECT_EQ(m.exampleInputs[0].shape, (std::vector<int64_t>{32, 100}));
  EXPECT_EQ(m.exampleInputs[0].dtype, c10::kFloat);
  EXPECT_EQ(m.module->inKeys(), (std::vector<NestedKey>{{"input", "x"}, {"input", "mask"}}));
  EXPECT_EQ(m.module->outKeys(), (std::vector<NestedKey>{{"intermediate", "x"}, {"output", "probabilities"}}));
  const TensorDict td = makeExampleInputs(m, 5);
  EXPECT_EQ(td.get({"input", "mask"}).sizes(), (std::vector<int64_t>{32, 10}));
  EXPECT_TRUE(at::equal(td.get({"input", "x"}), makeExampleInputs(m, 5).get({"input", "x"})));
  EXPECT_FALSE(at::equal(td.get({"input", "x"}), makeExampleInputs(m, 6).get({"input", "x"})));
}

// Issue 22, finding 8: a complex128 example input (a documented dtype) failed with
// "check_random_bounds handles only integral, floating-point and boolean types".
TEST(ModelFile, ComplexExampleInputsAreDrawnLikeFloatOnes) {
  ModelFile model = loadModelFile(fixture("seed_module.pt"));
  model.exampleInputs.clear();
  model.exampleInputs.push_back({NestedKey{"input", "z"}, {32, 3}, c10::kComplexDouble});
  model.exampleInputs.push_back({NestedKey("w"), {32}, c10::kComplexFloat});
  const TensorDict inputs = makeExampleInputs(model, 0);
  const at::Tensor z = inputs.get({"input", "z"});
  EXPECT_EQ(z.scalar_type(), c10::kComplexDouble);
  EXPECT_EQ(z.sizes(), (std::vector<int64_t>{32, 3}));
  EXPECT_GT(at::imag(z).abs().sum().item<double>(), 0.0);  // both parts drawn
  EXPECT_EQ(inputs.get(NestedKey("w")).scalar_type(), c10::kComplexFloat);
}

TEST(ModelFile, PlainArchiveUsesForwardArgumentNames) {
  const ModelFile m = loadModelFile(fixture("plain.pt"));
  EXPECT_FALSE(m.hasTensorDictMetadata);
  EXPECT_EQ(m.module->inKeys(), (std::vector<NestedKey>{"x"}));
  EXPECT_EQ(m.module->outKeys(), (std::vector<NestedKey>{"output"}));
}

TEST_F(TempDir, UnreadableFilesGiveSpecificErrors) {
  EXPECT_NE(loadError((dir_ / "missing.pt").string()).find("no such file"), std::string::npos);
  EXPECT_NE(loadError(dir_.string()).find("is a directory"), std::string::npos);
  EXPECT_NE(loadError(write("empty.pt", "")).find("the file is empty"), std::string::npos);
  EXPECT_NE(loadError(write("text.pt", "hello world")).find("not a TorchScript archive"), std::string::npos);
  // A truncated archive: the zip's central directory is missing.
  std::ifstream in(fixture("seed_module.pt"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string msg = loadError(write("truncated.pt", bytes.substr(0, bytes.size() / 2)));
  EXPECT_NE(msg.find("cannot load as TorchScript"), std::string::npos) << msg;
}

TEST_F(TempDir, AnOpenedArchiveIsLoadedEvenAfterThePathIsReplaced) {
  // ModelArchive::open keeps one descriptor, which its checks and LibTorch read: a file renamed
  // over the path once it is open (in the worker, after the seal) is never the one deserialised.
  // (The window inside open(), between its checks and its open(), is closed by reading the checks
  // through the descriptor too; no test here can stop the process inside it.)
  const std::string path = (dir_ / "model.pt").string();
  fs::copy_file(fixture("seed_sequential.pt"), path);
  const ModelArchive archive = ModelArchive::open(path);
  fs::copy_file(fixture("plain.pt"), dir_ / "other.pt");
  fs::rename(dir_ / "other.pt", path);
  EXPECT_EQ(loadModelFile(path).module->inKeys(), (std::vector<NestedKey>{"x"}));  // the path: plain.pt now
  const ModelFile loaded = loadModelArchive(archive);
  EXPECT_EQ(loaded.module->inKeys(), (std::vector<NestedKey>{{"input", "x"}, {"input", "mask"}}));
  // A FIFO is refused without blocking, as not a regular file.
  const std::string fifo = (dir_ / "fifo.pt").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(loadError(fifo).find("is not a regular file"), std::string::npos) << loadError(fifo);
  // A device is refused before it is opened (opening a terminal could make it the controlling one).
  EXPECT_NE(loadError("/dev/null").find("/dev/null: is not a regular file"), std::string::npos) << loadError("/dev/null");
}

// A load that leaves the parameters' values for later (the model worker's open, so the graph is
// traced and shown first): buffers are there at once, parameters once readDeferredWeights ran.
TEST(ModelFile, ADeferredLoadReadsTheParametersWhenAsked) {
  const std::string path = fixture("conv_bn.pt");
  const ModelFile eager = loadModelFile(path);
  const ModelFile deferred = loadModelArchive(ModelArchive::open(path), WeightsRead::AfterLoad);
  ASSERT_NE(deferred.deferredWeights, nullptr);
  const auto buffers = [](const ModelFile& m) {
    std::map<std::string, at::Tensor> out;
    for (const auto& b : m.root.named_buffers()) out[b.name] = b.value;
    return out;
  };
  const auto parameters = [](const ModelFile& m) {
    std::map<std::string, at::Tensor> out;
    for (const auto& p : m.root.named_parameters()) out[p.name] = p.value;
    return out;
  };
  // Buffers (batch norm's running statistics) are read during the load: a tracer computes with
  // them (FX's concrete values).
  const auto eagerBuffers = buffers(eager), deferredBuffers = buffers(deferred);
  ASSERT_EQ(deferredBuffers.size(), 6u);
  for (const auto& [name, value] : eagerBuffers) EXPECT_TRUE(at::equal(deferredBuffers.at(name), value)) << name;
  const auto eagerParameters = parameters(eager), deferredParameters = parameters(deferred);
  ASSERT_EQ(deferredParameters.size(), 7u);
  size_t unread = 0;
  for (const auto& [name, value] : eagerParameters) unread += !at::equal(deferredParameters.at(name), value);
  EXPECT_GT(unread, 0u) << "the parameters' records were read during the load";
  readDeferredWeights(deferred);
  for (const auto& [name, value] : eagerParameters) EXPECT_TRUE(at::equal(deferredParameters.at(name), value)) << name;
  readDeferredWeights(deferred);  // nothing is left to read
  for (const auto& [name, value] : eagerParameters) EXPECT_TRUE(at::equal(deferredParameters.at(name), value)) << name;
}

TEST_F(TempDir, WeightsOfAFileRewrittenInPlaceAreRefusedEachTimeTheyAreAskedFor) {
  const std::string path = (dir_ / "model.pt").string();
  fs::copy_file(fixture("conv_bn.pt"), path);
  const ModelFile deferred = loadModelArchive(ModelArchive::open(path), WeightsRead::AfterLoad);
  fs::resize_file(path, 100);  // the same file, cut short: what the open descriptor reads too
  const auto error = [&deferred] {
    try {
      readDeferredWeights(deferred);
    } catch (const ModelFileError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string first = error();
  EXPECT_EQ(first.rfind(path + ": the file changed while it was open", 0), 0u) << first;
  EXPECT_NE(first.find("open it again"), std::string::npos) << first;
  EXPECT_EQ(error(), first) << "the values stay incomplete: every later request is refused the same way";
  // Rewritten in place at the same size (as torch.jit.save does over an existing file): refused
  // too, before a byte of the new file is taken for the old one's weights.
  const std::string same = (dir_ / "same.pt").string();
  fs::copy_file(fixture("conv_bn.pt"), same);
  const ModelFile again = loadModelArchive(ModelArchive::open(same), WeightsRead::AfterLoad);
  ASSERT_NE(again.deferredWeights, nullptr);
  {
    std::ifstream in(same, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(same, std::ios::binary | std::ios::in) << bytes;
  }
  try {
    readDeferredWeights(again);
    ADD_FAILURE() << "weights read from a file rewritten since it was opened";
  } catch (const ModelFileError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(same + ": the file changed while it was open (its size, times or inode", 0), 0u)
        << e.what();
  }
}

TEST_F(TempDir, AFileWhoseObjectsRunSetStateIsLoadedWithEveryValue) {
  // A __setstate__ runs while the file is deserialised and may compute with any value: here it
  // doubles the parameter into a buffer. Deferred, it would have doubled bytes not read yet.
  torch::jit::Module m("__torch__.WithState");
  m.register_parameter("weight", at::arange(1, 5, at::kFloat), false);
  m.register_buffer("doubled", at::zeros({4}));
  m.define(R"(
def __getstate__(self) -> Tuple[Tensor, Tensor]:
    return (self.weight, self.doubled)

def __setstate__(self, state: Tuple[Tensor, Tensor]) -> None:
    self.weight = state[0]
    self.doubled = state[0] * 2

def forward(self, x: Tensor) -> Tensor:
    return x + self.doubled
)");
  const std::string path = (dir_ / "with_state.pt").string();
  m.save(path);
  const ModelFile loaded = loadModelArchive(ModelArchive::open(path), WeightsRead::AfterLoad);
  EXPECT_EQ(loaded.deferredWeights, nullptr) << "loaded again with every value";
  EXPECT_TRUE(at::equal(loaded.root.attr("doubled").toTensor(), at::arange(1, 5, at::kFloat) * 2));
  EXPECT_TRUE(at::equal(loaded.root.attr("weight").toTensor(), at::arange(1, 5, at::kFloat)));
  // The same for C++ classes: quantized packed parameters (torch.classes) pack their weights while
  // they are unpickled. Deferred, they would have packed bytes not read yet.
  const ModelFile quantized = loadModelArchive(ModelArchive::open(fixture("quantized_dynamic.pt")), WeightsRead::AfterLoad);
  EXPECT_EQ(quantized.deferredWeights, nullptr);
  const ModelFile eager = loadModelFile(fixture("quantized_dynamic.pt"));
  const at::Tensor x = at::randn({5, 2, 16}, at::detail::createCPUGenerator(1));
  torch::jit::Module deferredRoot = quantized.root, eagerRoot = eager.root;
  EXPECT_TRUE(at::equal(deferredRoot.forward({x}).toTensor(), eagerRoot.forward({x}).toTensor()));
}

TEST(ModelFile, MetadataErrorsNameTheField) {
  EXPECT_NE(metadataError("{").find("m.pt: tensordict.json: not valid JSON"), std::string::npos);
  EXPECT_NE(metadataError("[]").find("top level: expected an object"), std::string::npos);
  EXPECT_NE(metadataError(R"({"format": "x", "version": 1})").find("format: expected \"tdfx.tensordict\""),
            std::string::npos);
  const std::string newer = metadataError(R"({"format": "tdfx.tensordict", "version": 7, "module": {}})");
  EXPECT_NE(newer.find("version 7 is newer than this tdfx supports (1)"), std::string::npos) << newer;
  EXPECT_NE(metadataError(R"({"format": "tdfx.tensordict", "version": 1})").find("missing \"module\""),
            std::string::npos);
  const std::string kind = metadataError(R"({"format": "tdfx.tensordict", "version": 1, "module": {"kind": "loop"}})");
  EXPECT_NE(kind.find("module.kind: unknown kind \"loop\""), std::string::npos) << kind;
  const std::string path = metadataError(
      R"({"format": "tdfx.tensordict", "version": 1, "module": {"kind": "module", "path": "0.modle", "in_keys": ["x"], "out_keys": ["y"]}})");
  EXPECT_NE(path.find("module: path \"0.modle\": '0' has no submodule 'modle' (submodules: module)"), std::string::npos)
      << path;
  const std::string key = metadataError(
      R"({"format": "tdfx.tensordict", "version": 1, "module": {"kind": "sequential", "modules": [{"kind": "module", "path": "1.module", "in_keys": [3], "out_keys": ["y"]}]}})");
  EXPECT_NE(key.find("module.modules[0].in_keys[0]: expected a key"), std::string::npos) << key;
  const std::string arity = metadataError(
      R"({"format": "tdfx.tensordict", "version": 1, "module": {"kind": "module", "path": "1.module", "in_keys": ["x"], "out_keys": ["y"]}})");
  EXPECT_NE(arity.find("forward(x, mask) takes 2 inputs but in_keys has 1"), std::string::npos) << arity;
  const std::string shape = metadataError(
      R"({"format": "tdfx.tensordict", "version": 1, "module": {"kind": "module", "path": "1.module", "in_keys": ["x", "m"], "out_keys": ["y"]}, "example_inputs": [{"key": "x", "shape": [2, -1]}]})");
  EXPECT_NE(shape.find("example_inputs[0].shape: expected a list of non-negative integers"), std::string::npos) << shape;
  const std::string dtype = metadataError(
      R"({"format": "tdfx.tensordict", "version": 1, "module": {"kind": "module", "path": "1.module", "in_keys": ["x", "m"], "out_keys": ["y"]}, "example_inputs": [{"key": "x", "shape": [2], "dtype": "float33"}]})");
  EXPECT_NE(dtype.find("example_inputs[0].dtype: unknown dtype \"float33\""), std::string::npos) << dtype;
  const std::string selected = metadataError(
      R"({"format": "tdfx.tensordict", "version": 1, "module": {"kind": "sequential", "out_keys": ["nope"], "modules": [{"kind": "module", "path": "1.module", "in_keys": ["x", "m"], "out_keys": ["y"]}]}})");
  EXPECT_NE(selected.find("selected out key 'nope' is not written"), std::string::npos) << selected;
}

TEST(Dtype, ParsesAndPrintsNames) {
  EXPECT_EQ(parseDtype("float32"), c10::kFloat);
  EXPECT_EQ(parseDtype("int64"), c10::kLong);
  EXPECT_EQ(parseDtype("bool"), c10::kBool);
  EXPECT_EQ(dtypeToString(c10::kHalf), "float16");
  EXPECT_EQ(dtypeRepr(c10::kDouble), "torch.float64");
  EXPECT_THROW(parseDtype("f32"), Error);
}

}  // namespace
}  // namespace tdfx
