// The worker's side: load once, trace, then answer verify and run requests. Everything that reads
// the model file or runs the model's code happens here, in the worker process.
#include <seccomp.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <malloc.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <ucontext.h>
#include <cerrno>
#include <cstring>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <typeinfo>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/jit/runtime/print_handler.h>
#include <torch/csrc/jit/serialization/import.h>

#include "graph_json.h"
#include "tdfx/error.h"
#include "tdfx/runtime/tensor_digest.h"
#include "tdfx/runtime/torchscript_export.h"
#include "tdfx/util/crash_stage.h"
#include "tdfx/util/display_text.h"
#include "tdfx/util/dtype.h"
#include "tdfx/worker/model_worker.h"
#include "tdfx/nn/attribute_tensors.h"
#include "worker_protocol.h"

namespace tdfx {

using nlohmann::json;

namespace {

// The worker's limits, set before it reads the model file (LibTorch's deserializer and a model's
// __setstate__ are the first untrusted code to run). It keeps reading files (the model; LibTorch
// and BLAS read /proc and /sys) and starting threads (OpenMP), but cannot create or change files,
// talk to the network or other processes, start processes or programs, or signal anyone but
// itself. Refused calls fail with EPERM rather than killing the worker, so a model that tries one
// gets an ordinary error.
void applySandbox() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) throw Error("cannot set up the worker's sandbox (seccomp_init failed)");
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);  // every thread, should one exist
  // Calls this architecture lacks (open on arm64) resolve to negative numbers: nothing to refuse.
  const auto refuse = [&](int call, uint32_t action = SCMP_ACT_ERRNO(EPERM)) {
    if (call >= 0) rc |= seccomp_rule_add(ctx, action, call, 0);
  };
  for (const int writeFlag : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND}) {
    const scmp_datum_t flag = static_cast<scmp_datum_t>(writeFlag);
    if (SCMP_SYS(open) >= 0)
      rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, flag, flag));
    rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, flag, flag));
  }
  for (const int call :
       {// files: no new ones, no changes to existing ones
        SCMP_SYS(creat), SCMP_SYS(openat2), SCMP_SYS(open_by_handle_at), SCMP_SYS(unlink), SCMP_SYS(unlinkat),
        SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(truncate), SCMP_SYS(ftruncate),
        SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rmdir), SCMP_SYS(mknod), SCMP_SYS(mknodat), SCMP_SYS(symlink),
        SCMP_SYS(symlinkat), SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(chmod), SCMP_SYS(fchmod), SCMP_SYS(fchmodat),
        SCMP_SYS(chown), SCMP_SYS(fchown), SCMP_SYS(lchown), SCMP_SYS(fchownat), SCMP_SYS(utime), SCMP_SYS(utimes),
        SCMP_SYS(utimensat), SCMP_SYS(futimesat), SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(fsetxattr),
        SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(fremovexattr),
        // io_uring can open and write files without passing the checks above
        SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
        // network and other processes
        SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen),
        SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(ptrace), SCMP_SYS(process_vm_writev),
        SCMP_SYS(process_vm_readv), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(pidfd_getfd),
        SCMP_SYS(tkill),
        // programs and processes (threads are clone with CLONE_THREAD, below)
        SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(fork), SCMP_SYS(vfork)})
    refuse(call);
  // clone3 passes its flags in memory, which seccomp cannot read: ENOSYS makes glibc use clone.
  refuse(SCMP_SYS(clone3), SCMP_ACT_ERRNO(ENOSYS));
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, static_cast<scmp_datum_t>(CLONE_THREAD), 0));
  // Signals to itself only (abort() raises SIGABRT with tgkill on its own pid).
  const auto self = static_cast<scmp_datum_t>(::getpid());
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, self));
  rc |= seccomp_rule_add(ctx, deny, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, self));
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) throw Error("cannot set up the worker's sandbox (seccomp rules refused)");
}

// LibTorch starts lazily, and its start reads files: cpuinfo (/proc/cpuinfo, /sys/devices/system/
// cpu), the CPU count for the OpenMP and OpenBLAS pools, /dev/urandom for a seed. Done here, once,
// so that nothing LibTorch needs later has to open a file.
void startLibTorchNow() {
  at::init_num_threads();
  const at::Tensor a = at::ones({64, 64});
  (void)at::matmul(a, a).sum().item<float>();
  (void)at::conv2d(at::ones({1, 3, 8, 8}), at::ones({4, 3, 3, 3})).sum().item<float>();
  at::parallel_for(0, 1 << 16, 1, [](int64_t, int64_t) {});
  (void)at::detail::getDefaultCPUGenerator();  // seeded from /dev/urandom when first used
}

// The second stage of the sandbox, once the model file is read and LibTorch has started: no file
// can be opened at all any more, for reading either (a model's torch.from_file, or its code
// reading the user's files, gets EPERM). /proc/self too: startLibTorchNow read what LibTorch needs.
// Seccomp rather than Landlock, so it holds on every kernel seccomp runs on.
void refuseFileOpens() {
  startLibTorchNow();
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) throw Error("cannot set up the worker's sandbox (seccomp_init failed)");
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);  // the OpenMP and OpenBLAS threads too
  for (const int call : {SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(creat), SCMP_SYS(open_by_handle_at),
                         SCMP_SYS(name_to_handle_at), SCMP_SYS(open_tree), SCMP_SYS(fsopen), SCMP_SYS(fspick),
                         SCMP_SYS(uselib), SCMP_SYS(memfd_create)})
    if (call >= 0) rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), call, 0);
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) throw Error("cannot set up the worker's sandbox (seccomp rules refused)");
}

// Each forbidden action, tried: the errno it failed with (0: it was allowed).
json probeSandbox() {
  const auto result = [](bool ok) { return ok ? 0 : errno; };
  json r;
  errno = 0;
  const int file = ::open("/tmp/tdfx-sandbox-probe", O_WRONLY | O_CREAT, 0600);
  r["open"] = result(file >= 0);
  if (file >= 0) ::close(file), ::unlink("/tmp/tdfx-sandbox-probe");
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  r["socket"] = result(sock >= 0);
  if (sock >= 0) ::close(sock);
  char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
  ::execve("/bin/true", argv, nullptr);  // returns only when refused
  r["exec"] = errno;
  r["ptrace"] = result(::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0);
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  r["fork"] = child < 0 ? errno : 0;
  if (child > 0) ::waitpid(child, nullptr, 0);
  r["kill"] = result(::kill(::getppid(), 0) == 0);  // signal 0: only asks whether it may
  return r;
}

// Min, max and mean of every call_module node's parameters, for the inspector: as
// [node, parameter, min, max, mean] rows. Each tensor is read twice (aminmax, then a sum with a
// double accumulator: mean(kDouble) would first make a double copy of it).
json parameterStats(const ModelFile& model, const Graph& graph) {
  json rows = json::array();
  for (const auto& node : graph.nodes()) {
    const NodeMeta& m = node->meta();
    const std::string base = node->op() == OpKind::CallModule ? node->target() : m.modulePath;
    for (const ParameterInfo& p : m.parameters) {
      torch::jit::Module module = model.root;
      c10::IValue value;
      const std::string path = base.empty() ? p.name : base + "." + p.name;
      bool found = true;
      size_t start = 0;
      while (found) {
        const size_t dot = path.find('.', start);
        const std::string atom = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!module.hasattr(atom)) found = false;
        else if (dot == std::string::npos) value = module.attr(atom), start = std::string::npos;
        else if (module.attr(atom).isModule()) module = module.attr(atom).toModule();
        else found = false;
        if (dot == std::string::npos) break;
        start = dot + 1;
      }
      if (!found || !value.isTensor()) continue;
      const at::Tensor t = value.toTensor().detach();
      if (t.numel() == 0 || !(t.is_floating_point() || t.scalar_type() == at::kLong || t.scalar_type() == at::kInt)) continue;
      const auto [lo, hi] = at::aminmax(t);
      const double mean = t.sum(at::kDouble).item<double>() / static_cast<double>(t.numel());
      rows.push_back({node->name(), p.name, lo.item<double>(), hi.item<double>(), mean});
    }
  }
  return rows;
}

// The tensors of a request's "input_values" (a torch.save file's bytes), read here, in the
// sandboxed worker: the caller only passes the bytes on.
InputValues givenValues(const json& req) {
  if (!req.contains("input_values")) return {};
  const auto& bytes = req.at("input_values").get_binary();
  return inputValuesFromPickle(std::vector<char>(bytes.begin(), bytes.end()));
}

struct WorkerState {
  std::optional<ModelFile> model;
  /// Raw bytes the answer being made carries after its document (cborWithTail).
  std::vector<uint8_t> tail;
  std::unique_ptr<GraphModule> graphModule;

  const ModelFile& openModel() const {
    if (!model || !graphModule) throw Error("no model is open in this worker");
    return *model;
  }

  json open(const json& req) {
    if (model) throw Error("this worker already has a model open");
    applySandbox();  // before LibTorch reads a byte of the file
    auto start = std::chrono::steady_clock::now();
    plantedFault("open");
    // Opened, then sealed, then deserialised: the model's code runs while it is deserialised (a
    // `__setstate__`), and must find every open refused already. The archive is read through the
    // descriptor opened here.
    const ModelArchive archive = ModelArchive::open(req.at("path").get<std::string>());
    refuseFileOpens();  // from here on, nothing in this process opens a file
    // The parameters' values are read by the first request that needs them (answer): the graph
    // is traced and shown without them, and the weights are most of a load (efficientnet_v2_s:
    // 0.25 s of 0.47 in a fresh worker).
    model = loadModelArchive(archive, WeightsRead::AfterLoad);
    const double loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    start = std::chrono::steady_clock::now();
    {
      const CrashStage tracing(stage::kTracer);
      plantedFault("tracer");
      graphModule = std::make_unique<GraphModule>(symbolicTrace(*model->module));
    }
    const double traceSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    TracedModel traced{summarizeModel(*model), graphModule->traced(), graphModule->code()};
    const GraphDetail detail = req.value("detail", "") == "comparison" ? GraphDetail::Comparison : GraphDetail::Full;
    return {{"ok", true},
            {"model", tracedModelJson(traced, detail)},
            {"load_seconds", loadSeconds},
            {"trace_seconds", traceSeconds},
            {"weights_pending", model->deferredWeights != nullptr}};
  }

  // A spare worker's warm-up, while the window is idle: the first TorchScript import, trace and run
  // in a fresh process are slower than later ones (new memory: copy-on-write faults on the pages
  // shared with the zygote; the importer's and compiler's first use). A small module defined here
  // goes through the same steps as an open: saved and loaded back (in memory: nothing is read
  // or written), traced and run. The worker stays free for the model it is given next.
  json warm() {
    if (model) throw Error("this worker already has a model open");
    torch::jit::Module warmUp("__torch__.WarmUp");
    warmUp.register_parameter("weight", at::ones({8, 8}), false);
    warmUp.define(R"(
def forward(self, x: Tensor) -> Tensor:
    y = torch.relu(torch.matmul(x, self.weight)) + x.size(0)
    return torch.softmax(y.reshape(x.shape[0], -1), dim=1)
)");
    std::stringstream archive;
    warmUp.save(archive);
    const ModelFile loaded = modelFromMetadata(torch::jit::load(archive), "");
    GraphModule traced = symbolicTrace(*loaded.module);
    TensorDict inputs;
    inputs.set(loaded.module->inKeys().at(0), at::ones({2, 8}));
    TensorDict out;
    traced.forward(inputs, &out);
    return {{"ok", true}};
  }

  json verify(const json& req) {
    const InputValues values = givenValues(req);  // the unpickler's, before the model's forward runs
    const CrashStage running(stage::kForward);
    const ModelFile& m = openModel();
    const TensorDict inputs =
        verificationInputs(m, worker::inputsFromJson(req.at("inputs")), req.at("seed").get<uint64_t>(), values, graphModule.get());
    VerifyOptions options;
    options.atol = req.at("atol").get<double>();
    options.rtol = req.at("rtol").get<double>();
    if (req.at("random_seed").is_null()) options.randomSeed = std::nullopt;
    else options.randomSeed = req.at("random_seed").get<uint64_t>();
    options.time = req.value("time", false);
    const bool recorded = req.value("records", true);
    std::vector<NodeRunRecord> records;
    const VerifyReport report = tdfx::verify(*m.module, *graphModule, inputs, options, recorded ? &records : nullptr);
    json answer{{"ok", true}, {"report", reportToJson(report)}};
    if (recorded) answer["records"] = worker::recordsJson(records);
    return answer;
  }

  json run(const json& req) {
    const InputValues values = givenValues(req);  // the unpickler's, before the model's forward runs
    const CrashStage running(stage::kForward);
    plantedFault("forward");
    const ModelFile& m = openModel();
    TensorDict td = verificationInputs(m, worker::inputsFromJson(req.at("inputs")), req.at("seed").get<uint64_t>(), values,
                                       graphModule.get()),
               out;
    return {{"ok", true}, {"records", worker::recordsJson(graphModule->forwardRecorded(td, &out))}};
  }

  // Every parameter and buffer of the root with its values, exactly, for diff (raw bytes in the
  // answer's tail: "floats", "doubles" or "integers" give offset and length): floating tensors as
  // float32 (float64 as doubles), complex ones as their real and imaginary parts, integers and
  // bools as int64 (a double would round 2^53 + 1), quantized ones by their integer representation.
  // With "digest_key", each parameter's digest (tensorDigest); with "values_of", values only for the
  // parameters it names (a diff reads the values of those whose digests differ, nothing else).
  json parameterValues(const json& req) {
    const ModelFile& m = openModel();
    json list = json::array();
    const std::optional<uint64_t> digestKey =
        req.contains("digest_key") ? std::optional<uint64_t>(req.at("digest_key").get<uint64_t>()) : std::nullopt;
    std::optional<std::set<std::string>> valuesOf;
    if (req.contains("values_of")) valuesOf = req.at("values_of").get<std::set<std::string>>();
    const auto add = [&](const std::string& name, const at::Tensor& value, bool buffer) {
      at::Tensor t = value.detach();
      json p = {{"name", name}, {"shape", t.sizes().vec()}, {"dtype", dtypeToString(t.scalar_type())}, {"buffer", buffer}};
      if (digestKey) p["digest"] = tensorDigest(t, *digestKey);
      if (valuesOf && !valuesOf->count(name)) {
        list.push_back(std::move(p));
        return;
      }
      if (t.is_quantized()) t = t.int_repr();
      if (t.numel() == 0) {
        list.push_back(std::move(p));
        return;
      }
      // Raw bytes after the answer (cborWithTail): floating values as float32, exact for every
      // floating dtype but float64, which goes as it is.
      at::Tensor d;
      if (at::isIntegralType(t.scalar_type(), /*includeBool=*/true)) d = t.to(at::kLong);
      else if (t.is_complex()) d = at::view_as_real(t.resolve_conj());
      else d = t;
      if (d.is_floating_point() && d.scalar_type() != at::kDouble) d = d.to(at::kFloat);
      d = d.contiguous();
      const size_t bytes = static_cast<size_t>(d.numel()) * d.element_size();
      const size_t offset = tail.size();
      tail.resize(offset + bytes);
      std::memcpy(tail.data() + offset, d.data_ptr(), bytes);
      const char* kind = d.scalar_type() == at::kLong ? "integers" : d.scalar_type() == at::kDouble ? "doubles" : "floats";
      p[kind] = json::array({offset, bytes});
      list.push_back(std::move(p));
    };
    // Named by their path, walked here rather than by named_parameters: a crafted archive can hold a
    // root parameter literally named "a.b" beside submodule a's b, and both would be "a.b". A name
    // part with a '.' in it is written `['a.b']`.
    const auto qualify = [](const std::string& prefix, const std::string& name) {
      if (name.find('.') != std::string::npos) return prefix + "['" + name + "']";
      return prefix.empty() ? name : prefix + "." + name;
    };
    // Parameters, then buffers, then other tensor state (a quantized module's packed weights), each
    // over the whole tree.
    enum class Kind { Parameters, Buffers, Attributes };
    const std::function<void(const torch::jit::Module&, const std::string&, Kind)> walk =
        [&](const torch::jit::Module& module, const std::string& prefix, Kind kind) {
          if (kind == Kind::Buffers) {
            for (const auto& b : module.named_buffers(/*recurse=*/false)) add(qualify(prefix, b.name), b.value, true);
          } else if (kind == Kind::Parameters) {
            for (const auto& p : module.named_parameters(/*recurse=*/false)) add(qualify(prefix, p.name), p.value, false);
          } else {
            for (const auto& t : attributeTensors(module)) add(qualify(prefix, t.attribute) + t.place, t.value, false);
          }
          for (const auto& child : module.named_children()) walk(child.value, qualify(prefix, child.name), kind);
        };
    for (const Kind kind : {Kind::Parameters, Kind::Buffers, Kind::Attributes}) walk(m.root, "", kind);
    return {{"ok", true}, {"parameters", std::move(list)}};
  }

  json answer(const json& req) {
    const std::string op = req.at("op").get<std::string>();
    // The parameter values an open left unread, before any request that may use them. A file
    // changed in place fails here, and in every later request (readDeferredWeights keeps the error).
    if (model && op != "open" && op != "warm" && op != "probe_sandbox") readDeferredWeights(*model);
    if (op == "read_weights") return {{"ok", true}};  // read above
    if (op == "parameter_values") return parameterValues(req);
    if (op == "parameter_stats") return {{"ok", true}, {"stats", parameterStats(openModel(), graphModule->graph())}};
    if (op == "open") return open(req);
    if (op == "warm") return warm();
    if (op == "verify") return verify(req);
    if (op == "run") return run(req);
    if (op == "torchscript") {
      const TorchScriptArchive saved = saveTorchScript(*graphModule);
      return {{"ok", true},
              {"archive", json::binary(std::vector<uint8_t>(saved.bytes.begin(), saved.bytes.end()))},
              {"signature", saved.signature}};
    }
    if (op == "probe_sandbox") return {{"ok", true}, {"results", probeSandbox()}};
    throw Error("unknown request \"" + op + "\"");
  }
};

// An error answer. `origin` says whose error it is: "tdfx" (tdfx's own, a tdfx::Error), "libtorch"
// (LibTorch's checked error, c10::Error: the model's code or the importer refusing), "limit" (out
// of memory under the worker's limit), "exception" (any other C++ exception: a bug, in tdfx or a
// library) or "terminate" (an exception nothing could catch; the worker aborts).
json failure(const std::string& type, std::string message, const std::string& origin = "tdfx") {
  if (message.find("Operation not permitted") != std::string::npos)
    message += " (the model worker's sandbox refuses this: once the model file is read, its code cannot open, "
               "create or change files, use the network or start programs)";
  return {{"ok", false}, {"type", type}, {"error", message}, {"origin", origin}};
}

// "std::out_of_range": the exception's type, as its demangled name.
std::string exceptionTypeName(const std::exception& e) {
  int status = 0;
  char* name = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
  std::string s = status == 0 && name ? name : typeid(e).name();
  std::free(name);
  return s;
}

// The socket the answer goes to, for the terminate handler.
int answerSocket = -1;
volatile sig_atomic_t answeredTermination = 0;  // answerTermination has sent the answer already

// std::terminate in the worker: LibTorch threw where nothing can catch (a destructor, a noexcept
// function) and the default handler would print its message with a 30-frame C++ backtrace to the
// user's terminal. This one sends LibTorch's one-line cause as the request's answer, then aborts:
// the app reports the cause, and the worker is gone as before.
[[noreturn]] void answerTermination() {
  std::string cause = "the model worker stopped inside LibTorch";
  const auto firstLine = [](const std::string& text) { return ": " + text.substr(0, text.find('\n')); };
  if (const std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const c10::Error& e) {
      cause += firstLine(e.msg());
    } catch (const std::exception& e) {
      cause += firstLine(e.what());
    } catch (...) {
    }
  }
  if (answerSocket >= 0) worker::writeFrame(answerSocket, json::to_cbor(failure("error", cause, "terminate")));
  answeredTermination = 1;
  std::abort();
}


// A crash's answer, sent from the signal handler before the worker dies: the signal, the stage it
// died in (tdfx/util/crash_stage.h) and the frames it died in, origin "signal". Built in a fixed
// buffer as CBOR (a map of text strings and false): nothing here may allocate or lock.
struct CrashAnswer {
  uint8_t bytes[12288];
  size_t size = 4;  // the frame's length header comes first

  void raw(uint8_t b) {
    if (size < sizeof bytes) bytes[size++] = b;
  }
  void text(const char* const* parts, size_t cap = 1500) {  // one CBOR text string made of the parts, in order
    size_t length = 0;
    for (const char* const* p = parts; *p; ++p)
      for (const char* c = *p; *c; ++c) ++length;
    length = length < cap ? length : cap;
    raw(0x79);  // text string, 16-bit length
    raw(static_cast<uint8_t>(length >> 8));
    raw(static_cast<uint8_t>(length));
    size_t written = 0;
    for (const char* const* p = parts; *p; ++p)
      for (const char* c = *p; *c && written < length; ++c, ++written) raw(static_cast<uint8_t>(*c));
  }
  void text(const char* s, size_t cap = 1500) {
    const char* parts[] = {s, nullptr};
    text(parts, cap);
  }
};

// The frames a crash happened in, innermost first, from the interrupted instruction outwards: one
// line each, "OBJECT<TAB>SYMBOL" (the shared object's or program's file name, the dynamic symbol
// as linked, mangled; "?" when unknown). The loader fuzzer tells LibTorch's crashes from tdfx's
// by them (WorkerCrash::frames). Written into `out`; backtrace() was called once before (loading
// libgcc's unwinder allocates), dladdr() only reads the loaded objects' tables.
constexpr int kCrashFrames = 32;
constexpr size_t kCrashFramesText = 9000;

void crashFrames(void* context, char* out, size_t capacity) {
  void* frames[kCrashFrames + 8];
  const int n = ::backtrace(frames, kCrashFrames + 8);
  int first = 0;
#if defined(__x86_64__)
  // The handler's own frames and the kernel's signal trampoline come first: start at the frame of
  // the instruction that faulted (a raise() or abort() is found as the frame after its call).
  // (A jump to an address in no loaded object, a call through a corrupted pointer, cannot be
  // unwound from: its one frame is "?", and no allow-list entry excuses it.)
  const void* pc = reinterpret_cast<void*>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
  for (int i = 0; i < n; ++i)
    if (frames[i] == pc) first = i;
#else
  (void)context;
#endif
  size_t used = 0;
  const auto put = [&](const char* text, size_t most) {
    for (size_t k = 0; text[k] && k < most && used + 1 < capacity; ++k) out[used++] = text[k];
  };
  for (int i = first; i < n && i < first + kCrashFrames; ++i) {
    Dl_info info{};
    // A return address is one past its call: look up the call's own byte.
    const char* at = static_cast<const char*>(frames[i]) - (i == first ? 0 : 1);
    const bool found = ::dladdr(at, &info) != 0;
    const char* object = found && info.dli_fname && *info.dli_fname ? info.dli_fname : "?";
    for (const char* c = object; *c; ++c)
      if (*c == '/') object = c + 1;
    put(object, 120);
    put("\t", 1);
    put(found && info.dli_sname ? info.dli_sname : "?", 360);
    put("\n", 1);
  }
  out[used] = '\0';
}

// Unwinding a crashed process can crash in turn (a stack the fault left inconsistent; about a third
// of the runs of ModelWorker.ACrashInLibTorchIsAnErrorNamingTheSignal did): a fault while the frames
// are collected jumps back here, and the answer goes without them rather than not at all.
sigjmp_buf unwindEscape;

void unwindFailed(int) { ::siglongjmp(unwindEscape, 1); }

void framesOrNothing(void* context, char* out, size_t capacity) {
  struct sigaction guard {}, segv {}, bus {}, abrt {};
  guard.sa_handler = unwindFailed;
  guard.sa_flags = SA_NODEFER | SA_ONSTACK;
  sigemptyset(&guard.sa_mask);
  ::sigaction(SIGSEGV, &guard, &segv);
  ::sigaction(SIGBUS, &guard, &bus);
  ::sigaction(SIGABRT, &guard, &abrt);
  if (sigsetjmp(unwindEscape, 1) == 0) crashFrames(context, out, capacity);
  else out[0] = '\0';  // no frames: the fuzzer excuses no crash without them
  ::sigaction(SIGSEGV, &segv, nullptr);
  ::sigaction(SIGBUS, &bus, nullptr);
  ::sigaction(SIGABRT, &abrt, nullptr);
}

const char* signalText(int sig) {  // as WorkerProcess names a signal the worker died by
  switch (sig) {
    case SIGSEGV: return "signal 11 (SIGSEGV)";
    case SIGBUS: return "signal 7 (SIGBUS)";
    case SIGFPE: return "signal 8 (SIGFPE)";
    case SIGILL: return "signal 4 (SIGILL)";
    case SIGABRT: return "signal 6 (SIGABRT)";
    default: return "a signal";
  }
}

struct sigaction previousCrashActions[NSIG];

void answerCrash(int sig, siginfo_t* info, void* context) {
  if (answerSocket >= 0 && !answeredTermination) {
    const char* stage = CrashStage::current();
    if (!*stage) stage = "the model worker";
    static char frames[kCrashFramesText];
    framesOrNothing(context, frames, sizeof frames);
    static CrashAnswer a;  // static: a crash by stack overflow leaves little stack to build it on
    a.raw(0xA6);  // a map of six
    a.text("ok");
    a.raw(0xF4);  // false
    a.text("type");
    a.text("error");
    a.text("error");
    const char* message[] = {"the model worker died by ", signalText(sig), " in ", stage, nullptr};
    a.text(message);
    a.text("origin");
    a.text("signal");
    a.text("stage");
    a.text(stage);
    a.text("frames");
    a.text(frames, kCrashFramesText);
    const size_t payload = a.size - 4;
    a.bytes[0] = static_cast<uint8_t>(payload);
    a.bytes[1] = static_cast<uint8_t>(payload >> 8);
    a.bytes[2] = static_cast<uint8_t>(payload >> 16);
    a.bytes[3] = static_cast<uint8_t>(payload >> 24);
    for (size_t done = 0; done < a.size;) {
      const ssize_t n = ::write(answerSocket, a.bytes + done, a.size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }
  // Then what would have happened without this handler (a sanitizer's report, or death by the signal).
  const struct sigaction& previous = previousCrashActions[sig];
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_IGN && previous.sa_handler != SIG_DFL && previous.sa_handler) {
    previous.sa_handler(sig);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void answerCrashes() {
  void* warm[1];
  ::backtrace(warm, 1);  // loads the unwinder now: the handler's first call may not allocate or open files
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    struct sigaction action {};
    action.sa_sigaction = answerCrash;
    action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, &previousCrashActions[sig]);
  }
}

}  // namespace

void reuseFreedMemory() {
  // glibc hands a tensor over 128 KiB (up to a threshold that grows as such blocks are freed)
  // fresh pages from mmap, and gives the heap's free top back to the kernel past 128 KiB: a
  // forward then spends its time in page faults (a fifth of densenet121's, under batch_norm_cpu),
  // and how much depends on the order values are freed in (densenet121's printed-graph forward
  // measured 1.1x to 1.5x of the eager archive's, both at 55 ms with this). Blocks up to 32 MiB
  // (glibc's largest mmap threshold) come from the heap, which is never trimmed: freed pages are
  // reused. A worker serves one model, so its heap staying at the peak costs nothing.
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  ::mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

void serveModelWorker(int fd, uint64_t memoryBytes) {
  // stdout is the app's (tdfx-cli --json prints there): whatever the model prints goes to stderr.
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  // What the model prints reaches the user's terminal: its escape sequences are shown, not obeyed.
  torch::jit::setPrintHandler([](const std::string& text) { std::cerr << escapeControls(text); });
  // LibTorch's lazy start first, so what it reserves belongs to the baseline the limit counts
  // from: OpenBLAS maps a 128 MiB buffer at its first matrix product, which made a model with
  // 184 MiB of tensors fail a 256 MiB limit (CI, 2026-12-02, with OMP_NUM_THREADS=1).
  startLibTorchNow();
  limitWorkerMemory(memoryBytes);
  reuseFreedMemory();
  answerSocket = fd;
  std::set_terminate(answerTermination);
  answerCrashes();
  WorkerState state;
  std::vector<uint8_t> frame;
  while (worker::readFrame(fd, frame)) {
    json answer;
    try {
      answer = state.answer(worker::parseCbor(frame));
    } catch (const ModelFileError& e) {
      answer = failure("model_file", e.what());
    } catch (const TraceError& e) {
      answer = failure("trace", e.what());
    } catch (const KeyError& e) {
      answer = failure("key", e.what());
    } catch (const Error& e) {
      answer = failure("error", e.what());
    } catch (const c10::Error& e) {
      answer = failure("error", e.what_without_backtrace(), "libtorch");
    } catch (const std::bad_alloc&) {
      answer = failure("memory", "out of memory", "limit");
    } catch (const std::exception& e) {
      answer = failure("error", exceptionTypeName(e) + ": " + e.what(), "exception");
    }
    const std::vector<uint8_t> bytes = state.tail.empty() ? json::to_cbor(answer) : worker::cborWithTail(answer, state.tail);
    state.tail.clear();
    state.tail.shrink_to_fit();
    if (!worker::writeFrame(fd, bytes)) break;
  }
}

}  // namespace tdfx
