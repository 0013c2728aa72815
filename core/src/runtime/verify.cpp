#include "tdfx/runtime/verify.h"

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
  TensorDict td = inputs.clone();
  const runtime::EagerNodeValues full = runtime::runRecordingEagerValues(eager, module.graph(), td, recording);
  for (const auto& [index, traced] : tracedValues) {
    const Node& node = *module.graph().nodes().at(index);
    const c10::IValue& expected = full.values[index];
    std::vector<KeyComparison> rows;
    if (full.found[index]) compareValues(node.name(), expected, traced, options, rows);
    const auto wrong = std::find_if(rows.begin(), rows.end(), [](const KeyComparison& c) { return !c.matches; });
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

bool VerifyReport::passed() const {
  // No keys to compare (every out key is "_") is not a pass: nothing written was shown to agree.
  if (keys.empty()) return false;
  for (const auto& k : keys)
    if (!k.matches) return false;
  return nodeMismatches.empty();
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
                              const InputValues& values) {
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
    for (const auto& [key, tensor] : values) inputs.set(key, tensor.clone());
    return inputs;
  } catch (const KeyError& e) {
    throw Error(std::string("input shapes do not fit the model's batch size: ") + e.what());
  }
}

VerifyReport verify(const TensorDictModuleBase& eager, const GraphModule& traced, const TensorDict& inputs,
                    const VerifyOptions& options) {
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

  // 1. The eager module's own code, recording the fingerprint of the value behind every printed
  // node. The key is drawn here, so the model cannot make a wrong value match.
  runtime::EagerRecording recording;
  recording.fingerprintKey = (static_cast<uint64_t>(std::random_device()()) << 32) ^ std::random_device()();
  std::optional<runtime::EagerNodeValues> eagerValues;
  try {
    state.restore();
    TensorDict td = inputs.clone();
    eagerValues = runtime::runRecordingEagerValues(eager, traced.graph(), td, recording);
  } catch (const runtime::StateLost&) {
    throw;  // no later pass could be trusted
  } catch (const std::exception& e) {
    report.nodeComparisonProblem = e.what();
  }

  // 2. The eager module as it runs, and 3. the traced graph's forward: each twice, the first
  // results compared and the faster time reported (a first run pays one-off costs: the method's
  // executor, the TorchScript forward of the printed graph).
  struct PassResult {
    TensorDict out;                    // a TensorDict module's out keys
    std::vector<c10::IValue> results;  // a plain archive's outputs, whatever their structure
  };
  const auto runTwice = [&](const char* what, const auto& pass, PassResult& first) {
    double best = std::numeric_limits<double>::infinity();
    for (int run = 0; run < 2; ++run) {
      state.restore();
      TensorDict in = inputs.clone();
      PassResult result;
      const auto start = Clock::now();
      try {
        pass(in, result);
      } catch (const Error& e) {
        throw Error(std::string(what) + " failed on these inputs: " + e.what());
      }
      best = std::min(best, secondsSince(start));
      if (run == 0) first = std::move(result);
    }
    return best;
  };
  PassResult eagerPass, tracedPass;
  report.eagerSeconds = runTwice("the eager module", [&](TensorDict& in, PassResult& r) {
    if (plain) r.results = plain->outputsOf(plain->call(in));
    else eager.forward(in, &r.out);
  }, eagerPass);
  report.tracedSeconds = runTwice("the traced graph", [&](TensorDict& in, PassResult& r) {
    if (plain) r.results = traced.call(in);
    else traced.forward(in, &r.out);
  }, tracedPass);
  const TensorDict& eagerOut = eagerPass.out;
  const TensorDict& tracedOut = tracedPass.out;
  const std::vector<c10::IValue>& eagerResults = eagerPass.results;
  const std::vector<c10::IValue>& tracedResults = tracedPass.results;
  report.nodeByNodeReason = traced.nodeByNodeReason();

  if (plain) {
    const auto& keys = plain->outKeys();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (isDiscardKey(keys[i])) continue;
      const c10::IValue missing;
      compareValues(keyToString(keys[i]), eagerResults.at(i), i < tracedResults.size() ? tracedResults[i] : missing,
                    options, report.keys);
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

  // 4. Every node: the printed graph node by node, each value's fingerprint compared with the eager
  // one as the node runs; a value whose fingerprint differs is kept, as the node made it, and 5.
  // compared in full.
  if (eagerValues) {
    const std::string* stage = nullptr;
    static const std::string kNodeByNode = "the traced graph failed node by node: ";
    static const std::string kInFull = "recording the eager values of the nodes that differ failed: ";
    try {
      stage = &kNodeByNode;
      state.restore();
      TensorDict td = inputs.clone();
      std::map<size_t, c10::IValue> differing;
      traced.callObserving(td, [&](const Node& node, const c10::IValue& value) {
        if (!yieldsValue(node, traced.traced().readsTensorDict)) return;
        if (!eagerValues->found[node.index()]) {
          ++report.nodesWithoutEagerValue;
          return;
        }
        ++report.nodesCompared;
        if (runtime::bitwiseSame(eagerValues->values[node.index()], runtime::fingerprint(value, recording.fingerprintKey)))
          return;
        differing[node.index()] = value.deepcopy();
      });
      stage = &kInFull;
      if (!differing.empty()) compareInFull(eager, traced, inputs, differing, state, options, report);
    } catch (const runtime::StateLost&) {
      throw;
    } catch (const std::exception& e) {
      report.nodeComparisonProblem = *stage + e.what();
      report.nodesCompared = report.nodesWithoutEagerValue = 0;
      report.nodeMismatches.clear();
      report.divergence.reset();
    }
  }

  if (!report.passed()) {
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
  s << std::fixed << std::setprecision(2) << "eager " << r.eagerSeconds * 1e3 << " ms, traced " << r.tracedSeconds * 1e3
    << " ms; " << (r.options.bitwise() ? "bitwise comparison" : "tolerance atol=" + std::to_string(r.options.atol) +
                                                                     " rtol=" + std::to_string(r.options.rtol))
    << "\n";
  s << "nodes: " << r.nodesCompared << " compared with the eager value they stand for, " << r.nodesWithoutEagerValue
    << " without one";
  if (!r.nodeMismatches.empty()) s << ", " << r.nodeMismatches.size() << " differ";
  s << "\n";
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
  s << (r.passed()        ? "PASSED: traced outputs match eager outputs\n"
        : r.keys.empty() ? "FAILED: nothing to compare: the module writes no key (its out keys are all \"_\")\n"
        : keysMatch      ? "FAILED: traced outputs match eager outputs, but nodes differ\n"
                         : "FAILED: traced outputs differ from eager outputs\n");
  return s.str();
}

std::string reportToJson(const VerifyReport& r) {
  nlohmann::json j;
  j["passed"] = r.passed();
  j["bitwise"] = r.options.bitwise();
  j["atol"] = r.options.atol;
  j["rtol"] = r.options.rtol;
  j["eager_seconds"] = r.eagerSeconds;
  j["traced_seconds"] = r.tracedSeconds;
  j["inputs"] = nlohmann::json::array();
  for (const auto& in : r.inputs) j["inputs"].push_back({{"key", in.key.parts()}, {"shape", in.shape}, {"dtype", in.dtype}});
  j["keys"] = nlohmann::json::array();
  for (const auto& k : r.keys) {
    j["keys"].push_back({{"key", k.key.parts()},
                         {"shape", k.eagerShape},
                         {"traced_shape", k.tracedShape},
                         {"dtype", k.eagerDtype},
                         {"traced_dtype", k.tracedDtype},
                         {"max_abs_diff", k.maxAbsDiff},
                         {"max_rel_diff", k.maxRelDiff},
                         {"bitwise_equal", k.bitwiseEqual},
                         {"matches", k.matches},
                         {"nan", {{"eager", k.eagerNaN}, {"traced", k.tracedNaN}}},
                         {"inf", {{"eager", k.eagerInf}, {"traced", k.tracedInf}}},
                         {"problem", k.problem}});
  }
  j["nodes"] = {{"compared", r.nodesCompared},
                {"without_eager_value", r.nodesWithoutEagerValue},
                {"differ", r.nodeMismatches},
                {"problem", r.nodeComparisonProblem}};
  j["node_by_node_reason"] = r.nodeByNodeReason;
  if (r.divergence)
    j["first_divergence"] = {{"node", r.divergence->node},       {"module", r.divergence->module},
                             {"key", r.divergence->key.parts()}, {"eager", r.divergence->eagerValue},
                             {"traced", r.divergence->tracedValue}, {"problem", r.divergence->problem}};
  else
    j["first_divergence"] = nullptr;
  j["random_nodes"] = r.randomNodes;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);  // bytes that are not UTF-8: U+FFFD
}

}  // namespace tdfx
