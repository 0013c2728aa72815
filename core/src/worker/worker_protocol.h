#pragma once
// The model worker's wire format: frames of a 4-byte little-endian length and a CBOR document.
// Requests: {"op": "open" | "verify" | "run" | "probe_sandbox", ...}; answers {"ok": true, ...} or
// {"ok": false, "error": message, "type": "model_file" | "trace" | "key" | "error"}.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdfx/runtime/graph_module.h"
#include "tdfx/runtime/verify.h"

namespace tdfx::worker {

/// Writes one frame; false when the other end is gone.
bool writeFrame(int fd, const std::vector<uint8_t>& payload);
/// Reads one frame (blocking); false at end of file or on a malformed length.
bool readFrame(int fd, std::vector<uint8_t>& payload);

/// Deepest nesting of arrays and maps parseCbor accepts: far past any graph document (~20 levels).
constexpr size_t kMaxCborDepth = 512;

/// Parses a CBOR document, refusing one nested deeper than kMaxCborDepth before it is read: the
/// CBOR reader recurses once per level, and a worker's answer, or a graph file, is untrusted, so
/// a few megabytes of nested arrays must not overflow the reading thread's stack.
/// Throws tdfx::Error naming what is wrong and where (byte offset).
nlohmann::json parseCbor(const std::vector<uint8_t>& bytes);

/// An answer with bulk bytes (tensor values): the CBOR document, then the bytes as they are, their
/// count in the document's "tail_bytes". nlohmann reads a CBOR byte string one byte at a time (about
/// 40 % of a resnet18-against-resnet34 diff went there); raw bytes after the document cost a copy.
std::vector<uint8_t> cborWithTail(nlohmann::json document, const std::vector<uint8_t>& tail);
/// The raw bytes after a document read by parseCborWithTail.
struct Tail {
  const uint8_t* data = nullptr;
  size_t size = 0;
  /// `count` elements of `elementBytes` from byte `offset`, bounds-checked (a malformed answer
  /// throws tdfx::Error naming `what`).
  const uint8_t* at(uint64_t offset, uint64_t bytes, const std::string& what) const;
};
/// Parses a frame written by cborWithTail (or a plain CBOR frame, with an empty tail).
nlohmann::json parseCborWithTail(const std::vector<uint8_t>& bytes, Tail& tail);

nlohmann::json inputsJson(const std::vector<InputSpec>& inputs);
std::vector<InputSpec> inputsFromJson(const nlohmann::json& j);

nlohmann::json recordsJson(const std::vector<NodeRunRecord>& records);
std::vector<NodeRunRecord> recordsFromJson(const nlohmann::json& j);

}  // namespace tdfx::worker
