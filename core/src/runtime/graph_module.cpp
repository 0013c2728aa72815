#include "tdfx/runtime/graph_module.h"

#include <chrono>
#include <mutex>

#include <torch/csrc/autograd/grad_mode.h>

#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/runtime/torchscript_export.h"
#include "printed_call.h"
#include "python_subscript.h"
#include "random_state.h"

namespace tdfx {

struct GraphModule::WholeForward {
  torch::jit::Module module;
  std::vector<std::pair<NestedKey, std::string>> reads;  // TensorDict keys read, and their flat names
  std::vector<std::string> parameters;                    // a plain archive's: the placeholders' keys
};

struct GraphModule::WholeState {
  std::once_flag once;
  std::shared_ptr<const WholeForward> forward;
  std::string reason;  // why there is none
};

namespace {
// A key with a '.' in a part: flattened, it could name another key.
bool flattensAmbiguously(const NestedKey& key) {
  for (const auto& part : key.parts())
    if (part.find('.') != std::string::npos) return true;
  return false;
}
}  // namespace

GraphModule::GraphModule(TracedGraph traced, std::vector<NestedKey> inKeys)
    : traced_(std::move(traced)), inKeys_(std::move(inKeys)), code_(pythonCode(*traced_.graph)) {
  useReferenceExecutor();
  const auto& nodes = traced_.graph->nodes();
  callInputs_.reserve(nodes.size());
  for (const auto& n : nodes) callInputs_.push_back(runtime::referencedNodes(*n));
  std::vector<size_t> lastUse(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Node* used : callInputs_[i]) lastUse[used->index()] = i;
  freeAfter_.assign(nodes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i)
    if (lastUse[i] > i) freeAfter_[lastUse[i]].push_back(i);
  std::shared_ptr<torch::jit::CompilationUnit> functions;
  if (!traced_.moduleRoots.empty()) functions = traced_.moduleRoots.front().second._ivalue()->compilation_unit();
  calls_ = std::make_shared<runtime::PrintedCalls>(nodes.size(), std::move(functions));
  for (const auto& n : nodes) {
    if (n->op() == OpKind::Placeholder) {
      if (traced_.readsTensorDict) tensordict_ = n.get();
      break;
    }
  }
  whole_ = std::make_shared<WholeState>();
}

std::shared_ptr<const GraphModule::WholeForward> GraphModule::wholeForward() const {
  std::call_once(whole_->once, [this] {
    auto whole = std::make_shared<WholeForward>();
    bool ambiguous = false;  // a key part with a '.': its flattened name could be another key's
    for (const auto& n : traced_.graph->nodes()) {
      if (n->op() != OpKind::Placeholder && !(n->op() == OpKind::CallFunction && n->target() == "operator.getitem")) continue;
      if (n->op() == OpKind::Placeholder) {
        if (n.get() == tensordict_) continue;
        if (traced_.readsTensorDict) {  // a parameter past the in keys: node by node
          whole_->reason = "forward's parameter '" + n->target() + "' is not an in key";
          return;
        }
        whole->parameters.push_back(n->target());
      } else if (tensordict_ && n->args().size() == 2 && n->args()[0].isNode() && n->args()[0].node() == tensordict_) {
        const NestedKey key = runtime::tensordictKey(n->args()[1]);
        ambiguous = ambiguous || flattensAmbiguously(key);
        whole->reads.emplace_back(key, flattenedKey(key));
      }
    }
    for (const NestedKey& key : traced_.outKeys) ambiguous = ambiguous || flattensAmbiguously(key);
    if (ambiguous) {
      whole_->reason = "a key part holds a '.', so flattened keys could name two keys";
      return;
    }
    try {
      whole->module = toTorchScript(*this);
    } catch (const std::exception& e) {
      const std::string message = e.what();
      whole_->reason = message.substr(0, message.find('\n'));  // TorchScript cannot express some node
      return;
    }
    whole_->forward = std::move(whole);
  });
  return whole_->forward;
}

bool GraphModule::wholeArguments(const WholeForward& whole, const TensorDict& td, std::vector<c10::IValue>& args) const {
  args.clear();
  if (tensordict_) {
    c10::Dict<std::string, at::Tensor> in;
    for (const auto& [key, flat] : whole.reads) {
      if (!td.contains(key) || td.isTensorDict(key)) return false;
      in.insert(flat, td.get(key));
    }
    args.emplace_back(std::move(in));
  } else {
    for (const std::string& name : whole.parameters) {
      if (!td.contains(NestedKey(name))) return false;  // a default: node by node
      args.emplace_back(td.get(NestedKey(name)));
    }
  }
  return true;
}

std::vector<c10::IValue> GraphModule::wholeOutputs(const c10::IValue& result) const {
  std::vector<c10::IValue> outputs;
  if (tensordict_) {
    const auto dict = result.toGenericDict();
    for (const NestedKey& key : traced_.outKeys) {
      const std::string flat = flattenedKey(key);
      outputs.push_back(!isDiscardKey(key) && dict.contains(flat) ? dict.at(flat) : c10::IValue());
    }
  } else if (result.isTuple()) {
    outputs = result.toTupleRef().elements().vec();
  } else {
    outputs.push_back(result);
  }
  return outputs;
}

std::string GraphModule::nodeByNodeReason() const {
  wholeForward();
  return whole_->reason;
}

std::vector<c10::IValue> GraphModule::call(TensorDict& td) const {
  const auto whole = wholeForward();
  std::vector<c10::IValue> args;
  if (!whole || !wholeArguments(*whole, td, args)) return run(td, nullptr);
  torch::NoGradGuard noGrad;
  // What the whole forward starts from, so that a diagnosis after its failure starts there too: it
  // may have changed its inputs in place or drawn random numbers before it failed.
  const TensorDict before = td.clone();
  const at::Tensor random = runtime::saveRandomState();
  try {
    torch::jit::Module module = whole->module;  // a handle: forward is not const
    return wholeOutputs(module.forward(std::move(args)));
  } catch (const std::exception& e) {
    const std::string message = e.what();
    td = before;
    runtime::restoreRandomState(random);
    run(td, nullptr);  // throws the error naming the failing node
    throw RuntimeError("the printed graph's forward failed: " + message.substr(0, message.find('\n')) +
                       "; run again node by node from the same inputs and random state, it did not fail: the "
                       "TorchScript forward and the node-by-node runtime disagree");
  }
}

std::string GraphModule::graphText() const { return printGraph(*traced_.graph); }

std::string GraphModule::printedLine(const Node& node) const {
  std::string text = statementText(code_, node.name());
  // The frees FX appends (`;  x = None`) are not part of the node's statement.
  if (const size_t frees = text.find(";  "); frees != std::string::npos) text.resize(frees);
  return text;
}

namespace {

std::string describe(const Node& node, const std::string& printed) {
  std::string s = "node '" + node.name() + "' (" + opKindName(node.op()) + " " + node.target();
  if (!node.meta().sourceFile.empty())
    s += ", " + node.meta().sourceFile + ":" + std::to_string(node.meta().sourceLine);
  s += ")";
  if (!printed.empty()) s += ", printed `" + printed + "`,";
  return s;
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

bool truthy(const c10::IValue& v) {
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  if (v.isDouble()) return v.toDouble() != 0.0;
  if (v.isTensor()) return v.toTensor().is_nonzero();
  if (v.isNone()) return false;
  throw RuntimeError("the condition of torch._assert is a " + v.tagKind());
}

// `module(*args, **kwargs)`: its forward, or the first of the methods Python's forward chooses
// from whose schema takes the arguments: TorchScript compiles an @overload-ed forward (nn.GRU's) as
// forward__0, forward__1, ...; the dynamic quantized RNNs' forward picks forward_tensor or
// forward_packed by the input's type.
c10::IValue callForward(const torch::jit::Module& module, std::vector<c10::IValue> args,
                        const std::unordered_map<std::string, c10::IValue>& kwargs) {
  if (auto forward = module.find_method("forward")) return (*forward)(std::move(args), kwargs);
  std::vector<std::string> candidates;
  for (int k = 0; module.find_method("forward__" + std::to_string(k)); ++k)
    candidates.push_back("forward__" + std::to_string(k));
  for (const char* name : {"forward_tensor", "forward_packed"})
    if (module.find_method(name)) candidates.emplace_back(name);
  std::string tried;
  for (const std::string& name : candidates) {
    auto overload = module.find_method(name);
    std::vector<c10::IValue> stack{module._ivalue()};
    stack.insert(stack.end(), args.begin(), args.end());
    try {
      overload->function().getSchema().checkAndNormalizeInputs(stack, kwargs);
    } catch (const std::exception& e) {
      tried += std::string("\n") + e.what();
      continue;
    }
    return (*overload)(std::move(args), kwargs);
  }
  throw RuntimeError("the module has no forward that takes these arguments" + tried);
}

}  // namespace

const std::pair<std::string, torch::jit::Module>& moduleRootOf(const TracedGraph& traced, const std::string& target) {
  const std::pair<std::string, torch::jit::Module>* root = nullptr;
  for (const auto& r : traced.moduleRoots)
    if (target.compare(0, r.first.size(), r.first) == 0 && (!root || r.first.size() > root->first.size())) root = &r;
  if (!root) throw RuntimeError("no module owns '" + target + "'");
  return *root;
}

std::string flattenedKey(const NestedKey& key) {
  std::string s;
  for (const auto& part : key.parts()) s += (s.empty() ? "" : ".") + part;
  return s;
}

c10::IValue attributeValue(const TracedGraph& traced, const std::string& target) {
  if (auto it = traced.tensorConstants.find(target); it != traced.tensorConstants.end()) return it->second;
  const auto& root = moduleRootOf(traced, target);
  c10::IValue value = root.second._ivalue();
  std::string rest = target.substr(root.first.size());
  size_t start = 0;
  while (start <= rest.size() && !rest.empty()) {
    const size_t dot = rest.find('.', start);
    const std::string name = rest.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!value.isObject() || !value.toObjectRef().type()->hasAttribute(name))
      throw RuntimeError("the module has no attribute '" + name + "' (in '" + target + "')");
    value = value.toObjectRef().getAttr(name);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return value;
}

c10::IValue GraphModule::attribute(const std::string& target) const { return attributeValue(traced_, target); }

std::vector<c10::IValue> GraphModule::run(TensorDict& td, std::vector<NodeRunRecord>* records,
                                          const std::vector<const Node*>* capture, std::vector<c10::IValue>* captured,
                                          const ValueObserver* onValue) const {
  torch::NoGradGuard noGrad;
  const auto& nodes = traced_.graph->nodes();
  std::vector<c10::IValue> env(nodes.size());
  std::vector<bool> keep;  // values to keep for the caller (capture); empty: free everything
  if (records) records->assign(nodes.size(), NodeRunRecord{});
  if (capture) {
    keep.assign(nodes.size(), false);
    for (const Node* n : *capture) keep.at(n->index()) = true;
  }
  const std::function<c10::IValue(const Node*)> valueOf = [&env](const Node* n) { return env[n->index()]; };
  const auto evalArg = [&valueOf](const Argument& a) { return runtime::argumentValue(a, valueOf); };

  std::vector<c10::IValue> outputs;
  for (const auto& nodePtr : nodes) {
    const Node& node = *nodePtr;
    const size_t i = node.index();
    const auto started = records ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    try {
      switch (node.op()) {
        case OpKind::Placeholder:
          if (&node == tensordict_) break;  // read through tensordict[key]
          // A plain module's parameter reads the key of its name; one with a default may be absent.
          if (td.contains(NestedKey(node.target())) || node.args().empty()) env[i] = td.get(NestedKey(node.target()));
          else env[i] = evalArg(node.args().front());
          break;
        case OpKind::Output: {
          const Argument& result = node.args().at(0);
          if (const auto* items = result.items(); items && !result.isNode()) {
            for (const Argument& item : *items) outputs.push_back(evalArg(item));
          } else {
            c10::IValue v = evalArg(result);
            if (v.isTuple()) outputs = v.toTupleRef().elements().vec();
            else outputs.push_back(v);
          }
          break;
        }
        case OpKind::GetAttr: env[i] = attribute(node.target()); break;
        case OpKind::CallModule: {
          const c10::IValue module = attribute(node.target());
          if (!module.isObject()) throw RuntimeError("'" + node.target() + "' is not a module");
          std::vector<c10::IValue> args;
          for (const Argument& a : node.args()) args.push_back(evalArg(a));
          std::unordered_map<std::string, c10::IValue> kwargs;
          for (const auto& [name, a] : node.kwargs()) kwargs.emplace(name, evalArg(a));
          env[i] = callForward(torch::jit::Module(module.toObject()), std::move(args), kwargs);
          break;
        }
        case OpKind::CallFunction:
          if (node.target() == "operator.getitem" && node.args().size() == 2) {
            const Argument& container = node.args()[0];
            if (tensordict_ && container.isNode() && container.node() == tensordict_)
              env[i] = td.get(runtime::tensordictKey(node.args()[1]));
            else
              env[i] = runtime::pythonSubscript(evalArg(container), node.args()[1], valueOf);
            break;
          }
          if (node.target() == "torch._assert") {
            // torch._assert(condition, message): Python's `assert condition, message`.
            if (node.args().empty()) throw RuntimeError("torch._assert needs a condition");
            if (!truthy(evalArg(node.args()[0]))) {
              const c10::IValue message = node.args().size() > 1 ? evalArg(node.args()[1]) : c10::IValue();
              throw std::runtime_error("AssertionError: " + (message.isString() ? message.toStringRef() : std::string()));
            }
            break;
          }
          [[fallthrough]];
        case OpKind::CallMethod: {
          std::vector<c10::IValue> inputs;
          for (const Node* n : callInputs_[i]) inputs.push_back(env[n->index()]);
          env[i] = calls_->run(node, std::move(inputs));
          break;
        }
      }
      if (records && node.op() != OpKind::Placeholder && node.op() != OpKind::Output) {
        (*records)[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        (*records)[i].outputs = tensorMetas(env[i]);
      }
    } catch (const KeyError&) {
      throw;
    } catch (const c10::Error& e) {
      throw RuntimeError("running " + describe(node, printedLine(node)) + " failed: " + e.what_without_backtrace());
    } catch (const std::exception& e) {
      throw RuntimeError("running " + describe(node, printedLine(node)) + " failed: " + e.what());
    }
    if (onValue && node.op() != OpKind::Output) (*onValue)(node, env[i]);  // its errors are its own
    // Free values after their last use, like the `x = None` lines of FX code.
    for (size_t used : freeAfter_[i])
      if (keep.empty() || !keep[used]) env[used] = c10::IValue();
  }
  if (captured) {
    captured->clear();
    for (const Node* n : *capture) captured->push_back(env[n->index()]);
  }
  return outputs;
}

void GraphModule::writeOutputs(const std::vector<c10::IValue>& outputs, TensorDict& td, TensorDict* tdOut) const {
  const auto& keys = traced_.outKeys;
  // More outputs than keys: the extra ones are not written (tensordict zips them with out_keys).
  if (outputs.size() < keys.size())
    throw RuntimeError("the graph produced " + std::to_string(outputs.size()) + " value(s) but out_keys has " +
                       std::to_string(keys.size()) + " (" + keysToString(keys) + ")");
  TensorDict& dest = tdOut ? *tdOut : td;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (isDiscardKey(keys[k]) || outputs[k].isNone()) continue;  // None (an optional output): nothing to write
    // A plain archive returns what it likes (nested tuples, ints): only its tensors fit a
    // TensorDict, and call() gives the rest.
    if (!traced_.readsTensorDict && !outputs[k].isTensor()) continue;
    if (!outputs[k].isTensor())
      throw RuntimeError("output for key " + keyRepr(keys[k]) + " is a " + outputs[k].tagKind() + ", expected a Tensor");
    dest.set(keys[k], outputs[k].toTensor());
  }
}

void GraphModule::forward(TensorDict& td, TensorDict* tdOut) const { writeOutputs(call(td), td, tdOut); }

std::vector<c10::IValue> GraphModule::forwardCapturing(TensorDict& td, TensorDict* tdOut,
                                                      const std::vector<const Node*>& nodes) const {
  std::vector<c10::IValue> values;
  writeOutputs(run(td, nullptr, &nodes, &values), td, tdOut);
  return values;
}

std::vector<c10::IValue> GraphModule::callObserving(TensorDict& td, const ValueObserver& onValue) const {
  return run(td, nullptr, nullptr, nullptr, &onValue);
}

std::vector<NodeRunRecord> GraphModule::forwardRecorded(TensorDict& td, TensorDict* tdOut) const {
  std::vector<NodeRunRecord> records;
  writeOutputs(run(td, &records), td, tdOut);
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
