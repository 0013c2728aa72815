#pragma once
// JSON values of the serialized graph (docs/graph-format.md), shared by graph_format.cpp and the
// model worker's protocol.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tdfx/worker/graph_format.h"

namespace tdfx {

/// An FX argument as JSON: null, true/false, integers, finite floats and strings as themselves;
/// everything else tagged: {"float": "inf"}, {"node": name}, {"list": [...]}, {"tuple": [...]},
/// {"slice": [start, stop, step]}, {"dict": [[k, v], ...]}, {"ellipsis": true},
/// {"dtype": "float32"}, {"device": "cpu"}, {"layout": "torch.strided"},
/// {"memory_format": "torch.contiguous_format"}.
nlohmann::json argumentJson(const Argument& arg);
/// Reads what argumentJson wrote; node names are looked up in `nodes` (earlier nodes only).
/// Throws tdfx::Error naming `where`.
Argument argumentFromJson(const nlohmann::json& j, const std::string& where, const std::map<std::string, Node*>& nodes);

/// A tensor's dtype: torch's name ("float32"), or null for a value that is not a tensor
/// (TensorMeta of an int output). Read back by dtypeFromJson; throws tdfx::Error naming `where`.
nlohmann::json dtypeJson(c10::ScalarType dtype);
c10::ScalarType dtypeFromJson(const nlohmann::json& j, const std::string& where);

nlohmann::json tracedModelJson(const TracedModel& model, GraphDetail detail = GraphDetail::Full);
TracedModel tracedModelFromJsonValue(const nlohmann::json& doc);

}  // namespace tdfx
