#include "worker_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "graph_json.h"
#include "tdfx/error.h"
#include "tdfx/util/dtype.h"

namespace tdfx::worker {

using nlohmann::json;

namespace {

// Far past any graph document (resnet152's is ~2 MB); a corrupt length never allocates gigabytes.
constexpr uint32_t kMaxFrameBytes = 1u << 30;

// nlohmann's DOM builder behind a depth count: returning false from start_* would end the parse
// silently, so going too deep throws instead, before the reader recurses any further.
class DepthLimitedSax {
 public:
  explicit DepthLimitedSax(json& result) : dom_(result) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return dom_.number_float(v, s); }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool key(json::string_t& v) { return dom_.key(v); }
  bool start_object(size_t n) { return enter() && dom_.start_object(n); }
  bool end_object() { --depth_; return dom_.end_object(); }
  bool start_array(size_t n) { return enter() && dom_.start_array(n); }
  bool end_array() { --depth_; return dom_.end_array(); }
  bool parse_error(size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(position, token, e);
  }

 private:
  bool enter() {
    if (++depth_ > kMaxCborDepth)
      throw Error("CBOR document nested deeper than " + std::to_string(kMaxCborDepth) + " levels");
    return true;
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  size_t depth_ = 0;
};

bool writeAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);  // a dead peer is an error, not SIGPIPE
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(int fd, uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

NestedKey keyFromJson(const json& j) { return NestedKey(j.get<std::vector<std::string>>()); }

}  // namespace

bool writeFrame(int fd, const std::vector<uint8_t>& payload) {
  if (payload.size() > kMaxFrameBytes) return false;  // the reader would refuse it anyway
  const uint32_t size = static_cast<uint32_t>(payload.size());
  const uint8_t header[4] = {static_cast<uint8_t>(size), static_cast<uint8_t>(size >> 8), static_cast<uint8_t>(size >> 16),
                             static_cast<uint8_t>(size >> 24)};
  return writeAll(fd, header, 4) && writeAll(fd, payload.data(), payload.size());
}

bool readFrame(int fd, std::vector<uint8_t>& payload) {
  uint8_t header[4];
  if (!readAll(fd, header, 4)) return false;
  const uint32_t size = header[0] | (header[1] << 8) | (header[2] << 16) | (static_cast<uint32_t>(header[3]) << 24);
  if (size > kMaxFrameBytes) return false;
  payload.resize(size);
  return readAll(fd, payload.data(), size);
}

json parseCbor(const std::vector<uint8_t>& bytes) {
  json result;
  DepthLimitedSax sax(result);
  try {
    json::sax_parse(bytes.begin(), bytes.end(), &sax, nlohmann::detail::input_format_t::cbor);
  } catch (const json::exception& e) {
    throw Error(std::string("not valid CBOR: ") + e.what());
  }
  return result;
}

std::vector<uint8_t> cborWithTail(json document, const std::vector<uint8_t>& tail) {
  document["tail_bytes"] = tail.size();
  std::vector<uint8_t> bytes = json::to_cbor(document);
  bytes.insert(bytes.end(), tail.begin(), tail.end());
  return bytes;
}

json parseCborWithTail(const std::vector<uint8_t>& bytes, Tail& tail) {
  tail = {};
  json result;
  DepthLimitedSax sax(result);
  try {
    // Not strict: the document ends where the tail begins.
    json::sax_parse(bytes.begin(), bytes.end(), &sax, nlohmann::detail::input_format_t::cbor, /*strict=*/false);
  } catch (const json::exception& e) {
    throw Error(std::string("not valid CBOR: ") + e.what());
  }
  const uint64_t size = result.is_object() ? result.value("tail_bytes", uint64_t{0}) : 0;
  if (size > bytes.size()) throw Error("a frame of " + std::to_string(bytes.size()) + " bytes says it ends with " + std::to_string(size));
  tail = {bytes.data() + bytes.size() - size, static_cast<size_t>(size)};
  return result;
}

const uint8_t* Tail::at(uint64_t offset, uint64_t bytes, const std::string& what) const {
  if (offset > size || bytes > size - offset)
    throw Error("the model worker sent " + what + " at bytes " + std::to_string(offset) + "+" + std::to_string(bytes) +
                " of a tail of " + std::to_string(size));
  return data + offset;
}

json inputsJson(const std::vector<InputSpec>& inputs) {
  json out = json::array();
  for (const InputSpec& s : inputs) out.push_back({{"key", s.key.parts()}, {"shape", s.shape}, {"dtype", dtypeJson(s.dtype)}});
  return out;
}

std::vector<InputSpec> inputsFromJson(const json& j) {
  std::vector<InputSpec> out;
  for (const json& s : j)
    out.push_back({keyFromJson(s.at("key")), s.at("shape").get<std::vector<int64_t>>(), dtypeFromJson(s.at("dtype"), "inputs")});
  return out;
}

json recordsJson(const std::vector<NodeRunRecord>& records) {
  json out = json::array();
  for (const NodeRunRecord& r : records) {
    json outputs = json::array();
    for (const TensorMeta& t : r.outputs) outputs.push_back({{"shape", t.shape}, {"dtype", dtypeJson(t.dtype)}});
    out.push_back({{"outputs", std::move(outputs)}, {"seconds", r.seconds}});
  }
  return out;
}

std::vector<NodeRunRecord> recordsFromJson(const json& j) {
  std::vector<NodeRunRecord> out;
  for (const json& r : j) {
    NodeRunRecord record;
    for (const json& t : r.at("outputs"))
      record.outputs.push_back({t.at("shape").get<std::vector<int64_t>>(), dtypeFromJson(t.at("dtype"), "records")});
    record.seconds = r.at("seconds").get<double>();
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace tdfx::worker
