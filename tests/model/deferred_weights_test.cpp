// Deferred weights (WeightsRead::AfterLoad): which loads leave the parameters' values for later,
// and which must read every value during the load. Each rule of settleDeferredReads and of the
// archive reader has a case here: a zoo-sized model deferred, a read that lands where no tensor
// holds it or where another read landed (a freed buffer's address reused), a record of another
// size, per-channel quantized and sparse tensors (their parts are held where the census does not
// look), a load that throws on values not read yet, a record whose offset is shared or overflows,
// and an archive naming C++ classes.
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>

#include <cstring>

#include <filesystem>
#include <map>

#include <gtest/gtest.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/script.h>

#include "model/archive_directory.h"
#include "model/archive_reader.h"
#include "model/deferred_weights.h"
#include "tdfx/error.h"
#include "tdfx/model/model_file.h"
#include "tdfx/util/file_identity.h"
#include "support/test_paths.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;
namespace fs = std::filesystem;

class DeferredWeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tdfx-deferred-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string save(torch::jit::Module& m, const std::string& name) {
    const std::string path = (dir_ / name).string();
    m.save(path);
    return path;
  }
  fs::path dir_;
};

std::map<std::string, at::Tensor> named(const torch::jit::named_parameter_list& list) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : list) out[p.name] = p.value;
  return out;
}

// Every parameter and buffer of `loaded` equals a plain load's (torch::jit::load reads all).
void expectValuesOfAPlainLoad(const ModelFile& loaded, const std::string& path) {
  const torch::jit::Module plain = torch::jit::load(path);
  const auto want = named(plain.named_parameters()), got = named(loaded.root.named_parameters());
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, value] : want) EXPECT_TRUE(at::equal(got.at(name), value)) << name;
  for (const auto& b : plain.named_buffers()) {
    bool found = false;
    for (const auto& mine : loaded.root.named_buffers())
      if (mine.name == b.name) {
        found = true;
        EXPECT_TRUE(mine.value.is_sparse() ? at::equal(mine.value.to_dense(), b.value.to_dense()) : at::equal(mine.value, b.value))
            << b.name;
      }
    EXPECT_TRUE(found) << b.name;
  }
}

TEST_F(DeferredWeightsTest, AZooSizedModelLeavesEveryParameterForLater) {
  const std::string path = std::string(testing::kZooDir) + "/resnet18.pt";
  const ModelFile deferred = loadModelArchive(ModelArchive::open(path), WeightsRead::AfterLoad);
  ASSERT_NE(deferred.deferredWeights, nullptr) << "resnet18's 45 MB of parameters were read during the load";
  const size_t parameters = deferred.root.named_parameters().size();
  EXPECT_EQ(parameters, 62u);
  EXPECT_EQ(deferred.deferredWeights->pending.size(), parameters) << "each parameter's record waits";
  readDeferredWeights(deferred);
  EXPECT_TRUE(deferred.deferredWeights->pending.empty());
  expectValuesOfAPlainLoad(deferred, path);
}

// Issue 56, finding 15: a weight changed through a shared mapping whose page was dirtied before the
// open. Linux moves a file's times at the first write to a clean page only, so the file keeps the
// identity the open saw; the deferred read would take the new bytes for parameters while the graph
// and buffers came from the old ones. The record's CRC-32 (the central directory's, read at the
// open) tells them apart.
TEST_F(DeferredWeightsTest, AWeightChangedWithoutATimeStampIsCaughtByItsChecksum) {
  torch::jit::Module m("__torch__.Mapped");
  m.register_parameter("weight", at::full({1024}, 1.0f), false);
  m.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.weight\n");
  const std::string path = save(m, "mapped.pt");
  const size_t size = fs::file_size(path);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  char* bytes = static_cast<char*>(map);
  const std::vector<float> ones(1024, 1.0f);
  char* weight = static_cast<char*>(::memmem(bytes, size, ones.data(), ones.size() * sizeof(float)));
  ASSERT_NE(weight, nullptr) << "the weight's bytes are in the archive as they are";
  *static_cast<volatile char*>(weight) = weight[0];  // dirties the page before the open: the times move now
  const ModelFile loaded = loadModelArchive(ModelArchive::open(path), WeightsRead::AfterLoad);
  ASSERT_NE(loaded.deferredWeights, nullptr);
  const std::optional<FileIdentity> opened = FileIdentity::ofPath(path);
  const float two = 2.0f;
  std::memcpy(weight, &two, sizeof two);  // the page is dirty already: no time moves
  const bool sameIdentity = FileIdentity::ofPath(path) == opened;
  try {
    readDeferredWeights(loaded);
    ADD_FAILURE() << "a weight read from another version of the file than the graph";
  } catch (const ModelFileError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": the file changed while it was open", 0), 0u) << message;
    // Unless a writeback moved the times meanwhile (then the identity check says it first).
    if (sameIdentity) {
      EXPECT_NE(message.find("do not match the CRC-32 its archive gives them"), std::string::npos) << message;
    }
  }
  ::munmap(map, size);
  ::close(fd);
}

// settleDeferredReads on reads made up around a real module: where a read may stay deferred.
class SettleTest : public DeferredWeightsTest {
 protected:
  void SetUp() override {
    DeferredWeightsTest::SetUp();
    module_.register_parameter("weight", at::arange(1, 5, at::kFloat), false);
    module_.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.weight\n");
    const std::string path = save(module_, "settle.pt");
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    reader_ = std::make_shared<ArchiveReader>(fd_, static_cast<size_t>(fs::file_size(path)));
  }
  DeferredOutcome settle(std::vector<DeferredRead> reads) {
    std::shared_ptr<DeferredWeights> out;
    const DeferredOutcome outcome = settleDeferredReads(module_, "settle.pt", reader_, std::move(reads), out);
    pending_ = out ? out->pending.size() : 0;
    return outcome;
  }
  void* weightBuffer() { return module_.attr("weight").toTensor().storage().data(); }

  torch::jit::Module module_{"__torch__.Settle"};
  int fd_ = -1;
  std::shared_ptr<ArchiveReader> reader_;
  size_t pending_ = 0;
};

TEST_F(SettleTest, AReadIntoTheParametersOwnStorageStaysDeferred) {
  EXPECT_EQ(settle({{100, weightBuffer(), 16}}), DeferredOutcome::Settled);
  EXPECT_EQ(pending_, 1u);
}

TEST_F(SettleTest, AReadThatNoTensorHoldsLoadsAgain) {
  // A sparse tensor's indices or a per-channel quantizer's scales: read into storages that the
  // census does not see. Deferred, they would never be read.
  std::vector<float> elsewhere(4);
  EXPECT_EQ(settle({{100, elsewhere.data(), 16}}), DeferredOutcome::LoadAgain);
}

TEST_F(SettleTest, TwoReadsIntoOneAddressLoadAgain) {
  // A buffer freed during the load and its address handed to the next record: the first read
  // would land in the second tensor.
  EXPECT_EQ(settle({{100, weightBuffer(), 16}, {300, weightBuffer(), 16}}), DeferredOutcome::LoadAgain);
}

TEST_F(SettleTest, ARecordOfAnotherSizeThanItsStorageLoadsAgain) {
  EXPECT_EQ(settle({{100, weightBuffer(), 8}}), DeferredOutcome::LoadAgain);
  EXPECT_EQ(settle({{100, weightBuffer(), 32}}), DeferredOutcome::LoadAgain);
}

TEST_F(DeferredWeightsTest, PerChannelQuantizedAndSparseTensorsAreLoadedWithEveryValue) {
  torch::jit::Module m("__torch__.Parts");
  m.register_parameter("weight", at::arange(1, 13, at::kFloat).reshape({4, 3}), false);
  m.register_buffer("quantized", at::quantize_per_channel(at::arange(12, at::kFloat).reshape({4, 3}),
                                                          at::tensor({0.5, 0.25, 1.0, 2.0}, at::kDouble),
                                                          at::tensor({0, 1, 2, 3}, at::kLong), 0, at::kQInt8));
  m.register_buffer("sparse", at::eye(4).to_sparse());
  m.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.weight\n");
  const std::string path = save(m, "parts.pt");
  const ModelFile loaded = loadModelArchive(ModelArchive::open(path), WeightsRead::AfterLoad);
  expectValuesOfAPlainLoad(loaded, path);
  const at::Tensor q = loaded.root.attr("quantized").toTensor();
  EXPECT_TRUE(at::equal(q.q_per_channel_scales(), at::tensor({0.5, 0.25, 1.0, 2.0}, at::kDouble)));
  EXPECT_TRUE(at::equal(q.q_per_channel_zero_points(), at::tensor({0, 1, 2, 3}, at::kLong)));
  EXPECT_TRUE(at::equal(loaded.root.attr("sparse").toTensor().to_dense(), at::eye(4)));
  readDeferredWeights(loaded);  // whatever waited, if anything
  expectValuesOfAPlainLoad(loaded, path);
}

TEST_F(DeferredWeightsTest, ALoadThatThrowsOnValuesNotReadYetIsLoadedAgainWithEveryValue) {
  // A __setstate__ that checks a parameter's value: on a deferred read it sees bytes not read yet
  // and raises; the load is made again with every value, and succeeds.
  torch::jit::Module m("__torch__.Checked");
  m.register_parameter("weight", at::full({256}, 3.0f), false);
  m.define(R"(
def __getstate__(self) -> Tuple[Tensor, int]:
    return (self.weight, 0)

def __setstate__(self, state: Tuple[Tensor, int]) -> None:
    assert bool((state[0] == 3.0).all()), "the weight is not what was saved"
    self.weight = state[0]

def forward(self, x: Tensor) -> Tensor:
    return x * self.weight
)");
  const std::string path = save(m, "checked.pt");
  const ModelFile loaded = loadModelArchive(ModelArchive::open(path), WeightsRead::AfterLoad);
  EXPECT_EQ(loaded.deferredWeights, nullptr) << "loaded again with every value";
  EXPECT_TRUE(at::equal(loaded.root.attr("weight").toTensor(), at::full({256}, 3.0f)));
}

// The archive reader's spans: a read of exactly a tensor record's bytes is noted, not done, while
// deferring; a record that shares its local header's offset with another, or whose offset
// overflows, is never deferred: its read is done at once.
TEST(DeferredWeights, ARecordWithASharedOrOverflowingOffsetIsReadNotDeferred) {
  const std::string path = fixture("conv_bn.pt");
  const std::string bytes = testing::readFile(path);
  const ArchiveDirectory directory = readArchiveDirectory(
      path, bytes.size(), [&](uint64_t offset, uint64_t size) { return bytes.substr(offset, size); });
  size_t index = directory.records.size();
  for (size_t i = 0; i < directory.records.size(); ++i)
    if (directory.records[i].name.find("/data/") != std::string::npos && directory.records[i].size >= 16) index = i;
  ASSERT_LT(index, directory.records.size()) << "conv_bn.pt has no tensor record";
  const ArchiveRecord& tensor = directory.records[index];
  // The reader names records without the archive's folder ("data/11" for "conv_bn/data/11").
  const uint64_t data =
      caffe2::serialize::PyTorchStreamReader(path).getRecordOffset(tensor.name.substr(tensor.name.find('/') + 1));
  // Whether a deferring reader over `d` notes the record's read instead of doing it.
  const auto deferred = [&](const ArchiveDirectory& d) {
    ArchiveReader reader(::open(path.c_str(), O_RDONLY | O_CLOEXEC), bytes.size());
    reader.setTensorRecords(d);
    reader.deferTensorReads();
    std::string buffer(tensor.size, '\x5a');
    EXPECT_EQ(reader.read(data, buffer.data(), buffer.size(), "test"), buffer.size());
    const bool noted = reader.stopDeferring().size() == 1;
    EXPECT_NE(noted, buffer == bytes.substr(data, tensor.size)) << "a read is either noted or done, never neither";
    return noted;
  };
  // The record alone in the directory: its span runs to the directory, and its read is noted.
  ArchiveDirectory alone{directory.offset, {tensor}};
  EXPECT_TRUE(deferred(alone));
  ArchiveDirectory shared = alone;
  shared.records.push_back(directory.records[index == 0 ? 1 : 0]);
  shared.records.back().localHeaderOffset = tensor.localHeaderOffset;
  EXPECT_FALSE(deferred(shared)) << "two records claim one local header";
  ArchiveDirectory overflowing = alone;
  overflowing.records[0].localHeaderOffset = UINT64_MAX - 8;
  EXPECT_FALSE(deferred(overflowing)) << "its data offset overflows";
  EXPECT_TRUE(deferred(directory)) << "in the whole directory";
}

TEST(DeferredWeights, AnArchiveNamingCppClassesDefersNothing) {
  // Quantized packed parameters are C++ classes (torch.classes) that pack their weights while
  // they are unpickled: the reader sees their name in the pickle and defers no record.
  EXPECT_FALSE(ModelArchive::open(fixture("quantized_dynamic.pt")).reader()->canDefer());
  EXPECT_TRUE(ModelArchive::open(fixture("conv_bn.pt")).reader()->canDefer());
  const ModelFile quantized = loadModelArchive(ModelArchive::open(fixture("quantized_dynamic.pt")), WeightsRead::AfterLoad);
  EXPECT_EQ(quantized.deferredWeights, nullptr);
}

}  // namespace
}  // namespace tdfx
