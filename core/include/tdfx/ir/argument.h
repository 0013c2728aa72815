#pragma once
// Argument: a value in a node's args or kwargs, as torch.fx allows them.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>

namespace tdfx {

class Node;
struct Argument;

/// A Python list of arguments (owns its items by value).
struct ArgumentList {
  std::vector<Argument> items;
};
/// A Python tuple of arguments (owns its items by value).
struct ArgumentTuple {
  std::vector<Argument> items;
};
/// A Python slice: `items` holds start, stop and step (each None when not written).
struct ArgumentSlice {
  std::vector<Argument> items;
};
/// A Python dict; keys[i] maps to values[i], in insertion order.
struct ArgumentDict {
  std::vector<Argument> keys, values;
};
/// Python's Ellipsis (`...` in a subscript).
struct ArgumentEllipsis {
  bool operator==(const ArgumentEllipsis&) const { return true; }
};

/// One FX argument: None, bool, int, float, str, a node reference, a list, tuple, slice or dict of
/// arguments, Ellipsis, or a torch dtype / device / layout / memory format. Node references are non-owning: the Graph
/// owns the nodes, so an Argument that refers to nodes is valid only while that Graph lives.
/// Copying an Argument copies its lists and tuples and shares the referenced nodes.
struct Argument {
  using Value = std::variant<std::monostate, bool, int64_t, double, std::string, Node*, ArgumentList, ArgumentTuple,
                             c10::ScalarType, c10::Device, c10::Layout, c10::MemoryFormat, ArgumentSlice, ArgumentDict,
                             ArgumentEllipsis>;
  Value value;

  Argument() = default;
  Argument(std::nullptr_t) {}  // NOLINT: None
  Argument(bool b) : value(b) {}  // NOLINT
  Argument(int v) : value(static_cast<int64_t>(v)) {}  // NOLINT
  Argument(int64_t v) : value(v) {}  // NOLINT
  Argument(double v) : value(v) {}  // NOLINT
  Argument(std::string s) : value(std::move(s)) {}  // NOLINT
  Argument(const char* s) : value(std::string(s)) {}  // NOLINT
  Argument(Node* n) : value(n) {}  // NOLINT
  Argument(ArgumentList l) : value(std::move(l)) {}  // NOLINT
  Argument(ArgumentTuple t) : value(std::move(t)) {}  // NOLINT
  Argument(ArgumentSlice s) : value(std::move(s)) {}  // NOLINT
  Argument(ArgumentDict d) : value(std::move(d)) {}  // NOLINT
  Argument(ArgumentEllipsis e) : value(e) {}  // NOLINT
  Argument(c10::ScalarType t) : value(t) {}  // NOLINT
  Argument(c10::Device d) : value(d) {}  // NOLINT
  Argument(c10::Layout l) : value(l) {}  // NOLINT
  Argument(c10::MemoryFormat m) : value(m) {}  // NOLINT

  bool isNone() const { return std::holds_alternative<std::monostate>(value); }
  bool isNode() const { return std::holds_alternative<Node*>(value); }
  Node* node() const { return std::get<Node*>(value); }
  /// The items of a list or tuple; null for other kinds.
  const std::vector<Argument>* items() const;
  /// The arguments nested in a list, tuple, slice or dict (a dict's values); null for leaves.
  const std::vector<Argument>* children() const;
  /// Whether this argument (or anything nested in it) refers to a node.
  bool refersToNodes() const;
};

/// Keyword arguments in insertion order, like a Python dict.
using Kwargs = std::vector<std::pair<std::string, Argument>>;

/// Calls fn(node) for every node referenced in `arg`, depth first, left to right.
template <typename Fn>
void forEachNode(const Argument& arg, Fn&& fn) {
  if (arg.isNode()) {
    fn(arg.node());
  } else if (const auto* items = arg.children()) {
    for (const Argument& a : *items) forEachNode(a, fn);
  }
}

/// A copy of `arg` with every node reference n, however deeply nested (lists, tuples, slices, dict
/// keys and values), replaced by fn(n). One function for every kind of container, so that a kind
/// added later cannot be forgotten by one of its users (a slice bound once kept a dangling node).
template <typename Fn>
Argument mapNodes(const Argument& arg, Fn&& fn) {
  if (arg.isNode()) return Argument(static_cast<Node*>(fn(arg.node())));
  const auto each = [&fn](const std::vector<Argument>& items) {
    std::vector<Argument> out;
    out.reserve(items.size());
    for (const Argument& a : items) out.push_back(mapNodes(a, fn));
    return out;
  };
  if (const auto* l = std::get_if<ArgumentList>(&arg.value)) return Argument(ArgumentList{each(l->items)});
  if (const auto* t = std::get_if<ArgumentTuple>(&arg.value)) return Argument(ArgumentTuple{each(t->items)});
  if (const auto* s = std::get_if<ArgumentSlice>(&arg.value)) return Argument(ArgumentSlice{each(s->items)});
  if (const auto* d = std::get_if<ArgumentDict>(&arg.value)) return Argument(ArgumentDict{each(d->keys), each(d->values)});
  return arg;
}

/// Python str() of an argument as FX prints it in a graph (`%node` for nodes, strings unquoted).
/// The formatting functions only read `arg` and throw no tdfx errors.
std::string formatGraphArgument(const Argument& arg);
/// Python repr() of an argument as FX writes it in generated code (node names, quoted strings).
std::string formatCodeArgument(const Argument& arg);

}  // namespace tdfx
