#include "graph_builder.h"

#include "tdfx/ir/fx_target.h"

namespace tdfx::trace {

void GraphBuilder::rollBackTo(const Mark& mark) {
  while (!madeAttributes_.empty() && madeAttributes_.back().index >= mark.nodes) {
    const MadeAttribute& made = madeAttributes_.back();
    if (auto it = attrNodes_.find(made.target); it != attrNodes_.end() && it->second == made.node) attrNodes_.erase(it);
    concreteTensorNodes_.erase(made.node);
    madeAttributes_.pop_back();
  }
  // Fields are given nodes in graph order: those past the mark are the latest.
  while (!madeFields_.empty()) {
    auto field = madeFields_.back().lock();
    if (field && field->node && field->nodeIndex < mark.nodes) break;
    if (field && field->node) field->node = nullptr;
    madeFields_.pop_back();
  }
  graph_.truncate(mark.nodes);
  // A constant made after the mark is gone with its node; its number is given again.
  for (int k = mark.tensorConstants; k < tensorConstants_; ++k) tensorConstantValues_.erase("_tensor_constant" + std::to_string(k));
  tensorConstants_ = mark.tensorConstants;
}

Node* GraphBuilder::getItem(Node* container, int64_t index, const std::string& field) {
  Node* item = nullptr;
  if (field.empty()) {
    item = fx_target::create(graph_, fx_target::kGetItem, {Argument(container), Argument(index)});
  } else {
    // A named tuple's field read by name (`x.max(1).values`): FX records the attribute read,
    // builtins.getattr(max_1, 'values'), where the code reads it.
    item = fx_target::create(graph_, fx_target::kGetAttr, {Argument(container), Argument(field)});
  }
  item->meta().modulePath = container->meta().modulePath;
  item->meta().moduleType = container->meta().moduleType;
  item->meta().sourceFile = container->meta().sourceFile;
  item->meta().sourceLine = container->meta().sourceLine;
  return item;
}

Node* GraphBuilder::materializeField(const std::shared_ptr<PendingField>& field) {
  if (!field->node) {
    Node* container = field->containerField ? materializeField(field->containerField) : field->container;
    field->node = getItem(container, field->index, field->field);
    if (field->meta) field->node->meta() = *field->meta;
    if (field->eager && !field->node->meta().eagerValue) field->node->meta().eagerValue = field->eager;
    field->nodeIndex = field->node->index();
    madeFields_.push_back(field);
  }
  return field->node;
}

Node* GraphBuilder::tensorAttribute(const std::string& attribute, const at::Tensor& t, bool shared, bool& made) {
  made = false;
  if (shared) {
    if (auto it = attrNodes_.find(attribute); it != attrNodes_.end()) return it->second;
  }
  std::string target = attribute;
  while (target.empty() || (attribute.empty() && taken_ && taken_(target))) {
    // FX probes each `_tensor_constantN` with hasattr(root, name) while Module.__getattr__ is
    // patched (torch/fx/_symbolic_trace.py), so a parameter of that name gets its get_attr node
    // right there, before the constant's, whether the code reads it later or not.
    if (!target.empty() && rootParameter_ && rootParameter_(target) && !attrNodes_.count(target))
      noteAttribute(target, graph_.createNode(OpKind::GetAttr, target), /*shared=*/true);
    target = "_tensor_constant" + std::to_string(tensorConstants_++);
  }
  Node* fx = graph_.createNode(OpKind::GetAttr, target);
  made = true;
  if (attribute.empty()) tensorConstantValues_[target] = t;
  noteAttribute(attribute, fx, shared);
  return fx;
}

void GraphBuilder::noteAttribute(const std::string& target, Node* node, bool shared) {
  if (shared) attrNodes_.emplace(target, node);
  else concreteTensorNodes_.insert(node);
  madeAttributes_.push_back({shared ? target : std::string(), node, node->index()});
}

}  // namespace tdfx::trace
