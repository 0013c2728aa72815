#include "module_tracer.h"
#include "tdfx/util/python_repr.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <cctype>
#include <limits>
#include <sstream>
#include <unordered_map>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include "call_form.h"
#include "fx_tables.h"
#include "tdfx/error.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx::trace {

namespace jit = torch::jit;

SymValue SymValue::ofConstant(const c10::IValue& v) {
  SymValue s;
  s.constant = v;
  s.input = ValueParts::ofConstant(v);
  if (auto a = argumentFromIValue(v)) s.arg = std::move(*a);
  else s.arg = Argument("<" + v.tagKind() + ">");
  return s;
}

SymValue SymValue::ofPendingTensor(const at::Tensor& t, std::string target) {
  SymValue s;
  s.constant = t;
  s.input = ValueParts::ofConstant(t);
  s.arg = Argument("<tensor>");
  s.pendingTensor = true;
  s.tensorTarget = std::move(target);
  return s;
}

SymValue SymValue::ofPendingField(Node* container, int64_t index, std::string field) {
  SymValue s;
  s.arg = Argument("<field " + field + ">");
  s.pendingField = std::make_shared<PendingField>(PendingField{container, std::move(field), index, nullptr, 0, nullptr, false});
  s.input.kind = ValueParts::Kind::PendingField;
  s.input.field = s.pendingField;
  return s;
}

SymValue SymValue::ofNode(Node* n) {
  SymValue s;
  s.arg = Argument(n);
  s.input = ValueParts::ofNode(n);
  return s;
}

SymValue SymValue::ofModule(ModuleRef m) {
  SymValue s;
  s.kind = Kind::Module;
  s.module = std::make_shared<const ModuleRef>(std::move(m));
  return s;
}

std::string pythonQualifiedName(std::string name) {
  const std::string mangle = "___torch_mangle_";
  for (size_t pos; (pos = name.find(mangle)) != std::string::npos;) {
    size_t end = pos + mangle.size();
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    if (end < name.size() && name[end] == '.') ++end;
    name.erase(pos, end - pos);
  }
  const std::string prefix = "__torch__.";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return name;
}

std::string pythonTypeName(const c10::ClassTypePtr& type) {
  if (!type || !type->name()) return "";
  // Called for every node: cached by qualified name (not by pointer: types of unloaded models are
  // freed and their addresses reused).
  static thread_local std::unordered_map<std::string, std::string> cache;
  const std::string& qualified = type->name()->qualifiedName();
  auto it = cache.find(qualified);
  if (it != cache.end()) return it->second;
  return cache.emplace(qualified, pythonQualifiedName(qualified)).first->second;
}

bool isForwardMethod(const std::string& name) {
  // TorchScript names the overloads of an @_overload_method forward `forward__0`, `forward__1`.
  if (name.rfind("forward", 0) != 0) return false;
  size_t i = 7;
  if (name.compare(i, 2, "__") == 0) i += 2;
  if (i == name.size()) return i == 7;
  for (; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

bool isLeafModule(const jit::Module& module) {
  // torch.fx's Tracer.is_leaf_module: torch.nn and torch.ao.nn (quantized) modules.
  const std::string name = pythonTypeName(module.type());
  if (name.rfind("torch.nn.", 0) != 0 && name.rfind("torch.ao.nn.", 0) != 0) return false;
  static const char* containers[] = {"torch.nn.modules.container.Sequential", "torch.nn.modules.container.ModuleList",
                                     "torch.nn.modules.container.ModuleDict"};
  for (const char* c : containers)
    if (name == c) return false;
  return true;
}

namespace {
std::string joinPath(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}
constexpr int kMaxInlineDepth = 200;

// The user's source range behind a range of the archive's code. The debug info is unpickled
// lazily on first use; a damaged one means no source text, not a failed trace.
c10::optional<jit::SourceRange> originalRange(const jit::SourceRange& range) {
  try {
    return range.findSourceRangeThatGenerated();
  } catch (const std::exception&) {
    return c10::nullopt;
  }
}

// The Python variable a TorchScript value was named after (`x.1` -> `x`, `z0.1` -> `z`: saved
// code renames reassigned variables with a digit); empty for temporaries.
std::string variableName(const jit::Value* v) {
  if (!v->hasDebugName()) return "";
  std::string name = v->debugNameBase();
  while (!name.empty() && std::isdigit(static_cast<unsigned char>(name.back()))) name.pop_back();
  return name;
}

}  // namespace

bool mayHoldTensor(const c10::TypePtr& t) {
  if (t->kind() == c10::TypeKind::TensorType || t->kind() == c10::TypeKind::AnyType) return true;
  for (const auto& contained : t->containedTypes())
    if (mayHoldTensor(contained)) return true;
  return false;
}

void ModuleTracer::fail(jit::Node* node, const Frame& frame, const std::string& what) const {
  throw TraceError(failureMessage(node, frame, what));
}

void ModuleTracer::failDataDependent(jit::Node* node, const Frame& frame, const std::string& what) const {
  throw DataDependentError(failureMessage(node, frame, what));
}

std::optional<SourceLocation> ModuleTracer::userSource(jit::Node* node) const {
  if (sources_) {
    if (const SourceLocation* loc = sources_->find(node)) return *loc;
    return std::nullopt;
  }
  const auto& range = node->sourceRange();
  if (!range.source()) return std::nullopt;
  auto original = originalRange(range);
  if (!original || !original->source()) return std::nullopt;
  return sourceLocationOf(*original);
}

AttributeValues ModuleTracer::attributeValues(const Frame& frame) const {
  const jit::Module module = frame.scope.module;
  return [module](const py::Expr& e) -> std::optional<Argument> {
    if (e.kind != py::Expr::Kind::Attribute || e.items[0]->kind != py::Expr::Kind::Name || e.items[0]->text != "self")
      return std::nullopt;
    const c10::ClassTypePtr& type = module.type();
    if (auto slot = type->findConstantSlot(e.text)) return argumentFromIValue(type->getConstant(*slot));
    if (auto slot = type->findAttributeSlot(e.text)) {
      const c10::IValue value = module._ivalue()->getSlot(*slot);
      if (!value.isTensor() && !value.isModule()) return argumentFromIValue(value);
    }
    return std::nullopt;
  };
}

std::string ModuleTracer::functionSource(const jit::Function& fn) const {
  const std::string qualified = fn.qualname().qualifiedName();
  if (sources_) {
    const std::string* text = sources_->functionSource(qualified);
    return text ? *text : std::string();
  }
  if (!fn.isGraphFunction()) return "";
  return functionSourceOf(jit::toGraphFunction(const_cast<jit::Function&>(fn)).graph()->block(), fn.name());
}

std::string ModuleTracer::failureMessage(jit::Node* node, const Frame& frame, const std::string& what) const {
  std::string where = frame.scope.path.empty() ? "the traced module" : "module '" + frame.scope.path + "'";
  if (auto loc = userSource(node); loc && !loc->file.empty()) {
    where += " at " + loc->file + ":" + std::to_string(loc->line);
  } else if (auto flc = node->sourceRange().file_line_col()) {
    where += " at " + std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc));
  }
  return "cannot trace " + std::string(node->kind().toQualString()) + " in " + where + ": " + what;
}

std::vector<SymValue> ModuleTracer::traceForward(const ModuleRef& module, std::vector<SymValue> inputs) {
  auto method = module.module.find_method("forward");
  if (!method) throw TraceError("module '" + module.path + "' has no forward method");
  SymValue self = SymValue::ofModule(module);
  inputs.insert(inputs.begin(), self);
  jit::Graph& graph = *jit::toGraphFunction(method->function()).graph();
  // The nodes that read the forward's parameters (TensorDict reads, placeholders) stand for them.
  for (size_t i = 1; i < inputs.size() && i < graph.inputs().size(); ++i)
    if (inputs[i].arg.isNode() && !inputs[i].arg.node()->meta().eagerValue)
      inputs[i].arg.node()->meta().eagerValue = EagerValueRef{{}, graph.inputs()[i]};
  return inlineGraph(graph, std::move(inputs), module, 0, &method->function());
}

std::vector<SymValue> ModuleTracer::inlineGraph(jit::Graph& g, std::vector<SymValue> inputs, const ModuleRef& scope,
                                                int depth, const jit::Function* fn) {
  if (depth > kMaxInlineDepth) throw TraceError("calls nested deeper than 200 levels (recursion?) in '" + scope.path + "'");
  if (!scope.path.empty()) moduleTypes_.emplace(scope.path, pythonTypeName(scope.module.type()));
  Frame frame{scope, depth, {}, {}, {}, {}};
  frame.env.reserve(64);
  if (inputs.size() != g.inputs().size())
    throw TraceError("internal error: " + std::to_string(inputs.size()) + " inputs for a graph of " +
                     std::to_string(g.inputs().size()));
  for (size_t i = 0; i < inputs.size(); ++i) frame.env.emplace(g.inputs()[i], inputs[i]);
  if (fn) {
    frame.deadReads = deadReads(*fn, g);
    noteScriptingBranch(*fn);
  }
  struct ActiveFrame {
    std::vector<Frame*>& frames;
    ~ActiveFrame() { frames.pop_back(); }
  } active{frames_};
  frames_.push_back(&frame);
  convertBlock(g.block(), frame);
  recordDeadReadsBefore(nullptr, frame);
  if (depth == 0) materializeInputs(g.return_node(), frame);  // a returned buffer is a get_attr
  std::vector<SymValue> outputs;
  for (const jit::Value* v : g.outputs()) outputs.push_back(frame.get(v));
  return outputs;
}

void ModuleTracer::convertBlock(jit::Block* block, Frame& frame) {
  const bool body = block->owningNode() == nullptr;  // the function's own level
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    if (body) recordDeadReadsBefore(*it, frame);
    materializeInputs(*it, frame);
    const size_t mark = graph_.size();
    const auto first = it;
    if (const size_t consumed = convertExpressionGroup(*it, frame)) {
      std::advance(it, static_cast<long>(consumed));
    } else {
      convertNode(*it, frame);
      ++it;
    }
    recordEagerValues(first, it, mark, frame);
    restorePendingTensors(frame);
  }
}

void ModuleTracer::recordEagerValues(jit::graph_node_list_iterator first, jit::graph_node_list_iterator last,
                                     size_t mark, const Frame& frame) {
  // A value of an inlined call is recorded again here, in the caller's terms: the outermost
  // TorchScript value that holds it is the one verify can read without inlining.
  for (auto it = first; it != last; ++it) {
    for (const jit::Value* v : it->outputs()) {
      const auto found = frame.env.find(v);
      if (found == frame.env.end() || found->second.kind != SymValue::Kind::Value || !found->second.arg.isNode()) continue;
      Node* node = found->second.arg.node();
      if (node->index() >= mark && node->index() < graph_.size() && graph_.nodes()[node->index()].get() == node)
        node->meta().eagerValue = EagerValueRef{path_, v};
    }
  }
}

py::ExprPtr ModuleTracer::describeSource(jit::Node* node, Frame& frame, NodeMeta& meta) const {
  meta.modulePath = frame.scope.path;
  meta.moduleType = pythonTypeName(frame.scope.module.type());
  if (auto loc = userSource(node)) {
    // TorchScript's range may cover only a call's callee: the expression is read from the source.
    py::ExprPtr expr = py::expressionForRange(py::parseExpressionPrefix(loc->window), loc->rangeLength);
    meta.sourceText = loc->window.substr(0, expr ? expr->end : std::min(loc->rangeLength, loc->window.size()));
    meta.sourceFile = loc->file;
    meta.sourceLine = loc->line;
    return expr;
  }
  // Without debug info the range points into the archive's re-printed code (`torch.mul(x, mask)`
  // for `x * mask`): a location worth showing, but not how the user wrote the call.
  if (auto flc = node->sourceRange().file_line_col()) {
    meta.sourceFile = std::get<0>(*flc);
    meta.sourceLine = static_cast<int>(std::get<1>(*flc));
  }
  return nullptr;
}

Node* ModuleTracer::createGetItem(Node* container, int64_t index, const std::string& field) {
  Node* item = nullptr;
  if (field.empty()) {
    item = graph_.createNode(OpKind::CallFunction, fx_target::kGetItem, {Argument(container), Argument(index)});
  } else {
    // A named tuple's field read by name (`x.max(1).values`): FX records the attribute read,
    // builtins.getattr(max_1, 'values'), where the code reads it.
    item = graph_.createNode(OpKind::CallFunction, fx_target::kGetAttr, {Argument(container), Argument(field)});
  }
  item->meta().modulePath = container->meta().modulePath;
  item->meta().moduleType = container->meta().moduleType;
  item->meta().sourceFile = container->meta().sourceFile;
  item->meta().sourceLine = container->meta().sourceLine;
  return item;
}

std::pair<py::ExprPtr, py::ExprPtr> ModuleTracer::writtenExpression(jit::Node* node) const {
  auto loc = userSource(node);
  if (!loc || !loc->builtinDef.empty()) return {};
  py::ExprPtr root = py::parseExpressionPrefix(loc->window);
  py::ExprPtr expr = py::expressionForRange(root, loc->rangeLength);
  return {std::move(root), std::move(expr)};
}

void ModuleTracer::setOutputs(jit::Node* node, Node* fxNode, size_t numOutputs, Frame& frame) {
  if (numOutputs == 1) {
    frame.env[node->output()] = SymValue::ofNode(fxNode);
    return;
  }
  // A multi-output operator yields one tuple in Python, and FX records that one value. Only where
  // the code reads an item (`a, b = torch.max(x, 1)`, `x.topk(2)[0]`) does an operator.getitem
  // appear; a tuple that repacks every output in order is the call's value itself.
  const jit::Node* repack = nullptr;
  for (size_t i = 0; i < numOutputs; ++i) {
    const auto& uses = node->outputs()[i]->uses();
    const bool inRepack = uses.size() == 1 && uses[0].user->kind() == c10::prim::TupleConstruct &&
                          uses[0].offset == i && uses[0].user->inputs().size() == numOutputs &&
                          (repack == nullptr || repack == uses[0].user);
    repack = inRepack ? uses[0].user : nullptr;
    if (!repack) break;
  }
  if (repack) {
    frame.env[repack->output()] = SymValue::ofNode(fxNode);
    repacked_.insert(repack);
    return;
  }
  // `x.max(1).values`: the field the code reads right after the call, when it is one of the
  // operator's named returns.
  const auto [root, expr] = writtenExpression(node);
  const std::string field = expr ? py::attributeReadOf(root, expr.get()) : "";
  // `top = x.topk(2)`: the named tuple is kept in a variable, and its fields are read by name
  // later (`top.values`, each read FX's Attribute proxy). TorchScript names the outputs of an
  // unpacking (`a, b = x.max(1)`, read by getitem now); nothing follows the call in its expression
  // (`x.topk(2)[0]` is a getitem now).
  const bool stored = expr && root.get() == expr.get() &&
                      std::none_of(node->outputs().begin(), node->outputs().end(),
                                   [](const jit::Value* v) { return v->hasDebugName(); });
  const c10::FunctionSchema* schema = node->maybeSchema();
  for (size_t i = 0; i < numOutputs; ++i) {
    if (node->outputs()[i]->uses().empty()) continue;
    const std::string returnName = schema && i < schema->returns().size() ? schema->returns()[i].name() : "";
    if (!field.empty() && returnName == field) {
      frame.env[node->outputs()[i]] = SymValue::ofPendingField(fxNode, static_cast<int64_t>(i), field);
      continue;
    }
    if (stored && !returnName.empty()) {
      SymValue later = SymValue::ofPendingField(fxNode, static_cast<int64_t>(i), returnName);
      later.pendingField->perRead = true;
      frame.env[node->outputs()[i]] = std::move(later);
      continue;
    }
    frame.env[node->outputs()[i]] = SymValue::ofNode(createGetItem(fxNode, static_cast<int64_t>(i)));
  }
}

namespace {
// An object of torch.autograd's grad-mode context managers (no_grad, enable_grad, set_grad_enabled,
// inference_mode) created in forward.
bool isGradModeObject(const jit::Value* v) {
  if (!v) return false;
  const auto cls = v->type()->cast<c10::ClassType>();
  return cls && pythonTypeName(cls).rfind("torch.autograd.grad_mode.", 0) == 0;
}
}  // namespace

void ModuleTracer::convertNode(jit::Node* node, Frame& frame) {
  const auto kind = node->kind();
  if (kind == c10::prim::Constant) {
    if (node->output()->type()->kind() == c10::TypeKind::FunctionType) {
      frame.env[node->output()] = SymValue::ofConstant(c10::IValue());  // read only by prim::CallFunction
      return;
    }
    auto value = jit::toIValue(node->output());
    if (!value) fail(node, frame, "constant of unsupported type " + node->output()->type()->repr_str());
    if (value->isTensor()) {
      frame.env[node->output()] = SymValue::ofPendingTensor(value->toTensor(), "");
    } else {
      frame.env[node->output()] = SymValue::ofConstant(*value);
    }
    return;
  }
  if (isGradModeObject(node->kind() == c10::prim::CreateObject ? node->output() : nullptr) ||
      ((kind == c10::prim::Enter || kind == c10::prim::Exit || kind == c10::prim::CallMethod) &&
       isGradModeObject(node->input(0)))) {
    // `with torch.no_grad():` is Python that runs while FX traces: no node. The body's operations
    // are recorded as they are (and run with autograd on, which changes no value).
    for (const jit::Value* out : node->outputs()) frame.env[out] = SymValue::ofConstant(c10::IValue());
    return;
  }
  if (kind == c10::prim::GetAttr) return convertGetAttr(node, frame);
  if (kind == c10::prim::CallMethod) return convertCallMethod(node, frame);
  if (kind == c10::prim::CallFunction) return convertCallFunction(node, frame);
  if (kind == c10::prim::If) return convertIf(node, frame);
  if (kind == c10::prim::Loop) return convertLoop(node, frame);
  if (kind == c10::prim::RaiseException)
    fail(node, frame, "this code path always raises an exception for the module's configuration");
  if (kind == c10::prim::unchecked_cast || kind == c10::aten::_unwrap_optional) {
    frame.env[node->output()] = frame.get(node->input(0));
    return;
  }
  if (kind == c10::prim::Uninitialized) {
    frame.env[node->output()] = SymValue::ofConstant(c10::IValue());
    return;
  }
  if (kind == c10::prim::isinstance) {
    // torch.jit.isinstance on a concrete value (a constant, an attribute) is Python's isinstance,
    // evaluated while FX traces; only the branch taken is recorded.
    const SymValue& v = frame.get(node->input(0));
    if (!v.constant || v.constant->isTensor()) fail(node, frame, "torch.jit.isinstance on a value computed from tensors");
    const c10::TypePtr type = v.constant->type();
    bool matches = false;
    for (const c10::TypePtr& candidate : node->tys(c10::attr::types)) matches = matches || type->isSubtypeOf(*candidate);
    frame.env[node->output()] = SymValue::ofConstant(c10::IValue(matches));
    return;
  }
  if (kind == c10::prim::SetAttr) fail(node, frame, "modules that assign attributes in forward are not supported");
  if (kind == c10::prim::TupleUnpack || kind == c10::prim::ListUnpack) return convertUnpack(node, frame);
  if (repacked_.count(node)) return;  // the value of a multi-output call, set by setOutputs
  if (kind == c10::aten::warn) {
    // warnings.warn runs while Python traces; torch.fx records nothing for it.
    bool constantInputs = true;
    for (const jit::Value* in : node->inputs()) constantInputs = constantInputs && frame.get(in).constant.has_value();
    if (constantInputs) return;
  }
  if (kind == c10::prim::ListConstruct || kind == c10::prim::TupleConstruct) return convertConstruct(node, frame);
  if (kind == c10::prim::DictConstruct) return convertDictConstruct(node, frame);
  static const c10::Symbol listMutations[] = {
      c10::aten::append, c10::Symbol::fromQualString("aten::extend"), c10::aten::insert, c10::aten::pop,
      c10::aten::_set_item, c10::aten::clear, c10::Symbol::fromQualString("aten::remove"), c10::Symbol::fromQualString("aten::reverse")};
  if ((kind == c10::aten::add || kind == c10::aten::slice) && convertListOperation(node, frame)) return;
  if ((kind == c10::aten::dict || kind == c10::aten::_set_item) && convertDictOperation(node, frame)) return;
  if (std::find(std::begin(listMutations), std::end(listMutations), kind) != std::end(listMutations)) {
    if (convertListMutation(node, frame)) return;
  }
  if (kind == c10::prim::TupleIndex || kind == c10::aten::__getitem__ || kind == c10::aten::len) {
    if (convertContainerRead(node, frame)) return;
  }
  if (kind == c10::aten::__is__ || kind == c10::aten::__isnot__) {
    // `x is None` on a value whose static type cannot be None folds to a constant.
    for (int side = 0; side < 2; ++side) {
      const SymValue& a = frame.get(node->input(side));
      const SymValue& b = frame.get(node->input(1 - side));
      const auto& t = node->input(side)->type();
      // A node is a Proxy in FX, and a Proxy is never None, whatever its static type: FX takes the
      // `if mask is not None:` branch for an Optional forward parameter.
      // A list or tuple built in the code (`children` passed on as [x1]) is a Python object, never None.
      const bool container = a.input.kind == ValueParts::Kind::List || a.input.kind == ValueParts::Kind::Tuple;
      if (b.constant && b.constant->isNone() && !a.constant &&
          (a.arg.isNode() || container || (t->kind() != c10::TypeKind::OptionalType && t->kind() != c10::TypeKind::NoneType))) {
        frame.env[node->output()] = SymValue::ofConstant(c10::IValue(kind == c10::aten::__isnot__));
        return;
      }
    }
  }
  convertOperator(node, frame);
}

void ModuleTracer::convertGetAttr(jit::Node* node, Frame& frame) {
  const SymValue& obj = frame.get(node->input(0));
  if (obj.kind != SymValue::Kind::Module) fail(node, frame, "attribute access on a non-module object is not supported");
  const std::string& name = node->s(c10::attr::name);
  const jit::Module& m = obj.module->module;
  const size_t slot = m.type()->findAttributeSlot(name).value_or(std::numeric_limits<size_t>::max());
  if (slot == std::numeric_limits<size_t>::max())
    fail(node, frame, "module '" + obj.module->path + "' has no attribute '" + name + "'");
  const c10::IValue value = m._ivalue()->getSlot(slot);
  const std::string path = joinPath(obj.module->path, name);
  if (value.isModule()) {
    frame.env[node->output()] = SymValue::ofModule(ModuleRef{value.toModule(), path});
    return;
  }
  if (value.isTensor()) {
    // FX proxies parameters where they are read; buffers and other tensors are plain tensors in
    // Python, computed with while tracing and put into the graph where a recorded operation uses them.
    if (m.type()->is_parameter(slot)) {
      frame.env[node->output()] = SymValue::ofNode(tensorAttribute(path, value.toTensor(), frame, node, true));
    } else {
      frame.env[node->output()] = SymValue::ofPendingTensor(value.toTensor(), path);
    }
    return;
  }
  // Plain attributes (ints, bools, floats, strings, `training`) are constants of the module.
  frame.env[node->output()] = SymValue::ofConstant(value);
}

Node* ModuleTracer::tensorAttribute(const std::string& attribute, const at::Tensor& t, Frame& frame, jit::Node* source,
                                    bool shared) {
  if (shared) {
    if (auto it = attrNodes_.find(attribute); it != attrNodes_.end()) return it->second;
  }
  const std::string target = attribute.empty() ? "_tensor_constant" + std::to_string(tensorConstants_++) : attribute;
  Node* fx = graph_.createNode(OpKind::GetAttr, target);
  if (attribute.empty()) tensorConstantValues_[target] = t;
  describeSource(source, frame, fx->meta());
  if (shared) attrNodes_.emplace(attribute, fx);
  else concreteTensorNodes_.insert(fx);
  return fx;
}

void ModuleTracer::restorePendingTensors(Frame& frame) {
  for (auto& m : frame.materialized) {
    const bool alive = m.index < graph_.size() && graph_.nodes()[m.index].get() == m.node;
    auto it = frame.env.find(m.value);
    if (it == frame.env.end()) continue;
    // Still unused (made ahead of the operation that reads it): the next use takes this node.
    if (alive && m.node->users().empty() && it->second.arg.isNode() && it->second.arg.node() == m.node) continue;
    if (!alive || (it->second.arg.isNode() && it->second.arg.node() == m.node)) it->second = std::move(m.pending);
  }
  frame.materialized.clear();
}

std::string ModuleTracer::concreteLeftMethod(const std::string& operatorTarget) {
  // What torch.Tensor's binary slots hand to __torch_function__ (checked against torch.fx 1.13:
  // `c / x` records `c.div(x)`, `c // x` `c.__floordiv__(x)`, `c % x` `c.remainder(x)`).
  static const std::map<std::string, std::string> methods = {
      {"add", "add"},   {"sub", "sub"},       {"mul", "mul"},        {"truediv", "div"},    {"floordiv", "__floordiv__"},
      {"pow", "pow"},   {"eq", "eq"},         {"ne", "ne"},          {"lt", "lt"},          {"le", "le"},
      {"gt", "gt"},     {"ge", "ge"},         {"matmul", "matmul"},  {"mod", "remainder"},  {"and_", "__and__"},
      {"or_", "__or__"}, {"xor", "__xor__"},  {"lshift", "__lshift__"}, {"rshift", "__rshift__"}};
  if (operatorTarget.rfind("operator.", 0) != 0) return "";
  auto it = methods.find(operatorTarget.substr(9));
  return it == methods.end() ? "" : it->second;
}

void ModuleTracer::applyConcreteLeftOperand(CallForm& form) const {
  if (form.op != OpKind::CallFunction || form.args.size() != 2 || !form.kwargs.empty()) return;
  const Argument& left = form.args[0];
  const Argument& right = form.args[1];
  if (!left.isNode() || !concreteTensorNodes_.count(left.node())) return;
  if (!right.isNode() || concreteTensorNodes_.count(right.node())) return;
  if (form.target == fx_target::kGetItem) {
    // `self.table[idx]`: Tensor.__getitem__ dispatches with the index as a tuple.
    form.op = OpKind::CallMethod;
    form.target = "__getitem__";
    form.args = {left, Argument(ArgumentTuple{{right}})};
    return;
  }
  const std::string method = concreteLeftMethod(form.target);
  if (method.empty()) return;
  form.op = OpKind::CallMethod;
  form.target = method;
}

bool ModuleTracer::foldable(jit::Node* node, const Frame& frame) const {
  if (node->kind() == c10::prim::Constant || node->kind().is_prim() || node->hasSideEffects() ||
      node->isNondeterministic() || !node->maybeOperator())
    return false;
  for (const jit::Value* in : node->inputs()) {
    auto it = frame.env.find(in);
    if (it == frame.env.end() || !it->second.constant) return false;
  }
  return true;
}

void ModuleTracer::materializeInputs(jit::Node* node, Frame& frame) {
  if (node->kind() == c10::prim::Constant || node->kind() == c10::prim::GetAttr || foldable(node, frame)) return;
  // A property read of a field not yet in the graph (`v.dtype` of `v = x.max(1).values`) is a
  // field of that field: both are made where the property is first used (convertOperator).
  if (node->kind().is_prim() && node->inputs().size() == 1 && isTensorProperty(node->kind().toUnqualString())) {
    auto it = frame.env.find(node->input(0));
    if (it != frame.env.end() && it->second.pendingField && !it->second.pendingField->node) return;
  }
  const bool containerOperation = isPythonContainerOperation(node, frame);
  for (const jit::Value* in : node->inputs()) {
    auto it = frame.env.find(in);
    if (it != frame.env.end() && containerOperation && it->second.pendingField) continue;
    if (it != frame.env.end() && !containerOperation && it->second.arg.items() &&
        (it->second.input.kind == ValueParts::Kind::List || it->second.input.kind == ValueParts::Kind::Tuple)) {
      if (materializeParts(it->second.input, it->second.arg)) shareListChange(it->second);
      continue;
    }
    if (it != frame.env.end() && it->second.pendingField && it->second.pendingField->perRead &&
        !it->second.pendingField->node) {
      const py::ExprPtr written = writtenExpression(node).second;
      if (written && py::operandReadsField(*written, it->second.pendingField->field)) {
        // This operation reads the field by name itself: a getattr node of its own; the value
        // stays pending for the next read (restorePendingTensors).
        auto read = std::make_shared<SymValue::PendingField>(*it->second.pendingField);
        Node* made = materializeField(read);
        if (!made->meta().eagerValue) made->meta().eagerValue = EagerValueRef{path_, in};
        frame.materialized.push_back({in, it->second, made, made->index()});
        it->second = SymValue::ofNode(made);
        continue;
      }
    }
    if (it != frame.env.end() && it->second.pendingField) {
      const std::shared_ptr<SymValue::PendingField> field = it->second.pendingField;
      materializeField(field);
      it->second = SymValue::ofNode(field->node);
      if (!field->node->meta().eagerValue) field->node->meta().eagerValue = EagerValueRef{path_, in};
      continue;
    }
    if (it == frame.env.end() || !it->second.pendingTensor) continue;
    const at::Tensor t = it->second.constant->toTensor();
    Node* attribute = tensorAttribute(it->second.tensorTarget, t, frame, node, false);
    SymValue pending = it->second;
    pending.tensorTarget = attribute->target();  // a computed constant keeps its `_tensor_constantN`
    frame.materialized.push_back({in, std::move(pending), attribute, attribute->index()});
    it->second = SymValue::ofNode(attribute);
    if (!attribute->meta().eagerValue) attribute->meta().eagerValue = EagerValueRef{path_, in};
  }
}

bool ModuleTracer::materializeParts(ValueParts& parts, Argument& arg) {
  std::vector<Argument>* items = nullptr;
  if (auto* list = std::get_if<ArgumentList>(&arg.value)) items = &list->items;
  if (auto* tuple = std::get_if<ArgumentTuple>(&arg.value)) items = &tuple->items;
  if (!items || items->size() != parts.items.size()) return false;
  bool made = false;
  for (size_t i = 0; i < parts.items.size(); ++i) {
    ValueParts& part = parts.items[i];
    if (part.kind == ValueParts::Kind::PendingField && part.field) {
      Node* n = materializeField(part.field);
      part = ValueParts::ofNode(n);
      (*items)[i] = Argument(n);
      made = true;
    } else if (part.kind == ValueParts::Kind::List || part.kind == ValueParts::Kind::Tuple) {
      made = materializeParts(part, (*items)[i]) || made;
    }
  }
  return made;
}

Node* ModuleTracer::materializeField(const std::shared_ptr<SymValue::PendingField>& field) {
  if (!field->node) {
    Node* container = field->containerField ? materializeField(field->containerField) : field->container;
    field->node = createGetItem(container, field->index, field->field);
    field->nodeIndex = field->node->index();
    madeFields_.push_back(field);
  }
  return field->node;
}

void ModuleTracer::convertCallMethod(jit::Node* node, Frame& frame) {
  const SymValue& self = frame.get(node->input(0));
  if (self.kind != SymValue::Kind::Module) fail(node, frame, "method call on a non-module object is not supported");
  const std::string methodName = node->s(c10::attr::name);
  const ModuleRef& target = *self.module;
  std::vector<SymValue> args;
  for (size_t i = 1; i < node->inputs().size(); ++i) {
    args.push_back(frame.get(node->input(i)));
    if (args.back().kind == SymValue::Kind::Module) fail(node, frame, "passing modules as arguments is not supported");
  }
  // TorchScript compiles `self.lstm(x)` on a dynamically quantized RNN, whose Python forward is
  // @torch.jit.ignore'd and dispatches on the input's type, to its exported `forward_tensor`.
  const bool leafForward = isForwardMethod(methodName) || methodName == "forward_tensor";
  if (leafForward && isLeafModule(target.module) && !target.path.empty() && target.path != frame.scope.path) {
    setOutputs(node, createLeafCall(node, frame, target, methodName, args), 1, frame);
    return;
  }
  auto method = target.module.find_method(methodName);
  if (!method) fail(node, frame, "module '" + target.path + "' has no method '" + methodName + "'");
  if (Node* fx = scriptingElseCall(node, frame, target, method->function(), args)) {
    setOutputs(node, fx, node->outputs().size(), frame);
    return;
  }
  std::vector<SymValue> callArgs = args;
  callArgs.insert(callArgs.begin(), self);
  // Undo state for the fallback below, lists included: the call may change a list its caller
  // holds (shareListChange), with nodes the rollback erases.
  const size_t mark = graph_.size();
  const int tensorConstants = tensorConstants_;
  // Only a list passed in can be changed by the call: the snapshot is taken only then (this runs
  // for every inlined call).
  std::vector<std::tuple<Frame*, const jit::Value*, SymValue>> lists;
  const std::function<bool(const ValueParts&)> holdsList = [&](const ValueParts& p) {
    return (p.kind == ValueParts::Kind::List && p.listId != 0) || std::any_of(p.items.begin(), p.items.end(), holdsList);
  };
  const bool passesList =
      std::any_of(args.begin(), args.end(), [&](const SymValue& a) { return holdsList(a.input); });
  for (Frame* f : passesList ? frames_ : std::vector<Frame*>())
    for (const auto& [value, held] : f->env)
      if (held.input.kind == ValueParts::Kind::List && held.input.listId != 0) lists.emplace_back(f, value, held);
  try {
    const PathStep step(path_, node);
    auto outputs =
        inlineGraph(*jit::toGraphFunction(method->function()).graph(), std::move(callArgs), target, frame.depth + 1,
                    &method->function());
    for (size_t i = 0; i < outputs.size(); ++i) frame.env[node->outputs()[i]] = outputs[i];
  } catch (const DataDependentError& e) {
    // Control flow on tensor data cannot be flattened into one graph: keep this submodule whole,
    // as one call_module node, and say why in its metadata.
    if (!isForwardMethod(methodName) || target.path.empty()) throw;
    rollBackTo(mark, tensorConstants);
    for (auto& [f, value, held] : lists) f->env[value] = std::move(held);
    Node* fx = createLeafCall(node, frame, target, methodName, args);
    fx->meta().leafReason = e.what();
    setOutputs(node, fx, 1, frame);
  }
}

void ModuleTracer::rollBackTo(size_t mark, int tensorConstants) {
  for (auto it = attrNodes_.begin(); it != attrNodes_.end();)
    it = it->second->index() >= mark ? attrNodes_.erase(it) : std::next(it);
  for (auto it = concreteTensorNodes_.begin(); it != concreteTensorNodes_.end();)
    it = (*it)->index() >= mark ? concreteTensorNodes_.erase(it) : std::next(it);
  for (auto it = madeFields_.begin(); it != madeFields_.end();) {
    auto field = it->lock();
    if (field && field->node && field->nodeIndex >= mark) field->node = nullptr;
    it = !field || !field->node ? madeFields_.erase(it) : std::next(it);
  }
  graph_.truncate(mark);
  tensorConstants_ = tensorConstants;
}

void ModuleTracer::describeModule(const jit::Module& module, NodeMeta& meta) {
  // __constants__ (in_features, stride, ...) are constants of the TorchScript class; listed in the
  // order the Python class declares them, as FxGraphDrawer prints them.
  const c10::ClassTypePtr& type = module.type();
  std::vector<std::string> order = moduleConstantNames(pythonTypeName(type));
  for (size_t i = 0; i < type->numConstants(); ++i)
    if (std::find(order.begin(), order.end(), type->getConstantName(i)) == order.end()) order.push_back(type->getConstantName(i));
  for (const std::string& name : order) {
    const auto slot = type->findConstantSlot(name);
    if (!slot) continue;
    auto arg = argumentFromIValue(type->getConstant(*slot));
    meta.moduleConstants.emplace_back(name, arg ? formatGraphArgument(*arg) : "?");
  }
  // Plain attributes, as extra_repr shows them (embed_dim, num_heads): what is not a constant, a
  // parameter, a buffer or a submodule, and not private.
  for (size_t i = 0; i < type->numAttributes(); ++i) {
    const std::string& name = type->getAttributeName(i);
    if (name.empty() || name[0] == '_' || name == "training" || type->is_parameter(i) || type->is_buffer(i)) continue;
    const c10::TypePtr& attrType = type->getAttribute(i);
    const auto kind = attrType->kind();
    if (kind != c10::TypeKind::IntType && kind != c10::TypeKind::FloatType && kind != c10::TypeKind::BoolType &&
        kind != c10::TypeKind::StringType && kind != c10::TypeKind::TupleType && kind != c10::TypeKind::ListType)
      continue;
    if (auto arg = argumentFromIValue(module._ivalue()->getSlot(i))) {
      std::string text = formatGraphArgument(*arg);
      if (text.size() <= 200) meta.moduleAttributes.emplace_back(name, std::move(text));  // not a long list
    }
  }
  for (const auto& p : module.named_parameters(/*recurse=*/true))
    meta.parameters.push_back({p.name, p.value.sizes().vec(), p.value.scalar_type(), false});
  for (const auto& b : module.named_buffers(/*recurse=*/true))
    meta.parameters.push_back({b.name, b.value.sizes().vec(), b.value.scalar_type(), true});
}

Node* ModuleTracer::createLeafCall(jit::Node* node, Frame& frame, const ModuleRef& target, const std::string& method,
                                   const std::vector<SymValue>& args) {
  NodeMeta meta;
  const py::ExprPtr expr = describeSource(node, frame, meta);
  std::vector<Argument> fxArgs;
  Kwargs fxKwargs;
  for (const SymValue& a : args) fxArgs.push_back(a.arg);
  // FX records the module call as written (`self.attn(q, k, v, need_weights=False)`), where
  // TorchScript passes every parameter.
  if (expr && expr->kind == py::Expr::Kind::Call) {
    std::vector<Argument> inputs{Argument()};  // self
    inputs.insert(inputs.end(), fxArgs.begin(), fxArgs.end());
    if (auto form = writtenCallArgs(*expr, target.module.get_method(method).function().getSchema(), inputs, true,
                                     attributeValues(frame))) {
      fxArgs.assign(form->args.begin() + 1, form->args.end());
      fxKwargs = std::move(form->kwargs);
    }
  }
  Node* fx = graph_.createNode(OpKind::CallModule, target.path, std::move(fxArgs), std::move(fxKwargs));
  fx->meta() = std::move(meta);
  fx->meta().modulePath = target.path;
  fx->meta().moduleType = pythonTypeName(target.module.type());
  describeModule(target.module, fx->meta());
  moduleTypes_.emplace(target.path, fx->meta().moduleType);
  return fx;
}

void ModuleTracer::convertCallFunction(jit::Node* node, Frame& frame) {
  auto fnType = node->input(0)->type()->cast<c10::FunctionType>();
  if (!fnType) fail(node, frame, "call of a value that is not a function");
  jit::Function* fn = fnType->function();
  const std::string qualified = pythonQualifiedName(fn->qualname().qualifiedName());
  std::vector<SymValue> args;
  for (size_t i = 1; i < node->inputs().size(); ++i) {
    args.push_back(frame.get(node->input(i)));
    if (args.back().kind == SymValue::Kind::Module) fail(node, frame, "passing modules as arguments is not supported");
  }
  const generated::CallableSpelling* callable = findCallable(qualified);
  if ((!callable && qualified.rfind("torch.", 0) != 0) || (callable && callable->kind == CallKind::TracedThrough)) {
    // A user's function, or a torch function written in Python that FX runs: FX traces through
    // it, so inline it. (Functions registered with torch.fx.wrap stay one call.)
    const PathStep step(path_, node);
    auto outputs = inlineGraph(*jit::toGraphFunction(*fn).graph(), std::move(args), frame.scope, frame.depth + 1, fn);
    for (size_t i = 0; i < outputs.size(); ++i) frame.env[node->outputs()[i]] = outputs[i];
    return;
  }
  // A torch library function (torch.nn.functional.*) is one call_function node, as in FX.
  NodeMeta meta;
  const py::ExprPtr expr = describeSource(node, frame, meta);
  // A scalar passed for a BroadcastingList parameter (`F.adaptive_max_pool2d(x, b)`, b an int):
  // TorchScript widens it to [b, b] at the call; Python passes the scalar, and FX records it. A
  // list the user wrote (`[b, b]`) is a list display in the call's text.
  // Without the call's text nothing tells the two apart, and the list stays.
  const py::Expr* call = expr && expr->kind == py::Expr::Kind::Call ? expr.get() : nullptr;
  const auto& parameters = fn->getSchema().arguments();
  for (size_t i = 1; call && i < node->inputs().size(); ++i) {
    jit::Node* list = node->input(i)->node();
    if (list->kind() != c10::prim::ListConstruct || list->inputs().size() < 2) continue;
    bool same = true;
    for (const jit::Value* item : list->inputs()) same = same && item == list->input(0);
    const py::Expr* written = i - 1 < call->positionalCount() ? call->items[i].get() : nullptr;
    for (size_t k = 0; !written && i - 1 < parameters.size() && k < call->keywords.size(); ++k)
      if (call->keywords[k] == parameters[i - 1].name()) written = call->items[1 + call->positionalCount() + k].get();
    if (!written || written->kind == py::Expr::Kind::List || written->kind == py::Expr::Kind::Tuple) continue;
    // The widened list is a value of no variable; `shape = [4, 4]; F.layer_norm(x, shape)` passes a
    // named list. (An archive's schema no longer says which parameter was a BroadcastingList: the
    // length, `int[2]`, is not saved.)
    const c10::TypePtr& type = i - 1 < parameters.size() ? parameters[i - 1].type() : nullptr;
    const bool broadcasting = type && type->kind() == c10::TypeKind::ListType &&
                              type->containedTypes().at(0)->kind() != c10::TypeKind::TensorType &&
                              (parameters[i - 1].N() ? static_cast<size_t>(*parameters[i - 1].N()) == list->inputs().size()
                                                     : !list->output()->hasDebugName());
    if (same && broadcasting) args[i - 1] = frame.get(list->input(0));
  }
  std::vector<Argument> inputs;
  std::vector<std::optional<c10::IValue>> constants;
  const auto& schemaArgs = fn->getSchema().arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    inputs.push_back(i < schemaArgs.size() ? coerceToSchemaType(args[i].arg, schemaArgs[i].real_type()) : args[i].arg);
    constants.push_back(args[i].constant);
  }
  std::vector<Argument> fxArgs = inputs;
  Kwargs fxKwargs;
  std::string target = qualified;
  if (callable && callable->kind == CallKind::Handled) {
    // FX records what the function hands to handle_torch_function: fixed args and kwargs,
    // defaults included.
    if (auto recorded = handledCallArgs(*callable, fn->getSchema(), inputs, expr, attributeValues(frame))) {
      target = callable->target;
      fxArgs = std::move(recorded->args);
      fxKwargs = std::move(recorded->kwargs);
    }
  } else if (auto written = writtenFunctionArgs(fn->getSchema(), expr, inputs, attributeValues(frame))) {
    fxArgs = std::move(written->args);
    fxKwargs = std::move(written->kwargs);
  }
  // Trailing arguments equal to their defaults were not written by the user.
  if (target == qualified && fxKwargs.empty() && fxArgs.size() == inputs.size()) {
    size_t keep = fxArgs.size();
    while (keep > 1 && keep - 1 < schemaArgs.size() && schemaArgs[keep - 1].default_value() && constants[keep - 1] &&
           *constants[keep - 1] == *schemaArgs[keep - 1].default_value())
      --keep;
    fxArgs.resize(keep);
  }
  Node* fx = graph_.createNode(OpKind::CallFunction, target, std::move(fxArgs), std::move(fxKwargs));
  fx->meta() = meta;
  fx->meta().schema = fn->getSchema().operator_name().name;
  setOutputs(node, fx, node->outputs().size(), frame);
}

namespace {
// The node's implementation, or nothing when no operator is registered for it.
std::optional<jit::Operation> operationOf(const jit::Node* node) {
  try {
    return node->getOperation();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}
// Printing a schema is slow and operators repeat: one string per schema.
const std::string& schemaText(const c10::FunctionSchema& schema) {
  static thread_local std::unordered_map<const c10::FunctionSchema*, std::string> cache;
  auto it = cache.find(&schema);
  if (it != cache.end()) return it->second;
  std::ostringstream s;
  s << schema;
  return cache.emplace(&schema, s.str()).first->second;
}

// Vararg operators (aten::format) expect the interpreter to push their input count last.
bool isVararg(const jit::Node* node) {
  const c10::FunctionSchema* schema = node->maybeSchema();
  return schema && schema->is_vararg();
}
}  // namespace

bool ModuleTracer::tryFold(jit::Node* node, Frame& frame) {
  // Python computes what depends on no traced value before FX sees it; tensors computed so
  // (`torch.arange(4)`, `self.mask[:, :8] == 0`) become FX's tensor constants where used.
  if (node->hasSideEffects() || node->isNondeterministic()) return false;
  jit::Stack stack;
  for (const jit::Value* in : node->inputs()) {
    const SymValue& s = frame.get(in);
    if (!s.constant) return false;
    stack.push_back(*s.constant);
  }
  for (const jit::Value* out : node->outputs())
    if (mayHoldTensor(out->type()) && out->type()->kind() != c10::TypeKind::TensorType) return false;
  if (isVararg(node)) stack.emplace_back(static_cast<int64_t>(node->inputs().size()));
  auto op = operationOf(node);
  if (!op) return false;
  try {
    (*op)(stack);
  } catch (const std::exception&) {
    return false;  // leave it to run time, where the error names the node
  }
  if (stack.size() != node->outputs().size()) return false;
  for (size_t i = 0; i < stack.size(); ++i) {
    frame.env[node->outputs()[i]] =
        stack[i].isTensor() ? SymValue::ofPendingTensor(stack[i].toTensor(), "") : SymValue::ofConstant(stack[i]);
  }
  return true;
}

namespace {
// str() of a concrete value as Python's format() writes it into text; nullopt for values that
// are not plain scalars or strings.
std::optional<std::string> formattedScalar(const c10::IValue& v) {
  if (v.isString()) return v.toStringRef();
  if (v.isBool()) return pythonBoolRepr(v.toBool());
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) return pythonFloatRepr(v.toDouble());
  if (v.isNone()) return std::string("None");
  return std::nullopt;
}
}  // namespace

bool ModuleTracer::formatAtTraceTime(jit::Node* node, Frame& frame) {
  // An f-string (TorchScript's aten::format) is Python text built while FX traces: a Proxy in it
  // is formatted as `Proxy(NAME)` (its node stays, with no user), a concrete value as str() does.
  // The result is a constant string, not a node.
  const SymValue& pattern = frame.get(node->input(0));
  if (!pattern.constant || !pattern.constant->isString()) return false;
  const std::string& text = pattern.constant->toStringRef();
  std::string out;
  size_t next = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      out += text[i];
      continue;
    }
    if (i + 1 >= text.size() || text[i + 1] != '}' || next >= node->inputs().size()) return false;
    const SymValue& value = frame.get(node->input(next++));
    if (value.pendingTensor || value.pendingField || value.kind == SymValue::Kind::Module) return false;
    if (value.arg.isNode()) {
      out += "Proxy(" + value.arg.node()->name() + ")";
    } else if (auto piece = value.constant ? formattedScalar(*value.constant) : std::nullopt) {
      out += *piece;
    } else {
      return false;
    }
    ++i;
  }
  if (next != node->inputs().size()) return false;
  frame.env[node->output()] = SymValue::ofConstant(c10::IValue(out));
  return true;
}

void ModuleTracer::convertOperator(jit::Node* node, Frame& frame) {
  if (node->kind() == c10::aten::format && node->outputs().size() == 1 && formatAtTraceTime(node, frame)) return;
  if (tryFold(node, frame)) return;
  if (node->kind().is_prim() && node->inputs().size() == 1 && node->outputs().size() == 1 &&
      isTensorProperty(node->kind().toUnqualString())) {
    // `d = x.dtype` on a Proxy is FX's Attribute proxy: its getattr node is made where the value is
    // first used (`x.abs().to(d)` records abs before the getattr), once for all its uses.
    const SymValue& in = frame.get(node->input(0));
    if (in.arg.isNode() || (in.pendingField && !in.pendingField->node)) {
      SymValue field = SymValue::ofPendingField(in.arg.isNode() ? in.arg.node() : nullptr, 0,
                                                node->kind().toUnqualString());
      if (!in.arg.isNode()) field.pendingField->containerField = in.pendingField;
      frame.env[node->output()] = std::move(field);
      return;
    }
  }
  const c10::FunctionSchema* schema = node->maybeSchema();
  auto op = operationOf(node);
  if (!op) fail(node, frame, "no operator implementation is registered for this node");
  std::vector<Argument> inputs;
  std::vector<std::optional<c10::IValue>> constants;
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    const SymValue& s = frame.get(node->input(i));
    if (s.kind == SymValue::Kind::Module) fail(node, frame, "a module used as an operator argument");
    const c10::TypePtr type = schema && i < schema->arguments().size() ? schema->arguments()[i].real_type() : nullptr;
    inputs.push_back(coerceToSchemaType(s.arg, type));
    constants.push_back(s.constant);
  }
  NodeMeta meta;
  const py::ExprPtr expr = describeSource(node, frame, meta);
  std::vector<std::string> names;
  for (const jit::Value* in : node->inputs()) names.push_back(variableName(in));
  CallForm form = callFormFor(*node, expr, inputs, constants, names, attributeValues(frame));
  applyConcreteLeftOperand(form);
  Node* fx = graph_.createNode(form.op, form.target, std::move(form.args), std::move(form.kwargs));
  fx->meta() = meta;
  if (schema) {
    fx->meta().schema = schemaText(*schema);
  } else {
    fx->meta().schema = node->kind().toQualString();
  }
  fx->meta().random = node->isNondeterministic();
  setOutputs(node, fx, node->outputs().size(), frame);
}

}  // namespace tdfx::trace
