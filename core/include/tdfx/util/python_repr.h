#pragma once
// Python's repr() and str() for the scalar values that appear in FX printouts and generated code.
// FX output is produced by Python, so byte-exact reproduction needs Python's own formatting rules.
#include <cstdint>
#include <string>
#include <string_view>

namespace tdfx {

/// repr(str): quotes chosen like CPython (single unless the text has ' and no "), escapes for
/// backslash, the quote, \n \r \t and non-printable characters; printable unicode is kept as is.
std::string pythonStringRepr(std::string_view utf8);

/// repr(float) / str(float): the shortest text that round-trips ("1.0", "1e-05", "inf", "nan").
std::string pythonFloatRepr(double value);

/// repr(bool): "True" / "False".
inline std::string pythonBoolRepr(bool value) { return value ? "True" : "False"; }

/// True when `name` is a valid Python identifier (ASCII subset; that is all FX produces).
bool isPythonIdentifier(std::string_view name);

/// True for Python keywords (`class`, `if`, ...).
bool isPythonKeyword(std::string_view name);

/// True for names in Python 3.11's builtins module (`input`, `sum`, `max`, ...).
bool isPythonBuiltin(std::string_view name);

}  // namespace tdfx
