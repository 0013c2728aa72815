// GraphBuilder: the graph being traced and the tracer's references into it roll back together.
#include <memory>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "trace/graph_builder.h"

namespace tdfx::trace {
namespace {

TEST(GraphBuilder, RollBackErasesTheNodesAndForgetsEveryReferenceIntoThem) {
  Graph graph;
  GraphBuilder builder(graph);
  Node* x = graph.createNode(OpKind::Placeholder, "x");
  bool made = false;
  Node* weight = builder.tensorAttribute("weight", torch::ones({2}), /*shared=*/true, made);
  ASSERT_TRUE(made);
  // A parameter is one Proxy: asked again, the same node.
  EXPECT_EQ(builder.tensorAttribute("weight", torch::ones({2}), true, made), weight);
  EXPECT_FALSE(made);

  const GraphBuilder::Mark mark = builder.mark();
  Node* constant = builder.tensorAttribute("", torch::zeros({3}), /*shared=*/false, made);
  EXPECT_EQ(constant->target(), "_tensor_constant0");
  EXPECT_TRUE(builder.isConcreteTensor(constant));
  EXPECT_FALSE(builder.isConcreteTensor(weight));
  Node* bias = builder.tensorAttribute("bias", torch::ones({1}), true, made);
  auto field = std::make_shared<PendingField>();
  field->container = x;
  field->field = "values";
  Node* read = builder.materializeField(field);
  EXPECT_EQ(read->target(), "builtins.getattr");
  EXPECT_EQ(builder.materializeField(field), read);  // made once
  EXPECT_EQ(builder.tensorConstants().size(), 1u);
  EXPECT_EQ(graph.size(), 5u);

  builder.rollBackTo(mark);
  EXPECT_EQ(graph.size(), 2u);
  EXPECT_EQ(field->node, nullptr);
  EXPECT_TRUE(builder.tensorConstants().empty());
  EXPECT_FALSE(builder.holds(bias, 3));
  EXPECT_TRUE(builder.holds(weight, 1));

  // What was made before the mark stays; what came after is made anew, numbered as before.
  EXPECT_EQ(builder.tensorAttribute("weight", torch::ones({2}), true, made), weight);
  EXPECT_FALSE(made);
  builder.tensorAttribute("bias", torch::ones({1}), true, made);
  EXPECT_TRUE(made);
  EXPECT_EQ(builder.tensorAttribute("", torch::zeros({3}), false, made)->target(), "_tensor_constant0");
  EXPECT_EQ(builder.tensorConstants().size(), 1u);
  EXPECT_EQ(builder.materializeField(field)->target(), "builtins.getattr");
  EXPECT_EQ(graph.size(), 5u);
}

TEST(GraphBuilder, TensorConstantsSkipTheNamesTheModuleHas) {
  // FX's create_arg: `_tensor_constantN` with the first N the root has no attribute of.
  Graph graph;
  GraphBuilder builder(graph);
  builder.setTakenNames([](const std::string& name) { return name == "_tensor_constant0" || name == "_tensor_constant2"; });
  bool made = false;
  EXPECT_EQ(builder.tensorAttribute("", torch::zeros({1}), false, made)->target(), "_tensor_constant1");
  EXPECT_EQ(builder.tensorAttribute("", torch::zeros({1}), false, made)->target(), "_tensor_constant3");
  // A named attribute is itself, taken or not.
  EXPECT_EQ(builder.tensorAttribute("_tensor_constant0", torch::zeros({1}), true, made)->target(), "_tensor_constant0");
  EXPECT_EQ(builder.tensorConstants().size(), 2u);
  EXPECT_EQ(builder.tensorConstants().count("_tensor_constant0"), 0u);
}

TEST(GraphBuilder, AnItemReadIsAGetitemAndAFieldReadByNameAGetattr) {
  Graph graph;
  GraphBuilder builder(graph);
  Node* x = graph.createNode(OpKind::Placeholder, "x");
  Node* top = graph.createNode(OpKind::CallMethod, "topk", {Argument(x), Argument(int64_t(2))});
  top->meta().modulePath = "block";
  Node* item = builder.getItem(top, 1);
  Node* values = builder.getItem(top, 0, "values");
  EXPECT_EQ(item->op(), OpKind::CallFunction);
  EXPECT_EQ(item->target(), "operator.getitem");
  EXPECT_EQ(values->target(), "builtins.getattr");
  EXPECT_EQ(values->name(), "getattr_1");
  EXPECT_EQ(item->meta().modulePath, "block");  // an item belongs where its container was made
}

}  // namespace
}  // namespace tdfx::trace
