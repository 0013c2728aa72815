// Graph IR: FX naming rules, users, printing.
#include "tdfx/ir/graph.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "tdfx/ir/graph_printer.h"

namespace tdfx {
namespace {

TEST(NameSpace, FollowsFxCreateName) {
  NameSpace ns;
  EXPECT_EQ(ns.create("relu"), "relu");
  EXPECT_EQ(ns.create("relu"), "relu_1");
  EXPECT_EQ(ns.create("relu"), "relu_2");
  EXPECT_EQ(ns.create("layer1.0.conv1"), "layer1_0_conv1");
  EXPECT_EQ(ns.create("a..b--c"), "a_b_c");
  EXPECT_EQ(ns.create("0.module"), "_0_module");
  // A trailing _N is a counter: fc_1 stays fc_1 when free, and counts on from there when taken.
  EXPECT_EQ(ns.create("fc_1"), "fc_1");
  EXPECT_EQ(ns.create("fc_1"), "fc_2");
  EXPECT_EQ(ns.create("fc"), "fc");
  // Keywords, builtins and FX's reserved globals are never used as names.
  EXPECT_EQ(ns.create("input"), "input_1");
  EXPECT_EQ(ns.create("sum"), "sum_1");
  EXPECT_EQ(ns.create("max"), "max_1");
  EXPECT_EQ(ns.create("class"), "class_1");
  EXPECT_EQ(ns.create("torch"), "torch_1");
  EXPECT_EQ(ns.create("device"), "device_1");
  EXPECT_EQ(ns.create("getattr"), "getattr_1");
}

TEST(NameSpace, EmptyBaseAndLeadingZerosAsFx) {
  // torch.fx 1.13's _Namespace.create_name on these candidates, in this order (issue 34, class 12:
  // TensorDict names like `_0` split into an empty base and a counter).
  NameSpace ns;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"_0", "_0"},   {"_0", "_1"},   {"_0", "_2"},    {"0", "_3"},      {"_1", "_4"},
      {"__0", "__0"}, {"__0", "__1"}, {"a_007", "a_7"}, {"a_007", "a_8"}, {"_", "_"},
      {"_", "__2"},   {"x__1", "x__1"}, {"x__1", "x__2"}};
  for (const auto& [candidate, name] : expected) EXPECT_EQ(ns.create(candidate), name) << candidate;
}

// FX's own scan (no hint): the names NameSpace must give, whatever it remembers between calls.
std::string linearScanName(std::set<std::string>& used, const std::string& base, long long start) {
  long long num = start;
  std::string name = start ? base + "_" + std::to_string(start) : base;
  while (used.count(name)) name = base + "_" + std::to_string(++num);
  used.insert(name);
  return name;
}

TEST(NameSpace, RememberedRunsGiveFxNamesAcrossReleases) {
  NameSpace ns;
  std::set<std::string> used;
  // A mixed sequence: plain bases, explicit suffixes inside and past the taken run, releases.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 200; ++i) ASSERT_EQ(ns.create("add"), linearScanName(used, "add", 0));
    ASSERT_EQ(ns.create("add_7"), linearScanName(used, "add", 7));
    ASSERT_EQ(ns.create("add_500"), linearScanName(used, "add", 500));
    for (const char* freed : {"add_3", "add_150", "add"}) {
      ns.release(freed);
      used.erase(freed);
      EXPECT_FALSE(ns.contains(freed));
    }
    for (int i = 0; i < 5; ++i) ASSERT_EQ(ns.create("add"), linearScanName(used, "add", 0));
    ASSERT_EQ(ns.create("add_2"), linearScanName(used, "add", 2));
  }
}

TEST(NameSpace, ManyNamesOfOneBaseStayFast) {
  // An unrolled loop names thousands of nodes `add`; the name after a long run is still FX's.
  // (The time this takes is measured by the trace benchmark's loop case, not asserted here.)
  NameSpace ns;
  for (int i = 0; i < 100000; ++i) ns.create("add");
  EXPECT_EQ(ns.create("add"), "add_100000");
}

TEST(NameForTarget, UsesFxRules) {
  EXPECT_EQ(nameForTarget(OpKind::CallFunction, "torch.relu"), "relu");
  EXPECT_EQ(nameForTarget(OpKind::CallFunction, "operator.getitem"), "getitem");
  EXPECT_EQ(nameForTarget(OpKind::CallModule, "layer1.0.conv1"), "layer1.0.conv1");
  EXPECT_EQ(nameForTarget(OpKind::CallMethod, "__add__"), "add");
  EXPECT_EQ(nameForTarget(OpKind::CallModule, "myBlock.subLayer"), "my_block.sub_layer");
  EXPECT_EQ(nameForTarget(OpKind::CallModule, "ALL_CAPS"), "all_caps");
}

TEST(Graph, TracksUsersAndPrints) {
  Graph g;
  Node* td = g.createNode(OpKind::Placeholder, "tensordict");
  Node* x = g.createNode(OpKind::CallFunction, "operator.getitem", {td, ArgumentTuple{{"input", "x"}}});
  Node* w = g.createNode(OpKind::GetAttr, "0.module.weight", {}, {}, "_0_weight");
  Node* cat = g.createNode(OpKind::CallFunction, "torch.cat", {ArgumentList{{x, x}}}, {{"dim", int64_t(1)}});
  Node* to = g.createNode(OpKind::CallMethod, "to", {cat, c10::kHalf}, {{"copy", true}, {"scale", 0.5}});
  g.createNode(OpKind::Output, "output", {ArgumentTuple{{to}}});
  EXPECT_EQ(x->users(), (std::vector<Node*>{cat}));  // used twice by cat, listed once
  EXPECT_EQ(td->users().size(), 1u);
  EXPECT_TRUE(w->users().empty());
  EXPECT_EQ(g.outputNode()->args().size(), 1u);
  EXPECT_EQ(g.findNode("cat"), cat);
  EXPECT_EQ(printGraph(g),
            "graph():\n"
            "    %tensordict : [#users=1] = placeholder[target=tensordict]\n"
            "    %getitem : [#users=1] = call_function[target=operator.getitem](args = (%tensordict, (input, x)), kwargs = {})\n"
            "    %_0_weight : [#users=0] = get_attr[target=0.module.weight]\n"
            "    %cat : [#users=1] = call_function[target=torch.cat](args = ([%getitem, %getitem],), kwargs = {dim: 1})\n"
            "    %to : [#users=1] = call_method[target=to](args = (%cat, torch.float16), kwargs = {copy: True, scale: 0.5})\n"
            "    return (to,)");
}

TEST(Argument, FormatsLikePythonStrAndRepr) {
  const Argument a = ArgumentTuple{{nullptr, "it's", 1.0, ArgumentList{}, ArgumentTuple{{int64_t(3)}}, c10::Device(c10::kCPU)}};
  EXPECT_EQ(formatGraphArgument(a), "(None, it's, 1.0, [], (3,), cpu)");
  EXPECT_EQ(formatCodeArgument(a), "(None, \"it's\", 1.0, [], (3,), device(type='cpu'))");
  EXPECT_EQ(formatCodeArgument(c10::MemoryFormat::ChannelsLast), "torch.channels_last");
  EXPECT_EQ(formatCodeArgument(c10::kStrided), "torch.strided");
}

}  // namespace
}  // namespace tdfx
