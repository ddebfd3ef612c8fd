// escaping.h: outside text into each format the harness writes for another
// program. The fuzz target (tests/fuzz/outputs_fuzz.cc) checks that no
// input escapes its field; these pin what each function writes, and that a
// reader of the format gets the text back.
#include "heapline_bench/reports/escaping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

namespace heapline::bench {
namespace {

// Each byte of `bytes` as the four characters \xNN.
std::string escaped(const std::string& bytes) {
  std::string all;
  for (const char c : bytes) {
    char code[8];
    std::snprintf(code, sizeof code, "\\x%02x", static_cast<unsigned char>(c));
    all += code;
  }
  return all;
}

// The documents' text is the terminal's (heapline/terminal_text.h, whose
// own test goes through every character): one rule for what is shown.
TEST(Escaping, DisplayableIsTheOneTerminalText) {
  EXPECT_EQ(displayable("caf\xC3\xA9 \xE2\x82\xAC ok"), "caf\xC3\xA9 \xE2\x82\xAC ok");
  EXPECT_EQ(displayable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(displayable("a\nb\rc\td\x1F"
                        "e\x7F"),
            "a\\x0ab\\x0dc\\x09d\\x1fe\\x7f");
  EXPECT_EQ(displayable("\xFF"), "\\xff");
  EXPECT_EQ(displayable("\xC0\xAF"), "\\xc0\\xaf");  // overlong '/'
  EXPECT_EQ(displayable("\xC2\x9B"
                        "2J"),
            "\\xc2\\x9b2J");  // C1 CSI
  EXPECT_EQ(displayable("\xE2\x80\xAE"
                        "evil"),
            "\\xe2\\x80\\xaeevil");  // right-to-left override
  EXPECT_EQ(displayable(""), "");
}

// UTF-8 encoded in `length` bytes (2 to 4), whether or not that is the
// shortest form: the overlong and out-of-range forms a check must refuse.
std::string utf8_in(std::uint32_t code, int length) {
  static const unsigned char kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  std::string out(static_cast<std::size_t>(length), '\0');
  for (int i = length - 1; i > 0; --i, code >>= 6) out[static_cast<std::size_t>(i)] = static_cast<char>(0x80 | (code & 0x3F));
  out[0] = static_cast<char>(kLead[length] | code);
  return out;
}

// RFC 3629, whole: every overlong form, every surrogate and every form
// above U+10FFFF is refused, byte by byte.
TEST(Escaping, DisplayableRefusesEveryMalformedUtf8Form) {
  auto shortest = [](std::uint32_t code) { return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4; };
  int wrong = 0;
  for (std::uint32_t code = 0x20; code <= 0x10FFFF && wrong < 5; code += code < 0x10000 ? 1 : 0x3F) {
    const int length = shortest(code);
    if (code >= 0xD800 && code <= 0xDFFF) {
      const std::string surrogate = utf8_in(code, 3);
      if (displayable(surrogate) != escaped(surrogate)) ++wrong, ADD_FAILURE() << "U+" << std::hex << code;
    }
    for (int longer = std::max(length + 1, 2); longer <= 4; ++longer) {
      const std::string overlong = utf8_in(code, longer);
      if (displayable(overlong) != escaped(overlong)) ++wrong, ADD_FAILURE() << "overlong U+" << std::hex << code;
    }
  }
  for (std::uint32_t code = 0x110000; code <= 0x1FFFFF; code += 0x101) {
    const std::string beyond = utf8_in(code, 4);
    EXPECT_EQ(displayable(beyond), escaped(beyond)) << std::hex << code;
  }
}

TEST(Escaping, AGnuplotStringQuotesEveryPieceAndHoldsOneLine) {
  EXPECT_EQ(gnuplot_string("plain"), "'plain'");
  EXPECT_EQ(gnuplot_string("it's"), "'it'.\"'\".'s'");
  EXPECT_EQ(gnuplot_string("`rm -rf ~` @macro"), "'`rm -rf ~` @macro'");  // single quotes expand nothing
  EXPECT_EQ(gnuplot_string("a\nset output"), "'a\\x0aset output'");
  EXPECT_EQ(gnuplot_string("'Intel(R)"), "\"'\".'Intel(R)'");  // gnuplot reads '' as an empty string
  EXPECT_EQ(gnuplot_string(""), "''");
}

TEST(Escaping, AGnuplotDataWordIsOneWord) {
  EXPECT_EQ(gnuplot_data_word("churn-4t"), "churn-4t");
  EXPECT_EQ(gnuplot_data_word("a b#c\"d'e"), "a_b_c_d_e");
  EXPECT_EQ(gnuplot_data_word("x\ny"), "x\\x0ay");
  EXPECT_EQ(gnuplot_data_word(""), "_");
}

// CommonMark's reading of a code span (spec 6.1): the text between the
// fences, one space stripped from each side when both have one; GFM tables
// then take "\|" as "|".
std::string read_code_span(const std::string& span) {
  std::size_t fence = 0;
  while (fence < span.size() && span[fence] == '`') ++fence;
  EXPECT_GT(fence, 0u) << span;
  EXPECT_EQ(span.substr(span.size() - fence), std::string(fence, '`')) << span;
  std::string inside = span.substr(fence, span.size() - 2 * fence);
  if (inside.size() >= 2 && inside.front() == ' ' && inside.back() == ' ' &&
      inside.find_first_not_of(' ') != std::string::npos)
    inside = inside.substr(1, inside.size() - 2);
  std::string text;
  for (std::size_t i = 0; i < inside.size(); ++i) {
    if (inside[i] == '\\' && i + 1 < inside.size() && inside[i + 1] == '|') continue;
    text += inside[i];
  }
  return text;
}

TEST(Escaping, AMarkdownCodeSpanReadsBackAsItsText) {
  EXPECT_EQ(markdown_code("churn-4t"), "`churn-4t`");
  EXPECT_EQ(markdown_code("a|b"), "`a\\|b`");
  EXPECT_EQ(markdown_code("x `y` z"), "``x `y` z``");
  EXPECT_EQ(markdown_code("``"), "``` `` ```");
  EXPECT_EQ(markdown_code("`start"), "`` `start ``");
  EXPECT_EQ(markdown_code(""), "` `");
  EXPECT_EQ(markdown_code(" padded "), "`  padded  `");  // CommonMark strips one space of each side
  EXPECT_EQ(markdown_code("  "), "`  `");                // all spaces: kept as they are
  for (const std::string text : {"churn-4t", "a|b", "x `y` z", "``", "`start", "end`", "a ``` b", "||", " padded ", " left", "right ", "  "}) {
    const std::string span = markdown_code(text);
    EXPECT_EQ(span.find('\n'), std::string::npos);
    EXPECT_EQ(read_code_span(span), text) << span;
  }
}

TEST(Escaping, MarkdownTextEscapesEveryMarkupCharacter) {
  EXPECT_EQ(markdown_text("plain words, 12.5%"), "plain words, 12.5%");
  EXPECT_EQ(markdown_text("*a* _b_ `c` [d](e) <f> #g |h| ~i~ !j $k &l {m} \\n"),
            "\\*a\\* \\_b\\_ \\`c\\` \\[d\\](e) \\<f\\> \\#g \\|h\\| \\~i\\~ \\!j \\$k \\&l \\{m\\} \\\\x5cn");
  EXPECT_EQ(markdown_text("-->\n"), "--\\>\\\\x0a");
}

// RFC 4180's reading of one field.
std::string read_csv_field(const std::string& field) {
  if (field.empty() || field.front() != '"') return field;
  EXPECT_EQ(field.back(), '"') << field;
  std::string text;
  for (std::size_t i = 1; i + 1 < field.size(); ++i) {
    text += field[i];
    if (field[i] == '"') {
      EXPECT_EQ(field[i + 1], '"') << field;  // a lone quote would end the field
      ++i;
    }
  }
  return text;
}

TEST(Escaping, ACsvFieldIsQuotedOnlyWhenItMustBeAndReadsBack) {
  EXPECT_EQ(csv_field("churn-4t"), "churn-4t");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field(""), "");
  for (const std::string text : {"plain", "a,b", "\"", "\"\"", ",\",", "x\r\ny", "trailing,"})
    EXPECT_EQ(read_csv_field(csv_field(text)), text) << csv_field(text);
}

// A spreadsheet formula (OWASP's CSV injection: a cell that starts with = +
// - @, a tab or a carriage return) is text, with a leading quote, whatever
// follows it; the rest of the text is kept.
TEST(Escaping, ACsvFieldIsNeverASpreadsheetFormula) {
  for (const std::string formula : {"=HYPERLINK(\"http://x\",\"y\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)",
                                    "\t=1+1", "\r=1+1", "=", "+", "-", "@"}) {
    const std::string cell = read_csv_field(csv_field(formula));
    EXPECT_EQ(cell, "'" + formula) << csv_field(formula);
  }
  for (const std::string text : {"churn-4t", "a=b", "x+1", "'quoted", " =1"})
    EXPECT_EQ(read_csv_field(csv_field(text)), text) << csv_field(text);
}

}  // namespace
}  // namespace heapline::bench
