// text.h: outside text as the harness's messages quote it. printable
// (heapline::terminal_text) is the one escaping of a quoted value into a
// message line: what it keeps, what it shows as \xNN, and that the result is
// always one line of well-formed UTF-8 that says which bytes were there.
#include "heapline_bench/text/text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace heapline::bench {
namespace {

TEST(Text, PrintableShowsControlsDelAndBrokenUtf8AsTheirBytes) {
  EXPECT_EQ(printable("plain path/with spaces"), "plain path/with spaces");
  EXPECT_EQ(printable("caf\xC3\xA9 \xE2\x82\xAC"), "caf\xC3\xA9 \xE2\x82\xAC");  // well-formed UTF-8 kept
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("line\nforged"), "line\\x0aforged");
  EXPECT_EQ(printable("\x1B[31mred"), "\\x1b[31mred");
  EXPECT_EQ(printable("del\x7F"), "del\\x7f");
  EXPECT_EQ(printable("\xFF\xC0\xAF"), "\\xff\\xc0\\xaf");  // not UTF-8, an overlong '/'
  EXPECT_EQ(printable("\xE2\x82"), "\\xe2\\x82");           // a sequence cut short
  EXPECT_EQ(printable("a\\b"), "a\\x5cb");                  // the backslash, so \x0a reads apart from a newline
  EXPECT_EQ(printable(""), "");
}

// Whatever the bytes, the result holds no control character, and each byte
// that was replaced can be read back from its \xNN.
TEST(Text, PrintableOfEveryByteIsOneLine) {
  for (int c = 0; c < 256; ++c) {
    const std::string shown = printable(std::string(1, static_cast<char>(c)));
    EXPECT_EQ(find_control_character(shown), std::string::npos) << c;
    if (c < 0x20 || c >= 0x7F || c == '\\') {
      char expected[8];
      std::snprintf(expected, sizeof expected, "\\x%02x", c);
      EXPECT_EQ(shown, expected) << c;
    } else {
      EXPECT_EQ(shown, std::string(1, static_cast<char>(c)));
    }
  }
}

TEST(Text, FindControlCharacterFindsTheFirst) {
  EXPECT_EQ(find_control_character("clean"), std::string::npos);
  EXPECT_EQ(find_control_character("ab\tc\n"), 2u);
  EXPECT_EQ(find_control_character("x\x7F"), 1u);
  EXPECT_EQ(find_control_character("caf\xC3\xA9"), std::string::npos);
  // C1 controls are control characters as C0 ones are: U+0085 (NEL), U+009B (CSI).
  EXPECT_EQ(find_control_character("k\xC2\x85x"), 1u);
  EXPECT_EQ(find_control_character("CPU\xC2\x9B" "2J"), 3u);
  EXPECT_EQ(find_control_character("\xC2\x80"), 0u);
  EXPECT_EQ(find_control_character("\xC2\xA0"), std::string::npos);      // U+00A0, a character
  EXPECT_EQ(find_control_character("\xE2\x80\xAE"), std::string::npos);  // U+202E reorders, is no control
  EXPECT_EQ(find_control_character("\x9B\xFF"), std::string::npos);      // bytes that are not UTF-8: no character
  EXPECT_EQ(control_character_code("ab\n", 2), "U+000A");
  EXPECT_EQ(control_character_code("k\xC2\x85x", 1), "U+0085");
  EXPECT_EQ(control_character_code("\xC2\x9F", 0), "U+009F");
}

// The list of control characters is the terminal rule's (heapline/terminal_text.h):
// every character find_control_character finds, printable() escapes.
TEST(Text, EveryControlCharacterIsOneTheTerminalRuleEscapes) {
  for (unsigned code = 0; code < 0x800; ++code) {
    std::string character;
    if (code < 0x80) {
      character = std::string(1, static_cast<char>(code));
    } else {
      character = {static_cast<char>(0xC0 | (code >> 6)), static_cast<char>(0x80 | (code & 0x3F))};
    }
    const bool control = code < 0x20 || (code >= 0x7F && code <= 0x9F);
    EXPECT_EQ(find_control_character(character) == 0, control) << code;
    if (control) EXPECT_NE(printable(character), character) << code;
  }
}

TEST(Text, ACommitNameIsFourToSixtyFourLowerCaseHexDigits) {
  EXPECT_TRUE(is_commit_name("9cbcf99"));
  EXPECT_TRUE(is_commit_name("abcd"));
  EXPECT_TRUE(is_commit_name(std::string(64, 'f')));
  EXPECT_FALSE(is_commit_name("abc"));
  EXPECT_FALSE(is_commit_name(std::string(65, 'f')));
  EXPECT_FALSE(is_commit_name("9CBCF99"));
  EXPECT_FALSE(is_commit_name("9cbcf9g"));
  EXPECT_FALSE(is_commit_name(""));
}

}  // namespace
}  // namespace heapline::bench
