// Graph editing as torch.fx offers it: insert a node, replace all uses, erase, lint.
#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "tdfx/ir/graph.h"
#include "tdfx/ir/graph_printer.h"
#include "test_support.h"

namespace tdfx {
namespace {

// x -> relu -> add(relu, 1) -> output
struct Small {
  Graph g;
  Node* x;
  Node* relu;
  Node* add;
  Node* out;
  Small() {
    x = g.createNode(OpKind::Placeholder, "x");
    relu = g.createNode(OpKind::CallFunction, "torch.relu", {x});
    add = g.createNode(OpKind::CallFunction, "operator.add", {relu, 1});
    out = g.createNode(OpKind::Output, "output", {add});
  }
};

std::string message(const std::function<void()>& fn) { return testing::errorOf<Error>(fn); }

TEST(GraphEditing, ReluBecomesGeluAsInFx) {
  Small s;
  // with graph.inserting_before(relu): gelu = graph.call_function(F.gelu, relu.args)
  Node* gelu = s.g.insertBefore(*s.relu, OpKind::CallFunction, "torch.nn.functional.gelu", s.relu->args());
  EXPECT_EQ(gelu->name(), "gelu");
  EXPECT_EQ(gelu->index(), 1u);
  EXPECT_EQ(s.relu->index(), 2u);
  EXPECT_EQ(s.x->users(), (std::vector<Node*>{gelu, s.relu}));
  EXPECT_EQ(s.g.replaceAllUsesWith(*s.relu, *gelu), std::vector<Node*>{s.add});
  EXPECT_TRUE(s.relu->users().empty());
  s.g.eraseNode(*s.relu);
  EXPECT_NO_THROW(s.g.lint());
  EXPECT_EQ(printGraph(s.g),
            "graph():\n"
            "    %x : [#users=1] = placeholder[target=x]\n"
            "    %gelu : [#users=1] = call_function[target=torch.nn.functional.gelu](args = (%x,), kwargs = {})\n"
            "    %add : [#users=1] = call_function[target=operator.add](args = (%gelu, 1), kwargs = {})\n"
            "    return add");
  EXPECT_EQ(s.out->index(), 3u);
  // The erased node's name is free again, as in FX.
  EXPECT_EQ(s.g.insertBefore(*s.out, OpKind::CallFunction, "torch.relu", {s.add})->name(), "relu");
}

TEST(GraphEditing, AReplacementBuiltOnTheNodeKeepsItsOwnUse) {
  Small s;
  // relu -> relu * 2 everywhere relu was used: the new node itself still reads relu.
  Node* twice = s.g.insertBefore(*s.add, OpKind::CallFunction, "operator.mul", {s.relu, 2});
  EXPECT_EQ(s.g.replaceAllUsesWith(*s.relu, *twice), std::vector<Node*>{s.add});
  EXPECT_EQ(s.relu->users(), std::vector<Node*>{twice});
  EXPECT_EQ(s.add->args().at(0).node(), twice);
  EXPECT_NO_THROW(s.g.lint());
}

TEST(GraphEditing, EraseRefusesANodeStillInUse) {
  Small s;
  EXPECT_EQ(message([&] { s.g.eraseNode(*s.relu); }), "cannot erase node 'relu': it is still used by add");
  EXPECT_EQ(s.g.size(), 4u);
  Graph other;
  Node* stranger = other.createNode(OpKind::Placeholder, "y");
  EXPECT_EQ(message([&] { s.g.eraseNode(*stranger); }), "cannot erase node 'y': it is not in this graph");
}

TEST(GraphEditing, LintFindsAUseBeforeItsDefinition) {
  Small s;
  s.g.setArguments(*s.relu, {s.add}, {});
  EXPECT_EQ(message([&] { s.g.lint(); }), "node 'relu' (position 1) refers to 'add', which comes after it");
}

TEST(GraphEditing, LintFindsANodeOfAnotherGraph) {
  Small s;
  Graph other;
  Node* stranger = other.createNode(OpKind::Placeholder, "y");
  s.g.setArguments(*s.add, {s.relu, stranger}, {});
  EXPECT_EQ(message([&] { s.g.lint(); }), "node 'add' (position 2) refers to 'y', which is not in this graph");
}

TEST(GraphEditing, LintFindsAnOutputThatIsNotLast) {
  Small s;
  s.g.insertBefore(*s.out, OpKind::Output, "output", {s.relu});
  EXPECT_EQ(message([&] { s.g.lint(); }), "node 'output_1' (position 3): the output node is not the last");
}

}  // namespace
}  // namespace tdfx
