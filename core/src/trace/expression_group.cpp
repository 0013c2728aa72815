// The part of ModuleTracer that folds several TorchScript nodes of one Python expression into the
// one FX node that torch.fx records for it: `x[:, 0:1]` (two aten::slice) becomes one
// operator.getitem with a tuple of slices, `1 - x` (aten::neg, aten::add) one operator.sub.
// TorchScript gives every node of such an expression the same source range, which is how the
// group is found; the user's expression says what FX recorded.
#include <algorithm>

#include "tdfx/ir/fx_tables.h"
#include "trace_context.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {

// Nodes of one user expression share its range; nodes of one inlined TorchScript builtin share its def.
bool sameExpression(const SourceLocation& a, const SourceLocation& b) {
  if (!a.builtinDef.empty() || !b.builtinDef.empty()) return a.builtinDef == b.builtinDef && a.file == b.file;
  return a.start == b.start && a.rangeLength == b.rangeLength && a.file == b.file && a.line == b.line;
}

// The parameters of a builtin's header `def sub(a : int, b : Tensor) -> Tensor:`: name and whether
// it is a tensor.
std::vector<std::pair<std::string, bool>> builtinParameters(const std::string& header, std::string& name) {
  std::vector<std::pair<std::string, bool>> params;
  const size_t open = header.find('('), close = header.find(')');
  if (open == std::string::npos || close == std::string::npos || header.compare(0, 4, "def ") != 0) return params;
  name = header.substr(4, open - 4);
  std::string list = header.substr(open + 1, close - open - 1);
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string param = list.substr(start, comma - start);
    const size_t colon = param.find(':');
    std::string pname = param.substr(0, colon);
    pname.erase(0, pname.find_first_not_of(' '));
    pname.erase(pname.find_last_not_of(' ') + 1);
    params.emplace_back(pname, colon != std::string::npos && param.find("Tensor", colon) != std::string::npos);
    start = comma + 1;
  }
  return params;
}

// No Python expression compiles to a longer chain of nodes of its one range.
constexpr size_t kMaxGroup = 16;

bool isIndexingOp(const jit::Node* n) {
  const auto k = n->kind();
  return k == c10::aten::slice || k == c10::aten::select || k == c10::aten::unsqueeze || k == c10::aten::index;
}

}  // namespace

std::vector<jit::Node*> expressionGroup(TraceContext& cx, jit::Node* first, const SourceLocation& loc) {
  // Consecutive nodes with the same range, each consuming the previous one's only output; constants
  // and range-less list constructions in between belong to the expression too. So do the nodes of
  // sub-expressions written inside it (`n - 1` in `x[:, : n - 1]`): Python evaluates the whole
  // index before the one subscript FX records, so they are converted first (see the caller).
  std::vector<jit::Node*> group{first};
  size_t end = loc.start + loc.rangeLength;
  if (loc.builtinDef.empty()) {
    if (auto expr = py::expressionForRange(cx.source.parsed(loc.window), loc.rangeLength))
      end = loc.start + expr->end;
  }
  const auto inside = [&](const std::optional<SourceLocation>& l) {
    return l && l->builtinDef.empty() && l->file == loc.file && l->start > loc.start && l->start < end;
  };
  const auto readsGroup = [&](const jit::Node* n) {
    for (const jit::Value* in : n->inputs())
      if (std::find(group.begin(), group.end(), in->node()) != group.end()) return true;
    return false;
  };
  for (jit::Node* n = first->next(); n->kind() != c10::prim::Return; n = n->next()) {
    if (n->kind() == c10::prim::Constant) continue;
    // `self.k` or `self.table` read inside the expression (`x[:, : self.k]`, `x[:, self.t]`):
    // TorchScript gives the read no range of its own. A module attribute is a concrete value or a
    // get_attr to FX, defined before the one node the expression records (converted in between,
    // below, like a constant); a submodule is only ever called, which ends the group anyway.
    if (n->kind() == c10::prim::GetAttr && n->output()->type()->kind() != c10::TypeKind::ClassType) continue;
    auto nloc = cx.source.userSource(n);
    if (n->kind() == c10::prim::ListConstruct && !nloc) continue;
    if (!nloc || n->inputs().empty() || n->outputs().size() != 1) break;
    if (!sameExpression(*nloc, loc)) {
      // A sub-expression of this one: a bound, an index. A TorchScript builtin inlined for one
      // (`x.shape` in `x[:, : x.shape[-1] // 2]`) counts when its value is read inside too.
      bool sub = loc.builtinDef.empty() && n->maybeOperator() && !n->hasSideEffects() && !readsGroup(n) &&
                 n->blocks().empty();
      if (sub && !inside(nloc)) {
        sub = !nloc->builtinDef.empty() && !n->output()->uses().empty();
        for (const jit::Use& use : n->output()->uses()) sub = sub && inside(cx.source.userSource(use.user));
      }
      if (!sub) break;
      continue;
    }
    jit::Node* prev = group.back();
    if (prev->outputs().size() != 1 || prev->output()->uses().size() != 1 || prev->output()->uses()[0].user != n) break;
    // One expression is a few nodes (a subscript's slices, a builtin's body). A loop TorchScript
    // unrolled repeats its statement's range node after node (`for q in self.ps: x = x * q`), a
    // chain as long as the loop: taken whole, from each of its nodes, tracing was quadratic.
    // A second operator of the same kind in a row is the loop's next step (only a subscript
    // repeats one: a slice per dimension).
    if (group.size() >= kMaxGroup || (n->kind() == prev->kind() && !isIndexingOp(n))) break;
    group.push_back(n);
  }
  return group;
}


std::optional<CallForm> subscriptForm(const std::vector<jit::Node*>& group, const py::Expr& expr,
                                                    Frame& frame) {
  if (expr.kind != py::Expr::Kind::Subscript) return std::nullopt;
  for (const jit::Node* n : group)
    if (!isIndexingOp(n)) return std::nullopt;
  const py::Expr& index = *expr.items[1];
  std::vector<const py::Expr*> items;
  if (index.kind == py::Expr::Kind::Tuple) {
    for (const auto& item : index.items) items.push_back(item.get());
  } else {
    items.push_back(&index);
  }
  const auto argOf = [&](const jit::Value* v) { return frame.get(v).arg; };
  std::vector<Argument> parts;
  size_t next = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const py::Expr* item = items[i];
    if (item->kind == py::Expr::Kind::Ellipsis) {
      parts.emplace_back(ArgumentEllipsis{});
      continue;
    }
    if (next >= group.size()) return std::nullopt;
    const jit::Node* op = group[next];
    if (item->kind == py::Expr::Kind::Slice) {
      if (op->kind() != c10::aten::slice) return std::nullopt;
      ArgumentSlice slice;
      // aten::slice.Tensor(self, dim, start, end, step); a list's aten::slice.t(l, start, end, step).
      const size_t first = op->input(0)->type()->kind() == c10::TypeKind::ListType ? 1 : 2;
      for (size_t part = 0; part < 3; ++part)
        slice.items.push_back(item->items[part] ? argOf(op->input(first + part)) : Argument());
      parts.emplace_back(std::move(slice));
      ++next;
    } else if (item->kind == py::Expr::Kind::Name && item->text == "None") {
      if (op->kind() != c10::aten::unsqueeze) return std::nullopt;
      parts.emplace_back();
      ++next;
    } else if (op->kind() == c10::aten::select) {
      parts.push_back(argOf(op->input(2)));
      ++next;
    } else if (op->kind() == c10::aten::index && next + 1 == group.size()) {
      // Tensor indices: the list's non-None entries, in order, are this item and every one after
      // it (`self.t[a, b]` is one aten::index of [a, b]; FX records `t[(a, b)]`).
      const SymValue& list = frame.get(op->input(1));
      const auto* entries = list.arg.items();
      if (!entries) return std::nullopt;
      std::vector<Argument> tensors;
      for (const Argument& a : *entries)
        if (!a.isNone()) tensors.push_back(a);
      if (tensors.empty() || tensors.size() != items.size() - i) return std::nullopt;
      for (size_t k = i; k < items.size(); ++k)
        if (items[k]->kind == py::Expr::Kind::Slice || items[k]->kind == py::Expr::Kind::Ellipsis ||
            (items[k]->kind == py::Expr::Kind::Name && items[k]->text == "None"))
          return std::nullopt;
      parts.insert(parts.end(), tensors.begin(), tensors.end());
      ++next;
      break;
    } else {
      return std::nullopt;
    }
  }
  if (next != group.size()) return std::nullopt;
  CallForm form;
  form.target = fx_target::kGetItem.qualifiedName;
  form.args = {frame.get(group.front()->input(0)).arg,
               index.kind == py::Expr::Kind::Tuple ? Argument(ArgumentTuple{parts}) : parts.front()};
  return form;
}

std::optional<CallForm> operatorGroupForm(const std::vector<jit::Node*>& group, const py::Expr& expr,
                                                        Frame& frame) {
  const bool unary = expr.kind == py::Expr::Kind::UnaryOp;
  if (!unary && expr.kind != py::Expr::Kind::BinOp && expr.kind != py::Expr::Kind::Compare) return std::nullopt;
  const std::string name = operatorName(expr.text, unary);
  if (name.empty() || name == "not_") return std::nullopt;
  // The group's inputs that are graph values, in order of use.
  std::vector<Argument> values;
  for (const jit::Node* n : group)
    for (const jit::Value* in : n->inputs()) {
      if (std::find(group.begin(), group.end(), in->node()) != group.end()) continue;
      const SymValue& s = frame.get(in);
      if (s.arg.isNode()) values.push_back(s.arg);
    }
  CallForm form;
  form.target = fx_target::operatorTarget(name);
  size_t used = 0;
  for (const auto& operand : expr.items) {
    if (auto literal = literalArgument(*operand)) {
      form.args.push_back(*literal);
    } else if (used < values.size()) {
      form.args.push_back(values[used++]);
    } else {
      return std::nullopt;
    }
  }
  if (used != values.size()) return std::nullopt;
  return form;
}

std::optional<CallForm> builtinOperatorForm(const std::vector<jit::Node*>& group,
                                                          const std::string& header, Frame& frame) {
  // `1 - x` is TorchScript's builtin `def sub(a : int, b : Tensor) -> Tensor: return torch.neg(b) + a`
  // inlined: FX records the Python operator on the operands in the builtin's parameter order.
  std::string name;
  const auto params = builtinParameters(header, name);
  if (params.size() == 1 && params[0].second && group.size() == 1 && group[0]->inputs().size() == 1) {
    // TorchScript compiles the tensor properties (`x.shape`, `x.ndim`, `x.T`, `x.mH`) to builtins
    // `def shape(a : Tensor)` inlined: FX records the attribute read, builtins.getattr(x, 'shape').
    CallForm form;
    form.target = fx_target::kGetAttr.qualifiedName;
    form.args = {frame.get(group[0]->input(0)).arg, Argument(name)};
    return form;
  }
  if (name == "div") name = "truediv";  // the builtin for `/` is named after aten::div
  if (params.size() != 2 || !findOperatorLowering(name, "TT")) return std::nullopt;
  // The operands: the group's inputs from outside it, tensors and scalars apart (alpha is no operand).
  std::vector<Argument> tensors, scalars;
  for (const jit::Node* n : group) {
    const c10::FunctionSchema* schema = n->maybeSchema();
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const jit::Value* in = n->input(i);
      if (std::find(group.begin(), group.end(), in->node()) != group.end()) continue;
      if (schema && i < schema->arguments().size() && schema->arguments()[i].name() == "alpha") continue;
      (in->type()->kind() == c10::TypeKind::TensorType ? tensors : scalars).push_back(frame.get(in).arg);
    }
  }
  CallForm form;
  form.target = fx_target::operatorTarget(name);
  size_t t = 0, sc = 0;
  for (const auto& [pname, isTensor] : params) {
    if (isTensor ? t >= tensors.size() : sc >= scalars.size()) return std::nullopt;
    form.args.push_back(isTensor ? tensors[t++] : scalars[sc++]);
  }
  if (t != tensors.size() || sc != scalars.size()) return std::nullopt;
  return form;
}

size_t convertExpressionGroup(TraceContext& cx, jit::Node* first, Frame& frame) {
  if (first->outputs().size() != 1 || first->kind() == c10::prim::Constant) return 0;
  auto loc = cx.source.userSource(first);
  if (!loc) return 0;
  std::vector<jit::Node*> group = expressionGroup(cx, first, *loc);
  const bool indexing = isIndexingOp(first);
  if (group.size() == 1 && !indexing && loc->builtinDef.empty()) return 0;
  for (const jit::Node* n : group)
    if (!n->maybeOperator()) return 0;
  if (foldable(first, frame)) return 0;  // computed while tracing, node by node
  // `outs[::-1]` on a list built in forward: Python slices the list while FX traces (see
  // convertListOperation); there is no subscript to record.
  if (!first->inputs().empty() && first->input(0)->type()->kind() == c10::TypeKind::ListType) {
    const SymValue& list = frame.get(first->input(0));
    if (list.input.kind == ValueParts::Kind::List && !list.constant) return 0;
  }
  // Every input from outside is put into the graph before `mark`: a rollback below then leaves no
  // value of the frame pointing at an erased node.
  for (jit::Node* n = first; n != group.back()->next(); n = n->next()) materializeInputs(cx, n, frame);
  const GraphBuilder::Mark mark = cx.builder.mark();
  // Constants, list constructions and sub-expressions between the group's nodes define values the
  // group reads; they are converted as convertBlock would, before the group's one node.
  for (jit::Node* n = first; n != group.back();) {
    if (std::find(group.begin(), group.end(), n) != group.end()) {
      n = n->next();
      continue;
    }
    materializeInputs(cx, n, frame);
    size_t consumed = convertExpressionGroup(cx, n, frame);
    if (consumed == 0) {
      convertNode(cx, n, frame);
      consumed = 1;
    }
    for (size_t k = 0; k < consumed; ++k) n = n->next();
  }
  NodeMeta meta;
  py::ExprPtr expr = describeSource(cx, first, frame, meta);
  std::optional<CallForm> form;
  if (!loc->builtinDef.empty()) {
    form = builtinOperatorForm(group, loc->builtinDef, frame);
  } else if (expr) {
    form = subscriptForm(group, *expr, frame);
    if (!form && group.size() > 1) form = operatorGroupForm(group, *expr, frame);
  }
  if (!form) {
    // Not one FX node after all: the nodes are converted one by one, the sub-expressions again.
    cx.builder.rollBackTo(mark);
    return 0;
  }
  applyConcreteLeftOperand(cx, *form);
  size_t consumed = 1;
  for (jit::Node* n = first; n != group.back(); n = n->next()) ++consumed;
  if (deferAttributeRead(cx, *form, group.back()->output(), meta, frame)) return consumed;
  Node* fx = cx.builder.graph().createNode(form->op, form->target, std::move(form->args), std::move(form->kwargs));
  fx->meta() = meta;
  // The operators the one FX node stands for, for the inspector.
  for (const jit::Node* n : group)
    fx->meta().schema += (fx->meta().schema.empty() ? "" : "; ") + std::string(n->kind().toQualString());
  for (jit::Node* n : group) fx->meta().random = fx->meta().random || n->isNondeterministic();
  frame.env[group.back()->output()] = SymValue::ofNode(fx);
  return consumed;
}

}  // namespace tdfx::trace
