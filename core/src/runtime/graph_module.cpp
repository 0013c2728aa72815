#include "tdfx/runtime/graph_module.h"
#include "tdfx/runtime/interpreter.h"

#include <chrono>
#include <mutex>
#include <sstream>

#include <torch/csrc/autograd/grad_mode.h>

#include "tdfx/error.h"
#include "tdfx/ir/graph_printer.h"
#include "tdfx/runtime/torchscript_export.h"
#include "tdfx/ir/fx_target.h"
#include "node_functions.h"
#include "pass_state.h"
#include "random_state.h"

namespace tdfx {

struct GraphModule::WholeForward {
  torch::jit::Module module;
  std::vector<std::string> parameters;  // a plain archive's: the placeholders' keys
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

// A key's name in the interpreter's flat dict when flattening is ambiguous: each part with its length.
std::string lengthPrefixedKey(const NestedKey& key) {
  std::string s;
  for (const auto& part : key.parts()) s += std::to_string(part.size()) + ":" + part;
  return s;
}
}  // namespace

GraphModule::GraphModule(TracedGraph traced, std::vector<NestedKey> inKeys)
    : traced_(std::move(traced)), inKeys_(std::move(inKeys)) {
  useReferenceExecutor();
  recompile();
}

void GraphModule::recompile() {
  const auto& nodes = traced_.graph->nodes();
  revision_ = traced_.graph->revision();
  code_ = pythonCode(*traced_.graph);
  callInputs_.clear();
  callInputs_.reserve(nodes.size());
  for (const auto& n : nodes) callInputs_.push_back(runtime::referencedNodes(*n));
  std::vector<size_t> lastUse(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Node* used : callInputs_[i]) lastUse[used->index()] = i;
  freeAfter_.assign(nodes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i)
    if (lastUse[i] > i) freeAfter_[lastUse[i]].push_back(i);
  tensordict_ = nullptr;
  for (const auto& n : nodes) {
    if (n->op() == OpKind::Placeholder) {
      if (traced_.readsTensorDict) tensordict_ = n.get();
      break;
    }
  }
  // The keys read: every `tensordict[key]` (a malformed key is left to its node, which says so).
  std::vector<NestedKey> reads;
  bool ambiguous = false;
  for (const auto& n : nodes) {
    if (!tensordict_ || !fx_target::isCallTo(*n, fx_target::kGetItem) || n->args().size() != 2 ||
        !n->args()[0].isNode() || n->args()[0].node() != tensordict_)
      continue;
    try {
      reads.push_back(runtime::tensordictKey(n->args()[1]));
      ambiguous = ambiguous || flattensAmbiguously(reads.back());
    } catch (const RuntimeError&) {
    }
  }
  for (const NestedKey& key : traced_.outKeys) ambiguous = ambiguous || flattensAmbiguously(key);
  const runtime::KeyName keyName = ambiguous ? lengthPrefixedKey : flattenedKey;
  reads_.clear();
  for (NestedKey& key : reads) {
    std::string name = keyName(key);
    reads_.emplace_back(std::move(key), std::move(name));
  }
  nodeFunctions_ = traced_.moduleRoots.empty() ? nullptr
                                               : std::make_shared<runtime::NodeFunctions>(traced_, tensordict_, keyName);
  whole_ = std::make_shared<WholeState>();
  if (ambiguous) {
    std::call_once(whole_->once, [this] {
      whole_->reason = "a key part holds a '.', so flattened keys could name two keys";
    });
  }
}

void GraphModule::checkRevision() const {
  if (traced_.graph->revision() != revision_)
    throw RuntimeError("the graph was edited after this GraphModule compiled it (revision " + std::to_string(revision_) +
                       ", now " + std::to_string(traced_.graph->revision()) +
                       "); recompile() it, or build a new GraphModule, to run the edited graph");
}

std::shared_ptr<const GraphModule::WholeForward> GraphModule::wholeForward() const {
  std::call_once(whole_->once, [this] {
    auto whole = std::make_shared<WholeForward>();
    for (const auto& n : traced_.graph->nodes()) {
      if (n->op() != OpKind::Placeholder || n.get() == tensordict_) continue;
      if (traced_.readsTensorDict) {  // a parameter past the in keys: node by node
        whole_->reason = "forward's parameter '" + n->target() + "' is not an in key";
        return;
      }
      whole->parameters.push_back(n->target());
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

std::optional<std::vector<at::Tensor>> GraphModule::tensorsForwardMayWrite() const {
  const auto whole = wholeForward();
  if (!whole) return std::nullopt;
  // Its inputs are the caller's: a copy for each of verify's passes, no module's tensor.
  return runtime::tensorsForwardMayWrite(whole->module, /*inputsMayHoldModuleTensors=*/false);
}

bool GraphModule::wholeArguments(const WholeForward& whole, const TensorDict& td, std::vector<c10::IValue>& args) const {
  args.clear();
  if (tensordict_) {
    for (const auto& [key, name] : reads_)
      if (!td.contains(key) || td.isTensorDict(key)) return false;
    args.emplace_back(readsOf(td));
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
      const std::string name = flattenedKey(key);  // the whole forward runs only on unambiguous keys
      outputs.push_back(!isDiscardKey(key) && dict.contains(name) ? dict.at(name) : c10::IValue());
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

c10::IValue GraphModule::readsOf(const TensorDict& td) const {
  c10::Dict<std::string, at::Tensor> in;
  for (const auto& [key, name] : reads_) in.insert(name, td.get(key));  // a missing key: KeyError
  return in;
}

std::vector<c10::IValue> GraphModule::call(TensorDict& td) const {
  checkRevision();
  const auto whole = wholeForward();
  std::vector<c10::IValue> args;
  if (!whole || !wholeArguments(*whole, td, args)) return Interpreter(*this).run(td);
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
    Interpreter(*this).run(td);  // throws the error naming the failing node
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
  std::stringstream rest(target.substr(root.first.size()));
  for (std::string name; std::getline(rest, name, '.');) {
    if (!value.isObject() || !value.toObjectRef().type()->hasAttribute(name))
      throw RuntimeError("the module has no attribute '" + name + "' (in '" + target + "')");
    value = value.toObjectRef().getAttr(name);
  }
  return value;
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
  CapturingObserver capturing(graph(), nodes);
  writeOutputs(Interpreter(*this).observe(capturing).run(td), td, tdOut);
  return capturing.values();
}

std::vector<c10::IValue> GraphModule::callObserving(TensorDict& td, const ValueObserver& onValue) const {
  FunctionObserver observer(onValue);
  return Interpreter(*this).observe(observer).run(td);
}

std::vector<NodeRunRecord> GraphModule::forwardRecorded(TensorDict& td, TensorDict* tdOut) const {
  RecordingObserver recording(graph());
  writeOutputs(Interpreter(*this).observe(recording).run(td), td, tdOut);
  return recording.take();
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
