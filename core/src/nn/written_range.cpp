#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <torch/csrc/jit/frontend/lexer.h>

#include "tdfx/nn/source_index.h"
#include "tdfx/util/python_repr.h"

namespace tdfx {
namespace {

// str(value) of a number literal as Python prints it: the length torch/jit/frontend.py's
// build_Num gives its range.
std::string pythonStrOfNumber(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  if (text.empty() || text.back() == 'j' || text.back() == 'J') return text;
  if (text.size() > 2 && text[0] == '0' && std::strchr("xXoObB", text[1])) {
    const int base = std::strchr("xX", text[1]) ? 16 : std::strchr("oO", text[1]) ? 8 : 2;
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str() + 2, nullptr, base);
    return errno ? text : std::to_string(v);
  }
  if (text.find_first_of(".eE") != std::string::npos) return pythonFloatRepr(std::strtod(text.c_str(), nullptr));
  const size_t digits = text.find_first_not_of('0');
  return digits == std::string::npos ? "0" : text.substr(digits);
}

// len(value) + 1 of a string literal as written (prefix, quotes, escapes; adjacent literals
// join): the length build_Str gives its range. Python counts code points, an escape as one.
size_t stringRangeLength(const std::string& text) {
  size_t length = 0;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && text[i] != '\'' && text[i] != '"') ++i;  // prefix letters, space between literals
    if (i >= text.size()) break;
    const char quote = text[i];
    const bool raw = i > 0 && (text[i - 1] == 'r' || text[i - 1] == 'R');
    const std::string close(text.compare(i, 3, std::string(3, quote)) == 0 ? 3 : 1, quote);
    i += close.size();
    while (i < text.size() && text.compare(i, close.size(), close) != 0) {
      if (text[i] == '\\' && !raw) ++i;
      ++i;
      while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;  // UTF-8 continuation
      ++length;
    }
    i += close.size();
  }
  return length + 1;
}

}  // namespace

size_t writtenRangeEnd(const std::string& text, size_t start, size_t end) {
  // A range may run past the end of its source: that of a literal last in the function does.
  if (start >= end || start >= text.size()) return end;
  // The literals that start inside the range, read by TorchScript's own lexer; the text lexed
  // goes a little past the range, since the literal that ends it may end past it.
  const size_t stop = std::min(text.size(), end + 64);
  try {
    torch::jit::Lexer lexer(std::make_shared<torch::jit::Source>(text.substr(start, stop - start)));
    for (;;) {
      torch::jit::Token token = lexer.next();
      const size_t begin = start + token.range.start();
      if (token.kind == torch::jit::TK_EOF || begin >= end) break;
      const std::string written = token.range.text().str();
      size_t rangeLength = 0;
      if (token.kind == torch::jit::TK_NUMBER) rangeLength = pythonStrOfNumber(written).size();
      else if (token.kind == torch::jit::TK_STRINGLITERAL) rangeLength = stringRangeLength(written);
      else continue;
      if (begin + rangeLength == end) return start + token.range.end();
    }
  } catch (const std::exception&) {
    // Text the lexer cannot read past the range (a half-line, an unusual indent): the range stays.
  }
  return end;
}

}  // namespace tdfx
