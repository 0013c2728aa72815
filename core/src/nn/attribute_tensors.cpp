#include "tdfx/nn/attribute_tensors.h"

namespace tdfx {

namespace {

// Deep enough for CellParamsBase's state (a tuple of lists of packed objects, each a tuple), shallow
// enough that a crafted archive's cycle of objects ends.
constexpr int kMaxDepth = 8;

void collect(const c10::IValue& value, const std::string& attribute, const std::string& name, int depth,
             std::vector<AttributeTensor>& out) {
  if (depth > kMaxDepth) return;
  if (value.isTensor()) {
    if (value.toTensor().defined()) out.push_back({attribute, name, value.toTensor()});
  } else if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    for (size_t i = 0; i < elements.size(); ++i) collect(elements[i], attribute, name + "." + std::to_string(i), depth + 1, out);
  } else if (value.isList()) {
    const c10::List<c10::IValue> list = value.toList();
    for (size_t i = 0; i < list.size(); ++i) collect(list.get(i), attribute, name + "." + std::to_string(i), depth + 1, out);
  } else if (value.isObject()) {
    const c10::ClassTypePtr type = value.toObject()->type();
    if (type->is_module()) return;  // a submodule: walked as one
    torch::jit::Function* state = type->findMethod("__getstate__");
    if (!state) return;
    torch::jit::Stack stack{value};
    try {
      state->run(stack);
    } catch (const std::exception&) {
      return;
    }
    if (!stack.empty()) collect(stack.front(), attribute, name, depth + 1, out);
  }
}

}  // namespace

std::vector<AttributeTensor> attributeTensors(const torch::jit::Module& module) {
  std::vector<AttributeTensor> out;
  const c10::ClassTypePtr type = module.type();
  const c10::intrusive_ptr<c10::ivalue::Object> object = module._ivalue();
  for (size_t i = 0; i < type->numAttributes(); ++i) {
    if (type->is_parameter(i) || type->is_buffer(i)) continue;
    const c10::IValue value = object->getSlot(i);
    if (value.isObject() && value.toObject()->type()->is_module()) continue;
    collect(value, type->getAttributeName(i), "", 0, out);
  }
  return out;
}

}  // namespace tdfx
