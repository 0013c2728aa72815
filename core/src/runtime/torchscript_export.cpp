#include "tdfx/runtime/torchscript_export.h"

#include <cctype>
#include <sstream>

#include <torch/csrc/jit/frontend/schema_matching.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "call_emitter.h"
#include "printed_call.h"
#include "python_subscript.h"
#include "tdfx/error.h"

namespace tdfx {

namespace jit = torch::jit;

namespace {

// A Python identifier for a target prefix or path: "0.module." -> "module_0_module".
std::string attributeName(const std::string& path) {
  std::string name = path.empty() ? "module" : "module_";
  for (char c : path) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  while (name.back() == '_') name.pop_back();
  return name;
}

// A Python identifier for a dotted target: "1.module._tensor_constant0" -> "_1_module__tensor_constant0".
std::string identifier(const std::string& target) {
  std::string name;
  for (char c : target) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
  return name;
}

// Python source of one subscript item: `1:`, `...`, `None`, a node's name.
std::string indexItemSource(const Argument& item) {
  if (const auto* slice = std::get_if<ArgumentSlice>(&item.value)) {
    const auto bound = [&](size_t i) { return slice->items.at(i).isNone() ? "" : formatCodeArgument(slice->items[i]); };
    std::string s = bound(0) + ":" + bound(1);
    if (!slice->items.at(2).isNone()) s += ":" + bound(2);
    return s;
  }
  if (std::holds_alternative<ArgumentEllipsis>(item.value)) return "...";
  return formatCodeArgument(item);
}

// The index of `container[index]` as Python source: a tuple index is written as its items.
std::string indexSource(const Argument& index) {
  const auto* tuple = std::get_if<ArgumentTuple>(&index.value);
  if (!tuple) return indexItemSource(index);
  if (tuple->items.empty()) return "()";
  std::string s;
  for (const Argument& item : tuple->items) s += (s.empty() ? "" : ", ") + indexItemSource(item);
  return tuple->items.size() == 1 ? s + "," : s;
}

// `def f(a: __t0, b: __t1):` with the nodes `node` reads as parameters, named as printed.
std::string scriptHeader(const std::vector<const Node*>& params) {
  std::string s = "def f(";
  for (size_t i = 0; i < params.size(); ++i) s += (i ? ", " : "") + params[i]->name() + ": __t" + std::to_string(i);
  return s + "):\n";
}

class ForwardBuilder {
 public:
  ForwardBuilder(const GraphModule& module, jit::Module& out)
      : module_(module), traced_(module.traced()), out_(out), graph_(std::make_shared<jit::Graph>()),
        function_(c10::QualifiedName("tdfx_export.forward"), graph_, nullptr),
        emitter_(function_, traced_.moduleRoots.front().second._ivalue()->compilation_unit().get()) {
    self_ = graph_->addInput("self")->setType(out_.type());
    arguments_.emplace_back("self", out_.type());
    for (size_t k = 0; k < traced_.moduleRoots.size(); ++k) {
      const auto& [prefix, root] = traced_.moduleRoots[k];
      out_.register_module(attributeName(prefix), root);
    }
    // The graph's own tensors, as buffers named after their targets (`_1_module__tensor_constant0`).
    for (const auto& [target, tensor] : traced_.tensorConstants) {
      std::string name = identifier(target);
      while (out_.type()->hasAttribute(name)) name += "_";
      constants_[target] = name;
      out_.register_buffer(name, tensor);
    }
  }

  void build() {
    for (const auto& n : traced_.graph->nodes()) {
      const Node& node = *n;
      try {
        emit(node);
      } catch (const std::exception& e) {
        throw RuntimeError("exporting node '" + node.name() + "' (printed `" + module_.printedLine(node) +
                           "`) to TorchScript failed: " + e.what());
      }
    }
    jit::EliminateDeadCode(graph_);
    auto* cu = out_._ivalue()->compilation_unit().get();
    auto* forward = cu->create_function(c10::QualifiedName(*out_.type()->name(), "forward"), graph_);
    jit::toGraphFunction(*forward).setSchema(
        c10::FunctionSchema("forward", "", arguments_, {c10::Argument("", graph_->outputs().at(0)->type())}));
    out_.type()->addMethod(forward);
  }

 private:
  void emit(const Node& node) {
    jit::Value* v = nullptr;
    switch (node.op()) {
      case OpKind::Placeholder: v = placeholder(node); break;
      case OpKind::GetAttr: v = attribute(node.target()); break;
      case OpKind::CallModule: v = callModule(node); break;
      case OpKind::Output: output(node); return;
      case OpKind::CallFunction:
        if (node.target() == "operator.getitem" && node.args().size() == 2) {
          v = subscript(node);
          break;
        }
        if (node.target() == "torch._assert") {
          assertion(node);
          return;
        }
        [[fallthrough]];
      case OpKind::CallMethod: v = emitter_.emitCall(node); break;
    }
    if (!v) return;
    if (v->node()->kind() != jit::prim::Param && v->node()->kind() != jit::prim::Constant) v->setDebugName(node.name());
    emitter_.bind(&node, v);
  }

  jit::Value* placeholder(const Node& node) {
    if (traced_.readsTensorDict && !tensordict_) {
      const auto type = c10::DictType::create(c10::StringType::get(), c10::TensorType::get());
      tensordict_ = graph_->addInput("tensordict")->setType(type);
      arguments_.emplace_back("tensordict", type);
      tensordictNode_ = &node;
      return tensordict_;
    }
    if (traced_.readsTensorDict) {
      // A forward parameter past the in keys: the saved forward takes the TensorDict alone.
      if (node.args().empty())
        throw RuntimeError("forward's parameter '" + node.target() +
                           "' is not an in key and has no default; the saved forward takes only the TensorDict");
      return emitter_.value(node.args().front());
    }
    const c10::FunctionSchema& schema = rootForward().getSchema();
    for (const c10::Argument& a : schema.arguments()) {
      if (a.name() != node.target()) continue;
      arguments_.push_back(a);
      return graph_->addInput(node.target())->setType(a.type());
    }
    throw RuntimeError("'" + node.target() + "' is not a parameter of the archive's forward");
  }

  const jit::Function& rootForward() const {
    for (const auto& [prefix, root] : traced_.moduleRoots)
      if (prefix.empty()) return root.get_method("forward").function();
    throw RuntimeError("the traced archive has no root module");
  }

  // get_attr: a tensor constant of the graph, or the attribute path under the longest module root
  // prefix, as GraphModule resolves it.
  jit::Value* attribute(const std::string& target) {
    if (auto it = constants_.find(target); it != constants_.end()) return graph_->insertGetAttr(self_, it->second);
    const auto& root = moduleRootOf(traced_, target);
    jit::Value* v = graph_->insertGetAttr(self_, attributeName(root.first));
    std::stringstream rest(target.substr(root.first.size()));
    for (std::string part; std::getline(rest, part, '.');) {
      auto cls = v->type()->cast<c10::ClassType>();
      if (!cls || !cls->hasAttribute(part))
        throw RuntimeError("the module has no attribute '" + part + "' (in '" + target + "')");
      v = graph_->insertGetAttr(v, part);
    }
    return v;
  }

  // `module(*args, **kwargs)`: its forward, or the first overload (forward__0, ..., forward_tensor,
  // forward_packed) whose schema takes the arguments, as GraphModule calls it.
  jit::Value* callModule(const Node& node) {
    jit::Value* module = attribute(node.target());
    auto cls = module->type()->cast<c10::ClassType>();
    if (!cls) throw RuntimeError("'" + node.target() + "' is not a module");
    std::vector<std::string> candidates{"forward"};
    for (int k = 0; cls->findMethod("forward__" + std::to_string(k)); ++k) candidates.push_back("forward__" + std::to_string(k));
    candidates.emplace_back("forward_tensor");
    candidates.emplace_back("forward_packed");
    std::vector<jit::NamedValue> args;
    for (const Argument& a : node.args()) args.emplace_back(emitter_.value(a));
    std::vector<jit::NamedValue> kwargs;
    for (const auto& [name, a] : node.kwargs()) kwargs.emplace_back(name, emitter_.value(a));
    std::string tried;
    for (const std::string& name : candidates) {
      jit::Function* method = cls->findMethod(name);
      if (!method) continue;
      std::vector<jit::NamedValue> withSelf{jit::NamedValue(module)};
      withSelf.insert(withSelf.end(), args.begin(), args.end());
      try {
        // A schema that does not match leaves at most dead conversions behind (removed at the end).
        return graph_->insertMethodCall(name, jit::matchSchema(method->getSchema(), {}, *graph_, withSelf, kwargs));
      } catch (const std::exception& e) {
        tried += std::string("\n") + e.what();
      }
    }
    throw RuntimeError("the module has no forward that takes these arguments" + tried);
  }

  jit::Value* subscript(const Node& node) {
    const Argument& container = node.args()[0];
    if (tensordictNode_ && container.isNode() && container.node() == tensordictNode_) {
      const std::string key = flattenedKey(runtime::tensordictKey(node.args()[1]));
      return jit::emitBuiltinCall({}, *graph_, c10::Symbol::fromQualString("aten::__getitem__"),
                                  {tensordict_, graph_->insertConstant(key)}, {});
    }
    const auto params = runtime::referencedNodes(node);
    const std::string source = scriptHeader(params) + "    return " + formatCodeArgument(container) + "[" +
                               indexSource(node.args()[1]) + "]\n";
    return script(source, params).at(0);
  }

  void assertion(const Node& node) {
    if (node.args().empty()) throw RuntimeError("torch._assert needs a condition");
    const auto params = runtime::referencedNodes(node);
    std::string source = scriptHeader(params) + "    assert " + formatCodeArgument(node.args()[0]);
    if (node.args().size() > 1) source += ", " + formatCodeArgument(node.args()[1]);
    script(source + "\n", params);
  }

  std::vector<jit::Value*> script(const std::string& source, const std::vector<const Node*>& params) {
    std::vector<jit::Value*> inputs;
    for (const Node* p : params) inputs.push_back(emitter_.valueOf(p));
    return emitter_.emitScript(source, inputs);
  }

  void output(const Node& node) {
    const Argument& result = node.args().at(0);
    if (!traced_.readsTensorDict) {
      graph_->registerOutput(emitter_.value(result));
      return;
    }
    // The values zipped with the out keys: the printed tuple's items, or a tuple value's elements.
    std::vector<jit::Value*> values;
    if (const auto* items = result.items(); items && !result.isNode()) {
      for (const Argument& item : *items) values.push_back(emitter_.value(item));
    } else {
      jit::Value* v = emitter_.value(result);
      if (v->type()->cast<c10::TupleType>()) {
        for (jit::Value* e : graph_->insertNode(graph_->createTupleUnpack(v))->outputs()) values.push_back(e);
      } else {
        values.push_back(v);
      }
    }
    const auto& keys = traced_.outKeys;
    if (values.size() < keys.size())
      throw RuntimeError("the graph produces " + std::to_string(values.size()) + " value(s) but out_keys has " +
                         std::to_string(keys.size()));
    // One script writes them all: a store into the dict's copy, skipped for a None.
    std::string source = "def f(tensordict: __t0";
    std::string body = "    out = tensordict.copy()\n";
    std::vector<jit::Value*> inputs{tensordict_};
    for (size_t k = 0; k < keys.size(); ++k) {
      if (isDiscardKey(keys[k])) continue;
      const std::string v = "v" + std::to_string(inputs.size());
      source += ", " + v + ": __t" + std::to_string(inputs.size());
      std::string key = flattenedKey(keys[k]);
      std::string quoted = "'";
      for (char c : key) quoted += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
      quoted += "'";
      body += "    if " + v + " is not None:\n        out[" + quoted + "] = " + v + "\n";
      inputs.push_back(values[k]);
    }
    source += ") -> Dict[str, Tensor]:\n" + body + "    return out\n";
    graph_->registerOutput(emitter_.emitScript(source, inputs).at(0));
  }

  const GraphModule& module_;
  const TracedGraph& traced_;
  jit::Module& out_;
  std::shared_ptr<jit::Graph> graph_;
  jit::GraphFunction function_;
  runtime::CallEmitter emitter_;
  jit::Value* self_ = nullptr;
  jit::Value* tensordict_ = nullptr;
  const Node* tensordictNode_ = nullptr;
  std::vector<c10::Argument> arguments_;
  std::map<std::string, std::string> constants_;  // get_attr target -> buffer name
};

}  // namespace

torch::jit::Module toTorchScript(const GraphModule& module) {
  const TracedGraph& traced = module.traced();
  if (traced.moduleRoots.empty()) throw RuntimeError("the traced graph has no module to export");
  auto cu = traced.moduleRoots.front().second._ivalue()->compilation_unit();
  jit::Module out(c10::QualifiedName("__torch__.tdfx.TracedGraphModule"), cu, /*shouldMangle=*/true);
  ForwardBuilder(module, out).build();
  return out;
}

TorchScriptArchive saveTorchScript(const GraphModule& module) {
  torch::jit::Module saved = toTorchScript(module);
  std::ostringstream bytes;
  saved.save(bytes);
  const c10::FunctionSchema& schema = saved.get_method("forward").function().getSchema();
  std::string signature = "forward(";
  for (size_t i = 1; i < schema.arguments().size(); ++i) {
    const c10::Argument& a = schema.arguments()[i];
    signature += (i > 1 ? ", " : "") + a.name() + ": " + a.type()->annotation_str();
  }
  signature += ") -> " + schema.returns().at(0).type()->annotation_str();
  return {bytes.str(), signature};
}

}  // namespace tdfx
