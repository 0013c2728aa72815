#pragma once
// Text that came from a model (error messages, key names, what its code prints), made safe to
// show: capped in length and, for a terminal, with control characters written as escapes.
#include <cstddef>
#include <string>

namespace tdfx {

/// How much of a message the apps show before "… [N more bytes]" (the rest behind Details).
constexpr size_t kShownMessageBytes = 4096;

/// `text` when it has at most `maxBytes` bytes; else its first bytes up to a character boundary
/// (a UTF-8 sequence is never split) followed by "… [N more bytes]".
std::string capText(const std::string& text, size_t maxBytes = kShownMessageBytes);

/// `text` for a terminal: C0 controls other than newline and tab, DEL and bytes that are not
/// UTF-8 become `\xHH`; C1 controls and the bidirectional overrides (U+202A-U+202E,
/// U+2066-U+2069) become `\uHHHH`. An ANSI escape sequence is then printed, not obeyed.
std::string escapeControls(const std::string& text);

}  // namespace tdfx
