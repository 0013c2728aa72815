#include "call_text.h"

#include <algorithm>
#include <cctype>

namespace tdfx::trace {
namespace {

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Index just past the string literal starting at s[i] (a quote), handling escapes.
size_t skipString(const std::string& s, size_t i) {
  const char q = s[i];
  // Triple-quoted strings.
  if (s.compare(i, 3, std::string(3, q)) == 0) {
    const size_t end = s.find(std::string(3, q), i + 3);
    return end == std::string::npos ? s.size() : end + 3;
  }
  for (size_t k = i + 1; k < s.size(); ++k) {
    if (s[k] == '\\') {
      ++k;
    } else if (s[k] == q) {
      return k + 1;
    }
  }
  return s.size();
}

// Index of the bracket matching the opener at s[open]; npos when unbalanced.
size_t matchBracket(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\'') {
      i = skipString(s, i) - 1;
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

// Whether s is a dotted chain of names, calls and subscripts: `torch.nn.functional`, `self.x[0].y`.
bool isPrimaryExpression(const std::string& s) {
  if (s.empty()) return false;
  size_t i = 0;
  bool expectName = true;
  while (i < s.size()) {
    if (expectName) {
      if (!(std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_')) return false;
      while (i < s.size() && isIdentChar(s[i])) ++i;
      expectName = false;
    } else if (s[i] == '.') {
      ++i;
      expectName = true;
    } else if (s[i] == '(' || s[i] == '[') {
      const size_t close = matchBracket(s, i);
      if (close == std::string::npos) return false;
      i = close + 1;
    } else {
      return false;
    }
  }
  return !expectName;
}

}  // namespace

std::string extendToCall(const std::string& window, size_t rangeLength) {
  size_t end = std::min(rangeLength, window.size());
  if (end == 0) return "";
  if (isIdentChar(window[end - 1])) {
    while (end < window.size() && isIdentChar(window[end])) ++end;
  }
  size_t open = end;
  while (open < window.size() && (window[open] == ' ' || window[open] == '\t')) ++open;
  if (open < window.size() && window[open] == '(' && isIdentChar(window[end - 1])) {
    const size_t close = matchBracket(window, open);
    if (close != std::string::npos) return window.substr(0, close + 1);
  }
  return window.substr(0, end);
}

std::optional<CallText> parseCallText(const std::string& raw) {
  const std::string text = trim(raw);
  if (text.empty() || text.back() != ')') return std::nullopt;
  // The call's argument list is the last top-level parenthesised group, and it must end the text.
  size_t open = std::string::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      i = skipString(text, i) - 1;
    } else if (c == '(' || c == '[' || c == '{') {
      const size_t close = matchBracket(text, i);
      if (close == std::string::npos) return std::nullopt;
      if (c == '(' && close == text.size() - 1) open = i;
      i = close;
    }
  }
  if (open == std::string::npos || open == 0) return std::nullopt;
  CallText call;
  call.callee = trim(text.substr(0, open));
  if (!isPrimaryExpression(call.callee)) return std::nullopt;

  // Split the arguments at top-level commas.
  const std::string inner = text.substr(open + 1, text.size() - open - 2);
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t i = 0; i <= inner.size(); ++i) {
    if (i == inner.size() || inner[i] == ',') {
      const std::string a = trim(inner.substr(start, i - start));
      if (!a.empty()) args.push_back(a);
      start = i + 1;
    } else if (inner[i] == '"' || inner[i] == '\'') {
      i = skipString(inner, i) - 1;
    } else if (inner[i] == '(' || inner[i] == '[' || inner[i] == '{') {
      const size_t close = matchBracket(inner, i);
      if (close == std::string::npos) return std::nullopt;
      i = close;
    }
  }
  for (const std::string& a : args) {
    if (a[0] == '*') {
      call.hasStarArgs = true;
      continue;
    }
    // `name=value` but not `a == b`, `a <= b`, ...
    size_t k = 0;
    while (k < a.size() && isIdentChar(a[k])) ++k;
    size_t eq = k;
    while (eq < a.size() && std::isspace(static_cast<unsigned char>(a[eq]))) ++eq;
    if (k > 0 && !std::isdigit(static_cast<unsigned char>(a[0])) && eq < a.size() && a[eq] == '=' &&
        (eq + 1 >= a.size() || a[eq + 1] != '=')) {
      call.keywordNames.push_back(a.substr(0, k));
    } else {
      if (!call.keywordNames.empty()) return std::nullopt;  // positional after keyword: not Python
      ++call.positionalCount;
      call.positionalTexts.push_back(a);
    }
  }
  return call;
}

std::optional<std::string> parseAttributeText(const std::string& raw) {
  const std::string text = trim(raw);
  const size_t dot = text.rfind('.');
  if (dot == std::string::npos || dot + 1 >= text.size()) return std::nullopt;
  const std::string name = text.substr(dot + 1);
  for (char c : name)
    if (!isIdentChar(c)) return std::nullopt;
  if (std::isdigit(static_cast<unsigned char>(name[0])) || !isPrimaryExpression(text)) return std::nullopt;
  return name;
}

std::string withoutTrailingSubscripts(const std::string& raw) {
  std::string text = trim(raw);
  while (!text.empty() && text.back() == ']') {
    size_t cut = std::string::npos;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '"' || text[i] == '\'') {
        i = skipString(text, i) - 1;
      } else if (text[i] == '(' || text[i] == '[' || text[i] == '{') {
        const size_t close = matchBracket(text, i);
        if (close == std::string::npos) return text;
        if (text[i] == '[' && close == text.size() - 1) cut = i;
        i = close;
      }
    }
    if (cut == std::string::npos || cut == 0) return text;
    text = trim(text.substr(0, cut));
  }
  return text;
}

std::string calleePrefix(const std::string& callee) {
  const size_t dot = callee.rfind('.');
  return dot == std::string::npos ? std::string() : callee.substr(0, dot);
}

std::string calleeName(const std::string& callee) {
  const size_t dot = callee.rfind('.');
  return dot == std::string::npos ? callee : callee.substr(dot + 1);
}

bool isAugmentedAssignment(const std::string& text) {
  static const char* ops[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", "<<=", ">>="};
  for (const char* op : ops)
    if (text.find(op) != std::string::npos) return true;
  return false;
}

}  // namespace tdfx::trace
