// Integer inputs that index: drawn in range. An int input the graph uses as an index (`t[a, b]`,
// `index_select(x, 0, a)`, `gather`, an embedding) must stay below the size of the dimension it
// indexes, or both passes fail on the drawn values ("index 9 is out of bounds") and nothing is
// compared. The size is known before running where the indexed tensor is the module's own (a
// get_attr, an Embedding's weight) or an input (its shape is given).
#include "index_bounds.h"

#include <algorithm>
#include <optional>

#include "tdfx/ir/fx_target.h"
#include "node_emitter.h"

namespace tdfx::runtime {
namespace {

// The input a node reads when it is one: a plain module's placeholder, or `tensordict[key]`.
std::optional<NestedKey> inputKey(const Node& node, const Node* tensordict) {
  if (node.op() == OpKind::Placeholder && &node != tensordict) return NestedKey(node.target());
  if (tensordict && fx_target::isCallTo(node, fx_target::kGetItem) && node.args().size() == 2 &&
      node.args()[0].isNode() && node.args()[0].node() == tensordict) {
    try {
      return tensordictKey(node.args()[1]);
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<IndexBound> indexBounds(const GraphModule& module, const std::vector<InputSpec>& inputs) {
  const Graph& graph = module.graph();
  const Node* tensordict = nullptr;
  if (module.traced().readsTensorDict)
    for (const auto& n : graph.nodes())
      if (n->op() == OpKind::Placeholder) {
        tensordict = n.get();
        break;
      }
  // The sizes of what is indexed, where known before running.
  const auto sizesOf = [&](const Node& node) -> std::optional<std::vector<int64_t>> {
    if (node.op() == OpKind::GetAttr) {
      try {
        const c10::IValue v = attributeValue(module.traced(), node.target());
        if (v.isTensor()) return v.toTensor().sizes().vec();
      } catch (const std::exception&) {
      }
      return std::nullopt;
    }
    if (const auto key = inputKey(node, tensordict))
      for (const InputSpec& s : inputs)
        if (s.key == *key) return s.shape;
    return std::nullopt;
  };
  const auto moduleWeightRows = [&](const Node& call) -> std::optional<int64_t> {
    try {
      const c10::IValue w = attributeValue(module.traced(), call.target() + ".weight");
      if (w.isTensor() && w.toTensor().dim() >= 1) return w.toTensor().size(0);
    } catch (const std::exception&) {
    }
    return std::nullopt;
  };
  std::vector<IndexBound> bounds;
  const auto bound = [&](const Argument& index, const Node* indexed, int64_t dim, const Node& user) {
    if (!index.isNode()) return;
    const auto key = inputKey(*index.node(), tensordict);
    if (!key || !indexed) return;
    const auto sizes = sizesOf(*indexed);
    if (!sizes || sizes->empty()) return;
    if (dim < 0) dim += static_cast<int64_t>(sizes->size());
    if (dim < 0 || dim >= static_cast<int64_t>(sizes->size())) return;
    bounds.push_back({*key, (*sizes)[dim], user.name()});
  };
  const auto nodeArg = [](const Node& n, size_t i) -> const Node* {
    return i < n.args().size() && n.args()[i].isNode() ? n.args()[i].node() : nullptr;
  };
  const auto intArg = [](const Node& n, size_t i, const char* kwarg) -> std::optional<int64_t> {
    const Argument* a = i < n.args().size() ? &n.args()[i] : nullptr;
    for (const auto& [name, value] : n.kwargs())
      if (name == kwarg) a = &value;
    if (a && std::holds_alternative<int64_t>(a->value)) return std::get<int64_t>(a->value);
    return std::nullopt;
  };
  for (const auto& np : graph.nodes()) {
    const Node& n = *np;
    const std::string& t = n.target();
    const bool getitem = fx_target::isCallTo(n, fx_target::kGetItem) ||
                         (n.op() == OpKind::CallMethod && t == "__getitem__");
    if (getitem && n.args().size() == 2) {
      const Node* indexed = nodeArg(n, 0);
      const Argument& index = n.args()[1];
      if (const auto* items = index.items(); items && std::holds_alternative<ArgumentTuple>(index.value)) {
        // `t[a, b]`: each item indexes the next dimension; stop at what shifts them (None, ...).
        for (size_t k = 0; k < items->size(); ++k) {
          const Argument& item = (*items)[k];
          if (!item.isNode() && !std::holds_alternative<int64_t>(item.value) &&
              !std::holds_alternative<ArgumentSlice>(item.value))
            break;
          bound(item, indexed, static_cast<int64_t>(k), n);
        }
      } else {
        bound(index, indexed, 0, n);
      }
      continue;
    }
    const bool method = n.op() == OpKind::CallMethod;
    const bool function = n.op() == OpKind::CallFunction;
    if ((function && (t == "torch.index_select" || t == "torch.gather")) ||
        (method && (t == "index_select" || t == "gather"))) {
      // torch.index_select(x, dim, index); x.index_select(dim, index): the tensor is args[0] either way.
      if (const auto dim = intArg(n, 1, "dim")) {
        const Argument* index = n.args().size() > 2 ? &n.args()[2] : nullptr;
        for (const auto& [name, value] : n.kwargs())
          if (name == "index") index = &value;
        if (index) bound(*index, nodeArg(n, 0), *dim, n);
      }
      continue;
    }
    if (function && t == "torch.nn.functional.embedding" && n.args().size() >= 2) {
      bound(n.args()[0], nodeArg(n, 1), 0, n);
      continue;
    }
    if (n.op() == OpKind::CallModule && n.meta().moduleType.find("Embedding") != std::string::npos &&
        !n.args().empty() && n.args()[0].isNode()) {
      if (const auto key = inputKey(*n.args()[0].node(), tensordict))
        if (const auto rows = moduleWeightRows(n)) bounds.push_back({*key, *rows, n.name()});
    }
  }
  return bounds;
}

}  // namespace tdfx::runtime
