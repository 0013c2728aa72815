#include "tdfx/worker/graph_format.h"

#include <map>

#include "graph_json.h"
#include "worker_protocol.h"
#include "tdfx/error.h"
#include "tdfx/util/dtype.h"

namespace tdfx {

using nlohmann::json;

namespace {

constexpr const char* kFormatName = "tdfx.graph";

// Reading: every accessor names the JSON location of what it could not read.
struct Reader {
  [[noreturn]] static void fail(const std::string& where, const std::string& what) {
    throw Error("graph document: " + where + ": " + what);
  }
  static const json& member(const json& obj, const std::string& where, const char* name) {
    if (!obj.is_object() || !obj.contains(name)) fail(where, std::string("missing \"") + name + "\"");
    return obj.at(name);
  }
  static std::string string(const json& j, const std::string& where) {
    if (!j.is_string()) fail(where, "expected a string, got " + j.dump());
    return j.get<std::string>();
  }
  static std::string optionalString(const json& obj, const char* name, const std::string& where) {
    return obj.contains(name) ? string(obj.at(name), where + "." + name) : std::string();
  }
  static int64_t integer(const json& j, const std::string& where) {
    if (!j.is_number_integer()) fail(where, "expected an integer, got " + j.dump());
    return j.get<int64_t>();
  }
  static std::vector<int64_t> shape(const json& j, const std::string& where) {
    if (!j.is_array()) fail(where, "expected a list of integers, got " + j.dump());
    std::vector<int64_t> dims;
    for (size_t i = 0; i < j.size(); ++i) dims.push_back(integer(j[i], where + "[" + std::to_string(i) + "]"));
    return dims;
  }
  static NestedKey key(const json& j, const std::string& where) {
    if (!j.is_array() || j.empty()) fail(where, "expected a key: a non-empty list of strings, got " + j.dump());
    std::vector<std::string> parts;
    for (size_t i = 0; i < j.size(); ++i) parts.push_back(string(j[i], where + "[" + std::to_string(i) + "]"));
    return NestedKey(std::move(parts));
  }
  static std::vector<NestedKey> keys(const json& j, const std::string& where) {
    if (!j.is_array()) fail(where, "expected a list of keys, got " + j.dump());
    std::vector<NestedKey> out;
    for (size_t i = 0; i < j.size(); ++i) out.push_back(key(j[i], where + "[" + std::to_string(i) + "]"));
    return out;
  }
  static c10::ScalarType dtype(const json& j, const std::string& where) { return dtypeFromJson(j, where); }
};

json keyJson(const NestedKey& key) { return key.parts(); }

json keysJson(const std::vector<NestedKey>& keys) {
  json out = json::array();
  for (const NestedKey& k : keys) out.push_back(keyJson(k));
  return out;
}

json metaJson(const NodeMeta& m, GraphDetail detail) {
  json j = json::object();
  if (!m.modulePath.empty()) j["module_path"] = m.modulePath;
  if (!m.moduleType.empty()) j["module_type"] = m.moduleType;
  if (!m.tdModule.empty()) j["td_module"] = m.tdModule;
  if (!m.moduleConstants.empty()) j["module_constants"] = m.moduleConstants;
  if (!m.moduleAttributes.empty()) j["module_attributes"] = m.moduleAttributes;
  if (!m.parameters.empty()) {
    json params = json::array();
    for (const ParameterInfo& p : m.parameters) {
      json pj = {{"name", p.name}, {"shape", p.shape}, {"dtype", dtypeJson(p.dtype)}, {"buffer", p.isBuffer}};
      if (p.isPacked) pj["packed"] = true;
      if (p.hasStats) pj["stats"] = {{"min", argumentJson(p.min)}, {"max", argumentJson(p.max)}, {"mean", argumentJson(p.mean)}};
      params.push_back(std::move(pj));
    }
    j["parameters"] = std::move(params);
  }
  if (detail == GraphDetail::Full) {
    if (!m.sourceFile.empty() || !m.sourceText.empty())
      j["source"] = {{"file", m.sourceFile}, {"line", m.sourceLine}, {"text", m.sourceText}};
    if (!m.schema.empty()) j["schema"] = m.schema;
  }
  if (m.tensordictKey) j["tensordict_key"] = keyJson(*m.tensordictKey);
  if (!m.leafReason.empty()) j["leaf_reason"] = m.leafReason;
  if (!m.fxDifference.empty()) j["fx_difference"] = m.fxDifference;
  if (m.random) j["random"] = true;
  if (!m.outputs.empty()) {
    json outs = json::array();
    for (const TensorMeta& t : m.outputs) outs.push_back({{"shape", t.shape}, {"dtype", dtypeJson(t.dtype)}});
    j["outputs"] = std::move(outs);
  }
  if (m.seconds >= 0) j["seconds"] = m.seconds;
  return j;
}

double statFromJson(const json& j, const std::string& where) {
  const Argument a = argumentFromJson(j, where, {});
  if (const auto* d = std::get_if<double>(&a.value)) return *d;
  if (const auto* i = std::get_if<int64_t>(&a.value)) return static_cast<double>(*i);
  Reader::fail(where, "expected a number, got " + j.dump());
}

NodeMeta metaFromJson(const json& j, const std::string& where) {
  NodeMeta m;
  if (!j.is_object()) Reader::fail(where, "expected an object, got " + j.dump());
  m.modulePath = Reader::optionalString(j, "module_path", where);
  m.moduleType = Reader::optionalString(j, "module_type", where);
  m.tdModule = Reader::optionalString(j, "td_module", where);
  for (const auto& [field, pairs] : {std::pair{"module_constants", &m.moduleConstants},
                                      std::pair{"module_attributes", &m.moduleAttributes}}) {
    if (!j.contains(field)) continue;
    const json& c = j.at(field);
    const std::string w = where + "." + field;
    if (!c.is_array()) Reader::fail(w, "expected a list of [name, value] pairs");
    for (size_t i = 0; i < c.size(); ++i) {
      if (!c[i].is_array() || c[i].size() != 2) Reader::fail(w + "[" + std::to_string(i) + "]", "expected [name, value]");
      pairs->emplace_back(Reader::string(c[i][0], w), Reader::string(c[i][1], w));
    }
  }
  if (j.contains("parameters")) {
    const json& ps = j.at("parameters");
    if (!ps.is_array()) Reader::fail(where + ".parameters", "expected a list");
    for (size_t i = 0; i < ps.size(); ++i) {
      const std::string w = where + ".parameters[" + std::to_string(i) + "]";
      ParameterInfo p;
      p.name = Reader::string(Reader::member(ps[i], w, "name"), w + ".name");
      p.shape = Reader::shape(Reader::member(ps[i], w, "shape"), w + ".shape");
      p.dtype = Reader::dtype(Reader::member(ps[i], w, "dtype"), w + ".dtype");
      p.isBuffer = ps[i].value("buffer", false);
      p.isPacked = ps[i].value("packed", false);
      if (ps[i].contains("stats")) {
        const json& st = ps[i].at("stats");
        p.hasStats = true;
        p.min = statFromJson(Reader::member(st, w + ".stats", "min"), w + ".stats.min");
        p.max = statFromJson(Reader::member(st, w + ".stats", "max"), w + ".stats.max");
        p.mean = statFromJson(Reader::member(st, w + ".stats", "mean"), w + ".stats.mean");
      }
      m.parameters.push_back(std::move(p));
    }
  }
  if (j.contains("source")) {
    const json& src = j.at("source");
    m.sourceFile = Reader::optionalString(src, "file", where + ".source");
    m.sourceText = Reader::optionalString(src, "text", where + ".source");
    if (src.contains("line")) m.sourceLine = static_cast<int>(Reader::integer(src.at("line"), where + ".source.line"));
  }
  m.schema = Reader::optionalString(j, "schema", where);
  if (j.contains("tensordict_key")) m.tensordictKey = Reader::key(j.at("tensordict_key"), where + ".tensordict_key");
  m.leafReason = Reader::optionalString(j, "leaf_reason", where);
  m.fxDifference = Reader::optionalString(j, "fx_difference", where);
  m.random = j.value("random", false);
  if (j.contains("outputs")) {
    const json& outs = j.at("outputs");
    if (!outs.is_array()) Reader::fail(where + ".outputs", "expected a list");
    for (size_t i = 0; i < outs.size(); ++i) {
      const std::string w = where + ".outputs[" + std::to_string(i) + "]";
      m.outputs.push_back({Reader::shape(Reader::member(outs[i], w, "shape"), w + ".shape"),
                           Reader::dtype(Reader::member(outs[i], w, "dtype"), w + ".dtype")});
    }
  }
  if (j.contains("seconds")) {
    if (!j.at("seconds").is_number()) Reader::fail(where + ".seconds", "expected a number");
    m.seconds = j.at("seconds").get<double>();
  }
  return m;
}

OpKind opKindFromName(const std::string& name, const std::string& where) {
  for (OpKind op : {OpKind::Placeholder, OpKind::GetAttr, OpKind::CallFunction, OpKind::CallMethod, OpKind::CallModule,
                    OpKind::Output})
    if (name == opKindName(op)) return op;
  Reader::fail(where, "unknown op \"" + name + "\"; expected placeholder, get_attr, call_function, call_method, "
                      "call_module or output");
}

}  // namespace

ModelSummary summarizeModel(const ModelFile& model) {
  ModelSummary s;
  s.path = model.path;
  s.hasTensorDictMetadata = model.hasTensorDictMetadata;
  s.exportedWith = model.exportedWith;
  s.formatVersion = model.formatVersion;
  s.inKeys = model.module->inKeys();
  s.outKeys = model.module->outKeys();
  s.batchSize = model.batchSize;
  s.exampleInputs = model.exampleInputs;
  return s;
}

json tracedModelJson(const TracedModel& m, GraphDetail detail) {
  json model = {{"path", m.model.path},
                {"tensordict", m.model.hasTensorDictMetadata},
                {"exported_with", m.model.exportedWith},
                {"format_version", m.model.formatVersion},
                {"in_keys", keysJson(m.model.inKeys)},
                {"out_keys", keysJson(m.model.outKeys)},
                {"batch_size", m.model.batchSize},
                {"example_inputs", json::array()}};
  for (const InputSpec& s : m.model.exampleInputs)
    model["example_inputs"].push_back({{"key", keyJson(s.key)}, {"shape", s.shape}, {"dtype", dtypeJson(s.dtype)}});

  json nodes = json::array();
  for (const auto& n : m.traced.graph->nodes()) {
    json args = json::array();
    for (const Argument& a : n->args()) args.push_back(argumentJson(a));
    json kwargs = json::array();
    for (const auto& [k, v] : n->kwargs()) kwargs.push_back(json::array({k, argumentJson(v)}));
    json users = json::array();
    for (const Node* u : n->users()) users.push_back(u->name());
    json node = {{"name", n->name()}, {"op", opKindName(n->op())}, {"target", n->target()},
                 {"args", std::move(args)}, {"kwargs", std::move(kwargs)}, {"users", std::move(users)}};
    if (!n->type().empty()) node["type"] = n->type();
    json meta = metaJson(n->meta(), detail);
    if (!meta.empty()) node["meta"] = std::move(meta);
    nodes.push_back(std::move(node));
  }
  json writes = json::array();
  for (const auto& w : m.traced.writes)
    writes.push_back({{"module", w.module}, {"key", keyJson(w.key)}, {"node", w.node ? w.node->name() : std::string()},
                      {"tuple_index", w.tupleIndex}});
  json modules = json::array();
  for (const auto& mod : m.traced.modules)
    modules.push_back({{"position", mod.position}, {"in_keys", keysJson(mod.inKeys)}, {"out_keys", keysJson(mod.outKeys)}});
  return {{"format", kFormatName},
          {"version", kGraphFormatVersion},
          {"model", std::move(model)},
          {"graph",
           {{"nodes", std::move(nodes)},
            {"out_keys", keysJson(m.traced.outKeys)},
            {"writes", std::move(writes)},
            {"modules", std::move(modules)},
            {"scope_types", m.traced.scopeTypes},
            {"reads_tensordict", m.traced.readsTensorDict}}},
          {"code", detail == GraphDetail::Full ? json{{"text", m.code.text}, {"node_lines", m.code.nodeLines}}
                                               : json{{"text", ""}}}};
}

TracedModel tracedModelFromJsonValue(const json& doc) {
  if (!doc.is_object()) Reader::fail("top level", "expected an object");
  if (!doc.contains("format") || doc.at("format") != kFormatName)
    Reader::fail("format", std::string("expected \"") + kFormatName + "\", got " +
                               (doc.contains("format") ? doc.at("format").dump() : "nothing"));
  const int64_t version = Reader::integer(Reader::member(doc, "top level", "version"), "version");
  if (version < 1 || version > kGraphFormatVersion)
    Reader::fail("version", "version " + std::to_string(version) + " is not one this tdfx reads (1 to " +
                                std::to_string(kGraphFormatVersion) + ")");
  TracedModel out;
  const json& model = Reader::member(doc, "top level", "model");
  out.model.path = Reader::optionalString(model, "path", "model");
  out.model.hasTensorDictMetadata = model.value("tensordict", false);
  out.model.exportedWith = Reader::optionalString(model, "exported_with", "model");
  if (model.contains("format_version")) {
    if (!model.at("format_version").is_number_unsigned()) Reader::fail("model.format_version", "expected a non-negative integer");
    out.model.formatVersion = model.at("format_version").get<uint64_t>();
  }
  out.model.inKeys = Reader::keys(Reader::member(model, "model", "in_keys"), "model.in_keys");
  out.model.outKeys = Reader::keys(Reader::member(model, "model", "out_keys"), "model.out_keys");
  if (model.contains("batch_size")) out.model.batchSize = Reader::shape(model.at("batch_size"), "model.batch_size");
  if (model.contains("example_inputs")) {
    const json& ins = model.at("example_inputs");
    for (size_t i = 0; i < ins.size(); ++i) {
      const std::string w = "model.example_inputs[" + std::to_string(i) + "]";
      out.model.exampleInputs.push_back({Reader::key(Reader::member(ins[i], w, "key"), w + ".key"),
                                         Reader::shape(Reader::member(ins[i], w, "shape"), w + ".shape"),
                                         Reader::dtype(Reader::member(ins[i], w, "dtype"), w + ".dtype")});
    }
  }

  const json& graph = Reader::member(doc, "top level", "graph");
  out.traced.graph = std::make_shared<Graph>();
  Graph& g = *out.traced.graph;
  const json& nodes = Reader::member(graph, "graph", "nodes");
  if (!nodes.is_array()) Reader::fail("graph.nodes", "expected a list");
  std::map<std::string, Node*> byName;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string w = "graph.nodes[" + std::to_string(i) + "]";
    const json& n = nodes[i];
    const std::string name = Reader::string(Reader::member(n, w, "name"), w + ".name");
    const OpKind op = opKindFromName(Reader::string(Reader::member(n, w, "op"), w + ".op"), w + ".op");
    const std::string target = Reader::string(Reader::member(n, w, "target"), w + ".target");
    std::vector<Argument> args;
    const json& argsJ = Reader::member(n, w, "args");
    if (!argsJ.is_array()) Reader::fail(w + ".args", "expected a list");
    for (size_t a = 0; a < argsJ.size(); ++a)
      args.push_back(argumentFromJson(argsJ[a], w + ".args[" + std::to_string(a) + "]", byName));
    Kwargs kwargs;
    const json& kwJ = Reader::member(n, w, "kwargs");
    if (!kwJ.is_array()) Reader::fail(w + ".kwargs", "expected a list of [name, value] pairs");
    for (size_t a = 0; a < kwJ.size(); ++a) {
      const std::string wk = w + ".kwargs[" + std::to_string(a) + "]";
      if (!kwJ[a].is_array() || kwJ[a].size() != 2) Reader::fail(wk, "expected [name, value]");
      kwargs.emplace_back(Reader::string(kwJ[a][0], wk), argumentFromJson(kwJ[a][1], wk, byName));
    }
    if (byName.count(name)) Reader::fail(w + ".name", "\"" + name + "\" is used by an earlier node");
    Node* node = g.createNode(op, target, std::move(args), std::move(kwargs), name);
    if (node->name() != name) Reader::fail(w + ".name", "\"" + name + "\" is not a name FX could give a node");
    if (n.contains("type")) node->setType(Reader::string(n.at("type"), w + ".type"));
    if (n.contains("meta")) node->meta() = metaFromJson(n.at("meta"), w + ".meta");
    byName[name] = node;
  }
  out.traced.outKeys = Reader::keys(Reader::member(graph, "graph", "out_keys"), "graph.out_keys");
  if (graph.contains("writes")) {
    const json& writes = graph.at("writes");
    for (size_t i = 0; i < writes.size(); ++i) {
      const std::string w = "graph.writes[" + std::to_string(i) + "]";
      TracedGraph::KeyWrite kw;
      kw.module = Reader::optionalString(writes[i], "module", w);
      kw.key = Reader::key(Reader::member(writes[i], w, "key"), w + ".key");
      const std::string node = Reader::optionalString(writes[i], "node", w);
      if (!node.empty()) {
        if (!byName.count(node)) Reader::fail(w + ".node", "no node named \"" + node + "\"");
        kw.node = byName.at(node);
      }
      kw.tupleIndex = static_cast<int>(writes[i].value("tuple_index", -1));
      out.traced.writes.push_back(std::move(kw));
    }
  }
  if (graph.contains("modules")) {
    const json& modules = graph.at("modules");
    for (size_t i = 0; i < modules.size(); ++i) {
      const std::string w = "graph.modules[" + std::to_string(i) + "]";
      out.traced.modules.push_back({Reader::optionalString(modules[i], "position", w),
                                    Reader::keys(Reader::member(modules[i], w, "in_keys"), w + ".in_keys"),
                                    Reader::keys(Reader::member(modules[i], w, "out_keys"), w + ".out_keys")});
    }
  }
  if (graph.contains("reads_tensordict")) {
    const json& reads = graph.at("reads_tensordict");
    if (!reads.is_boolean()) Reader::fail("graph.reads_tensordict", "expected true or false, got " + reads.dump());
    out.traced.readsTensorDict = reads.get<bool>();
  }
  if (graph.contains("scope_types")) {
    for (const auto& [path, type] : graph.at("scope_types").items())
      out.traced.scopeTypes[path] = Reader::string(type, "graph.scope_types." + path);
  }
  const json& code = Reader::member(doc, "top level", "code");
  out.code.text = Reader::string(Reader::member(code, "code", "text"), "code.text");
  if (code.contains("node_lines")) {
    for (const auto& [name, line] : code.at("node_lines").items())
      out.code.nodeLines[name] = static_cast<int>(Reader::integer(line, "code.node_lines." + name));
  }
  return out;
}

// Strings from a model may hold bytes that are not UTF-8 (a file name, a string constant): JSON has
// no way to carry them, so each such byte becomes U+FFFD and the document stays valid and readable
// (docs/graph-format.md). The CBOR form keeps the bytes.
std::string tracedModelToJson(const TracedModel& model, int indent) {
  return tracedModelJson(model).dump(indent, ' ', false, json::error_handler_t::replace);
}

TracedModel tracedModelFromJson(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(std::string("graph document: not valid JSON: ") + e.what());
  }
  return tracedModelFromJsonValue(doc);
}

std::vector<uint8_t> tracedModelToCbor(const TracedModel& model) { return json::to_cbor(tracedModelJson(model)); }

TracedModel tracedModelFromCbor(const std::vector<uint8_t>& bytes) {
  json doc;
  try {
    doc = worker::parseCbor(bytes);
  } catch (const Error& e) {
    throw Error(std::string("graph document: ") + e.what());
  }
  return tracedModelFromJsonValue(doc);
}

}  // namespace tdfx
