// What verify saves before its passes: a module's tensors are copied only when a forward can
// change them in place (alias analysis of the inlined forward), and a held tensor changed anyway
// is an error, never a silently changed model.
#include "runtime/pass_state.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/module.h>

#include "tdfx/error.h"
#include "tdfx/nn/td_module.h"

namespace tdfx::runtime {
namespace {

torch::jit::Module moduleWith(const std::string& forward) {
  torch::jit::Module inner("Inner");
  inner.register_buffer("count", at::zeros({1}));
  inner.define("def bump(self, x):\n  self.count.add_(1)\n  return x\n"
               "def forward(self, x):\n  return x * 2\n");
  torch::jit::Module m("Outer");
  m.register_parameter("w", at::ones({3}), false);
  m.register_module("inner", inner);
  m.register_attribute("counting", c10::BoolType::get(), false);
  m.define(forward);
  return m;
}

// The names of the attributes whose tensors the forward may write; "any" when it cannot tell.
std::vector<std::string> writtenBy(const torch::jit::Module& m) {
  const auto written = tensorsForwardMayWrite(m, /*inputsMayHoldModuleTensors=*/true);
  if (!written) return {"any"};
  std::vector<std::string> names;
  for (const at::Tensor& t : *written) {
    if (t.is_same(m.attr("w").toTensor())) names.push_back("w");
    else if (t.is_same(m.attr("inner").toModule().attr("count").toTensor())) names.push_back("inner.count");
    else names.push_back("?");
  }
  return names;
}

using Names = std::vector<std::string>;

TEST(PassState, AForwardThatWritesNoAttributeNeedsNoCopies) {
  // In-place ops on values the forward made itself, as torchvision's ReLU(inplace=True).
  EXPECT_EQ(writtenBy(moduleWith("def forward(self, x):\n  y = x * self.w\n  y.relu_()\n"
                                 "  return self.inner.forward(y.add_(1))\n")),
            Names{});
  EXPECT_EQ(writtenBy(moduleWith("def forward(self, x):\n  self.w = self.w * 2\n  return x\n")), Names{});
}

TEST(PassState, AWriteToAnAttributeIsSeenAndOnlyItsTensorIsNamed) {
  for (const char* forward : {
           "def forward(self, x):\n  self.w.add_(1)\n  return x\n",
           "def forward(self, x):\n  self.w.view(-1).mul_(2)\n  return x\n",    // through a view
           "def forward(self, x):\n  w = self.w\n  w[0] = 1.0\n  return x\n",  // setitem
       })
    EXPECT_EQ(writtenBy(moduleWith(forward)), Names{"w"}) << forward;
  // In a called method, and in a branch that runs only in training (BatchNorm's counter).
  EXPECT_EQ(writtenBy(moduleWith("def forward(self, x):\n  return self.inner.bump(x * self.w)\n")), Names{"inner.count"});
  EXPECT_EQ(writtenBy(moduleWith("def forward(self, x):\n  if self.counting:\n    self.inner.count.add_(1)\n"
                                 "  return x * self.w\n")),
            Names{"inner.count"});
  // A write to an input could reach a tensor another module returned: any tensor then; not where
  // the inputs are the caller's copies.
  const torch::jit::Module writesInput = moduleWith("def forward(self, x):\n  x.add_(1)\n  return x * self.w\n");
  EXPECT_EQ(writtenBy(writesInput), Names{"any"});
  EXPECT_EQ(tensorsForwardMayWrite(writesInput, /*inputsMayHoldModuleTensors=*/false)->size(), 0u);
}

TEST(PassState, AHeldTensorChangedInPlaceIsAnErrorNotALostState) {
  torch::jit::Module m = moduleWith("def forward(self, x):\n  return x * self.w\n");
  TensorDictModule module(m, {NestedKey("x")}, {NestedKey("y")});
  PassState state(module, {}, 0, /*tracedWrites=*/std::vector<at::Tensor>{});
  state.restore();  // nothing changed: nothing to do
  // An assignment puts another tensor in the slot: the held one goes back.
  m.setattr("w", at::full({3}, 5.0));
  state.restore();
  EXPECT_TRUE(m.attr("w").toTensor().equal(at::ones({3})));
  // A change in place that the analysis did not foresee cannot be undone: it is said.
  m.attr("w").toTensor().add_(1);
  try {
    state.restore();
    FAIL() << "restore() accepted a held tensor changed in place";
  } catch (const StateLost& e) {
    EXPECT_NE(std::string(e.what()).find("attribute 'w'"), std::string::npos) << e.what();
  }
}

TEST(PassState, CopiedTensorsGetTheirValuesBack) {
  torch::jit::Module m = moduleWith("def forward(self, x):\n  self.w.add_(1)\n  return x\n");
  TensorDictModule module(m, {NestedKey("x")}, {NestedKey("y")});
  PassState state(module, {}, 0, /*tracedWrites=*/std::vector<at::Tensor>{});
  m.attr("w").toTensor().add_(1);
  state.restore();
  EXPECT_TRUE(m.attr("w").toTensor().equal(at::ones({3})));
}

// A buffer that views part of a parameter's storage (one storage in the archive, each tensor with
// its own version counter, as torch.jit.load gives them): a write through the buffer is undone in
// the parameter too, though the parameter's version never moved, and the two still share one
// storage afterwards, so that the next pass's write through the buffer reaches the parameter again.
TEST(PassState, TensorsThatShareAStorageAreRestoredTogether) {
  torch::jit::Module m("SharesStorage");
  const at::Tensor a = at::zeros({6}).requires_grad_();
  at::Tensor b = at::empty({0});
  b.set_(a.storage(), 0, {3}, {1});  // no view: its own version counter
  m.register_parameter("a", a, false);
  m.register_buffer("b", b);
  m.define("def forward(self, x):\n  self.b.add_(1)\n  return x * 2\n");
  TensorDictModule module(m, {NestedKey("x")}, {NestedKey("y")});
  PassState state(module, {}, 0, /*tracedWrites=*/std::vector<at::Tensor>{});
  const at::Tensor returned = m.attr("b").toTensor();  // as a pass's output may hold it
  for (int pass = 0; pass < 2; ++pass) {
    m.attr("b").toTensor().add_(1);
    EXPECT_EQ(m.attr("a").toTensor()[0].item<float>(), 1.0f) << "the write reaches the parameter";
    state.restore();
    const at::Tensor restoredA = m.attr("a").toTensor(), restoredB = m.attr("b").toTensor();
    EXPECT_TRUE(restoredA.equal(at::zeros({6}))) << pass;
    EXPECT_TRUE(restoredB.equal(at::zeros({3}))) << pass;
    EXPECT_TRUE(restoredA.is_leaf() && restoredA.requires_grad()) << "still a parameter";
    EXPECT_EQ(restoredA.data_ptr(), restoredB.data_ptr()) << "still one storage";
  }
  EXPECT_TRUE(returned.equal(at::ones({3}))) << "a value a pass returned keeps what that pass gave it";
}

}  // namespace
}  // namespace tdfx::runtime
