#include "tdfx/runtime/graph_module.h"

#include <chrono>

#include <torch/csrc/autograd/grad_mode.h>

#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/ir/kernel.h"

namespace tdfx {

GraphModule::GraphModule(TracedGraph traced, std::vector<NestedKey> inKeys)
    : traced_(std::move(traced)), inKeys_(std::move(inKeys)), code_(pythonCode(*traced_.graph)) {
  useReferenceExecutor();
  const auto& nodes = traced_.graph->nodes();
  std::vector<size_t> lastUse(nodes.size(), 0);
  for (const auto& n : nodes) {
    const auto mark = [&](Node* used) { lastUse[used->index()] = n->index(); };
    for (const Argument& a : n->args()) forEachNode(a, mark);
    for (const auto& kv : n->kwargs()) forEachNode(kv.second, mark);
    if (n->kernel()) {
      std::vector<const KernelInput*> stack;
      for (const KernelInput& in : n->kernel()->inputs) stack.push_back(&in);
      while (!stack.empty()) {
        const KernelInput* in = stack.back();
        stack.pop_back();
        if (in->node) mark(in->node);
        for (const KernelInput& item : in->items) stack.push_back(&item);
      }
    }
  }
  freeAfter_.assign(nodes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i)
    if (lastUse[i] > i) freeAfter_[lastUse[i]].push_back(i);
}

std::string GraphModule::graphText() const { return printGraph(*traced_.graph); }

namespace {

std::string describe(const Node& node) {
  std::string s = "node '" + node.name() + "' (" + opKindName(node.op()) + " " + node.target();
  if (!node.meta().sourceFile.empty())
    s += ", " + node.meta().sourceFile + ":" + std::to_string(node.meta().sourceLine);
  return s + ")";
}

std::vector<TensorMeta> tensorMetas(const c10::IValue& value) {
  std::vector<TensorMeta> outs;
  const auto add = [&](const c10::IValue& v) {
    if (v.isTensor()) outs.push_back(TensorMeta{v.toTensor().sizes().vec(), v.toTensor().scalar_type()});
  };
  if (value.isTuple()) {
    for (const auto& v : value.toTupleRef().elements()) add(v);
  } else if (value.isList()) {
    for (const auto& v : value.toListRef()) add(v);
  } else {
    add(value);
  }
  return outs;
}

}  // namespace

void GraphModule::run(TensorDict& td, TensorDict* tdOut, std::vector<NodeRunRecord>* records,
                      const std::vector<const Node*>* capture, std::vector<c10::IValue>* captured) const {
  torch::NoGradGuard noGrad;
  const auto& nodes = traced_.graph->nodes();
  std::vector<c10::IValue> env(nodes.size());
  std::vector<bool> keep;  // values to keep for the caller (capture); empty: free everything
  if (records) records->assign(nodes.size(), NodeRunRecord{});
  if (capture) {
    keep.assign(nodes.size(), false);
    for (const Node* n : *capture) keep.at(n->index()) = true;
  }

  std::function<c10::IValue(const KernelInput&)> evalInput = [&](const KernelInput& in) -> c10::IValue {
    switch (in.kind) {
      case KernelInput::Kind::Constant: return in.constant;
      case KernelInput::Kind::NodeValue: return env[in.node->index()];
      case KernelInput::Kind::List: {
        c10::impl::GenericList list(in.elementType);
        for (const KernelInput& item : in.items) list.push_back(evalInput(item));
        return c10::IValue(list);
      }
      case KernelInput::Kind::Tuple: {
        std::vector<c10::IValue> items;
        for (const KernelInput& item : in.items) items.push_back(evalInput(item));
        return c10::ivalue::Tuple::create(std::move(items));
      }
    }
    return {};
  };
  std::function<c10::IValue(const Argument&)> evalArg = [&](const Argument& a) -> c10::IValue {
    if (a.isNode()) return env[a.node()->index()];
    if (const auto* items = a.items()) {
      std::vector<c10::IValue> values;
      for (const Argument& item : *items) values.push_back(evalArg(item));
      return c10::ivalue::Tuple::create(std::move(values));
    }
    if (std::holds_alternative<int64_t>(a.value)) return std::get<int64_t>(a.value);
    return {};
  };

  std::vector<c10::IValue> outputs;
  for (const auto& nodePtr : nodes) {
    Node& node = *nodePtr;
    const size_t i = node.index();
    const auto started = records ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    try {
      if (node.op() == OpKind::Placeholder) {
        // A plain module's parameter reads the key of its name; one with a default may be absent.
        const auto& key = node.meta().tensordictKey;
        if (key && (td.contains(*key) || !node.kernel())) {
          env[i] = td.get(*key);
        } else if (node.kernel()) {
          torch::jit::Stack stack;
          node.kernel()->run(stack);
          env[i] = stack.back();
        }
        continue;
      }
      if (node.op() == OpKind::Output) {
        const Argument& result = node.args().at(0);
        if (const auto* items = result.items(); items && !result.isNode()) {
          for (const Argument& item : *items) outputs.push_back(evalArg(item));
        } else {
          c10::IValue v = evalArg(result);
          if (v.isTuple()) outputs = v.toTupleRef().elements().vec();
          else outputs.push_back(v);
        }
        continue;
      }
      if (const auto& kernel = node.kernel()) {
        torch::jit::Stack stack;
        stack.reserve(kernel->inputs.size());
        for (const KernelInput& in : kernel->inputs) stack.push_back(evalInput(in));
        kernel->run(stack);
        if (kernel->numOutputs == 1) {
          env[i] = stack.back();
        } else {
          env[i] = c10::ivalue::Tuple::create(std::vector<c10::IValue>(stack.end() - kernel->numOutputs, stack.end()));
        }
      } else if (node.meta().tensordictKey) {
        env[i] = td.get(*node.meta().tensordictKey);
      } else if (node.target() == "operator.getitem") {
        const c10::IValue container = evalArg(node.args().at(0));
        const int64_t index = std::get<int64_t>(node.args().at(1).value);
        if (container.isTuple()) env[i] = container.toTupleRef().elements().at(index);
        else if (container.isList()) env[i] = container.toListRef().at(index);
        else throw RuntimeError("cannot index a " + container.tagKind());
      } else {
        throw RuntimeError("no way to execute this node");
      }
      if (records) {
        (*records)[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        (*records)[i].outputs = tensorMetas(env[i]);
      }
    } catch (const KeyError&) {
      throw;
    } catch (const c10::Error& e) {
      throw RuntimeError("running " + describe(node) + " failed: " + e.what_without_backtrace());
    } catch (const std::exception& e) {
      throw RuntimeError("running " + describe(node) + " failed: " + e.what());
    }
    // Free values after their last use, like the `x = None` lines of FX code.
    for (size_t used : freeAfter_[i])
      if (keep.empty() || !keep[used]) env[used] = c10::IValue();
  }
  if (captured) {
    captured->clear();
    for (const Node* n : *capture) captured->push_back(env[n->index()]);
  }

  const auto& keys = traced_.outKeys;
  // More outputs than keys: the extra ones are not written (tensordict zips them with out_keys).
  if (outputs.size() < keys.size())
    throw RuntimeError("the graph produced " + std::to_string(outputs.size()) + " value(s) but out_keys has " +
                       std::to_string(keys.size()) + " (" + keysToString(keys) + ")");
  TensorDict& dest = tdOut ? *tdOut : td;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (isDiscardKey(keys[k]) || outputs[k].isNone()) continue;  // None (an optional output): nothing to write
    if (!outputs[k].isTensor())
      throw RuntimeError("output for key " + keyRepr(keys[k]) + " is a " + outputs[k].tagKind() + ", expected a Tensor");
    dest.set(keys[k], outputs[k].toTensor());
  }
}

void GraphModule::forward(TensorDict& td, TensorDict* tdOut) const { run(td, tdOut, nullptr); }

std::vector<c10::IValue> GraphModule::forwardCapturing(TensorDict& td, TensorDict* tdOut,
                                                      const std::vector<const Node*>& nodes) const {
  std::vector<c10::IValue> values;
  run(td, tdOut, nullptr, &nodes, &values);
  return values;
}

std::vector<NodeRunRecord> GraphModule::forwardRecorded(TensorDict& td, TensorDict* tdOut) const {
  std::vector<NodeRunRecord> records;
  run(td, tdOut, &records);
  return records;
}

void GraphModule::forwardAndRecordShapes(TensorDict& td, TensorDict* tdOut) {
  applyRunRecords(*traced_.graph, forwardRecorded(td, tdOut));
}

void applyRunRecords(Graph& graph, const std::vector<NodeRunRecord>& records) {
  const auto& nodes = graph.nodes();
  if (records.size() != nodes.size())
    throw Error("run records are for a graph of " + std::to_string(records.size()) + " nodes, this one has " +
                std::to_string(nodes.size()));
  for (const auto& node : nodes) {
    node->meta().outputs = records[node->index()].outputs;
    node->meta().seconds = records[node->index()].seconds;
  }
}

GraphModule symbolicTrace(const TensorDictModuleBase& module) {
  return GraphModule(traceGraph(module), module.inKeys());
}

}  // namespace tdfx
