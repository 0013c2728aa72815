#include "tdfx/ir/argument.h"

#include "tdfx/ir/node.h"
#include "tdfx/util/dtype.h"
#include "tdfx/util/python_repr.h"

namespace tdfx {

const std::vector<Argument>* Argument::items() const {
  if (const auto* l = std::get_if<ArgumentList>(&value)) return &l->items;
  if (const auto* t = std::get_if<ArgumentTuple>(&value)) return &t->items;
  return nullptr;
}

const std::vector<Argument>* Argument::children() const {
  if (const auto* items = this->items()) return items;
  if (const auto* s = std::get_if<ArgumentSlice>(&value)) return &s->items;
  if (const auto* d = std::get_if<ArgumentDict>(&value)) return &d->values;
  return nullptr;
}

bool Argument::refersToNodes() const {
  bool found = false;
  forEachNode(*this, [&](Node*) { found = true; });
  return found;
}

namespace {

std::string layoutRepr(c10::Layout l) {
  switch (l) {
    case c10::kStrided: return "torch.strided";
    case c10::kSparse: return "torch.sparse_coo";
    default: return "torch.layout";
  }
}

std::string memoryFormatRepr(c10::MemoryFormat m) {
  switch (m) {
    case c10::MemoryFormat::Contiguous: return "torch.contiguous_format";
    case c10::MemoryFormat::Preserve: return "torch.preserve_format";
    case c10::MemoryFormat::ChannelsLast: return "torch.channels_last";
    case c10::MemoryFormat::ChannelsLast3d: return "torch.channels_last_3d";
    default: return "torch.memory_format";
  }
}

// Python formats containers the same way for str() and repr(), except for how leaves print.
template <typename Leaf>
std::string formatArgument(const Argument& arg, Leaf leaf) {
  if (const auto* l = std::get_if<ArgumentList>(&arg.value)) {
    std::string out = "[";
    for (size_t i = 0; i < l->items.size(); ++i) out += (i ? ", " : "") + formatArgument(l->items[i], leaf);
    return out + "]";
  }
  if (const auto* t = std::get_if<ArgumentTuple>(&arg.value)) {
    std::string out = "(";
    for (size_t i = 0; i < t->items.size(); ++i) out += (i ? ", " : "") + formatArgument(t->items[i], leaf);
    return out + (t->items.size() == 1 ? ",)" : ")");
  }
  if (const auto* s = std::get_if<ArgumentSlice>(&arg.value)) {
    // FX prints a slice with str() in graphs too, so a node inside it prints as its bare name.
    std::string out = "slice(";
    for (size_t i = 0; i < s->items.size(); ++i) {
      const Argument& item = s->items[i];
      out += (i ? ", " : "") + (item.isNode() ? item.node()->name() : formatArgument(item, leaf));
    }
    return out + ")";
  }
  if (const auto* d = std::get_if<ArgumentDict>(&arg.value)) {
    std::string out = "{";
    for (size_t i = 0; i < d->keys.size(); ++i)
      out += (i ? ", " : "") + leaf.key(d->keys[i]) + ": " + formatArgument(d->values[i], leaf);
    return out + "}";
  }
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "None";
        else if constexpr (std::is_same_v<T, bool>) return pythonBoolRepr(v);
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return pythonFloatRepr(v);
        else if constexpr (std::is_same_v<T, c10::ScalarType>) return dtypeRepr(v);
        else if constexpr (std::is_same_v<T, c10::Layout>) return layoutRepr(v);
        else if constexpr (std::is_same_v<T, c10::MemoryFormat>) return memoryFormatRepr(v);
        else if constexpr (std::is_same_v<T, ArgumentEllipsis>) return "Ellipsis";
        else return leaf(v);
      },
      arg.value);
}

struct GraphLeaf {
  // FX's _format_arg prints dict keys with str().
  std::string key(const Argument& k) const { return formatArgument(k, *this); }
  std::string operator()(const std::string& s) const { return s; }
  std::string operator()(Node* n) const { return "%" + n->name(); }
  std::string operator()(const c10::Device& d) const { return d.str(); }
  template <typename T>
  std::string operator()(const T&) const { return "?"; }
};

struct CodeLeaf {
  std::string key(const Argument& k) const { return formatArgument(k, *this); }
  std::string operator()(const std::string& s) const { return pythonStringRepr(s); }
  std::string operator()(Node* n) const { return n->name(); }
  std::string operator()(const c10::Device& d) const {
    std::string out = "device(type=" + pythonStringRepr(c10::DeviceTypeName(d.type(), true));
    if (d.has_index()) out += ", index=" + std::to_string(d.index());
    return out + ")";
  }
  template <typename T>
  std::string operator()(const T&) const { return "?"; }
};

}  // namespace

std::string formatGraphArgument(const Argument& arg) { return formatArgument(arg, GraphLeaf{}); }
std::string formatCodeArgument(const Argument& arg) { return formatArgument(arg, CodeLeaf{}); }

}  // namespace tdfx
