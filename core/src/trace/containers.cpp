// The parts of ModuleTracer for Python's lists, tuples and dicts, which Python builds, changes and
// reads while FX traces: their items are tracked, not recorded (unpacking, `append`, `len`, `+`,
// slices, dicts with constant keys).
#include "trace_context.h"
#include "tdfx/ir/fx_target.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

bool isComposite(const SymValue& s) {
  return s.input.kind == ValueParts::Kind::List || s.input.kind == ValueParts::Kind::Tuple;
}

SymValue itemOf(const SymValue& composite, size_t i) {
  SymValue item;
  item.arg = (*composite.arg.items())[i];
  item.input = composite.input.items[i];
  if (item.input.kind == ValueParts::Kind::Constant && item.input.pendingTensor)
    return SymValue::ofPendingTensor(item.input.constant.toTensor(), item.input.tensorTarget);
  if (item.input.kind == ValueParts::Kind::Constant) item.constant = item.input.constant;
  if (item.input.kind == ValueParts::Kind::PendingField && item.input.field) {
    // A field the list held before any recorded operation used it: still pending, or its node.
    if (item.input.field->node) return SymValue::ofNode(item.input.field->node);
    item.pendingField = item.input.field;
  }
  return item;
}

}  // namespace

void registerContainerConverters(ConverterTable& t) {
  for (const c10::Symbol s : {c10::prim::TupleUnpack, c10::prim::ListUnpack})
    t.add(s, &always<&convertUnpack>);
  for (const c10::Symbol s : {c10::prim::ListConstruct, c10::prim::TupleConstruct})
    t.add(s, &always<&convertConstruct>);
  t.add(c10::prim::DictConstruct, &always<&convertDictConstruct>);
  // On lists built in forward; on tensors (and other values) these are operators.
  for (const c10::Symbol s : {c10::aten::add, c10::aten::slice}) t.add(s, &convertListOperation);
  for (const c10::Symbol s : {c10::aten::dict, c10::aten::_set_item}) t.add(s, &convertDictOperation);
  for (const char* s : {"aten::append", "aten::extend", "aten::insert", "aten::pop", "aten::_set_item", "aten::clear",
                        "aten::remove", "aten::reverse"})
    t.add(c10::Symbol::fromQualString(s), &convertListMutation);
  for (const c10::Symbol s : {c10::prim::TupleIndex, c10::aten::__getitem__, c10::aten::len})
    t.add(s, &convertContainerRead);
}

void convertUnpack(TraceContext& cx, jit::Node* node, Frame& frame) {
  // `n, c, h, w = x.shape`: unpacking uses the Attribute proxy, which makes its getattr node.
  materializePendingField(cx, node->input(0), frame);
  const SymValue in = frame.get(node->input(0));
  const size_t n = node->outputs().size();
  if (isComposite(in) && in.input.items.size() == n) {
    for (size_t i = 0; i < n; ++i) frame.env[node->outputs()[i]] = itemOf(in, i);
    return;
  }
  if (in.constant && (in.constant->isTuple() || in.constant->isList())) {
    const auto items = in.constant->isTuple() ? in.constant->toTupleRef().elements().vec() : in.constant->toListRef().vec();
    if (items.size() != n) fail(cx, node, frame, "unpacking " + std::to_string(items.size()) + " values into " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) frame.env[node->outputs()[i]] = SymValue::ofConstant(items[i]);
    return;
  }
  if (!in.arg.isNode()) fail(cx, node, frame, "unpacking a value that is neither a node nor a known tuple or list");
  // A tuple or list computed at run time: read each element with operator.getitem, as FX does.
  for (size_t i = 0; i < n; ++i)
    frame.env[node->outputs()[i]] = SymValue::ofNode(cx.builder.getItem(in.arg.node(), static_cast<int64_t>(i)));
}

void convertDictConstruct(TraceContext& cx, jit::Node* node, Frame& frame) {
  // `{'p': a, 'q': b}`: a Python dict while FX traces. Read back with a constant key (`d['p']`),
  // an item is its value; returned, FX keeps the dict in the output.
  SymValue out;
  ArgumentDict dict;
  auto& items = frame.dicts[node->output()];
  for (size_t i = 0; i + 1 < node->inputs().size(); i += 2) {
    const SymValue& key = frame.get(node->input(i));
    if (!key.constant) fail(cx, node, frame, "dict keys must be constants");
    dict.keys.push_back(key.arg);
    dict.values.push_back(frame.get(node->input(i + 1)).arg);
    items.emplace_back(*key.constant, frame.get(node->input(i + 1)));
  }
  out.arg = Argument(std::move(dict));
  // Returned as it is or inside the returned tuple or list (`return {"a": y}, x`).
  const auto returned = [](const jit::Node* user) {
    if (user->kind() == c10::prim::Return) return true;
    if (user->kind() != c10::prim::TupleConstruct && user->kind() != c10::prim::ListConstruct) return false;
    for (const jit::Use& u : user->output()->uses())
      if (u.user->kind() != c10::prim::Return) return false;
    return true;
  };
  // Written with constant keys (`outs: Dict[str, Tensor] = {}`, then `outs[name] = head(x)` in a
  // loop over a ModuleDict) as Python writes it (convertDictOperation).
  const auto written = [&](const jit::Use& use) {
    return use.user->kind() == c10::aten::_set_item && use.offset == 0;
  };
  for (const jit::Use& use : node->output()->uses())
    if (!returned(use.user) && use.user->kind() != c10::aten::__getitem__ && !written(use))
      fail(cx, node, frame,
           "dicts built in forward are supported as return values, written and read with constant keys only");
  frame.env[node->output()] = std::move(out);
}

bool convertDictOperation(TraceContext& cx, jit::Node* node, Frame& frame) {
  // `out = OrderedDict()` then `out["aux"] = x` (torchvision's IntermediateLayerGetter and
  // segmentation heads): a Python dict filled while FX traces; returned, FX keeps the dict.
  if (node->kind() == c10::aten::dict && node->inputs().empty() && node->outputs().size() == 1 &&
      node->output()->type()->kind() == c10::TypeKind::DictType) {
    frame.dicts[node->output()];
    SymValue out;
    out.arg = Argument(ArgumentDict{});
    frame.env[node->output()] = std::move(out);
    return true;
  }
  if (node->kind() != c10::aten::_set_item || node->inputs().size() != 3) return false;
  auto held = frame.env.find(node->input(0));
  if (held == frame.env.end() || !std::holds_alternative<ArgumentDict>(held->second.arg.value)) return false;
  auto dict = frame.dicts.find(node->input(0));
  if (dict == frame.dicts.end()) {
    // A dict a call returned (`d = self.backbone(x)`, then `d["out"] = y`): its items come with
    // the value; graph values and constants are all such a dict's items can be.
    std::vector<std::pair<c10::IValue, SymValue>> items;
    const auto& known = std::get<ArgumentDict>(held->second.arg.value);
    for (size_t k = 0; k < known.keys.size(); ++k) {
      const Argument& key = known.keys[k];
      c10::IValue keyValue;
      if (const auto* text = std::get_if<std::string>(&key.value)) keyValue = *text;
      else if (const auto* number = std::get_if<int64_t>(&key.value)) keyValue = *number;
      else fail(cx, node, frame, "a dict returned by a call is written, and one of its keys is neither a string nor an int");
      if (!known.values[k].isNode()) fail(cx, node, frame, "a dict returned by a call is written, and one of its values is not a graph value");
      items.emplace_back(keyValue, SymValue::ofNode(known.values[k].node()));
    }
    dict = frame.dicts.emplace(node->input(0), std::move(items)).first;
  }
  const SymValue& key = frame.get(node->input(1));
  if (!key.constant) fail(cx, node, frame, "a dict built in forward is written with a key computed from tensors");
  const SymValue& value = frame.get(node->input(2));
  auto& argument = std::get<ArgumentDict>(held->second.arg.value);
  bool replaced = false;
  for (size_t i = 0; i < dict->second.size(); ++i)
    if (dict->second[i].first == *key.constant) {
      dict->second[i].second = value;
      argument.values[i] = value.arg;
      replaced = true;
    }
  if (!replaced) {
    dict->second.emplace_back(*key.constant, value);
    argument.keys.push_back(key.arg);
    argument.values.push_back(value.arg);
  }
  return true;
}

void convertConstruct(TraceContext& cx, jit::Node* node, Frame& frame) {
  if (cx.repacked.count(node)) return;  // the value of a multi-output call, set by setOutputs
  const bool isList = node->kind() == c10::prim::ListConstruct;
  SymValue out;
  out.input.kind = isList ? ValueParts::Kind::List : ValueParts::Kind::Tuple;
  c10::TypePtr elementType;
  if (isList) {
    out.input.elementType = elementType = node->output()->type()->expectRef<c10::ListType>().getElementType();
    out.input.listId = cx.nextListId++;
  }
  std::vector<Argument> items;
  bool allConstant = true;
  for (const jit::Value* v : node->inputs()) {
    const SymValue& s = frame.get(v);
    if (s.kind == SymValue::Kind::Module) fail(cx, node, frame, "lists of modules are not supported");
    items.push_back(s.arg);
    out.input.items.push_back(s.input);
    allConstant = allConstant && s.constant && !s.constant->isTensor();
  }
  // A list that may hold tensors is followed item by item even while it is empty or constant:
  // `outs = []` then `outs.append(layer(x))` in a loop gives FX a list of the appended nodes.
  if (isList && mayHoldTensor(elementType)) allConstant = false;
  // `torch.cat(x, dim=1)` with x a tuple: TorchScript unpacks the tuple into a new list for the
  // List[Tensor] parameter; Python passed the tuple, and FX records it as one.
  // A list the user wrote from the same items (`a, b = self.pair(x)`, then `l = [a, b]` or
  // `torch.cat([a, b])`) is a list: it has a name, is changed or combined, or is a list display
  // in the consuming call's text.
  bool tupleAsList = isList && !node->inputs().empty() && node->input(0)->node()->kind() == c10::prim::TupleUnpack &&
                     node->input(0)->node()->outputs().size() == node->inputs().size() &&
                     !node->output()->hasDebugName() && node->output()->uses().size() == 1;
  for (size_t i = 0; tupleAsList && i < node->inputs().size(); ++i)
    tupleAsList = node->input(i)->node() == node->input(0)->node() && node->input(i)->offset() == i;
  if (tupleAsList) {
    const jit::Use& use = node->output()->uses()[0];
    const c10::FunctionSchema* schema = use.user->maybeSchema();
    const bool takesTensors = use.user->kind() == c10::prim::CallFunction ||
                              (schema && use.offset < schema->arguments().size() &&
                               schema->arguments()[use.offset].type()->kind() == c10::TypeKind::ListType &&
                               schema->arguments()[use.offset].type()->containedTypes().at(0)->kind() ==
                                   c10::TypeKind::TensorType &&
                               !schema->is_mutable());
    const size_t position = use.user->kind() == c10::prim::CallFunction ? use.offset - 1 : use.offset;
    const py::ExprPtr written = cx.source.writtenExpression(use.user).second;
    const bool display = written && written->kind == py::Expr::Kind::Call && position < written->positionalCount() &&
                         written->items[1 + position]->kind == py::Expr::Kind::List;
    tupleAsList = takesTensors && !display;
  }
  if (tupleAsList) {
    out.input.kind = ValueParts::Kind::Tuple;
    out.input.listId = 0;
  }
  if (isList && !tupleAsList) out.arg = Argument(ArgumentList{std::move(items)});
  else out.arg = Argument(ArgumentTuple{std::move(items)});
  if (allConstant) {
    // Fully known: one constant value, while the FX view keeps the items.
    c10::IValue value;
    if (isList) {
      c10::impl::GenericList list(elementType);
      for (const ValueParts& item : out.input.items) list.push_back(item.constant);
      value = c10::IValue(list);
    } else {
      std::vector<c10::IValue> elems;
      for (const ValueParts& item : out.input.items) elems.push_back(item.constant);
      value = c10::ivalue::Tuple::create(std::move(elems));
    }
    Argument arg = out.arg;
    out = SymValue::ofConstant(value);
    out.arg = std::move(arg);
  }
  frame.env[node->output()] = std::move(out);
}

namespace {
// The items of a list followed item by item (not a constant: one that may hold tensors).
bool isTrackedList(const SymValue& s) { return s.input.kind == ValueParts::Kind::List && !s.constant; }

std::vector<Argument>& listArguments(SymValue& list) { return std::get<ArgumentList>(list.arg.value).items; }

// An int constant, or nullopt for None; `ok` turns false for anything else.
std::optional<int64_t> optionalInt(const SymValue& s, bool& ok) {
  if (s.constant && s.constant->isInt()) return s.constant->toInt();
  ok = ok && s.constant && s.constant->isNone();
  return std::nullopt;
}

// The positions Python's l[start:end:step] takes from a list of n items (PySlice_AdjustIndices).
std::vector<size_t> slicePositions(int64_t n, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  std::vector<size_t> out;
  if (step == 0) return out;
  const auto adjust = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t first = adjust(start, step > 0 ? 0 : n - 1), last = adjust(end, step > 0 ? n : -1);
  for (int64_t i = first; step > 0 ? i < last : i > last; i += step) out.push_back(static_cast<size_t>(i));
  return out;
}
}  // namespace

bool isPythonContainerOperation(jit::Node* node, const Frame& frame) {
  const auto kind = node->kind();
  if (kind == c10::prim::ListConstruct || kind == c10::prim::TupleConstruct || kind == c10::prim::ListUnpack ||
      kind == c10::prim::TupleUnpack || kind == c10::prim::TupleIndex || kind == c10::prim::Loop)
    return true;
  static const c10::Symbol listOperations[] = {
      c10::aten::append, c10::Symbol::fromQualString("aten::extend"), c10::aten::insert, c10::aten::pop,
      c10::aten::_set_item, c10::aten::clear, c10::Symbol::fromQualString("aten::reverse"), c10::aten::add,
      c10::aten::slice, c10::aten::__getitem__, c10::aten::len};
  if (std::find(std::begin(listOperations), std::end(listOperations), kind) == std::end(listOperations) ||
      node->inputs().empty())
    return false;
  const auto it = frame.env.find(node->input(0));
  return it != frame.env.end() && isComposite(it->second);
}

bool convertListMutation(TraceContext& cx, jit::Node* node, Frame& frame) {
  // Lists built in the code (`features.append(x)` in DenseNet) are tracked item by item, so the
  // graph sees the list as it is at each use: Python changes the list while FX traces, and FX
  // records none of it.
  auto it = frame.env.find(node->input(0));
  if (it == frame.env.end() || it->second.input.kind != ValueParts::Kind::List) return false;
  SymValue& list = it->second;
  auto& args = listArguments(list);
  auto& parts = list.input.items;
  const int64_t n = static_cast<int64_t>(parts.size());
  const auto indexAt = [&](size_t input, bool clampForInsert) {
    const SymValue& idx = frame.get(node->input(input));
    if (!idx.constant || !idx.constant->isInt()) fail(cx, node, frame, "a list built in forward is changed at a position computed from tensors");
    int64_t i = idx.constant->toInt();
    if (i < 0) i += n;
    if (clampForInsert) return static_cast<size_t>(std::clamp<int64_t>(i, 0, n));
    if (i < 0 || i >= n) fail(cx, node, frame, "list index " + std::to_string(idx.constant->toInt()) + " out of range");
    return static_cast<size_t>(i);
  };
  const std::string name = node->kind().toUnqualString();
  if (name == "append") {
    const SymValue& item = frame.get(node->input(1));
    args.push_back(item.arg);
    parts.push_back(item.input);
  } else if (name == "insert") {
    const size_t at = indexAt(1, true);
    const SymValue& item = frame.get(node->input(2));
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), item.arg);
    parts.insert(parts.begin() + static_cast<std::ptrdiff_t>(at), item.input);
  } else if (name == "extend") {
    const SymValue other = frame.get(node->input(1));
    if (!isComposite(other)) fail(cx, node, frame, "a list built in forward is extended by a value computed from tensors");
    for (size_t i = 0; i < other.input.items.size(); ++i) {
      args.push_back((*other.arg.items())[i]);
      parts.push_back(other.input.items[i]);
    }
  } else if (name == "pop") {
    if (n == 0) fail(cx, node, frame, "pop from an empty list");
    const size_t at = node->inputs().size() > 1 ? indexAt(1, false) : static_cast<size_t>(n - 1);
    frame.env[node->output()] = itemOf(list, at);
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(at));
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at));
    shareListChange(cx, list);
    return true;
  } else if (name == "_set_item") {
    const size_t at = indexAt(1, false);
    const SymValue& item = frame.get(node->input(2));
    args[at] = item.arg;
    parts[at] = item.input;
  } else if (name == "clear") {
    args.clear();
    parts.clear();
  } else if (name == "reverse") {
    std::reverse(args.begin(), args.end());
    std::reverse(parts.begin(), parts.end());
  } else {
    fail(cx, node, frame, "list." + name + " is not supported on lists built in forward");
  }
  // append and _set_item return the list itself; the others return nothing.
  if (node->outputs().size() == 1) frame.env[node->output()] = list;
  shareListChange(cx, list);
  return true;
}

void shareListChange(TraceContext& cx, const SymValue& list) {
  if (list.input.listId == 0) return;
  const SymValue changed = list;  // `list` may be one of the entries written below
  for (Frame* f : cx.frames)
    for (auto& [value, held] : f->env)
      if (held.input.kind == ValueParts::Kind::List && held.input.listId == changed.input.listId) {
        held.arg = changed.arg;
        held.input.items = changed.input.items;
      }
}

bool convertListOperation(TraceContext& cx, jit::Node* node, Frame& frame) {
  // `[x] + [a, b]`, `outs[::-1]`: Python computes new lists while FX traces; their items are the
  // Proxies, and no node is recorded.
  if (node->outputs().size() != 1 || node->output()->type()->kind() != c10::TypeKind::ListType) return false;
  const SymValue& a = frame.get(node->input(0));
  if (!isTrackedList(a)) return false;
  if (node->kind() == c10::aten::add && node->inputs().size() == 2) {
    const SymValue& b = frame.get(node->input(1));
    if (!isComposite(b)) return false;
    SymValue out = a;
    out.input.listId = cx.nextListId++;  // a new list
    for (size_t i = 0; i < b.input.items.size(); ++i) {
      listArguments(out).push_back((*b.arg.items())[i]);
      out.input.items.push_back(b.input.items[i]);
    }
    frame.env[node->output()] = std::move(out);
    return true;
  }
  if (node->kind() == c10::aten::slice && node->inputs().size() == 4) {
    bool ok = true;
    const auto start = optionalInt(frame.get(node->input(1)), ok), end = optionalInt(frame.get(node->input(2)), ok);
    const auto step = optionalInt(frame.get(node->input(3)), ok);
    if (!ok) return false;
    SymValue out = a;
    out.input.listId = cx.nextListId++;  // a new list
    listArguments(out).clear();
    out.input.items.clear();
    for (size_t i : slicePositions(static_cast<int64_t>(a.input.items.size()), start, end, step.value_or(1))) {
      listArguments(out).push_back((*a.arg.items())[i]);
      out.input.items.push_back(a.input.items[i]);
    }
    frame.env[node->output()] = std::move(out);
    return true;
  }
  return false;
}

bool convertContainerRead(TraceContext& cx, jit::Node* node, Frame& frame) {
  const SymValue& in = frame.get(node->input(0));
  if (node->kind() == c10::aten::len) {
    if (!isComposite(in)) return false;
    frame.env[node->output()] = SymValue::ofConstant(c10::IValue(static_cast<int64_t>(in.input.items.size())));
    return true;
  }
  const SymValue& idx = frame.get(node->input(1));
  if (auto dict = frame.dicts.find(node->input(0)); dict != frame.dicts.end()) {
    if (!idx.constant) fail(cx, node, frame, "a dict built in forward is read with a key computed from tensors");
    for (const auto& [key, value] : dict->second)
      if (key == *idx.constant) {
        frame.env[node->output()] = value;
        return true;
      }
    fail(cx, node, frame, "the dict built in forward has no key " + idx.constant->tagKind());
  }
  if (const auto* held = std::get_if<ArgumentDict>(&in.arg.value); held && idx.constant) {
    // A dict returned by a call (`features = self.backbone(x)`, then `features["out"]`): its items
    // travel in the value; a graph value is all a read of one can be.
    for (size_t k = 0; k < held->keys.size(); ++k) {
      const Argument& key = held->keys[k];
      const bool same = idx.constant->isString() ? std::holds_alternative<std::string>(key.value) &&
                                                       std::get<std::string>(key.value) == idx.constant->toStringRef()
                                                 : idx.constant->isInt() && std::holds_alternative<int64_t>(key.value) &&
                                                       std::get<int64_t>(key.value) == idx.constant->toInt();
      if (same && held->values[k].isNode()) {
        frame.env[node->output()] = SymValue::ofNode(held->values[k].node());
        return true;
      }
    }
    return false;
  }
  if (!idx.constant || !idx.constant->isInt()) return false;
  int64_t i = idx.constant->toInt();
  if (in.constant && (in.constant->isTuple() || in.constant->isList())) {
    // A module's tuple or list attribute, nested as deep as it is (`self.pairs[0][1]`): Python
    // indexes it while FX traces; a tensor found so is FX's `_tensor_constantN` where it is used.
    const auto items = in.constant->isTuple() ? in.constant->toTupleRef().elements().vec() : in.constant->toListRef().vec();
    const auto n = static_cast<int64_t>(items.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) fail(cx, node, frame, "index " + std::to_string(idx.constant->toInt()) + " out of range");
    const c10::IValue& item = items[static_cast<size_t>(i)];
    frame.env[node->output()] = item.isTensor() ? SymValue::ofPendingTensor(item.toTensor(), "") : SymValue::ofConstant(item);
    return true;
  }
  if (isComposite(in)) {
    const int64_t n = static_cast<int64_t>(in.input.items.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) fail(cx, node, frame, "index " + std::to_string(idx.constant->toInt()) + " out of range");
    frame.env[node->output()] = itemOf(in, static_cast<size_t>(i));
    return true;
  }
  if (node->kind() == c10::prim::TupleIndex && in.arg.isNode()) {
    // `m.values` on a named tuple kept in a variable reads the field by name, as written.
    const py::ExprPtr expr = cx.source.writtenExpression(node).second;
    const std::string field = expr && expr->kind == py::Expr::Kind::Attribute ? expr->text : "";
    frame.env[node->output()] = field.empty() ? SymValue::ofNode(cx.builder.getItem(in.arg.node(), i))
                                              : SymValue::ofPendingField(in.arg.node(), i, field);
    return true;
  }
  return false;
}

}  // namespace tdfx::trace
