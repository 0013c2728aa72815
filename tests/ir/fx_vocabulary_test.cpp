// FX's vocabulary in the ir layer: typed targets and the tables generated from torch 1.13.
#include <gtest/gtest.h>

#include "tdfx/ir/fx_tables.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx {
namespace {

TEST(FxTarget, TypedTargetsMakeAndRecogniseTheirNodes) {
  Graph graph;
  Node* x = graph.createNode(OpKind::Placeholder, "x");
  Node* item = fx_target::create(graph, fx_target::kGetItem, {Argument(x), Argument(int64_t(0))});
  Node* check = fx_target::create(graph, fx_target::kAssert, {Argument(item), Argument(std::string("no"))});
  EXPECT_EQ(item->target(), "operator.getitem");
  EXPECT_EQ(item->name(), "getitem");
  EXPECT_EQ(check->target(), "torch._assert");
  EXPECT_TRUE(fx_target::isCallTo(*item, fx_target::kGetItem));
  EXPECT_FALSE(fx_target::isCallTo(*item, fx_target::kGetAttr));
  // A call_method of the same name is not the function.
  Node* method = graph.createNode(OpKind::CallMethod, "operator.getitem", {Argument(x)});
  EXPECT_FALSE(fx_target::isCallTo(*method, fx_target::kGetItem));

  EXPECT_EQ(fx_target::operatorTarget("add"), "operator.add");
  EXPECT_EQ(fx_target::operatorName("operator.and_").value_or(""), "and_");
  EXPECT_FALSE(fx_target::operatorName("torch.add").has_value());
  EXPECT_FALSE(fx_target::operatorName("operatorx.add").has_value());
  EXPECT_EQ(fx_target::builtinName("builtins.getattr").value_or(""), "getattr");
  EXPECT_FALSE(fx_target::builtinName("getattr").has_value());
}

TEST(FxTables, MagicMethodsAreFxsOwnWithTheMethodForAPlainTensorOnTheLeft) {
  // torch.fx.graph.magic_methods: 9 of their own and 15 reflectable ones.
  EXPECT_EQ(fx::generated::kNumMagicMethods, 24u);
  const auto* add = fx::findMagicMethod("add");
  ASSERT_NE(add, nullptr);
  EXPECT_STREQ(add->format, "{} + {}");
  EXPECT_STREQ(add->concreteLeftMethod, "add");
  EXPECT_STREQ(fx::findMagicMethod("getitem")->format, "{}[{}]");
  EXPECT_STREQ(fx::findMagicMethod("neg")->format, "-{}");
  EXPECT_STREQ(fx::findMagicMethod("neg")->concreteLeftMethod, "");
  // Tensor's slots, as torch.fx 1.13 records `buffer OP x`.
  EXPECT_STREQ(fx::findMagicMethod("truediv")->concreteLeftMethod, "div");
  EXPECT_STREQ(fx::findMagicMethod("floordiv")->concreteLeftMethod, "__floordiv__");
  EXPECT_STREQ(fx::findMagicMethod("mod")->concreteLeftMethod, "remainder");
  EXPECT_STREQ(fx::findMagicMethod("getitem")->concreteLeftMethod, "__getitem__");
  // Not magic: FX prints these as calls.
  EXPECT_EQ(fx::findMagicMethod("not_"), nullptr);
  EXPECT_EQ(fx::findMagicMethod("getattr"), nullptr);
}

}  // namespace
}  // namespace tdfx
