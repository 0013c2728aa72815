#include "tdfx/tensordict/nested_key.h"

#include <gtest/gtest.h>

namespace tdfx {
namespace {

TEST(NestedKey, StringAndOneTupleAreTheSameKey) {
  EXPECT_EQ(NestedKey("a"), NestedKey({"a"}));
  EXPECT_EQ(NestedKey("a"), NestedKey(std::vector<std::string>{"a"}));
  EXPECT_NE(NestedKey("a"), NestedKey({"a", "b"}));
  EXPECT_TRUE(NestedKey({"a", "b"}) < NestedKey({"a", "c"}));
}

TEST(NestedKey, PrintsLikePython) {
  EXPECT_EQ(keyToString("input"), "input");
  EXPECT_EQ(keyToString({"input", "x"}), "(input, x)");
  EXPECT_EQ(keyRepr("input"), "'input'");
  EXPECT_EQ(keyRepr({"input", "x"}), "('input', 'x')");
  EXPECT_EQ(keyRepr({"it's"}), "\"it's\"");
  EXPECT_EQ(keysToString({"a", {"b", "c"}}), "'a', ('b', 'c')");
  EXPECT_EQ(keysToString({}), "(none)");
}

TEST(NestedKey, TailAndChild) {
  const NestedKey k{"a", "b", "c"};
  EXPECT_EQ(k.tail(), (NestedKey{"b", "c"}));
  EXPECT_EQ(NestedKey("a").child("b"), (NestedKey{"a", "b"}));
}

}  // namespace
}  // namespace tdfx
