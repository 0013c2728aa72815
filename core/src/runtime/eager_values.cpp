#include "eager_values.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include "fingerprint.h"
#include "tdfx/error.h"
#include "tdfx/util/crash_stage.h"

namespace tdfx::runtime {
namespace jit = torch::jit;

namespace {

using Path = std::vector<EagerValueRef::Step>;

// One TensorDictModule's forward graph, copied, with the calls and the taken blocks of ifs on the way
// to the wanted values inlined, so that the values lie in its top block. Each step keeps the map
// from the original graph's values and nodes to their copies there.
class InlinedForward {
 public:
  explicit InlinedForward(const torch::jit::Module& module) : graph_(std::make_shared<jit::Graph>()) {
    jit::Graph& forward = *jit::toGraphFunction(module.get_method("forward").function()).graph();
    std::vector<jit::Value*> inputs;
    for (jit::Value* in : forward.inputs()) inputs.push_back(graph_->addInput()->setType(in->type()));
    Copies& root = copies_[{}];
    results_ = jit::insertGraph(*graph_, forward, inputs, root.values);
    mapNodes(forward.block(), graph_->block()->nodes().begin(), root);
  }

  /// Inlines the steps on the way to `ref`; false when they cannot be (inside a loop, an interface).
  bool reach(const EagerValueRef& ref) { return copiesFor(ref.path, ref.path.size()) != nullptr; }

  /// The copy of `ref`'s value, once every reach() is done; null when it is not in the top block.
  jit::Value* valueOf(const EagerValueRef& ref) {
    const auto found = copies_.find(ref.path);
    if (found == copies_.end()) return nullptr;
    const auto v = found->second.values.find(const_cast<jit::Value*>(ref.value));
    if (v == found->second.values.end() || v->second->node()->owningBlock() != graph_->block()) return nullptr;
    if (!ref.allOutputs) return v->second;
    jit::Node* made = v->second->node();  // its outputs as one tuple, made right after it
    jit::WithInsertPoint guard(made->next());
    return graph_->insertNode(graph_->createTuple(made->outputs()))->output();
  }

  /// Returns one tuple: the forward's own result, the conditions of the ifs whose block was taken,
  /// then for each of `extra` its fingerprint, or where `full` says so the value itself (a function
  /// has one output). Both are taken where the value is made, so that an in-place change later in
  /// the forward does not reach what is compared (the traced side is compared as each node runs):
  /// a tensor kept in full is copied there.
  std::shared_ptr<jit::Graph> finish(const std::vector<jit::Value*>& extra, const std::vector<bool>& full,
                                     uint64_t fingerprintKey) {
    std::vector<jit::Value*> all = results_;
    for (const auto& [condition, expected] : conditions_) all.push_back(condition);
    for (const auto& [trips, expected] : trips_) all.push_back(trips);
    for (size_t i = 0; i < extra.size(); ++i) {
      jit::Value* v = extra[i];
      const bool tensor = v->type()->isSubtypeOf(*c10::TensorType::get());
      if (full[i] && !tensor) {
        all.push_back(v);
        continue;
      }
      jit::Node* made = v->node()->kind() == c10::prim::Param ? nullptr : v->node();
      jit::WithInsertPoint guard(made ? made->next() : graph_->block()->nodes().front());
      if (full[i]) {
        all.push_back(graph_->insert(c10::aten::clone, {v}));
        continue;
      }
      jit::Value* key = graph_->insertConstant(static_cast<int64_t>(fingerprintKey));
      jit::Node* fingerprint = graph_->insertNode(graph_->create(fingerprintOperator(), {v, key}));
      all.push_back(fingerprint->output()->setType(c10::AnyType::get()));
    }
    graph_->registerOutput(graph_->insertNode(graph_->createTuple(all))->output());
    return graph_;
  }

  /// What each if's condition must have been for the blocks taken to be the ones that ran.
  const std::vector<std::pair<jit::Value*, bool>>& conditions() const { return conditions_; }
  /// The trip counts of loops unrolled as many times as the tracer ran them, each with that
  /// number: the count the run computes must be it.
  const std::vector<std::pair<jit::Value*, int64_t>>& trips() const { return trips_; }

  /// Notes the loop iterations on `ref`'s path, before any reach(): a loop whose trip count is
  /// computed (`for s in self.sizes`) is unrolled as many times as the tracer ran it.
  void note(const EagerValueRef& ref) {
    for (const auto& step : ref.path)
      if (step.node->kind() == c10::prim::Loop)
        iterations_[step.node] = std::max<int64_t>(iterations_[step.node], static_cast<int64_t>(step.block) + 1);
  }

 private:
  struct Copies {
    std::unordered_map<jit::Value*, jit::Value*> values;
    std::unordered_map<const jit::Node*, jit::Node*> nodes;  // the top block's nodes
  };

  // The copies of `block`'s nodes start at `copy`, in the same order: map them and their outputs.
  static void mapNodes(jit::Block* block, jit::graph_node_list_iterator copy, Copies& copies) {
    for (jit::Node* original : block->nodes()) {
      copies.nodes[original] = *copy;
      for (size_t i = 0; i < original->outputs().size(); ++i) copies.values[original->output(i)] = copy->output(i);
      ++copy;
    }
  }

  Copies* copiesFor(const Path& path, size_t length) {
    const Path key(path.begin(), path.begin() + static_cast<long>(length));
    if (auto it = copies_.find(key); it != copies_.end()) return &it->second;
    if (length == 0 || unreachable_.count(key)) return nullptr;
    Copies* parent = copiesFor(path, length - 1);
    const EagerValueRef::Step& step = path[length - 1];
    const auto found = parent ? parent->nodes.find(step.node) : decltype(parent->nodes)::iterator{};
    if (!parent || found == parent->nodes.end() || found->second->owningBlock() != graph_->block() ||
        found->second->kind() != step.node->kind())
      return remember(key);
    jit::Node* copy = found->second;
    Copies copies;
    std::vector<jit::Value*> results;
    if (step.node->kind() == c10::prim::Loop) {
      // Every iteration is unrolled at once (each reads the one before); the one asked for is
      // returned, or null when the loop runs fewer times, or cannot be unrolled.
      if (!unrollLoop(copy, step.node, path, length)) return remember(key);
      const auto it = copies_.find(key);
      return it == copies_.end() ? remember(key) : &it->second;
    }
    if (step.node->kind() == c10::prim::If) {
      results = takeBlock(copy, step, copies);
    } else {
      std::shared_ptr<jit::Graph> callee = calleeOf(step.node);
      if (!callee) return remember(key);
      std::vector<jit::Value*> args(copy->inputs().begin(), copy->inputs().end());
      if (step.node->kind() == c10::prim::CallFunction) args.erase(args.begin());
      jit::Node* before = copy->prev();
      {
        jit::WithInsertPoint guard(copy);
        results = jit::insertGraph(*graph_, *callee, args, copies.values);
      }
      mapNodes(callee->block(), before->next()->iterator(), copies);
    }
    replace(copy, results);
    return &(copies_[key] = std::move(copies));
  }

  // The callee's graph of an inlined call; null for an interface's method.
  static std::shared_ptr<jit::Graph> calleeOf(const jit::Node* call) {
    if (call->kind() == c10::prim::CallMethod) {
      const auto cls = call->input(0)->type()->cast<c10::ClassType>();
      jit::Function* method = cls ? cls->findMethod(call->s(c10::attr::name)) : nullptr;
      return method ? jit::toGraphFunction(*method).graph() : nullptr;
    }
    if (call->kind() == c10::prim::CallFunction) {
      const auto fn = call->input(0)->type()->cast<c10::FunctionType>();
      return fn ? jit::toGraphFunction(*fn->function()).graph() : nullptr;
    }
    return nullptr;
  }

  // Moves the taken block of the if's copy before it; the block's results stand for the if's.
  // Its condition is checked after the run (conditions()).
  std::vector<jit::Value*> takeBlock(jit::Node* ifCopy, const EagerValueRef::Step& step, Copies& copies) {
    jit::Block* block = ifCopy->blocks().at(step.block);
    mapNodes(const_cast<jit::Node*>(step.node)->blocks().at(step.block), block->nodes().begin(), copies);
    conditions_.emplace_back(ifCopy->input(0), step.block == 0);
    std::vector<jit::Value*> results(block->outputs().begin(), block->outputs().end());
    for (auto it = block->nodes().begin(); it != block->nodes().end();) (*it++)->moveBefore(ifCopy);
    return results;
  }

  // Unrolls the copy of a loop whose trip count and conditions are constants (`for i in range(3)`,
  // a loop over a tuple's items), as the tracer did: each iteration's body is cloned before the loop
  // with its counter and carried values, and its Copies registered under the path of `original`
  // with the iteration as the step's block. False when the loop's iterations are not known.
  bool unrollLoop(jit::Node* loop, const jit::Node* original, const Path& path, size_t length) {
    const auto constant = [](jit::Value* v) { return jit::toIValue(v); };
    const auto trips = constant(loop->input(0));
    const auto start = constant(loop->input(1));
    if (!start || !start->isBool()) return false;
    jit::Block* body = loop->blocks().at(0);
    jit::Block* originalBody = const_cast<jit::Node*>(original)->blocks().at(0);
    const auto cond = constant(body->outputs().at(0));
    if (!cond || !cond->isBool()) return false;
    constexpr int64_t kMaxIterations = 4096;  // the tracer's own limit is lower: a bound, not a policy
    int64_t count = 0;
    if (trips && trips->isInt()) {
      count = !start->toBool() ? 0 : !cond->toBool() ? std::min<int64_t>(trips->toInt(), 1) : trips->toInt();
    } else {
      // A computed trip count (`len(self.sizes)`): as many iterations as the tracer ran, checked
      // against the count the run computes (trips()).
      const auto ran = iterations_.find(original);
      if (ran == iterations_.end() || !start->toBool() || !cond->toBool()) return false;
      count = ran->second;
      trips_.emplace_back(loop->input(0), count);
    }
    if (count > kMaxIterations) return false;
    std::vector<jit::Value*> carried(loop->inputs().begin() + 2, loop->inputs().end());
    const Path prefix(path.begin(), path.begin() + static_cast<long>(length) - 1);
    for (int64_t k = 0; k < count; ++k) {
      std::unordered_map<jit::Value*, jit::Value*> env;  // the body's values -> this iteration's
      jit::WithInsertPoint guard(loop);
      env[body->inputs().at(0)] = graph_->insertConstant(k);
      for (size_t j = 0; j < carried.size(); ++j) env[body->inputs().at(j + 1)] = carried[j];
      const auto lookup = [&env](jit::Value* v) {
        const auto it = env.find(v);
        return it == env.end() ? v : it->second;
      };
      Copies copies;
      for (size_t j = 0; j < originalBody->inputs().size(); ++j)
        copies.values[originalBody->inputs()[j]] = env.at(body->inputs()[j]);
      auto originalNode = originalBody->nodes().begin();
      for (jit::Node* n : body->nodes()) {
        jit::Node* clone = graph_->insertNode(graph_->createClone(n, lookup));
        for (size_t o = 0; o < n->outputs().size(); ++o) env[n->output(o)] = clone->output(o);
        copies.nodes[*originalNode] = clone;
        for (size_t o = 0; o < clone->outputs().size(); ++o) copies.values[originalNode->output(o)] = clone->output(o);
        ++originalNode;
      }
      for (size_t j = 0; j < carried.size(); ++j) carried[j] = lookup(body->outputs().at(j + 1));
      Path key = prefix;
      key.push_back({original, static_cast<size_t>(k)});
      copies_[key] = std::move(copies);
    }
    replace(loop, carried);
    return true;
  }

  // The values of `copy` (a call or an if) are `results` now, in every map that held them.
  void replace(jit::Node* copy, const std::vector<jit::Value*>& results) {
    for (size_t i = 0; i < copy->outputs().size() && i < results.size(); ++i) {
      jit::Value* old = copy->output(i);
      for (auto& [path, c] : copies_)
        for (auto& [from, to] : c.values)
          if (to == old) to = results[i];
      for (jit::Value*& r : results_)
        if (r == old) r = results[i];
      old->replaceAllUsesWith(results[i]);
    }
    for (auto& [path, c] : copies_)
      for (auto it = c.nodes.begin(); it != c.nodes.end();) it = it->second == copy ? c.nodes.erase(it) : std::next(it);
    copy->destroy();
  }

  Copies* remember(const Path& key) {
    unreachable_.insert(key);
    return nullptr;
  }

  std::shared_ptr<jit::Graph> graph_;
  std::vector<jit::Value*> results_;
  std::vector<std::pair<jit::Value*, bool>> conditions_;
  std::vector<std::pair<jit::Value*, int64_t>> trips_;
  std::map<const jit::Node*, int64_t> iterations_;
  std::map<Path, Copies> copies_;
  std::set<Path> unreachable_;
};

void runModule(const TensorDictModule& module, const std::string& position, const Graph& graph, TensorDict& td,
               TensorDict* tdOut, const EagerRecording& recording, EagerNodeValues& out) {
  InlinedForward inlined(module.module());
  const auto inFull = [&](const Node& n) {
    return n.index() < recording.fullValues.size() && recording.fullValues[n.index()];
  };
  std::vector<const Node*> wanted;
  for (const auto& n : graph.nodes())
    if (n->meta().eagerValue && n->meta().tdModule == position) inlined.note(*n->meta().eagerValue);
  for (const auto& n : graph.nodes())
    if (n->meta().eagerValue && n->meta().tdModule == position && (recording.fullValues.empty() || inFull(*n)) &&
        inlined.reach(*n->meta().eagerValue))
      wanted.push_back(n.get());
  std::vector<const Node*> nodes;
  std::vector<jit::Value*> extra;
  std::vector<bool> full;
  for (const Node* n : wanted) {
    if (jit::Value* v = inlined.valueOf(*n->meta().eagerValue)) {
      nodes.push_back(n);
      extra.push_back(v);
      full.push_back(inFull(*n));
    }
  }
  jit::GraphFunction function(c10::QualifiedName("tdfx_verify.eager_values"),
                              inlined.finish(extra, full, recording.fingerprintKey), nullptr);
  jit::Stack stack{module.module()._ivalue()};
  for (c10::IValue& v : module.arguments(td)) stack.push_back(std::move(v));
  // forward's parameters past the in keys (`scale: float = 2.0`) take their defaults, as a Method
  // call fills them in; a bare GraphFunction does not.
  const auto& parameters = module.module().get_method("forward").function().getSchema().arguments();
  for (size_t i = stack.size(); i < parameters.size() && parameters[i].default_value(); ++i)
    stack.push_back(*parameters[i].default_value());
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
  const size_t conditions = inlined.conditions().size() + inlined.trips().size();
  if (results.size() != 1 + conditions + nodes.size())
    throw RuntimeError("the eager module's recording run returned " + std::to_string(results.size()) + " values, expected " +
                       std::to_string(1 + conditions + nodes.size()));
  // Loops unrolled as often as the tracer ran them: the run must have computed that many.
  for (size_t i = 0; i < inlined.trips().size(); ++i) {
    const size_t at = 1 + inlined.conditions().size() + i;
    if (results[at].toInt() == inlined.trips()[i].second) continue;
    throw RuntimeError("a loop ran " + std::to_string(results[at].toInt()) + " times in the eager code, " +
                       std::to_string(inlined.trips()[i].second) + " while tracing");
  }
  // The blocks of ifs were run in place of the ifs: they must be the blocks the conditions choose.
  for (size_t i = 0; i < inlined.conditions().size(); ++i) {
    if (results[1 + i].toBool() == inlined.conditions()[i].second) continue;
    const auto loc = inlined.conditions()[i].first->node()->sourceRange().file_line_col();
    throw RuntimeError("an if " + (loc ? "at " + std::get<0>(*loc) + ":" + std::to_string(std::get<1>(*loc)) + " " : std::string()) +
                       "took another block in the eager code than while tracing");
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    out.values[nodes[i]->index()] = results[1 + conditions + i];
    out.found[nodes[i]->index()] = true;
  }
  if (module.isPlain()) out.plainOutputs = module.outputsOf(results[0]);
  module.write(results[0], tdOut ? *tdOut : td);
}

// As TensorDictModuleBase::forward(td, tdOut) runs: a sequential with a destination runs its
// modules on a working copy, and only its out keys reach the destination.
void runTree(const TensorDictModuleBase& module, const std::string& position, const Graph& graph, TensorDict& td,
             TensorDict* tdOut, const EagerRecording& recording, EagerNodeValues& out) {
  if (const auto* seq = dynamic_cast<const TensorDictSequential*>(&module)) {
    TensorDict work;
    if (tdOut) work = td;
    TensorDict& into = tdOut ? work : td;
    for (size_t i = 0; i < seq->modules().size(); ++i)
      runTree(*seq->modules()[i], position.empty() ? std::to_string(i) : position + "." + std::to_string(i), graph,
              into, nullptr, recording, out);
    if (tdOut)
      for (const NestedKey& key : seq->outKeys())
        if (!isDiscardKey(key) && work.contains(key)) tdOut->set(key, work.get(key));
    return;
  }
  const auto* leaf = dynamic_cast<const TensorDictModule*>(&module);
  if (!leaf) throw Error("cannot record the eager values of a module that is neither a TensorDictModule nor a sequential");
  runModule(*leaf, position, graph, td, tdOut, recording, out);
}

}  // namespace

EagerNodeValues runRecordingEagerValues(const TensorDictModuleBase& eager, const Graph& graph, TensorDict& td,
                                        const EagerRecording& recording, TensorDict* tdOut) {
  plantedFault("eager-recording");  // tests: a recording that fails must leave the verdict NOT PROVEN
  EagerNodeValues out;
  out.values.resize(graph.size());
  out.found.assign(graph.size(), false);
  runTree(eager, "", graph, td, tdOut, recording, out);
  return out;
}

}  // namespace tdfx::runtime
