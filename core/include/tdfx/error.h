#pragma once
// The exceptions tdfx throws. Every message says what went wrong, where, and what was expected,
// so the CLI and GUI can show it to the user unchanged. Callers that only report errors catch
// tdfx::Error; tdfx-cli exits 1 for a tdfx::Error and 2 for any other exception.
#include <stdexcept>
#include <string>

namespace tdfx {

/// Base of all tdfx errors. Thrown as is for invalid arguments and environment failures: a
/// TensorDictModule whose forward cannot take its keys, unknown dtypes and --input specs, missing
/// verification inputs, a failed verify pass, Graphviz and export (file writing) failures.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A TensorDict key that does not exist, or a value that does not fit the TensorDict. Thrown by
/// TensorDict, and passed through unchanged by the forward of modules and GraphModule.
class KeyError : public Error {
 public:
  using Error::Error;
};

/// A model file that cannot be read or whose tensordict.json is invalid. Thrown by loadModelFile
/// and modelFromMetadata (errors of the modules built from the description are rethrown as this).
class ModelFileError : public Error {
 public:
  using Error::Error;
};

/// A module that cannot be turned into a graph. Thrown by traceGraph / symbolicTrace, also for
/// LibTorch failures met while reading the module's TorchScript code.
class TraceError : public Error {
 public:
  using Error::Error;
};

/// A failure while running a module or a traced graph: thrown by the forward of TensorDictModule
/// and GraphModule, wrapping LibTorch's error with the module path or graph node that failed.
class RuntimeError : public Error {
 public:
  using Error::Error;
};

}  // namespace tdfx
