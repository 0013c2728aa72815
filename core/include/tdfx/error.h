#pragma once
// The exceptions tdfx throws. Every message says what went wrong, where, and what was expected,
// so the CLI and GUI can show it to the user unchanged.
#include <stdexcept>
#include <string>

namespace tdfx {

/// Base of all tdfx errors.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A TensorDict key that does not exist, or a value that does not fit the TensorDict.
class KeyError : public Error {
 public:
  using Error::Error;
};

/// A model file that cannot be read or whose tensordict.json is invalid.
class ModelFileError : public Error {
 public:
  using Error::Error;
};

/// A module that cannot be turned into a graph.
class TraceError : public Error {
 public:
  using Error::Error;
};

/// A failure while running a module or a traced graph.
class RuntimeError : public Error {
 public:
  using Error::Error;
};

}  // namespace tdfx
