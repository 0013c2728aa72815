#include "trace/call_text.h"

#include <gtest/gtest.h>

namespace tdfx::trace {
namespace {

TEST(CallText, ParsesWholeCalls) {
  auto c = parseCallText("torch.softmax(x * mask, dim=1)");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->callee, "torch.softmax");
  EXPECT_EQ(c->positionalCount, 1u);
  EXPECT_EQ(c->keywordNames, (std::vector<std::string>{"dim"}));
  EXPECT_EQ(c->positionalTexts, (std::vector<std::string>{"x * mask"}));

  c = parseCallText("w.permute(1, 0).contiguous()");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->callee, "w.permute(1, 0).contiguous");
  EXPECT_EQ(c->positionalCount, 0u);
  EXPECT_EQ(calleePrefix(c->callee), "w.permute(1, 0)");
  EXPECT_EQ(calleeName(c->callee), "contiguous");

  c = parseCallText("f(a == b, s=\"x,)\", t=[1, (2, 3)])");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->positionalCount, 1u);
  EXPECT_EQ(c->keywordNames, (std::vector<std::string>{"s", "t"}));

  c = parseCallText("torch.cat(*xs)");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->hasStarArgs);
}

TEST(CallText, RejectsNonCalls) {
  EXPECT_FALSE(parseCallText("x * mask"));
  EXPECT_FALSE(parseCallText("f(x) + g(y)"));
  EXPECT_FALSE(parseCallText("(a + b)"));
  EXPECT_FALSE(parseCallText("x.shape"));
  EXPECT_FALSE(parseCallText("f(a=1, 2)"));
  EXPECT_FALSE(parseCallText(""));
}

TEST(CallText, Attributes) {
  EXPECT_EQ(parseAttributeText("x.shape"), "shape");
  EXPECT_EQ(parseAttributeText("self.fc(x).dtype"), "dtype");
  EXPECT_FALSE(parseAttributeText("x.size(0)"));
  EXPECT_FALSE(parseAttributeText("a + b.c"));
}

TEST(CallText, ExtendsTruncatedRangesToTheWholeCall) {
  const std::string src = "torch.softmax(x * mask, dim=1)\n    return y";
  EXPECT_EQ(extendToCall(src, 13), "torch.softmax(x * mask, dim=1)");
  EXPECT_EQ(extendToCall("w.permute(1, 0).contiguous()  # c", 25), "w.permute(1, 0).contiguous()");
  EXPECT_EQ(extendToCall("x * mask + 1", 8), "x * mask");
  EXPECT_EQ(extendToCall("f(unbalanced", 1), "f");
  EXPECT_TRUE(isAugmentedAssignment("x += 1"));
  EXPECT_FALSE(isAugmentedAssignment("x + 1"));
}

}  // namespace
}  // namespace tdfx::trace
