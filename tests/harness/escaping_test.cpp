// escaping.h: outside text into each format the harness writes for another
// program. The fuzz target (tests/fuzz/outputs_fuzz.cc) checks that no
// input escapes its field; these pin what each function writes, and that a
// reader of the format gets the text back.
#include "heapline_bench/reports/escaping.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "heapline_bench/reports/comparison_export.h"
#include "heapline_bench/reports/history_page_export.h"
#include "heapline_bench/reports/scenarios_export.h"

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

// The markup a line of Markdown holds: each character that GFM, CommonMark
// or MyST could act on (a cell's end, a tag, a link, emphasis, an entity, a
// heading, math) where no backslash escapes it, outside code spans; and a
// '|' inside a code span too (GFM splits a table's cells on it there).
std::map<char, int> active_markup(const std::string& line) {
  const std::string markup = "|<>[]*_~!&$#";
  std::map<char, int> counted;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == '\\') {
      i += 2;
      continue;
    }
    if (line[i] == '`') {
      std::size_t run = 0;
      while (i + run < line.size() && line[i + run] == '`') ++run;
      // The closing fence: the next run of exactly as many backquotes.
      std::size_t close = std::string::npos;
      for (std::size_t at = i + run; at < line.size();) {
        if (line[at] != '`') {
          ++at;
          continue;
        }
        std::size_t other = 0;
        while (at + other < line.size() && line[at + other] == '`') ++other;
        if (other == run) {
          close = at;
          break;
        }
        at += other;
      }
      if (close == std::string::npos) {
        i += run;
        continue;
      }
      for (std::size_t at = i + run; at < close; ++at)
        if (line[at] == '|' && line[at - 1] != '\\') ++counted['|'];
      i = close + run;
      continue;
    }
    if (markup.find(line[i]) != std::string::npos) ++counted[line[i]];
    ++i;
  }
  return counted;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A page made from plain texts and the same page made from hostile ones
// have the same lines, each with the same markup: the texts added none.
void expect_same_markup(const std::string& what, const std::string& plain, const std::string& hostile) {
  const std::vector<std::string> plain_lines = lines_of(plain), hostile_lines = lines_of(hostile);
  ASSERT_EQ(plain_lines.size(), hostile_lines.size()) << what << ": a text added or removed a line:\n" << hostile;
  for (std::size_t i = 0; i < plain_lines.size(); ++i) {
    EXPECT_EQ(active_markup(plain_lines[i]), active_markup(hostile_lines[i]))
        << what << ", line " << i + 1 << ": a text added markup:\n  " << plain_lines[i] << "\n  " << hostile_lines[i];
    EXPECT_EQ(hostile_lines[i].find('\x1b'), std::string::npos) << what << ": " << hostile_lines[i];
    EXPECT_EQ(hostile_lines[i].find('\r'), std::string::npos) << what << ": " << hostile_lines[i];
  }
}

const std::string kHostile =
    "A|B <img src=x onerror=alert(1)> [l](javascript:alert(1)) *e* _u_ ~s~ !x &amp; $x$ #h `c` \\| <!-- \n"
    "\x1b[2J\r| forged | row |";

// Every text of a JSON document (every string that is not a key) as `text`.
nlohmann::json every_text_as(nlohmann::json value, const std::string& text) {
  if (value.is_string()) return text;
  if (value.is_array() || value.is_object())
    for (auto& each : value) each = every_text_as(each, text);
  return value;
}

// Every page heapline-bench writes in Markdown puts each outside text
// through escaping.h, whichever text it is: the release comparison (every
// string of docs/release-comparison.json, with a note, an absent peer and a
// build's instructions not counted added, is a label, a name, a machine's
// description or a reason: its labels reached the published page raw, with
// '|' splitting the table and '<img ...>' live), the scenario table, and the
// performance page (a machine's fields, a commit, the store's name and a bad
// line's reason).
TEST(Escaping, EveryMarkdownPageKeepsOutsideTextOutOfItsMarkup) {
  std::ifstream in(HEAPLINE_SOURCE_DIR "/docs/release-comparison.json");
  nlohmann::json comparison = nlohmann::json::parse(in);
  comparison["builds"][0]["note"] = "a note";
  comparison["absent"] = nlohmann::json::array({{{"label", "peer"}, {"reason", "not installed"}}});
  comparison["scenarios"][0]["results"][1]["instructions_not_counted"] = "no valgrind";
  // Every text but the schema, which says how the file is read.
  auto comparison_of = [&](const std::string& text) {
    nlohmann::json each = every_text_as(comparison, text);
    each["schema"] = comparison["schema"];
    return comparison_markdown_from_json(each);
  };
  expect_same_markup("release comparison", comparison_of("plain"), comparison_of(kHostile));

  auto catalogue_of = [](const std::string& text) {
    Catalogue catalogue;
    Scenario scenario;
    scenario.name = text;
    scenario.command = {text, "1"};
    scenario.shows = text;
    scenario.allocator = text;
    catalogue.scenarios.push_back(scenario);
    return catalogue;
  };
  expect_same_markup("scenario table", scenarios_markdown(catalogue_of("plain")), scenarios_markdown(catalogue_of(kHostile)));

  auto page_of = [](const std::string& text) {
    History history;
    HistoryMachine machine;
    machine.fingerprint = "f00dfeedbeef";
    machine.machine = {text, 2, text, text, text, text};
    history.machines = {machine};
    HistoryEntry entry;
    entry.scenario = "churn-1t";
    entry.commit = text;
    entry.measured_at = "2026-11-30T00:01:00Z";
    entry.overhead = 0.05;
    entry.low = 0.04;
    entry.high = 0.06;
    entry.timing = "command";
    entry.fingerprint = machine.fingerprint;
    entry.command = text;
    entry.machine = 0;
    history.entries = {entry};
    history.problems = {{text, 3, text}};
    Catalogue catalogue;
    Scenario scenario;
    scenario.name = "churn-1t";
    scenario.command = {"malloc_churn", "1"};
    scenario.shows = text;
    catalogue.scenarios.push_back(scenario);
    RenderOptions options;
    options.store_label = text;
    // (The plot's note is the program's own Markdown, no outside text.)
    return history_page_markdown(history, catalogue, options, "");
  };
  expect_same_markup("performance page", page_of("plain"), page_of(kHostile));
}

}  // namespace
}  // namespace heapline::bench
