#include "tdfx/runtime/verify.h"
#include "tdfx/runtime/interpreter.h"

#include "tdfx/ir/graph_printer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "eager_values.h"
#include "fingerprint.h"
#include "index_bounds.h"
#include "pass_state.h"
#include "value_comparison.h"
#include "tdfx/error.h"
#include "tdfx/util/dtype.h"
#include "tdfx/ir/fx_target.h"

namespace tdfx {
namespace {

using runtime::compareKey;
using runtime::compareValues;
using runtime::describeValue;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Eager values of every (module, key) write, in execution order, for a module tree.
void eagerWrites(const TensorDictModuleBase& module, const std::string& path, TensorDict& td,
                 std::vector<std::tuple<std::string, NestedKey, at::Tensor>>& out) {
  if (const auto* seq = dynamic_cast<const TensorDictSequential*>(&module)) {
    for (size_t i = 0; i < seq->modules().size(); ++i)
      eagerWrites(*seq->modules()[i], path.empty() ? std::to_string(i) : path + "." + std::to_string(i), td, out);
    return;
  }
  module.forward(td);
  for (const NestedKey& key : module.outKeys())
    if (!isDiscardKey(key)) out.emplace_back(path, key, td.get(key));
}

std::optional<Divergence> findDivergence(const TensorDictModuleBase& eager, const GraphModule& traced,
                                         const TensorDict& inputs, const VerifyOptions& options,
                                         runtime::PassState& state) {
  state.restore();
  TensorDict eagerTd = inputs.clone();
  std::vector<std::tuple<std::string, NestedKey, at::Tensor>> expected;
  eagerWrites(eager, "", eagerTd, expected);
  const auto& writes = traced.traced().writes;
  std::vector<const Node*> nodes;
  for (const auto& w : writes) nodes.push_back(w.node);
  state.restore();
  TensorDict tracedTd = inputs.clone(), scratch;
  const auto values = traced.forwardCapturing(tracedTd, &scratch, nodes);
  for (size_t i = 0; i < writes.size() && i < expected.size(); ++i) {
    const auto& w = writes[i];
    c10::IValue v = values[i];
    if (w.tupleIndex >= 0 && v.isTuple()) v = v.toTupleRef().elements().at(w.tupleIndex);
    const auto& [module, key, tensor] = expected[i];
    if (module != w.module || key != w.key) break;  // structures differ: no finer answer than the keys
    if (!v.isTensor() || !compareKey(key, tensor, v.toTensor(), options).matches)
      return Divergence{w.node->name(), w.module, w.key, {}, {}, {}};
  }
  return std::nullopt;
}


// Whether a node yields a value to compare: not the TensorDict placeholder, the output, or an assert.
bool yieldsValue(const Node& node, bool readsTensorDict) {
  if (node.op() == OpKind::Output) return false;
  if (node.op() == OpKind::Placeholder && readsTensorDict && node.index() == 0) return false;
  return !fx_target::isCallTo(node, fx_target::kAssert);
}

// The closed list of reasons a node may go without an eager value (VerifyReport::nodesExcused).
// Each says why the node's value needs no comparison of its own.
constexpr const char* kPlaceholder = "input: a placeholder or a key read from the TensorDict, the same on both sides";
constexpr const char* kPrint = "print: torch.ops.prim.Print, which nothing reads (it returns nothing; the text it prints is not compared)";
constexpr const char* kAssertion = "assertion condition: True on the traced side, and the eager code did not raise";
constexpr const char* kGetAttr = "get_attr: the archive's own tensor, read by its name";
constexpr const char* kUnusedRead =
    "unused: a value no node reads, of an operation that changes nothing (a statement TorchScript compiled away)";

// Whether a call changes a value in place, or does more than compute (a random draw, a print, an
// assertion): it is never dead code, and its absence from the compiled graph would be no excuse.
bool hasSideEffect(const Node& node) {
  if (node.meta().random) return true;
  std::string name = node.target().substr(node.target().rfind('.') + 1);
  if (name.size() > 2 && name.compare(0, 2, "__") == 0) return false;  // a magic method: `__getitem__`
  if (!name.empty() && name.back() == '_') return true;
  if (node.op() == OpKind::CallFunction) {
    if (fx_target::operatorName(node.target()) && name.size() > 1 && name[0] == 'i' &&
        name != "invert" && name != "inv" && name != "is_" && name != "is_not" && name != "index")
      return true;  // operator.iadd and its kind
    return name == "setitem" || name == "delitem" || name == "_assert" || name == "Print" || name == "print";
  }
  return false;
}

// A call that changes nothing, whose value nothing reads but other such calls (`x.shape[1]` dead:
// the getattr's one user is the getitem no node reads; `h = x + 1` overwritten before any read).
bool isUnusedRead(const Node& node) {
  if ((node.op() != OpKind::CallFunction && node.op() != OpKind::CallMethod) || hasSideEffect(node)) return false;
  return std::all_of(node.users().begin(), node.users().end(), [](const Node* u) { return isUnusedRead(*u); });
}

// The excuse of a node that has no eager value, or null when it has none: a placeholder, a
// get_attr, or a getitem / getattr that nothing reads (FX records the reads of a dead statement).
// A call with no user is no such node: it may act in place, or draw random numbers.
const char* excuseFor(const Node& node, const c10::IValue& value, bool readsTensorDict) {
  if (node.op() == OpKind::Placeholder) return kPlaceholder;
  if (readsTensorDict && fx_target::isCallTo(node, fx_target::kGetItem) && !node.args().empty() &&
      node.args()[0].isNode() && node.args()[0].node()->op() == OpKind::Placeholder && node.args()[0].node()->index() == 0)
    return kPlaceholder;
  // `if bad: raise` becomes torch._assert(not_(bad)): the tracer's own negation has no eager value,
  // but the traced assert saw True and the eager `if` did not raise, so both agree that it held.
  if (value.isBool() && value.toBool() && !node.users().empty() &&
      std::all_of(node.users().begin(), node.users().end(), [](const Node* u) { return fx_target::isCallTo(*u, fx_target::kAssert); }))
    return kAssertion;
  if (node.op() == OpKind::GetAttr) return kGetAttr;
  if (isUnusedRead(node)) return kUnusedRead;
  if (node.op() == OpKind::CallFunction && node.target() == "torch.ops.prim.Print" && node.users().empty())
    return kPrint;
  return nullptr;
}

// Why a node that is neither compared nor excused has no eager value.
std::string unprovenReason(const Node& node) {
  if (!node.meta().eagerValue)
    return "the tracer knows no value of the model's code it stands for (a value of a loop FX unrolled, or one it "
           "computed while tracing)";
  return "its value in the model's code could not be read (inside a loop, or behind a call that cannot be inlined)";
}

// Compares the nodes whose fingerprints differed in full: the eager values recorded once more, in
// full this time, against the traced values kept as the nodes made them. The first in graph order
// that differs is the divergence.
void compareInFull(const TensorDictModuleBase& eager, const GraphModule& module, const TensorDict& inputs,
                   const std::map<size_t, c10::IValue>& tracedValues, runtime::PassState& state,
                   const VerifyOptions& options, VerifyReport& report) {
  runtime::EagerRecording recording;
  recording.fullValues.assign(module.graph().size(), false);
  for (const auto& [index, value] : tracedValues) recording.fullValues[index] = true;
  state.restore();
  TensorDict td = inputs.clone(), scratch;  // the out keys go to scratch, as forward(td, &out) writes them
  const runtime::EagerNodeValues full = runtime::runRecordingEagerValues(eager, module.graph(), td, recording, &scratch);
  for (const auto& [index, traced] : tracedValues) {
    const Node& node = *module.graph().nodes().at(index);
    const c10::IValue& expected = full.values[index];
    std::vector<KeyComparison> rows;
    if (full.found[index]) compareValues(node.name(), expected, traced, options, rows);
    const auto wrong = std::find_if(rows.begin(), rows.end(), [](const KeyComparison& c) { return !c.matches && !c.notComparable; });
    const auto uncomparable = std::find_if(rows.begin(), rows.end(), [](const KeyComparison& c) { return c.notComparable; });
    if (wrong == rows.end() && full.found[index] && uncomparable != rows.end()) {
      report.unproven.push_back({node.name(), uncomparable->problem});  // a Generator, an object
      continue;
    }
    // Within the tolerance; or a value the second recording did not read (it reads what the first
    // did): the fingerprints differed, and that stands.
    if (wrong == rows.end() && full.found[index]) continue;
    report.nodeMismatches.push_back(node.name());
    if (report.divergence) continue;
    Divergence d;
    d.node = node.name();
    d.module = node.meta().tdModule;
    d.eagerValue = describeValue(expected);
    d.tracedValue = describeValue(traced);
    std::ostringstream problem;
    if (wrong == rows.end()) problem << "fingerprints differ; the eager value could not be read again";
    else if (!wrong->problem.empty()) problem << wrong->problem;
    else problem << "values differ, max |a-b| " << std::setprecision(4) << wrong->maxAbsDiff;
    d.problem = problem.str();
    for (const auto& w : module.traced().writes)
      if (w.node == &node) d.key = w.key;
    report.divergence = d;
  }
}

// For a failure that reads as an index out of range, when some integer input was drawn: how to
// give its values. Ints that index a tensor of known size are drawn in range
// (verificationInputs); one that indexes something whose size shows only while running is not.
std::string indexHint(const TensorDict& inputs, const std::string& error) {
  if (error.find("out of bounds") == std::string::npos && error.find("out of range") == std::string::npos) return "";
  std::string ints;
  for (const NestedKey& key : inputs.keys(/*includeNested=*/true, /*leavesOnly=*/true))
    if (at::isIntegralType(inputs.get(key).scalar_type(), /*includeBool=*/false))
      ints += (ints.empty() ? "" : ", ") + keyRepr(key);
  if (ints.empty()) return "";
  return "\n(the integer input(s) " + ints + " were drawn from [0, 10), in range only where they index a tensor whose "
         "size is known before running: give their values with --input-values FILE, tensors saved with torch.save)";
}

std::vector<at::Tensor> graphTensors(const GraphModule& traced) {
  std::vector<at::Tensor> out;
  for (const auto& [target, tensor] : traced.traced().tensorConstants) out.push_back(tensor);
  return out;
}

const TensorDictModule* plainModule(const TensorDictModuleBase& module) {
  const auto* leaf = dynamic_cast<const TensorDictModule*>(&module);
  return leaf && leaf->isPlain() ? leaf : nullptr;
}

}  // namespace

const char* const kExcuses[5] = {kPlaceholder, kGetAttr, kUnusedRead, kAssertion, kPrint};

const char* verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::Passed: return "PASSED";
    case Verdict::NotProven: return "NOT PROVEN";
    case Verdict::Failed: return "FAILED";
  }
  return "FAILED";
}

Verdict VerifyReport::verdict() const {
  // No keys to compare (every out key is "_") is not a pass: nothing written was shown to agree.
  if (keys.empty()) return Verdict::Failed;
  bool uncomparable = false;
  for (const auto& k : keys) {
    if (k.notComparable) uncomparable = true;
    else if (!k.matches) return Verdict::Failed;
  }
  if (!nodeMismatches.empty()) return Verdict::Failed;
  if (uncomparable || !nodeComparisonProblem.empty() || !unproven.empty()) return Verdict::NotProven;
  return Verdict::Passed;
}

int64_t VerifyReport::nodesWithoutEagerValue() const {
  int64_t n = static_cast<int64_t>(unproven.size());
  for (const auto& [reason, count] : nodesExcused) n += count;
  return n;
}

InputSpec parseInputSpec(const std::string& text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--input \"" + text + "\": expected KEY=SHAPE[:DTYPE], e.g. input.x=32x100:float32");
  InputSpec spec;
  spec.key = dottedKey(text.substr(0, eq), "--input \"" + text + "\"");
  std::string shape = text.substr(eq + 1);
  if (const size_t colon = shape.find(':'); colon != std::string::npos) {
    spec.dtype = parseDtype(shape.substr(colon + 1));
    if (c10::isQIntType(spec.dtype))
      throw Error("--input \"" + text + "\": a quantized input is not drawn; give its tensor with --input-values "
                  "FILE, or draw it as float32 and quantize it in forward");
    shape = shape.substr(0, colon);
  }
  if (shape.empty() || shape == "scalar") return spec;
  size_t start = 0;
  while (true) {
    const size_t x = shape.find('x', start);
    const std::string dim = shape.substr(start, x == std::string::npos ? std::string::npos : x - start);
    if (dim.empty() || dim.find_first_not_of("0123456789") != std::string::npos || dim.size() > 12)
      throw Error("--input \"" + text + "\": shape \"" + shape + "\" must be dimensions separated by 'x', e.g. 2x3x224x224");
    spec.shape.push_back(std::stoll(dim));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return spec;
}

TensorDict verificationInputs(const ModelFile& model, const std::vector<InputSpec>& givenShapes, uint64_t seed,
                              const InputValues& values, const GraphModule* traced) {
  // A key given with its values is drawn as its row says (so every other key gets the draw it
  // would get without the values), then replaced by the tensor. Only a key with no row at all is
  // given the tensor's shape and dtype to draw.
  std::vector<InputSpec> overrides = givenShapes;
  for (const auto& [key, tensor] : values) {
    const auto& inKeys = model.module->inKeys();
    if (std::find(inKeys.begin(), inKeys.end(), key) == inKeys.end())
      throw Error("input values: " + keyRepr(key) + " is not an input of the model (its inputs: " +
                  keysToString(inKeys) + ")");
    const auto hasRow = [&key](const std::vector<InputSpec>& specs) {
      return std::any_of(specs.begin(), specs.end(), [&key](const InputSpec& s) { return s.key == key; });
    };
    if (!hasRow(overrides) && !hasRow(model.exampleInputs))
      overrides.push_back({key, tensor.sizes().vec(), tensor.scalar_type()});
  }
  ModelFile withInputs = model;
  for (const InputSpec& o : overrides) {
    bool replaced = false;
    for (InputSpec& s : withInputs.exampleInputs)
      if (s.key == o.key) s = o, replaced = true;
    if (!replaced) withInputs.exampleInputs.push_back(o);
  }
  std::vector<NestedKey> missing;
  for (const NestedKey& key : model.module->inKeys()) {
    bool found = false;
    for (const InputSpec& s : withInputs.exampleInputs) found = found || s.key == key;
    if (!found) missing.push_back(key);
  }
  if (!missing.empty()) {
    std::string flags, unwritable;
    for (const NestedKey& k : missing) {
      // --input joins a key's parts with "." and ends the key at "=": a part holding one of
      // those, a NUL or a control character cannot be written there.
      std::string dotted;
      bool writable = true;
      for (const auto& p : k.parts()) {
        dotted += (dotted.empty() ? "" : ".") + p;
        for (const char c : p) writable = writable && c != '.' && c != '=' && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
      }
      if (writable) flags += " --input " + dotted + "=SHAPE[:DTYPE]";
      else unwritable += (unwritable.empty() ? "" : ", ") + keyRepr(k);
    }
    std::string hint = flags.empty() ? "" : "; give it with" + flags + " (e.g. 1x3x224x224:float32)";
    if (!unwritable.empty())
      hint += "; " + unwritable + " cannot be given with --input (a key part holding \".\", \"=\", a NUL or a control "
              "character): add its shape to the file's example_inputs when exporting";
    throw Error(model.path + ": no input shape for " + keysToString(missing) +
                (model.hasTensorDictMetadata ? " in example_inputs" : " (a plain TorchScript archive has no example inputs)") +
                hint);
  }
  // A plain archive has no batch size: take none, so any shape is accepted.
  try {
    TensorDict inputs = makeExampleInputs(withInputs, seed);
    if (traced) {
      // Ints that index a tensor of known size: the drawn values modulo the size of the smallest
      // dimension they index (a value below it stays as drawn).
      std::map<NestedKey, int64_t> smallest;
      for (const auto& b : runtime::indexBounds(*traced, withInputs.exampleInputs))
        if (b.size > 0 && (!smallest.count(b.key) || b.size < smallest[b.key])) smallest[b.key] = b.size;
      for (const auto& [key, size] : smallest)
        if (inputs.contains(key) && at::isIntegralType(inputs.get(key).scalar_type(), /*includeBool=*/false))
          inputs.set(key, inputs.get(key).remainder(size));
    }
    for (const auto& [key, tensor] : values) inputs.set(key, tensor.clone());
    return inputs;
  } catch (const KeyError& e) {
    throw Error(std::string("input shapes do not fit the model's batch size: ") + e.what());
  }
}

VerifyReport verify(const TensorDictModuleBase& eager, const GraphModule& traced, const TensorDict& inputs,
                    const VerifyOptions& options, std::vector<NodeRunRecord>* records) {
  // A forward parameter that defaults to None but that the printed graph uses: FX traced the branch
  // where it is given (`if mask is not None:`), so a run on the default fails at its first user
  // with a page of overloads. Say in one line what to give instead.
  for (const auto& n : traced.graph().nodes()) {
    if (n->op() != OpKind::Placeholder || n->args().size() != 1 || !n->args()[0].isNone() || n->users().empty())
      continue;
    if (inputs.contains(NestedKey(n->target()))) continue;
    throw Error("forward parameter '" + n->target() + "' defaults to None, but the traced graph uses it (FX traces " +
                "the branch where it is given, `if " + n->target() + " is not None:`): give it with --input " +
                n->target() + "=SHAPE[:DTYPE]");
  }
  VerifyReport report;
  report.options = options;
  for (const NestedKey& key : inputs.keys(/*includeNested=*/true, /*leavesOnly=*/true)) {
    const at::Tensor& t = inputs.get(key);
    report.inputs.push_back({key, t.sizes().vec(), dtypeToString(t.scalar_type())});
  }
  const TensorDictModule* plain = plainModule(eager);
  runtime::PassState state(eager, graphTensors(traced), options.randomSeed, traced.tensorsForwardMayWrite());

  // 1. The eager side, once: the model's own code, recording the fingerprint of the value behind
  // every printed node as it runs. Its outputs are the eager outputs. The key is drawn here, so the
  // model cannot make a wrong value match.
  runtime::EagerRecording recording;
  recording.fingerprintKey = (static_cast<uint64_t>(std::random_device()()) << 32) ^ std::random_device()();
  std::optional<runtime::EagerNodeValues> eagerValues;
  TensorDict eagerTd, eagerOut;  // the inputs the pass ran on, and the out keys it wrote
  std::vector<c10::IValue> eagerResults;  // a plain archive's outputs, whatever their structure
  // The module's own pass, its errors the user's: `out` takes the out keys of a TensorDict module.
  const auto eagerForward = [&](TensorDict& td, TensorDict& out) {
    try {
      if (plain) return plain->outputsOf(plain->call(td));
      eager.forward(td, &out);
      return std::vector<c10::IValue>{};
    } catch (const Error& e) {
      throw Error(std::string("the eager module failed on these inputs: ") + e.what() + indexHint(inputs, e.what()));
    }
  };
  try {
    state.restore();
    eagerTd = inputs.clone();
    eagerValues = runtime::runRecordingEagerValues(eager, traced.graph(), eagerTd, recording, &eagerOut);
    eagerResults = eagerValues->plainOutputs;
  } catch (const runtime::StateLost&) {
    throw;  // no later pass could be trusted
  } catch (const std::exception& e) {
    // No node can be proven; the outputs still come from the module as it runs (its own errors
    // are the user's: the eager module failed on these inputs).
    report.nodeComparisonProblem = std::string("recording the eager values failed: ") + e.what();
    state.restore();
    eagerTd = inputs.clone();
    eagerOut = TensorDict();
    eagerResults = eagerForward(eagerTd, eagerOut);
  }

  // 2. The traced side, once: the interpreter runs the printed graph node by node; each value's
  // fingerprint is compared with the eager one as its node runs, and one that differs is kept, as
  // the node made it, for 3.; the GUI's records come from the same run.
  std::map<size_t, c10::IValue> differing;
  const bool readsTensorDict = traced.traced().readsTensorDict;
  class Fingerprints : public RunObserver {
   public:
    Fingerprints(const std::optional<runtime::EagerNodeValues>& eager, uint64_t key, bool readsTensorDict,
                 VerifyReport& report, std::map<size_t, c10::IValue>& differing)
        : eager_(eager), key_(key), readsTensorDict_(readsTensorDict), report_(report), differing_(differing) {}
    void onNode(const Node& node, const c10::IValue& value, double) override {
      if (!eager_ || !yieldsValue(node, readsTensorDict_)) return;
      if (!eager_->found[node.index()]) {
        if (const char* excuse = excuseFor(node, value, readsTensorDict_)) ++report_.nodesExcused[excuse];
        else report_.unproven.push_back({node.name(), unprovenReason(node)});
        return;
      }
      ++report_.nodesCompared;
      if (runtime::bitwiseSame(eager_->values[node.index()], runtime::fingerprint(value, key_))) return;
      differing_[node.index()] = value.deepcopy();
    }

   private:
    const std::optional<runtime::EagerNodeValues>& eager_;
    uint64_t key_;
    bool readsTensorDict_;
    VerifyReport& report_;
    std::map<size_t, c10::IValue>& differing_;
  } fingerprints(eagerValues, recording.fingerprintKey, readsTensorDict, report, differing);
  RecordingObserver recorded(traced.graph());
  Interpreter interpreter(traced);
  interpreter.observe(fingerprints);
  if (records) interpreter.observe(recorded);
  state.restore();
  TensorDict tracedTd = inputs.clone(), tracedOut;
  std::vector<c10::IValue> tracedResults;
  try {
    tracedResults = interpreter.run(tracedTd);
    if (!plain) traced.writeOutputs(tracedResults, tracedTd, &tracedOut);
  } catch (const runtime::StateLost&) {
    throw;
  } catch (const Error& e) {
    throw Error(std::string("the traced graph failed on these inputs: ") + e.what());
  }
  if (records) *records = recorded.take();

  // The times, only when asked for: each side twice more, the faster run reported (a first run
  // pays one-off costs: the method's executor, the TorchScript forward of the printed graph).
  if (options.time) {
    const auto best = [&](const auto& pass) {
      double fastest = std::numeric_limits<double>::infinity();
      for (int run = 0; run < 2; ++run) {
        state.restore();
        TensorDict in = inputs.clone();
        const auto start = Clock::now();
        pass(in);
        fastest = std::min(fastest, secondsSince(start));
      }
      return fastest;
    };
    report.eagerSeconds = best([&](TensorDict& in) {
      TensorDict out;
      eagerForward(in, out);
    });
    report.tracedSeconds = best([&](TensorDict& in) {
      try {
        traced.call(in);
      } catch (const Error& e) {
        throw Error(std::string("the traced graph failed on these inputs: ") + e.what());
      }
    });
    report.timed = true;
  }
  report.nodeByNodeReason = traced.nodeByNodeReason();

  if (plain) {
    const auto& keys = plain->outKeys();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (isDiscardKey(keys[i])) continue;
      const c10::IValue missing;
      compareValues(keyToString(keys[i]), i < eagerResults.size() ? eagerResults[i] : missing,
                    i < tracedResults.size() ? tracedResults[i] : missing, options, report.keys);
    }
  } else {
    for (const NestedKey& key : eager.outKeys()) {
      if (isDiscardKey(key)) continue;
      if (!tracedOut.contains(key) || !eagerOut.contains(key)) {
        // An output that is None is not written: None in both passes is a match.
        KeyComparison c;
        c.key = key;
        c.matches = c.bitwiseEqual = !tracedOut.contains(key) && !eagerOut.contains(key);
        c.problem = c.matches ? "None in both" : !tracedOut.contains(key) ? "missing from the traced output"
                                                                         : "missing from the eager output";
        report.keys.push_back(c);
        continue;
      }
      report.keys.push_back(compareKey(key, eagerOut.get(key), tracedOut.get(key), options));
    }
  }

  // 3. The nodes whose fingerprints differed, compared in full.
  if (!differing.empty()) {
    try {
      compareInFull(eager, traced, inputs, differing, state, options, report);
    } catch (const runtime::StateLost&) {
      throw;
    } catch (const std::exception& e) {
      report.nodeComparisonProblem = std::string("recording the eager values of the nodes that differ failed: ") + e.what();
      for (const auto& [index, value] : differing)
        report.unproven.push_back({traced.graph().nodes().at(index)->name(), "its fingerprint differs, and its eager value could not be read again"});
    }
  }

  if (report.verdict() == Verdict::Failed) {
    if (!report.divergence) report.divergence = findDivergence(eager, traced, inputs, options, state);
    for (const auto& node : traced.graph().nodes())
      if (node->meta().random) report.randomNodes.push_back(node->name());
  }
  state.restore();  // the model as the file had it, for whatever runs next
  return report;
}

// "8" when eager and traced agree on the count, "8 vs 4" (eager vs traced) when they do not.
std::string countPair(int64_t eager, int64_t traced) {
  return eager == traced ? std::to_string(eager) : std::to_string(eager) + " vs " + std::to_string(traced);
}

std::string formatReport(const VerifyReport& r) {
  std::ostringstream s;
  s << std::left << std::setw(28) << "key" << std::setw(20) << "shape" << std::setw(10) << "dtype" << std::setw(13)
    << "max |a-b|" << std::setw(13) << "max rel" << std::setw(9) << "bitwise" << std::setw(9) << "NaN" << std::setw(9)
    << "Inf" << "result\n";
  for (const auto& k : r.keys) {
    s << std::left << std::setw(28) << keyToString(k.key) << std::setw(20)
      << (k.problem == "None in both" ? std::string("None") : formatShape(k.eagerShape)) << std::setw(10)
      << k.eagerDtype << std::setw(13) << std::setprecision(4) << k.maxAbsDiff << std::setw(13) << k.maxRelDiff
      << std::setw(9) << (k.bitwiseEqual ? "yes" : "no") << std::setw(9) << countPair(k.eagerNaN, k.tracedNaN)
      << std::setw(9) << countPair(k.eagerInf, k.tracedInf)
      << (k.matches ? "ok" + (k.problem.empty() ? std::string() : " (" + k.problem + ")")
                    : "MISMATCH" + (k.problem.empty() ? std::string() : " (" + k.problem + ")"))
      << "\n";
  }
  if (r.timed)
    s << std::fixed << std::setprecision(2) << "eager " << r.eagerSeconds * 1e3 << " ms, traced " << r.tracedSeconds * 1e3
      << " ms; ";
  s << (r.options.bitwise() ? "bitwise comparison" : "tolerance atol=" + std::to_string(r.options.atol) +
                                                         " rtol=" + std::to_string(r.options.rtol))
    << "\n";
  int64_t excused = 0;
  for (const auto& [reason, count] : r.nodesExcused) excused += count;
  s << "nodes: " << r.nodesCompared << " compared with the eager value they stand for, " << excused << " excused";
  if (!r.unproven.empty()) s << ", " << r.unproven.size() << " not proven";
  if (!r.nodeMismatches.empty()) s << ", " << r.nodeMismatches.size() << " differ";
  s << "\n";
  for (const auto& [reason, count] : r.nodesExcused) s << "  excused: " << count << " " << reason << "\n";
  constexpr size_t kListed = 20;
  for (size_t i = 0; i < r.unproven.size() && i < kListed; ++i)
    s << "  not proven: node '" << r.unproven[i].node << "': " << r.unproven[i].reason << "\n";
  if (r.unproven.size() > kListed) s << "  not proven: " << r.unproven.size() - kListed << " more (--json lists them all)\n";
  if (!r.nodeComparisonProblem.empty()) s << "nodes not compared: " << r.nodeComparisonProblem << "\n";
  if (!r.nodeByNodeReason.empty()) s << "the traced graph ran node by node: " << r.nodeByNodeReason << "\n";
  if (r.divergence) {
    s << "first difference: node '" << r.divergence->node << "'";
    if (!r.divergence->key.parts().empty()) s << " writing key " << keyRepr(r.divergence->key);
    if (!r.divergence->module.empty()) s << " in module " << r.divergence->module;
    if (!r.divergence->problem.empty())
      s << ": " << r.divergence->problem << " (eager " << r.divergence->eagerValue << ", traced "
        << r.divergence->tracedValue << ")";
    s << "\n";
  }
  if (!r.randomNodes.empty()) {
    s << "likely cause: these nodes draw random numbers:";
    for (const auto& name : r.randomNodes) s << " " << name;
    s << "\n";
  }
  bool keysMatch = true;
  for (const auto& k : r.keys) keysMatch = keysMatch && k.matches;
  switch (r.verdict()) {
    case Verdict::Passed:
      s << "PASSED: traced outputs match eager outputs, and every node is proven\n";
      break;
    case Verdict::NotProven:
      s << "NOT PROVEN: nothing differs, but "
        << (!r.nodeComparisonProblem.empty() ? std::string("the nodes were not compared")
            : !r.unproven.empty()            ? std::to_string(r.unproven.size()) + " node(s) have no proof"
                                             : std::string("an output of a kind verify cannot compare was not compared"))
        << "\n";
      break;
    case Verdict::Failed:
      s << (r.keys.empty() ? "FAILED: nothing to compare: the module writes no key (its out keys are all \"_\")\n"
            : keysMatch    ? "FAILED: traced outputs match eager outputs, but nodes differ\n"
                           : "FAILED: traced outputs differ from eager outputs\n");
  }
  return s.str();
}

}  // namespace tdfx
