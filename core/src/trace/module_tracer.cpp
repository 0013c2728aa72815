#include "trace_context.h"
#include "tdfx/util/python_repr.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <cctype>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include "call_form.h"
#include "tdfx/ir/fx_tables.h"
#include "tdfx/error.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx::trace {

namespace jit = torch::jit;

namespace {
// torch.nn.Module.named_parameters() and named_buffers(): modules in preorder (named_modules), each
// one's own tensors in order, a tensor seen before left out. Both share one walk here. `shared`:
// only those tensors get a path (null: just count each tensor in `seen`, building no path).
using TensorKey = std::pair<const c10::TensorImpl*, bool>;
void walkModuleTensors(const jit::Module& module, const std::string& prefix, std::vector<TensorKey>& seen,
                       const std::set<TensorKey>* shared, std::map<TensorKey, std::string>& paths,
                       std::vector<c10::ivalue::Object*>& visited) {
  if (std::find(visited.begin(), visited.end(), module._ivalue().get()) != visited.end()) return;
  visited.push_back(module._ivalue().get());
  const auto& type = module.type();
  for (size_t slot = 0; slot < type->numAttributes(); ++slot) {
    const c10::IValue& value = module._ivalue()->slots()[slot];
    if (!value.isTensor() || !value.toTensor().defined()) continue;
    const bool parameter = type->is_parameter(slot);
    if (!parameter && !type->is_buffer(slot)) continue;
    const TensorKey key{value.toTensor().unsafeGetTensorImpl(), parameter};
    if (!shared) {
      seen.push_back(key);
    } else if (shared->count(key)) {
      paths.emplace(key, prefix.empty() ? type->getAttributeName(slot) : prefix + "." + type->getAttributeName(slot));
    }
  }
  for (const auto& child : module.named_children())
    walkModuleTensors(child.value, prefix.empty() ? child.name : prefix + "." + child.name, seen, shared, paths, visited);
}

// The first paths of the tensors that more than one module attribute holds; nothing for the
// usual module, whose every tensor has one path (a walk without strings finds that out).
std::map<TensorKey, std::string> firstPathsOfSharedTensors(const jit::Module& root, const std::string& prefix) {
  std::vector<TensorKey> seen;
  std::map<TensorKey, std::string> paths;
  std::vector<c10::ivalue::Object*> visited;
  walkModuleTensors(root, prefix, seen, nullptr, paths, visited);
  std::sort(seen.begin(), seen.end());
  std::set<TensorKey> shared;
  for (size_t i = 1; i < seen.size(); ++i)
    if (seen[i] == seen[i - 1]) shared.insert(seen[i]);
  if (shared.empty()) return paths;
  visited.clear();
  walkModuleTensors(root, prefix, seen, &shared, paths, visited);
  return paths;
}
}  // namespace

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
  s.input.pendingTensor = true;
  s.input.tensorTarget = target;
  s.arg = Argument("<tensor>");
  s.pendingTensor = true;
  s.tensorTarget = std::move(target);
  return s;
}

SymValue SymValue::ofPendingField(Node* container, int64_t index, std::string field) {
  SymValue s;
  s.arg = Argument("<field " + field + ">");
  s.pendingField = std::make_shared<PendingField>(PendingField{container, std::move(field), index, nullptr, 0, nullptr, false, nullptr, std::nullopt, {}});
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

void fail(TraceContext& cx, jit::Node* node, const Frame& frame, const std::string& what) {
  throw TraceError(failureMessage(cx, node, frame, what));
}

void failDataDependent(TraceContext& cx, jit::Node* node, const Frame& frame, const std::string& what) {
  throw DataDependentError(failureMessage(cx, node, frame, what));
}

namespace {
// The value of `self.NAME`, or of an item of it read with an int literal (`self.sizes[0]`), as
// Python computes it before FX sees it; nullopt for anything else.
std::optional<Argument> moduleAttributeValue(const jit::Module& module, const py::Expr& e) {
  if (e.kind == py::Expr::Kind::Subscript) {
    const auto object = moduleAttributeValue(module, *e.items[0]);
    const auto index = literalArgument(*e.items[1]);
    const int64_t* i = index ? std::get_if<int64_t>(&index->value) : nullptr;
    if (!object || !i) return std::nullopt;
    const std::vector<Argument>* items = nullptr;
    if (const auto* list = std::get_if<ArgumentList>(&object->value)) items = &list->items;
    if (const auto* tuple = std::get_if<ArgumentTuple>(&object->value)) items = &tuple->items;
    if (!items) return std::nullopt;
    const int64_t n = static_cast<int64_t>(items->size());
    if (*i < -n || *i >= n) return std::nullopt;
    return (*items)[static_cast<size_t>(*i < 0 ? *i + n : *i)];
  }
  if (e.kind != py::Expr::Kind::Attribute || e.items[0]->kind != py::Expr::Kind::Name || e.items[0]->text != "self")
    return std::nullopt;
  const c10::ClassTypePtr& type = module.type();
  if (auto slot = type->findConstantSlot(e.text)) return argumentFromIValue(type->getConstant(*slot));
  if (auto slot = type->findAttributeSlot(e.text)) {
    const c10::IValue value = module._ivalue()->getSlot(*slot);
    if (!value.isTensor() && !value.isModule()) return argumentFromIValue(value);
  }
  return std::nullopt;
}
}  // namespace

AttributeValues attributeValues(const Frame& frame) {
  return [module = frame.scope.module](const py::Expr& e) { return moduleAttributeValue(module, e); };
}

std::string failureMessage(TraceContext& cx, jit::Node* node, const Frame& frame, const std::string& what) {
  const std::string where =
      (frame.scope.path.empty() ? "the traced module" : "module '" + frame.scope.path + "'") + cx.source.where(node);
  return "cannot trace " + std::string(node->kind().toQualString()) + " in " + where + ": " + what;
}

ModuleTracer::ModuleTracer(Graph& graph, const SourceIndex* sources)
    : cx_(std::make_unique<TraceContext>(graph, sources)) {}
ModuleTracer::~ModuleTracer() = default;

std::string ModuleTracer::functionSource(const jit::Function& fn) const { return cx_->source.functionSource(fn); }
const std::vector<std::string>& ModuleTracer::fxDifferences() const { return cx_->fxDifferences; }
const std::map<std::string, std::string>& ModuleTracer::moduleTypes() const { return cx_->moduleTypes; }
const std::map<std::string, at::Tensor>& ModuleTracer::tensorConstants() const {
  return cx_->builder.tensorConstants();
}

std::vector<SymValue> ModuleTracer::traceForward(const ModuleRef& module, std::vector<SymValue> inputs) {
  TraceContext& cx = *cx_;
  auto method = module.module.find_method("forward");
  if (!method) throw TraceError("module '" + module.path + "' has no forward method");
  SymValue self = SymValue::ofModule(module);
  inputs.insert(inputs.begin(), self);
  cx.firstTensorPaths = firstPathsOfSharedTensors(module.module, module.path);
  if (module.path.empty())
    cx.builder.setRootParameters([root = module.module](const std::string& name) {
      const auto slot = root.type()->findAttributeSlot(name);
      return slot && root.type()->is_parameter(*slot);
    });
  cx.builder.setTakenNames([root = module.module](const std::string& name) {
    return root.hasattr(name) || root.type()->hasConstant(name) || root.find_method(name).has_value();
  });
  jit::Graph& graph = *jit::toGraphFunction(method->function()).graph();
  // The nodes that read the forward's parameters (TensorDict reads, placeholders) stand for them.
  for (size_t i = 1; i < inputs.size() && i < graph.inputs().size(); ++i)
    if (inputs[i].arg.isNode() && !inputs[i].arg.node()->meta().eagerValue)
      inputs[i].arg.node()->meta().eagerValue = EagerValueRef{{}, graph.inputs()[i]};
  return inlineGraph(cx, graph, std::move(inputs), module, 0, &method->function());
}

std::vector<SymValue> inlineGraph(TraceContext& cx, jit::Graph& g, std::vector<SymValue> inputs, const ModuleRef& scope,
                                                int depth, const jit::Function* fn) {
  if (depth > kMaxInlineDepth) throw TraceError("calls nested deeper than 200 levels (recursion?) in '" + scope.path + "'");
  if (!scope.path.empty()) cx.moduleTypes.emplace(scope.path, pythonTypeName(scope.module.type()));
  Frame frame{scope, depth, {}, {}, {}, {}, nullptr, {}, {}};
  frame.env.reserve(64);
  if (inputs.size() != g.inputs().size())
    throw TraceError("internal error: " + std::to_string(inputs.size()) + " inputs for a graph of " +
                     std::to_string(g.inputs().size()));
  for (size_t i = 0; i < inputs.size(); ++i) frame.env.emplace(g.inputs()[i], inputs[i]);
  frame.function = fn;
  if (fn && depth == 0 && cx.source.functionSource(*fn).empty()) {
    // An archive saved without its debug info: no statement of the user's code can be read back.
    std::string note = pythonQualifiedName(fn->qualname().qualifiedName()) +
                       ": the archive holds no source (saved without debug info), so this graph follows its "
                       "compiled code: statements TorchScript removed as dead code are missing, and calls "
                       "may be spelled as the compiled code has them, not as torch.fx records the source's";
    if (std::find(cx.fxDifferences.begin(), cx.fxDifferences.end(), note) == cx.fxDifferences.end())
      cx.fxDifferences.push_back(std::move(note));
  }
  if (fn) {
    frame.deadReads = deadReads(cx, *fn, g);
    noteScriptingBranch(cx, *fn);
  }
  struct ActiveFrame {
    std::vector<Frame*>& frames;
    ~ActiveFrame() { frames.pop_back(); }
  } active{cx.frames};
  cx.frames.push_back(&frame);
  convertBlock(cx, g.block(), frame);
  recordDeadReadsBefore(cx, nullptr, frame);
  if (depth == 0) materializeInputs(cx, g.return_node(), frame);  // a returned buffer is a get_attr
  std::vector<SymValue> outputs;
  for (const jit::Value* v : g.outputs()) outputs.push_back(frame.get(v));
  return outputs;
}

void convertBlock(TraceContext& cx, jit::Block* block, Frame& frame) {
  const bool body = block->owningNode() == nullptr;  // the function's own level
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    if (body) recordDeadReadsBefore(cx, *it, frame);
    materializeInputs(cx, *it, frame);
    const size_t mark = cx.builder.size();
    const auto first = it;
    if (const size_t consumed = convertExpressionGroup(cx, *it, frame)) {
      std::advance(it, static_cast<long>(consumed));
    } else {
      convertNode(cx, *it, frame);
      ++it;
    }
    recordEagerValues(cx, first, it, mark, frame);
    notePartlyDeadStatements(cx, first, it, frame);
    restorePendingTensors(cx, frame);
  }
}

void recordEagerValues(TraceContext& cx, jit::graph_node_list_iterator first, jit::graph_node_list_iterator last,
                                     size_t mark, const Frame& frame) {
  // A value of an inlined call is recorded again here, in the caller's terms: the outermost
  // TorchScript value that holds it is the one verify can read without inlining.
  for (auto it = first; it != last; ++it) {
    Node* container = nullptr;  // the one node whose fields every output is (`torch.max(w, 1)`)
    bool allFields = it->outputs().size() > 1;
    for (const jit::Value* v : it->outputs()) {
      const auto found = frame.env.find(v);
      // A field not yet in the graph (`x.device`, an item of a tuple result): its node, whenever
      // it is made, stands for this value.
      const auto& field = found == frame.env.end() ? nullptr : found->second.pendingField;
      if (field && !field->eager) field->eager = EagerValueRef{cx.path, v};
      // Or an item already made (`values, indices = torch.max(w, 1)`: FX's getitems at once).
      Node* holder = field && !field->containerField ? field->container : nullptr;
      if (!field && found != frame.env.end() && found->second.arg.isNode()) {
        const Node* item = found->second.arg.node();
        if (fx_target::isCallTo(*item, fx_target::kGetItem) && item->args().size() == 2 && item->args()[0].isNode())
          holder = item->args()[0].node();
      }
      // An output nothing reads has no field: the others decide.
      if (holder) {
        allFields = allFields && (!container || container == holder);
        container = holder;
      }
      if (found == frame.env.end() || found->second.kind != SymValue::Kind::Value || !found->second.arg.isNode()) continue;
      Node* node = found->second.arg.node();
      if (node->index() >= mark && cx.builder.holds(node, node->index()))
        node->meta().eagerValue = EagerValueRef{cx.path, v};
    }
    if (allFields && container && !container->meta().eagerValue && container->index() >= mark &&
        cx.builder.holds(container, container->index()))
      container->meta().eagerValue = EagerValueRef{cx.path, it->output(0), /*allOutputs=*/true};
  }
}

py::ExprPtr describeSource(TraceContext& cx, jit::Node* node, Frame& frame, NodeMeta& meta) {
  meta.modulePath = frame.scope.path;
  meta.moduleType = pythonTypeName(frame.scope.module.type());
  if (auto loc = cx.source.userSource(node)) {
    // TorchScript's range may cover only a call's callee: the expression is read from the source.
    py::ExprPtr expr = py::expressionForRange(cx.source.parsed(loc->window), loc->rangeLength);
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

void setOutputs(TraceContext& cx, jit::Node* node, Node* fxNode, size_t numOutputs, Frame& frame) {
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
    fxNode->meta().eagerValue = EagerValueRef{cx.path, repack->output()};  // the tuple, in the model's code too
    cx.repacked.insert(repack);
    return;
  }
  // `x.max(1).values`: the field the code reads right after the call, when it is one of the
  // operator's named returns.
  const auto [root, expr] = cx.source.writtenExpression(node);
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
    if (stored) {
      // `vm = torch.var_mean(w, 1)`, then `vm[1]` and `vm[0]`: FX's getitem is made where the code
      // reads the item, in the order it reads them (TorchScript's graph holds the outputs only).
      frame.env[node->outputs()[i]] = SymValue::ofPendingField(fxNode, static_cast<int64_t>(i), "");
      continue;
    }
    frame.env[node->outputs()[i]] = SymValue::ofNode(cx.builder.getItem(fxNode, static_cast<int64_t>(i)));
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

const std::vector<Converter>* ConverterTable::find(c10::Symbol symbol) const {
  auto it = bySymbol_.find(symbol);
  return it == bySymbol_.end() ? nullptr : &it->second;
}

const ConverterTable& converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    // Python values first: a grad-mode context manager's prim::CallMethod is not a method call.
    registerValueConverters(t);
    registerCallConverters(t);
    registerControlFlowConverters(t);
    registerContainerConverters(t);
    return t;
  }();
  return table;
}

void convertNode(TraceContext& cx, jit::Node* node, Frame& frame) {
  if (const auto* registered = converters().find(node->kind()))
    for (const Converter converter : *registered)
      if (converter(cx, node, frame)) return;
  convertOperator(cx, node, frame);
}

void registerValueConverters(ConverterTable& t) {
  t.add(c10::prim::Constant, &convertConstant);
  for (const c10::Symbol s : {c10::prim::CreateObject, c10::prim::Enter, c10::prim::Exit, c10::prim::CallMethod})
    t.add(s, &convertGradMode);
  t.add(c10::prim::unchecked_cast, &convertPassThrough);
  t.add(c10::aten::_unwrap_optional, &convertPassThrough);
  t.add(c10::prim::Uninitialized, &convertUninitialized);
  t.add(c10::prim::isinstance, &convertIsInstance);
  t.add(c10::prim::SetAttr, &refuseSetAttr);
  t.add(c10::aten::warn, &convertWarn);
  t.add(c10::aten::__is__, &convertIsNone);
  t.add(c10::aten::__isnot__, &convertIsNone);
}

bool convertConstant(TraceContext& cx, jit::Node* node, Frame& frame) {
  if (node->output()->type()->kind() == c10::TypeKind::FunctionType) {
    frame.env[node->output()] = SymValue::ofConstant(c10::IValue());  // read only by prim::CallFunction
    return true;
  }
  auto value = jit::toIValue(node->output());
  if (!value) fail(cx, node, frame, "constant of unsupported type " + node->output()->type()->repr_str());
  if (value->isTensor()) {
    frame.env[node->output()] = SymValue::ofPendingTensor(value->toTensor(), "");
  } else {
    frame.env[node->output()] = SymValue::ofConstant(*value);
  }
  return true;
}

bool convertGradMode(TraceContext& /*cx*/, jit::Node* node, Frame& frame) {
  const jit::Value* object = node->kind() == c10::prim::CreateObject ? node->output() : node->input(0);
  if (!isGradModeObject(object)) return false;
  // `with torch.no_grad():` is Python that runs while FX traces: no node. The body's operations
  // are recorded as they are (and run with autograd on, which changes no value).
  for (const jit::Value* out : node->outputs()) frame.env[out] = SymValue::ofConstant(c10::IValue());
  return true;
}

bool convertPassThrough(TraceContext& /*cx*/, jit::Node* node, Frame& frame) {
  // A cast of the static type only (unchecked_cast, _unwrap_optional): the value itself.
  frame.env[node->output()] = frame.get(node->input(0));
  return true;
}

bool convertUninitialized(TraceContext& /*cx*/, jit::Node* node, Frame& frame) {
  frame.env[node->output()] = SymValue::ofConstant(c10::IValue());
  return true;
}

bool convertIsInstance(TraceContext& cx, jit::Node* node, Frame& frame) {
  // torch.jit.isinstance on a concrete value (a constant, an attribute) is Python's isinstance,
  // evaluated while FX traces; only the branch taken is recorded.
  const SymValue& v = frame.get(node->input(0));
  if (!v.constant || v.constant->isTensor()) fail(cx, node, frame, "torch.jit.isinstance on a value computed from tensors");
  const c10::TypePtr type = v.constant->type();
  bool matches = false;
  for (const c10::TypePtr& candidate : node->tys(c10::attr::types)) matches = matches || type->isSubtypeOf(*candidate);
  frame.env[node->output()] = SymValue::ofConstant(c10::IValue(matches));
  return true;
}

bool refuseSetAttr(TraceContext& cx, jit::Node* node, Frame& frame) {
  fail(cx, node, frame, "modules that assign attributes in forward are not supported");
}

bool convertWarn(TraceContext& /*cx*/, jit::Node* node, Frame& frame) {
  // warnings.warn runs while Python traces; torch.fx records nothing for it. With a traced value
  // in its message it is an operator (and fails as one).
  for (const jit::Value* in : node->inputs())
    if (!frame.get(in).constant.has_value()) return false;
  return true;
}

bool convertIsNone(TraceContext& /*cx*/, jit::Node* node, Frame& frame) {
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
      frame.env[node->output()] = SymValue::ofConstant(c10::IValue(node->kind() == c10::aten::__isnot__));
      return true;
    }
  }
  return false;
}

std::optional<size_t> attributeSlot(TraceContext& cx, const c10::ClassType& type, const std::string& name) {
  auto [slots, made] = cx.attributeSlots.try_emplace(&type);
  if (made)
    for (size_t i = 0; i < type.numAttributes(); ++i) slots->second.emplace(type.getAttributeName(i), i);
  const auto it = slots->second.find(name);
  return it == slots->second.end() ? std::nullopt : std::optional<size_t>(it->second);
}

void convertGetAttr(TraceContext& cx, jit::Node* node, Frame& frame) {
  const SymValue& obj = frame.get(node->input(0));
  if (obj.kind != SymValue::Kind::Module) fail(cx, node, frame, "attribute access on a non-module object is not supported");
  const std::string& name = node->s(c10::attr::name);
  const jit::Module& m = obj.module->module;
  const size_t slot = attributeSlot(cx, *m.type(), name).value_or(std::numeric_limits<size_t>::max());
  if (slot == std::numeric_limits<size_t>::max())
    fail(cx, node, frame, "module '" + obj.module->path + "' has no attribute '" + name + "'");
  const c10::IValue value = m._ivalue()->getSlot(slot);
  std::string path = joinPath(obj.module->path, name);
  if (value.isTensor() && value.toTensor().defined()) {
    const auto first = cx.firstTensorPaths.find({value.toTensor().unsafeGetTensorImpl(), m.type()->is_parameter(slot)});
    if (first != cx.firstTensorPaths.end()) path = first->second;
  }
  if ((value.isModule() || value.isTensor()) && name.find('.') != std::string::npos)
    // Only a crafted archive has one (torch.nn refuses such names): FX's targets are dotted
    // paths, so `a.b` would name submodule `a`'s `b` and print, and run, the other tensor.
    fail(cx, node, frame, "attribute '" + name + "' has a '.' in its name, so a dotted target cannot tell it from '" +
                          name.substr(0, name.find('.')) + "''s '" + name.substr(name.find('.') + 1) + "'");
  if (value.isModule()) {
    frame.env[node->output()] = SymValue::ofModule(ModuleRef{value.toModule(), path});
    return;
  }
  if (value.isTensor()) {
    // FX proxies parameters where they are read; buffers and other tensors are plain tensors in
    // Python, computed with while tracing and put into the graph where a recorded operation uses them.
    if (m.type()->is_parameter(slot)) {
      frame.env[node->output()] = SymValue::ofNode(tensorAttribute(cx, path, value.toTensor(), frame, node, true));
    } else {
      frame.env[node->output()] = SymValue::ofPendingTensor(value.toTensor(), path);
    }
    return;
  }
  // Plain attributes (ints, bools, floats, strings, `training`) are constants of the module.
  frame.env[node->output()] = SymValue::ofConstant(value);
}

std::optional<c10::IValue> knownValue(const SymValue& s) {
  if (s.constant) return s.constant;
  if (s.input.kind != ValueParts::Kind::List || !s.input.elementType) return std::nullopt;
  c10::impl::GenericList list(s.input.elementType);
  for (const ValueParts& item : s.input.items) {
    if (item.kind != ValueParts::Kind::Constant) return std::nullopt;
    list.push_back(item.constant);
  }
  return c10::IValue(list);
}

namespace {
// A list of tensors an operator returned, each one FX holds in Python (torch.meshgrid's).
SymValue pendingTensorList(TraceContext& cx, const c10::List<at::Tensor>& tensors) {
  SymValue out;
  out.input.kind = ValueParts::Kind::List;
  out.input.elementType = c10::TensorType::get();
  out.input.listId = cx.nextListId++;
  std::vector<Argument> items;
  for (const at::Tensor& t : tensors) {
    SymValue item = SymValue::ofPendingTensor(t, "");
    items.push_back(item.arg);
    out.input.items.push_back(item.input);
  }
  out.arg = Argument(ArgumentList{std::move(items)});
  return out;
}
}  // namespace

bool foldable(jit::Node* node, const Frame& frame) {
  if (node->kind() == c10::prim::Constant || node->kind().is_prim() || node->hasSideEffects() ||
      node->isNondeterministic() || !node->maybeOperator())
    return false;
  for (const jit::Value* in : node->inputs()) {
    auto it = frame.env.find(in);
    if (it == frame.env.end() || !knownValue(it->second)) return false;
  }
  return true;
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

bool tryFold(TraceContext& cx, jit::Node* node, Frame& frame) {
  // Python computes what depends on no traced value before FX sees it; tensors computed so
  // (`torch.arange(4)`, `self.mask[:, :8] == 0`, torch.meshgrid's list) become FX's tensor
  // constants where used.
  if (node->hasSideEffects() || node->isNondeterministic()) return false;
  jit::Stack stack;
  for (const jit::Value* in : node->inputs()) {
    auto value = knownValue(frame.get(in));
    if (!value) return false;
    stack.push_back(std::move(*value));
  }
  const auto isTensorList = [](const c10::TypePtr& t) {
    return t->kind() == c10::TypeKind::ListType && t->containedTypes().at(0)->kind() == c10::TypeKind::TensorType;
  };
  for (const jit::Value* out : node->outputs())
    if (mayHoldTensor(out->type()) && out->type()->kind() != c10::TypeKind::TensorType && !isTensorList(out->type()))
      return false;
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
    if (isTensorList(node->outputs()[i]->type()) && stack[i].isTensorList())
      frame.env[node->outputs()[i]] = pendingTensorList(cx, stack[i].toTensorList());
    else
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

bool formatAtTraceTime(jit::Node* node, Frame& frame) {
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

void convertOperator(TraceContext& cx, jit::Node* node, Frame& frame) {
  if (node->kind() == c10::aten::format && node->outputs().size() == 1 && formatAtTraceTime(node, frame)) return;
  if (tryFold(cx, node, frame)) return;
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
  if (!op) fail(cx, node, frame, "no operator implementation is registered for this node");
  std::vector<Argument> inputs;
  std::vector<std::optional<c10::IValue>> constants;
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    const SymValue& s = frame.get(node->input(i));
    if (s.kind == SymValue::Kind::Module) fail(cx, node, frame, "a module used as an operator argument");
    const c10::TypePtr type = schema && i < schema->arguments().size() ? schema->arguments()[i].real_type() : nullptr;
    inputs.push_back(coerceToSchemaType(s.arg, type));
    constants.push_back(s.constant);
  }
  NodeMeta meta;
  const py::ExprPtr expr = describeSource(cx, node, frame, meta);
  if (expr)
    if (auto disagreement = sourceDisagreement(*node, *expr)) fail(cx, node, frame, *disagreement);
  std::vector<std::string> names;
  for (const jit::Value* in : node->inputs()) names.push_back(variableName(in));
  CallForm form = callFormFor(*node, expr, inputs, constants, names, attributeValues(frame));
  applyConcreteLeftOperand(cx, form);
  if (node->outputs().size() == 1 && deferAttributeRead(cx, form, node->output(), meta, frame)) return;
  Node* fx = cx.builder.graph().createNode(form.op, form.target, std::move(form.args), std::move(form.kwargs));
  fx->meta() = meta;
  if (schema) {
    fx->meta().schema = schemaText(*schema);
  } else {
    fx->meta().schema = node->kind().toQualString();
  }
  fx->meta().random = node->isNondeterministic();
  setOutputs(cx, node, fx, node->outputs().size(), frame);
}

}  // namespace tdfx::trace
