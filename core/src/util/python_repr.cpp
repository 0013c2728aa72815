#include "tdfx/util/python_repr.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

namespace tdfx {
namespace {

// Decodes one UTF-8 code point at s[i]; returns 0xFFFD for malformed input and advances i.
uint32_t decodeUtf8(std::string_view s, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) {
    ++i;
    return c;
  }
  int extra = (c >= 0xF0) ? 3 : (c >= 0xE0) ? 2 : (c >= 0xC0) ? 1 : -1;
  if (extra < 0 || i + extra >= s.size()) {
    ++i;
    return 0xFFFD;
  }
  uint32_t cp = c & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    unsigned char cont = byte(i + k);
    if ((cont & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (cont & 0x3F);
  }
  i += extra + 1;
  return cp;
}

// CPython's str.isprintable() for the code points that matter in keys and names. Exact for ASCII
// and Latin-1; beyond that every code point is printable except separators and format controls.
bool isPrintable(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp >= 0x80 && cp < 0xA0) return false;
  if (cp == 0xA0 || cp == 0xAD) return false;  // no-break space (Zs), soft hyphen (Cf)
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
      (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF)
    return false;
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;
  if (cp >= 0xE000 && cp <= 0xF8FF) return false;  // private use (Co)
  return true;
}

void appendEscape(std::string& out, uint32_t cp) {
  char buf[16];
  if (cp < 0x100)
    std::snprintf(buf, sizeof buf, "\\x%02x", cp);
  else if (cp < 0x10000)
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
  else
    std::snprintf(buf, sizeof buf, "\\U%08x", cp);
  out += buf;
}

}  // namespace

std::string pythonStringRepr(std::string_view utf8) {
  const bool hasSingle = utf8.find('\'') != std::string_view::npos;
  const bool hasDouble = utf8.find('"') != std::string_view::npos;
  const char quote = (hasSingle && !hasDouble) ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < utf8.size();) {
    const size_t start = i;
    const uint32_t cp = decodeUtf8(utf8, i);
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (!isPrintable(cp)) {
      appendEscape(out, cp);
    } else {
      out.append(utf8.substr(start, i - start));
    }
  }
  out += quote;
  return out;
}

std::string pythonFloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form, then laid out the way float_repr_style does:
  // positional for exponents in [-4, 16), scientific otherwise.
  std::array<char, 64> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), value, std::chars_format::scientific);
  std::string sci(buf.data(), res.ptr);
  const size_t ePos = sci.find('e');
  std::string mantissa = sci.substr(0, ePos);
  const int exponent = std::stoi(sci.substr(ePos + 1));
  bool negative = false;
  if (!mantissa.empty() && mantissa[0] == '-') {
    negative = true;
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    const int pointPos = exponent + 1;  // digits before the decimal point
    if (pointPos <= 0) {
      out += "0." + std::string(-pointPos, '0') + digits;
    } else if (static_cast<size_t>(pointPos) >= digits.size()) {
      out += digits + std::string(pointPos - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, pointPos) + "." + digits.substr(pointPos);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char expBuf[16];
  std::snprintf(expBuf, sizeof expBuf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + expBuf;
}

bool isPythonIdentifier(std::string_view name) {
  if (name.empty()) return false;
  const auto isStart = [](char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!isStart(name[0])) return false;
  for (char c : name)
    if (!isStart(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

bool isPythonKeyword(std::string_view name) {
  static const std::set<std::string_view> keywords = {
      "False", "None",   "True",    "and",      "as",       "assert", "async",  "await",
      "break", "class",  "continue", "def",     "del",      "elif",   "else",   "except",
      "finally", "for",  "from",    "global",   "if",       "import", "in",     "is",
      "lambda", "nonlocal", "not",  "or",       "pass",     "raise",  "return", "try",
      "while", "with",   "yield"};
  return keywords.count(name) > 0;
}

bool isPythonBuiltin(std::string_view name) {
  // dir(builtins) of CPython 3.11, the interpreter Debian's python3-torch runs on.
  static const std::set<std::string_view> builtins = {
      "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
      "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
      "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
      "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
      "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError",
      "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
      "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
      "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "None", "NotADirectoryError",
      "NotImplemented", "NotImplementedError", "OSError", "OverflowError", "PendingDeprecationWarning",
      "PermissionError", "ProcessLookupError", "RecursionError", "ReferenceError", "ResourceWarning",
      "RuntimeError", "RuntimeWarning", "StopAsyncIteration", "StopIteration", "SyntaxError",
      "SyntaxWarning", "SystemError", "SystemExit", "TabError", "TimeoutError", "True", "TypeError",
      "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError",
      "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError", "Warning",
      "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__import__", "__loader__",
      "__name__", "__package__", "__spec__", "abs", "aiter", "all", "anext", "any", "ascii", "bin",
      "bool", "breakpoint", "bytearray", "bytes", "callable", "chr", "classmethod", "compile",
      "complex", "copyright", "credits", "delattr", "dict", "dir", "divmod", "enumerate", "eval",
      "exec", "exit", "filter", "float", "format", "frozenset", "getattr", "globals", "hasattr",
      "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass", "iter", "len",
      "license", "list", "locals", "map", "max", "memoryview", "min", "next", "object", "oct", "open",
      "ord", "pow", "print", "property", "quit", "range", "repr", "reversed", "round", "set",
      "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars",
      "zip"};
  return builtins.count(name) > 0;
}

}  // namespace tdfx
