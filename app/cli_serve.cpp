#include "cli_serve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "tdfx/error.h"
#include "tdfx/util/json_nesting.h"
#include "tdfx/worker/graph_format.h"

using nlohmann::json;

namespace {

ModelCache* activeCache = nullptr;  // serve's, while it runs
bool servingNow = false;
int requestsIn = STDIN_FILENO, repliesOut = STDOUT_FILENO;

bool sameLimits(const tdfx::WorkerLimits& a, const tdfx::WorkerLimits& b) {
  return a.openSeconds == b.openSeconds && a.requestSeconds == b.requestSeconds && a.memoryBytes == b.memoryBytes;
}

OpenedModel openFresh(const std::string& path, const tdfx::WorkerLimits& limits) {
  OpenedModel opened;
  opened.worker = std::make_shared<tdfx::ModelWorker>(limits);
  opened.model = std::make_shared<tdfx::TracedModel>(opened.worker->open(path));
  return opened;
}

// Standard base64, for a reply whose output is not UTF-8 (a model's string constant may be any
// bytes, and JSON strings hold only text).
std::string base64(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out += k <= n ? digits[v >> (18 - 6 * k) & 63] : '=';
  }
  return out;
}

bool isUtf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

void putText(json& reply, const char* field, const std::string& text) {
  if (isUtf8(text)) reply[field] = text;
  else reply[std::string(field) + "_base64"] = base64(text);
}

// Runs one command as `tdfx-cli ARGS...` would, its stdout and stderr captured.
json runOne(int (*runCommand)(int, char**), const json& args) {
  if (!args.is_array() || args.empty()) throw tdfx::Error("a command is a non-empty array of strings, e.g. [\"trace\", \"model.pt\"]");
  std::vector<std::string> words{"tdfx-cli"};
  for (const auto& a : args) {
    if (!a.is_string()) throw tdfx::Error("a command's arguments are strings, not " + a.dump());
    words.push_back(a.get<std::string>());
  }
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  if (servesRequests(static_cast<int>(words.size()), argv.data()))
    throw tdfx::Error("serve is not a command serve runs (it already is the server)");
  std::ostringstream out, err;
  std::streambuf* oldOut = std::cout.rdbuf(out.rdbuf());
  std::streambuf* oldErr = std::cerr.rdbuf(err.rdbuf());
  int status = 2;
  try {
    status = runCommand(static_cast<int>(words.size()), argv.data());
  } catch (const std::exception& e) {  // runCli catches its own; this keeps the server up if it did not
    err << "tdfx-cli: unexpected error: " << e.what() << "\n";
  }
  std::cout.rdbuf(oldOut);
  std::cerr.rdbuf(oldErr);
  json result{{"status", status}};
  putText(result, "stdout", out.str());
  putText(result, "stderr", err.str());
  return result;
}

bool writeAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// One line of the protocol's input, without its newline; false at the end of input.
bool readLine(int fd, std::string& buffer, std::string& line) {
  for (;;) {
    const size_t end = buffer.find('\n');
    if (end != std::string::npos) {
      line = buffer.substr(0, end);
      buffer.erase(0, end + 1);
      return true;
    }
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (buffer.empty()) return false;
      line.swap(buffer);  // a last request without its newline
      buffer.clear();
      return true;
    }
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace

OpenedModel ModelCache::open(const std::string& path, const tdfx::WorkerLimits& limits) {
  // A file rewritten in place, even with its old mtime put back (touch -r), has another ctime.
  const std::optional<tdfx::FileIdentity> stamp = tdfx::FileIdentity::ofPath(path);
  const bool stamped = stamp.has_value();
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->path != path || !sameLimits(it->limits, limits)) {
      ++it;
    } else if (stamped && it->stamp == *stamp && it->opened.worker->idleAndConnected()) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().opened;
    } else {
      it = entries_.erase(it);  // another version of the file, or a worker that ended
    }
  }
  OpenedModel opened = openFresh(path, limits);
  if (stamped && capacity_ > 0) {
    opened.cached = true;
    entries_.push_front(Entry{path, *stamp, limits, opened});
    while (entries_.size() > capacity_) entries_.pop_back();
  }
  return opened;
}

void ModelCache::forget(const std::shared_ptr<tdfx::ModelWorker>& worker) {
  entries_.remove_if([&](const Entry& e) { return e.opened.worker == worker; });
}

void forgetModel(const OpenedModel& opened) {
  if (activeCache && opened.cached) activeCache->forget(opened.worker);
}

tdfx::TracedModel ownCopy(OpenedModel& opened) {
  if (!opened.cached) return std::move(*opened.model);
  return tdfx::tracedModelFromCbor(tdfx::tracedModelToCbor(*opened.model));
}

OpenedModel openModelFor(const std::string& path, const tdfx::WorkerLimits& limits) {
  return activeCache ? activeCache->open(path, limits) : openFresh(path, limits);
}

bool serving() { return servingNow; }

bool servesRequests(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--timeout" || a == "--memory-limit") {
      ++i;  // its value
      continue;
    }
    if (a.rfind("--timeout=", 0) == 0 || a.rfind("--memory-limit=", 0) == 0) continue;
    if (a != "serve") return false;
    // `serve --help` prints its usage on stdout, as every command's does (and --version).
    for (int j = 1; j < argc; ++j)
      for (const char* flag : {"--help", "-h", "--version"})
        if (std::strcmp(argv[j], flag) == 0) return false;
    return true;
  }
  return false;
}

void reserveProtocolDescriptors() {
  // Copies above the three standard descriptors; workers keep only 0, 1, 2 and their socket.
  requestsIn = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 10);
  repliesOut = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 10);
  const int nothing = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (requestsIn < 0 || repliesOut < 0 || nothing < 0 || ::dup2(nothing, STDIN_FILENO) < 0 ||
      ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::fprintf(stderr, "tdfx-cli: error: serve: cannot set up its descriptors: %s\n", std::strerror(errno));
    std::_Exit(2);
  }
  ::close(nothing);
}

namespace {

// A request's values are read, copied, dumped and freed recursively: a line of 100,000 nested
// brackets (200 KB) overflowed the stack. Requests nest a few levels; deeper ones are refused
// before they are parsed.
constexpr int kMaxRequestDepth = 64;

}  // namespace

int serveRequests(int (*runCommand)(int, char**), size_t cachedModels) {
  ModelCache cache(cachedModels);
  activeCache = &cache;
  servingNow = true;
  std::string buffer, line;
  for (size_t number = 1; readLine(requestsIn, buffer, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json reply;
    try {
      if (tdfx::jsonNestingDepth(line, kMaxRequestDepth) > kMaxRequestDepth)
        throw tdfx::Error("its values nest deeper than " + std::to_string(kMaxRequestDepth) +
                          " levels (a request is {\"id\", \"argv\": [strings]})");
      const json request = json::parse(line);
      if (!request.is_object()) throw tdfx::Error("a request is a JSON object, not " + std::string(request.type_name()));
      reply["id"] = request.value("id", json());
      if (request.contains("argv")) {
        reply.update(runOne(runCommand, request["argv"]));
      } else if (request.contains("commands") && request["commands"].is_array()) {
        json results = json::array();
        for (const auto& command : request["commands"]) {
          results.push_back(runOne(runCommand, command));
          if (results.back().at("status") != 0) break;  // the rest need what this one did not do
        }
        reply["results"] = std::move(results);
      } else {
        throw tdfx::Error("a request has \"argv\" (one command) or \"commands\" (an array of them)");
      }
    } catch (const std::exception& e) {
      if (!reply.contains("id")) reply["id"] = nullptr;
      reply.erase("status");
      reply["error"] = "request on line " + std::to_string(number) + ": " + e.what();
    }
    if (!writeAll(repliesOut, reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n")) break;
  }
  activeCache = nullptr;
  servingNow = false;
  return 0;
}
