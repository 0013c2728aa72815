// Verify's report as JSON, both ways, in one place: tdfx-cli verify --json prints it, and the
// model worker sends it to the process that asked (text in a CBOR frame, rebuilt here).
// The format is documented in docs/cli.md.
#include <map>

#include <nlohmann/json.hpp>

#include "tdfx/runtime/verify.h"

namespace tdfx {
namespace {
using json = nlohmann::json;
NestedKey keyFromJson(const json& j) { return NestedKey(j.get<std::vector<std::string>>()); }
}  // namespace

std::string reportToJson(const VerifyReport& r) {
  nlohmann::json j;
  j["verdict"] = verdictName(r.verdict());
  j["passed"] = r.passed();
  j["timed"] = r.timed;
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
                         {"problem", k.problem},
                         {"not_comparable", k.notComparable}});
  }
  nlohmann::json unproven = nlohmann::json::array();
  for (const auto& u : r.unproven) unproven.push_back({{"node", u.node}, {"reason", u.reason}});
  j["nodes"] = {{"compared", r.nodesCompared},
                {"without_eager_value", r.nodesWithoutEagerValue()},
                {"excused", r.nodesExcused},
                {"unproven", unproven},
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

VerifyReport reportFromJson(const std::string& text) {
  const json j = json::parse(text);
  VerifyReport r;
  r.options.atol = j.at("atol").get<double>();
  r.options.rtol = j.at("rtol").get<double>();
  r.eagerSeconds = j.at("eager_seconds").get<double>();
  r.tracedSeconds = j.at("traced_seconds").get<double>();
  r.timed = j.value("timed", false);
  if (j.contains("inputs"))
    for (const json& in : j.at("inputs"))
      r.inputs.push_back({keyFromJson(in.at("key")), in.at("shape").get<std::vector<int64_t>>(), in.at("dtype").get<std::string>()});
  for (const json& k : j.at("keys")) {
    KeyComparison c;
    c.key = keyFromJson(k.at("key"));
    c.eagerShape = k.at("shape").get<std::vector<int64_t>>();
    c.tracedShape = k.at("traced_shape").get<std::vector<int64_t>>();
    c.eagerDtype = k.at("dtype").get<std::string>();
    c.tracedDtype = k.at("traced_dtype").get<std::string>();
    c.maxAbsDiff = k.at("max_abs_diff").is_number() ? k.at("max_abs_diff").get<double>() : 0.0;
    c.maxRelDiff = k.at("max_rel_diff").is_number() ? k.at("max_rel_diff").get<double>() : 0.0;
    c.bitwiseEqual = k.at("bitwise_equal").get<bool>();
    c.matches = k.at("matches").get<bool>();
    c.eagerNaN = k.at("nan").at("eager").get<int64_t>();
    c.tracedNaN = k.at("nan").at("traced").get<int64_t>();
    c.eagerInf = k.at("inf").at("eager").get<int64_t>();
    c.tracedInf = k.at("inf").at("traced").get<int64_t>();
    c.problem = k.at("problem").get<std::string>();
    c.notComparable = k.value("not_comparable", false);
    r.keys.push_back(std::move(c));
  }
  if (j.contains("first_divergence") && !j.at("first_divergence").is_null()) {
    const json& d = j.at("first_divergence");
    r.divergence = Divergence{d.at("node").get<std::string>(), d.at("module").get<std::string>(), keyFromJson(d.at("key")),
                              d.value("eager", ""), d.value("traced", ""), d.value("problem", "")};
  }
  if (j.contains("nodes")) {
    const json& n = j.at("nodes");
    r.nodesCompared = n.at("compared").get<int64_t>();
    if (n.contains("excused")) r.nodesExcused = n.at("excused").get<std::map<std::string, int64_t>>();
    if (n.contains("unproven"))
      for (const json& u : n.at("unproven")) r.unproven.push_back({u.at("node").get<std::string>(), u.at("reason").get<std::string>()});
    r.nodeMismatches = n.at("differ").get<std::vector<std::string>>();
    r.nodeComparisonProblem = n.at("problem").get<std::string>();
  }
  r.nodeByNodeReason = j.value("node_by_node_reason", "");
  if (j.contains("random_nodes")) r.randomNodes = j.at("random_nodes").get<std::vector<std::string>>();
  return r;
}

}  // namespace tdfx
