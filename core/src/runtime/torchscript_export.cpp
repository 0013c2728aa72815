#include "tdfx/runtime/torchscript_export.h"

#include <map>
#include <optional>
#include <sstream>

#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "node_emitter.h"
#include "tdfx/error.h"
#include "tdfx/ir/fx_target.h"
#include "tdfx/nn/td_module.h"

namespace tdfx {

namespace jit = torch::jit;

namespace {

// A TorchScript string literal for any key: quotes and backslashes escaped, control characters
// (a newline in a key) as three-digit octal escapes, which TorchScript's lexer reads (it has no
// `\x`); UTF-8 stays as it is.
std::string stringLiteral(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      quoted += '\\';
      quoted += static_cast<char>('0' + (byte >> 6));
      quoted += static_cast<char>('0' + ((byte >> 3) & 7));
      quoted += static_cast<char>('0' + (byte & 7));
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

class ForwardBuilder {
 public:
  ForwardBuilder(const GraphModule& module, runtime::ModuleHolder& holder)
      : module_(module), traced_(module.traced()), holder_(holder), graph_(std::make_shared<jit::Graph>()),
        function_(c10::QualifiedName("tdfx_export.forward"), graph_, nullptr),
        self_(graph_->addInput("self")->setType(holder.module.type())),
        emitter_(function_, traced_, holder_, self_, tensordictNode(traced_), flattenedKey) {
    arguments_.emplace_back("self", holder.module.type());
  }

  void build() {
    refuseCollidingKeys();
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
    auto* cu = holder_.module._ivalue()->compilation_unit().get();
    auto* forward = cu->create_function(c10::QualifiedName(*holder_.module.type()->name(), "forward"), graph_);
    jit::toGraphFunction(*forward).setSchema(
        c10::FunctionSchema("forward", "", arguments_, {c10::Argument("", graph_->outputs().at(0)->type())}));
    holder_.module.type()->addMethod(forward);
  }

 private:
  // The exported forward takes and returns one Dict[str, Tensor] keyed by flattened keys: two keys
  // that flatten alike (`'a.b'` and `('a', 'b')`) would read one entry, or store one result over
  // the other. Such a model is refused, naming both keys.
  void refuseCollidingKeys() const {
    std::map<std::string, NestedKey> seen;
    const auto check = [&](const NestedKey& key, const char* role) {
      const std::string flat = flattenedKey(key);
      auto [it, added] = seen.emplace(flat, key);
      if (added || it->second == key) return;
      throw RuntimeError("cannot export to TorchScript: " + std::string(role) + " " + keyRepr(key) + " and key " +
                         keyRepr(it->second) + " both become '" + flat +
                         "' in the exported forward's Dict[str, Tensor]; rename one of them");
    };
    const Node* td = tensordictNode(traced_);
    if (!td) return;
    for (const NestedKey& key : module_.inKeys()) check(key, "in key");
    for (const auto& n : traced_.graph->nodes()) {
      if (!fx_target::isCallTo(*n, fx_target::kGetItem) || n->args().size() != 2 || !n->args()[0].isNode() ||
          n->args()[0].node() != td)
        continue;
      std::optional<NestedKey> key;
      try {
        key = runtime::tensordictKey(n->args()[1]);
      } catch (const RuntimeError&) {
        continue;  // a malformed key: its node says so when it is emitted
      }
      check(*key, "key read");
    }
    for (const NestedKey& key : traced_.outKeys)
      if (!isDiscardKey(key)) check(key, "out key");
  }

  static const Node* tensordictNode(const TracedGraph& traced) {
    if (!traced.readsTensorDict) return nullptr;
    for (const auto& n : traced.graph->nodes())
      if (n->op() == OpKind::Placeholder) return n.get();
    return nullptr;
  }

  void emit(const Node& node) {
    jit::Value* v = nullptr;
    if (node.op() == OpKind::Placeholder) {
      v = placeholder(node);
    } else if (node.op() == OpKind::Output) {
      output(emitter_.emit(node));
      return;
    } else {
      v = emitter_.emit(node);
    }
    if (!v) return;
    if (v->node()->kind() != jit::prim::Param && v->node()->kind() != jit::prim::Constant) v->setDebugName(node.name());
    emitter_.bind(&node, v);
  }

  // The forward's parameters: the TensorDict (a TensorDict module's first placeholder), or the
  // archive's own forward parameters; a parameter past a TensorDict module's in keys takes its default.
  jit::Value* placeholder(const Node& node) {
    if (traced_.readsTensorDict && !tensordict_) {
      const auto type = c10::DictType::create(c10::StringType::get(), c10::TensorType::get());
      tensordict_ = graph_->addInput("tensordict")->setType(type);
      arguments_.emplace_back("tensordict", type);
      return tensordict_;
    }
    if (traced_.readsTensorDict) {
      if (node.args().empty())
        throw RuntimeError("forward's parameter '" + node.target() +
                           "' is not an in key and has no default; the saved forward takes only the TensorDict");
      return emitter_.emit(node);
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

  // The forward's result: a plain archive's value as it is; a TensorDict module's values stored
  // into a copy of the input dict under their flattened out keys, by one script (a None is not stored).
  void output(jit::Value* result) {
    if (!traced_.readsTensorDict) {
      graph_->registerOutput(result);
      return;
    }
    const auto values = graph_->insertNode(graph_->createTupleUnpack(result))->outputs();
    const auto& keys = traced_.outKeys;
    std::string source = "def f(tensordict: __t0";
    std::string body = "    out = tensordict.copy()\n";
    std::vector<jit::Value*> inputs{tensordict_};
    for (size_t k = 0; k < keys.size(); ++k) {
      if (isDiscardKey(keys[k])) continue;
      const std::string v = "v" + std::to_string(inputs.size());
      source += ", " + v + ": __t" + std::to_string(inputs.size());
      body += "    if " + v + " is not None:\n        out[" + stringLiteral(flattenedKey(keys[k])) + "] = " + v + "\n";
      inputs.push_back(values[k]);
    }
    source += ") -> Dict[str, Tensor]:\n" + body + "    return out\n";
    graph_->registerOutput(emitter_.calls().emitScript(source, inputs).at(0));
  }

  const GraphModule& module_;
  const TracedGraph& traced_;
  runtime::ModuleHolder& holder_;
  std::shared_ptr<jit::Graph> graph_;
  jit::GraphFunction function_;
  jit::Value* self_;
  runtime::NodeEmitter emitter_;
  jit::Value* tensordict_ = nullptr;
  std::vector<c10::Argument> arguments_;
};

}  // namespace

torch::jit::Module toTorchScript(const GraphModule& module) {
  runtime::ModuleHolder holder = runtime::makeModuleHolder(module.traced());
  ForwardBuilder(module, holder).build();
  return holder.module;
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
