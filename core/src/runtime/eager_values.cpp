#include "eager_values.h"

#include <map>
#include <set>
#include <unordered_map>

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include "tdfx/error.h"

namespace tdfx::runtime {
namespace jit = torch::jit;

namespace {

// One TensorDictModule's forward graph, copied, with the calls on the way to the wanted values
// inlined (torch's insertGraph keeps the map from the callee's values to the copies).
class InlinedForward {
 public:
  explicit InlinedForward(const torch::jit::Module& module) : graph_(std::make_shared<jit::Graph>()) {
    jit::Graph& forward = *jit::toGraphFunction(module.get_method("forward").function()).graph();
    std::vector<jit::Value*> inputs;
    for (jit::Value* in : forward.inputs()) inputs.push_back(graph_->addInput()->setType(in->type()));
    results_ = jit::insertGraph(*graph_, forward, inputs, maps_[{}]);
  }

  /// Inlines the calls on the way to `ref`; false when they cannot be (inside a block, an interface).
  bool reach(const EagerValueRef& ref) { return mapFor(ref.callSites, ref.callSites.size()) != nullptr; }

  /// The copy of `ref`'s value, once every reach() is done; null when it is not in the top block.
  jit::Value* valueOf(const EagerValueRef& ref) {
    const auto map = maps_.find(ref.callSites);
    if (map == maps_.end()) return nullptr;
    const auto v = map->second.find(const_cast<jit::Value*>(ref.value));
    if (v == map->second.end() || v->second->node()->owningBlock() != graph_->block()) return nullptr;
    return v->second;
  }

  /// Returns one tuple: the forward's own result first, then `extra` (a function has one output).
  /// A tensor is copied where it is made, so that an in-place change later in the forward does not
  /// reach the value compared (the traced side is compared as each node runs).
  std::shared_ptr<jit::Graph> finish(const std::vector<jit::Value*>& extra) {
    std::vector<jit::Value*> all = results_;
    for (jit::Value* v : extra) {
      if (!v->type()->isSubtypeOf(*c10::TensorType::get())) {
        all.push_back(v);
        continue;
      }
      jit::Node* made = v->node()->kind() == c10::prim::Param ? nullptr : v->node();
      jit::WithInsertPoint guard(made ? made->next() : graph_->block()->nodes().front());
      all.push_back(graph_->insert(c10::aten::clone, {v}));
    }
    graph_->registerOutput(graph_->insertNode(graph_->createTuple(all))->output());
    return graph_;
  }

 private:
  using ValueMap = std::unordered_map<jit::Value*, jit::Value*>;

  ValueMap* mapFor(const std::vector<const jit::Node*>& path, size_t length) {
    const std::vector<const jit::Node*> key(path.begin(), path.begin() + static_cast<long>(length));
    if (auto it = maps_.find(key); it != maps_.end()) return &it->second;
    if (length == 0 || unreachable_.count(key)) return nullptr;
    ValueMap* parent = mapFor(path, length - 1);
    const jit::Node* site = path[length - 1];
    if (!parent || site->outputs().empty()) return remember(key);
    const auto found = parent->find(const_cast<jit::Value*>(site->output(0)));
    if (found == parent->end()) return remember(key);
    jit::Node* call = found->second->node();
    if (call->owningBlock() != graph_->block() || call->kind() != site->kind()) return remember(key);
    std::shared_ptr<jit::Graph> callee;
    std::vector<jit::Value*> args(call->inputs().begin(), call->inputs().end());
    if (site->kind() == c10::prim::CallMethod) {
      const auto cls = site->input(0)->type()->cast<c10::ClassType>();
      jit::Function* method = cls ? cls->findMethod(site->s(c10::attr::name)) : nullptr;
      if (!method) return remember(key);
      callee = jit::toGraphFunction(*method).graph();
    } else if (site->kind() == c10::prim::CallFunction) {
      const auto fn = site->input(0)->type()->cast<c10::FunctionType>();
      if (!fn) return remember(key);
      callee = jit::toGraphFunction(*fn->function()).graph();
      args.erase(args.begin());
    } else {
      return remember(key);
    }
    ValueMap map;
    std::vector<jit::Value*> outs;
    {
      jit::WithInsertPoint guard(call);
      outs = jit::insertGraph(*graph_, *callee, args, map);
    }
    // The call's results are the inlined values now, in every map that held them.
    for (size_t i = 0; i < call->outputs().size() && i < outs.size(); ++i) {
      jit::Value* old = call->output(i);
      for (auto& [path, m] : maps_)
        for (auto& [from, to] : m)
          if (to == old) to = outs[i];
      for (jit::Value*& r : results_)
        if (r == old) r = outs[i];
      old->replaceAllUsesWith(outs[i]);
    }
    call->destroy();
    return &(maps_[key] = std::move(map));
  }

  ValueMap* remember(const std::vector<const jit::Node*>& key) {
    unreachable_.insert(key);
    return nullptr;
  }

  std::shared_ptr<jit::Graph> graph_;
  std::vector<jit::Value*> results_;
  std::map<std::vector<const jit::Node*>, ValueMap> maps_;
  std::set<std::vector<const jit::Node*>> unreachable_;
};

void runModule(const TensorDictModule& module, const std::string& position, const Graph& graph, TensorDict& td,
               EagerNodeValues& out) {
  InlinedForward inlined(module.module());
  std::vector<const Node*> wanted;
  for (const auto& n : graph.nodes())
    if (n->meta().eagerValue && n->meta().tdModule == position && inlined.reach(*n->meta().eagerValue))
      wanted.push_back(n.get());
  std::vector<const Node*> nodes;
  std::vector<jit::Value*> extra;
  for (const Node* n : wanted) {
    if (jit::Value* v = inlined.valueOf(*n->meta().eagerValue)) {
      nodes.push_back(n);
      extra.push_back(v);
    }
  }
  jit::GraphFunction function(c10::QualifiedName("tdfx_verify.eager_values"), inlined.finish(extra), nullptr);
  jit::Stack stack{module.module()._ivalue()};
  for (c10::IValue& v : module.arguments(td)) stack.push_back(std::move(v));
  {
    torch::NoGradGuard noGrad;
    const std::string where = "running the eager module " + (position.empty() ? std::string() : position + " ") +
                              "with its values recorded failed: ";
    try {
      function.run(stack);
    } catch (const c10::Error& e) {
      throw RuntimeError(where + e.what_without_backtrace());
    } catch (const std::exception& e) {
      throw RuntimeError(where + e.what());
    }
  }
  const auto results = stack.at(0).toTupleRef().elements();
  if (results.size() != 1 + nodes.size())
    throw RuntimeError("the eager module's recording run returned " + std::to_string(results.size()) + " values, expected " +
                       std::to_string(1 + nodes.size()));
  for (size_t i = 0; i < nodes.size(); ++i) {
    out.values[nodes[i]->index()] = results[1 + i];
    out.found[nodes[i]->index()] = true;
  }
  module.write(results[0], td);
}

void runTree(const TensorDictModuleBase& module, const std::string& position, const Graph& graph, TensorDict& td,
             EagerNodeValues& out) {
  if (const auto* seq = dynamic_cast<const TensorDictSequential*>(&module)) {
    for (size_t i = 0; i < seq->modules().size(); ++i)
      runTree(*seq->modules()[i], position.empty() ? std::to_string(i) : position + "." + std::to_string(i), graph, td, out);
    return;
  }
  const auto* leaf = dynamic_cast<const TensorDictModule*>(&module);
  if (!leaf) throw Error("cannot record the eager values of a module that is neither a TensorDictModule nor a sequential");
  runModule(*leaf, position, graph, td, out);
}

}  // namespace

EagerNodeValues runRecordingEagerValues(const TensorDictModuleBase& eager, const Graph& graph, TensorDict& td) {
  EagerNodeValues out;
  out.values.resize(graph.size());
  out.found.assign(graph.size(), false);
  runTree(eager, "", graph, td, out);
  return out;
}

}  // namespace tdfx::runtime
