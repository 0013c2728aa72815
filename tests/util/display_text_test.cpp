// Model-derived text made safe to show (issue 22, findings 2 and 4).
#include <gtest/gtest.h>

#include "tdfx/util/display_text.h"

namespace tdfx {
namespace {

TEST(DisplayText, ShortTextIsUnchanged) {
  EXPECT_EQ(capText("short"), "short");
  EXPECT_EQ(capText(std::string(4096, 'a')), std::string(4096, 'a'));
}

TEST(DisplayText, LongTextIsCutBetweenCharactersWithTheRestCounted) {
  EXPECT_EQ(capText(std::string(5000, 'a')), std::string(4096, 'a') + "\u2026 [904 more bytes]");
  // "é" is two bytes: byte 4096 would be the middle of one, so the cut is one byte earlier.
  std::string text = "x";
  for (int i = 0; i < 3000; ++i) text += "\u00e9";
  const std::string capped = capText(text);
  EXPECT_TRUE(capped == text.substr(0, 4095) + "\u2026 [1906 more bytes]") << capped.substr(4000);
  EXPECT_EQ(capText("\u00e9\u00e9", 3), "\u00e9\u2026 [2 more bytes]");
}

TEST(DisplayText, ControlCharactersAreShownNotObeyed) {
  EXPECT_EQ(escapeControls("\x1b[31mred\x1b[0m\x1b[2J"), "\\x1b[31mred\\x1b[0m\\x1b[2J");
  EXPECT_EQ(escapeControls("line\nnext\ttab\r\b\x7f"), "line\nnext\ttab\\x0d\\x08\\x7f");
  EXPECT_EQ(escapeControls("C1 \xc2\x9b" "31m"), "C1 \\u009b31m");           // CSI as one character
  EXPECT_EQ(escapeControls("bidi \xe2\x80\xae" "txt"), "bidi \\u202etxt");      // right-to-left override
  EXPECT_EQ(escapeControls("bad \xff\xc3 end"), "bad \\xff\\xc3 end");           // not UTF-8
  EXPECT_EQ(escapeControls("ok \u00e9 \u4e2d \U0001F600"), "ok \u00e9 \u4e2d \U0001F600");
  EXPECT_EQ(escapeControls(std::string("nul\0key", 7)), "nul\\x00key");
}

}  // namespace
}  // namespace tdfx
