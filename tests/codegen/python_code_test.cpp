// Code generation details beyond the seed: frees, attribute paths, operators, keyword arguments.
#include "tdfx/codegen/python_code.h"

#include <gtest/gtest.h>

namespace tdfx {
namespace {

TEST(PythonCode, FormatsTargetPaths) {
  EXPECT_EQ(formatTargetPath("self", "fc1"), "self.fc1");
  EXPECT_EQ(formatTargetPath("self", "0.module.fc1"), "getattr(self, \"0\").module.fc1");
  EXPECT_EQ(formatTargetPath("self", "layer1.0.conv1"), "getattr(self.layer1, \"0\").conv1");
}

TEST(PythonCode, FreesValuesAfterLastUseInArgumentOrder) {
  Graph g;
  Node* td = g.createNode(OpKind::Placeholder, "tensordict");
  Node* a = g.createNode(OpKind::CallFunction, "operator.getitem", {td, "a"});
  Node* b = g.createNode(OpKind::CallFunction, "operator.getitem", {td, "b"});
  Node* neg = g.createNode(OpKind::CallFunction, "operator.neg", {a});
  Node* s = g.createNode(OpKind::CallFunction, "torch.stack", {ArgumentList{{b, a}}}, {{"dim", int64_t(-1)}});
  Node* dt = g.createNode(OpKind::CallFunction, "builtins.getattr", {s, "dtype"});
  Node* m = g.createNode(OpKind::CallModule, "layer1.0.conv1", {s});
  g.createNode(OpKind::Output, "output", {ArgumentTuple{{m, neg, dt}}});
  const PythonCode code = pythonCode(g);
  EXPECT_EQ(code.text,
            "\n\n\n"
            "def forward(self, tensordict):\n"
            "    getitem = tensordict['a']\n"
            "    getitem_1 = tensordict['b'];  tensordict = None\n"
            "    neg = -getitem\n"
            "    stack = torch.stack([getitem_1, getitem], dim = -1);  getitem_1 = getitem = None\n"
            "    getattr_1 = stack.dtype\n"
            "    layer1_0_conv1 = getattr(self.layer1, \"0\").conv1(stack);  stack = None\n"
            "    return (layer1_0_conv1, neg, getattr_1)\n"
            "    ");
  EXPECT_EQ(code.nodeLines.at("getitem"), 5);
  EXPECT_EQ(code.nodeLines.at("layer1_0_conv1"), 10);
  EXPECT_EQ(code.nodeLines.at("output"), 11);
}

TEST(PythonCode, EmptyBodyIsPass) {
  Graph g;
  g.createNode(OpKind::Placeholder, "tensordict");
  EXPECT_EQ(pythonCode(g).text, "\n\n\ndef forward(self, tensordict):\n    pass\n    ");
}

}  // namespace
}  // namespace tdfx
