// The traced graph saved as TorchScript: LibTorch loads the archive and its forward computes what
// the printed graph computes, for TensorDict models (a Dict[str, Tensor] in and out) and plain ones.
#include <sstream>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/serialization/import.h>

#include "tdfx/error.h"
#include "tdfx/runtime/torchscript_export.h"
#include "tdfx/runtime/verify.h"
#include "test_support.h"

namespace tdfx {
namespace {

using testing::fixture;

struct Exported {
  ModelFile model;
  std::unique_ptr<GraphModule> module;
  TorchScriptArchive archive;
  torch::jit::Module loaded;
};

Exported exportFixture(const std::string& name) {
  Exported e{loadModelFile(fixture(name)), nullptr, {}, {}};
  e.module = std::make_unique<GraphModule>(symbolicTrace(*e.model.module));
  e.archive = saveTorchScript(*e.module);
  std::istringstream bytes(e.archive.bytes);
  e.loaded = torch::jit::load(bytes);
  return e;
}

TEST(TorchScriptExport, TensorDictFixturesLoadAndComputeWhatThePrintedGraphComputes) {
  torch::NoGradGuard noGrad;
  for (const char* name : {"seed_module.pt", "seed_sequential.pt", "nested_sequential.pt", "ops.pt", "checked.pt",
                           "attention.pt", "control_flow.pt", "default_arg.pt", "scoped.pt", "weird_keys.pt"}) {
    SCOPED_TRACE(name);
    Exported e = exportFixture(name);
    EXPECT_EQ(e.archive.signature, "forward(tensordict: Dict[str, Tensor]) -> Dict[str, Tensor]");
    const TensorDict inputs = verificationInputs(e.model, {}, 0);
    TensorDict scratch = inputs.clone(), expected;  // outputs apart: a key may have another batch size
    at::manual_seed(0);
    e.module->forward(scratch, &expected);

    c10::Dict<std::string, at::Tensor> in;
    for (const NestedKey& key : inputs.keys(true, true)) in.insert(flattenedKey(key), inputs.get(key));
    at::manual_seed(0);
    const auto out = e.loaded.forward({in}).toGenericDict();
    // The input's entries, and every out key the graph writes.
    for (const NestedKey& key : inputs.keys(true, true)) EXPECT_TRUE(out.contains(flattenedKey(key))) << flattenedKey(key);
    size_t written = 0;
    for (const NestedKey& key : e.module->outKeys()) {
      if (isDiscardKey(key) || !expected.contains(key)) continue;
      ASSERT_TRUE(out.contains(flattenedKey(key))) << flattenedKey(key);
      EXPECT_TRUE(at::equal(out.at(flattenedKey(key)).toTensor(), expected.get(key))) << flattenedKey(key);
      ++written;
    }
    EXPECT_GT(written, 0u);
  }
}

TEST(TorchScriptExport, APlainArchiveKeepsItsForwardParameters) {
  torch::NoGradGuard noGrad;
  Exported e = exportFixture("plain.pt");
  const auto& original = e.model.root.get_method("forward").function().getSchema();
  const auto& saved = e.loaded.get_method("forward").function().getSchema();
  ASSERT_EQ(saved.arguments().size(), original.arguments().size());
  for (size_t i = 1; i < saved.arguments().size(); ++i) {
    EXPECT_EQ(saved.arguments()[i].name(), original.arguments()[i].name());
    EXPECT_EQ(*saved.arguments()[i].type(), *original.arguments()[i].type());
  }
  std::vector<c10::IValue> args;
  for (size_t i = 1; i < original.arguments().size(); ++i) args.emplace_back(at::randn({3, 8}));
  const at::Tensor eager = e.model.root.forward(args).toTensor();
  EXPECT_TRUE(at::equal(e.loaded.forward(args).toTensor(), eager));
  // The submodules and parameters are kept: the saved module's own, under `module`.
  EXPECT_EQ(e.loaded.parameters().size(), e.model.root.parameters().size());
}

TEST(TorchScriptExport, AnEditedGraphSavesTheEdit) {
  torch::NoGradGuard noGrad;
  ModelFile model = loadModelFile(fixture("seed_module.pt"));
  TracedGraph traced = traceGraph(*model.module);
  traced.graph->setTarget(*traced.graph->findNode("sigmoid"), "torch.tanh");
  const GraphModule edited(traced, model.module->inKeys());
  std::istringstream bytes(saveTorchScript(edited).bytes);
  torch::jit::Module loaded = torch::jit::load(bytes);
  const TensorDict inputs = verificationInputs(model, {}, 0);
  TensorDict expected = inputs.clone();
  edited.forward(expected);
  c10::Dict<std::string, at::Tensor> in;
  for (const NestedKey& key : inputs.keys(true, true)) in.insert(flattenedKey(key), inputs.get(key));
  const auto out = loaded.forward({in}).toGenericDict();
  for (const NestedKey& key : edited.outKeys())
    EXPECT_TRUE(at::equal(out.at(flattenedKey(key)).toTensor(), expected.get(key))) << flattenedKey(key);
  EXPECT_EQ(*loaded.get_method("forward").function().getSchema().arguments().at(1).type(),
            *c10::DictType::create(c10::StringType::get(), c10::TensorType::get()));
}

TEST(TorchScriptExport, ACallTorchScriptCannotExpressNamesTheNode) {
  ModelFile model = loadModelFile(fixture("seed_module.pt"));
  TracedGraph traced = traceGraph(*model.module);
  traced.graph->setTarget(*traced.graph->findNode("sigmoid"), "torch.no_such_function");
  const GraphModule edited(traced, model.module->inKeys());
  const std::string what = testing::errorOf<RuntimeError>([&] { saveTorchScript(edited); });
  EXPECT_NE(what.find("exporting node 'sigmoid'"), std::string::npos) << what;
  EXPECT_NE(what.find("no function 'torch.no_such_function'"), std::string::npos) << what;
}

TEST(TorchScriptExport, KeysThatFlattenAlikeAreRefusedNamingBoth) {
  // Issue 35, finding 6: ('a', 'b') and 'a.b' are one entry of the exported Dict[str, Tensor]; the
  // forward read one tensor twice (x - x = 0), and of two outputs one was lost.
  for (const auto& [name, expected] :
       {std::pair<const char*, const char*>{"flattened_alike_in.pt",
                                            "in key 'a.b' and key ('a', 'b') both become 'a.b'"},
        {"flattened_alike_out.pt", "out key 'o.p' and key ('o', 'p') both become 'o.p'"}}) {
    SCOPED_TRACE(name);
    ModelFile model = loadModelFile(fixture(name));
    const GraphModule module(symbolicTrace(*model.module));
    const std::string what = testing::errorOf<RuntimeError>([&] { saveTorchScript(module); });
    EXPECT_NE(what.find(expected), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(TorchScriptExport, KeysWithControlCharactersAreWrittenAsTheyAre) {
  // Issue 35, finding 12: a newline in an out key broke the forward's source (a 15-line compile dump).
  torch::NoGradGuard noGrad;
  Exported e = exportFixture("control_char_keys.pt");
  const TensorDict inputs = verificationInputs(e.model, {}, 0);
  TensorDict expected = inputs.clone();
  e.module->forward(expected);
  c10::Dict<std::string, at::Tensor> in;
  for (const NestedKey& key : inputs.keys(true, true)) in.insert(flattenedKey(key), inputs.get(key));
  const auto out = e.loaded.forward({in}).toGenericDict();
  ASSERT_TRUE(out.contains("line\nbreak"));
  ASSERT_TRUE(out.contains(std::string("bell\a.del\x7f")));
  EXPECT_TRUE(at::equal(out.at("line\nbreak").toTensor(), expected.get(NestedKey("line\nbreak"))));
  EXPECT_TRUE(at::equal(out.at(std::string("bell\a.del\x7f")).toTensor(), expected.get(NestedKey({"bell\a", "del\x7f"}))));
}

}  // namespace
}  // namespace tdfx
