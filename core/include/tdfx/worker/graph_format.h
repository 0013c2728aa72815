#pragma once
// The serialized graph: a traced model as plain data that needs no LibTorch objects. The model
// worker sends it to the app; `tdfx-cli export -o graph.json` writes it for scripts and other
// viewers. The format is specified, with its version, in docs/graph-format.md.
#include <cstdint>
#include <string>
#include <vector>

#include "tdfx/codegen/python_code.h"
#include "tdfx/model/model_file.h"
#include "tdfx/trace/symbolic_trace.h"

namespace tdfx {

/// Version of the serialized graph (docs/graph-format.md); readers refuse a newer one.
constexpr int kGraphFormatVersion = 1;

/// What the app needs to know about an open model file, without its TorchScript objects.
struct ModelSummary {
  std::string path;
  bool hasTensorDictMetadata = false;
  std::string exportedWith;
  uint64_t formatVersion = 0;  ///< the archive's TorchScript file format version; 0: unknown
  std::vector<NestedKey> inKeys, outKeys;
  std::vector<int64_t> batchSize;
  std::vector<InputSpec> exampleInputs;
};

/// A traced model as plain data: the graph (without the module roots and tensor constants that running it needs), its TensorDict wiring and the
/// generated code. Printing, code and layout work on it exactly as on the traced original.
struct TracedModel {
  ModelSummary model;
  TracedGraph traced;
  PythonCode code;
};

/// How much a graph document carries. `Comparison` leaves out what a diff never reads and what is
/// most of a large graph's bytes: the generated code (empty text, no line map), and each node's
/// source text and schema (a 100k-node chain: 15 of its 54 MB as JSON). The model worker sends
/// it for `tdfx-cli diff` only; files are always written in full.
enum class GraphDetail { Full, Comparison };

/// The summary of a loaded model file.
ModelSummary summarizeModel(const ModelFile& model);

/// JSON text of `model` (indent < 0: one line).
std::string tracedModelToJson(const TracedModel& model, int indent = -1);
/// Reads JSON text written by tracedModelToJson. Throws tdfx::Error naming the JSON location
/// and what was expected, or the version when it is newer than kGraphFormatVersion.
TracedModel tracedModelFromJson(const std::string& text);

/// The same document as CBOR (what the model worker sends: compact and exact for floats).
std::vector<uint8_t> tracedModelToCbor(const TracedModel& model);
TracedModel tracedModelFromCbor(const std::vector<uint8_t>& bytes);

}  // namespace tdfx
