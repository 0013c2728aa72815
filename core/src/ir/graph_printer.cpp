#include "tdfx/ir/graph_printer.h"

#include "tdfx/util/dtype.h"

namespace tdfx {

std::string printedTarget(const Node& node) { return node.target(); }

namespace {
std::string formatKwargs(const Kwargs& kwargs) {
  std::string out = "{";
  for (size_t i = 0; i < kwargs.size(); ++i)
    out += (i ? ", " : "") + kwargs[i].first + ": " + formatGraphArgument(kwargs[i].second);
  return out + "}";
}
}  // namespace

std::string formatNode(const Node& node) {
  const std::string head = "%" + node.name() + " : " + (node.type().empty() ? "" : node.type() + " ") +
                           "[#users=" + std::to_string(node.users().size()) + "] = ";
  switch (node.op()) {
    case OpKind::Placeholder:
      return head + "placeholder[target=" + node.target() + "]" +
             (node.args().empty() ? "" : "(default=" + formatGraphArgument(node.args()[0]) + ")");
    case OpKind::GetAttr:
      return head + opKindName(node.op()) + "[target=" + printedTarget(node) + "]";
    case OpKind::Output:
      return "return " + (node.args().empty() ? std::string("None") : formatCodeArgument(node.args()[0]));
    default:
      return head + opKindName(node.op()) + "[target=" + printedTarget(node) +
             "](args = " + formatGraphArgument(ArgumentTuple{node.args()}) + ", kwargs = " + formatKwargs(node.kwargs()) +
             ")";
  }
}

std::string formatShape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string formatTensorMeta(const TensorMeta& meta) { return dtypeToString(meta.dtype) + formatShape(meta.shape); }

namespace {

std::string printGraph(const Graph& graph, bool shapes) {
  std::string out = "graph():";
  for (const auto& node : graph.nodes()) {
    out += "\n    " + formatNode(*node);
    const auto& outputs = node->meta().outputs;
    if (!shapes || outputs.empty() || node->op() == OpKind::Output) continue;
    out += "  # ";
    for (size_t i = 0; i < outputs.size(); ++i) out += (i ? ", " : "") + formatTensorMeta(outputs[i]);
  }
  return out;
}

}  // namespace

std::string printGraph(const Graph& graph) { return printGraph(graph, false); }

std::string printGraphWithShapes(const Graph& graph) { return printGraph(graph, true); }

}  // namespace tdfx
