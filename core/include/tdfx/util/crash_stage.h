#pragma once
// CrashStage: what this process is doing now, for a crash report. A model worker that dies by a
// signal names the stage it died in (LibTorch's importer, tdfx's tracer, the model's forward), so
// that a crash in LibTorch reading a damaged archive is told apart from one in tdfx's own code.
namespace tdfx {

/// Sets the current stage for its lifetime and restores the one before. `name` must be a string
/// literal (it is read from a signal handler).
class CrashStage {
 public:
  explicit CrashStage(const char* name);
  ~CrashStage();
  CrashStage(const CrashStage&) = delete;
  CrashStage& operator=(const CrashStage&) = delete;

  /// The current stage's name; "" when none is set. Async-signal-safe.
  static const char* current();

 private:
  const char* previous_;
};

/// The stage names tdfx sets.
namespace stage {
inline constexpr const char* kImporter = "LibTorch's importer (torch::jit::load)";
inline constexpr const char* kDebugInfo = "LibTorch's importer (debug info, unpickled when first read)";
inline constexpr const char* kTracer = "tdfx's tracer";
inline constexpr const char* kForward = "running the model";
}  // namespace stage

/// Test-only (tests/fuzz): when the environment's TDFX_TEST_PLANT_FAULT is `KIND@WHERE` and `where`
/// is WHERE, fails right here, in tdfx's own code, as a bug would: KIND "signal" raises SIGSEGV,
/// "abort" calls abort() (as glibc does on a corrupted heap), "exception" throws std::out_of_range (as an unchecked .at() does), "hang" never returns. The
/// places: "open" (the worker's open, before LibTorch), "importer" (tdfx's archive reader, called
/// by LibTorch's importer), "debug-info", "tracer" and "forward" (inside those stages). The loader
/// fuzzer's tests plant one in each and require it to be reported as a bug.
void plantedFault(const char* where);

}  // namespace tdfx
