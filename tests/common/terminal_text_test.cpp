// The one escaping of text from outside (heapline/terminal_text.h) and the
// one quoting of it in a gnuplot script (heapline/gnuplot_text.h), shared by
// the library, the launcher and heapline-bench.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <heapline/gnuplot_text.h>
#include <heapline/terminal_text.h>

namespace fs = std::filesystem;
using heapline::gnuplot_data_word;
using heapline::gnuplot_shown;
using heapline::gnuplot_string;
using heapline::shows_as_written;
using heapline::terminal_line;
using heapline::terminal_text;

namespace {

std::string code(unsigned char byte) {
  char text[8];
  std::snprintf(text, sizeof text, "\\x%02x", byte);
  return text;
}

// A character as UTF-8.
std::string utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

std::string escaped_bytes(const std::string& text) {
  std::string out;
  for (const char c : text) out += code(static_cast<unsigned char>(c));
  return out;
}

// What no terminal acts on: printable ASCII and well-formed UTF-8 past C1,
// none of the characters that reorder a line.
bool only_shown_characters(const std::string& text) { return shows_as_written(text); }

}  // namespace

// Each of the 256 bytes alone: ASCII controls, DEL and the backslash become
// \xNN, printable ASCII stays, and every byte from 0x80 up is no UTF-8
// character on its own, so it is escaped too.
TEST(TerminalText, EveryByteAlone) {
  for (int byte = 0; byte < 256; ++byte) {
    const std::string text(1, static_cast<char>(byte));
    const bool shown = byte >= 0x20 && byte < 0x7f && byte != '\\';
    EXPECT_EQ(terminal_text(text), shown ? text : code(static_cast<unsigned char>(byte))) << byte;
    EXPECT_EQ(terminal_line(text), shown || byte == '\\' ? text : code(static_cast<unsigned char>(byte))) << byte;
  }
}

// Every character of the Basic Multilingual Plane and a sample above it:
// kept exactly when a terminal shows it, each of its bytes escaped when it
// is a C1 control (U+0080 to U+009F), a bidirectional formatting character
// or a line or paragraph separator.
TEST(TerminalText, EveryCharacterAsUtf8) {
  const auto acted_on = [](char32_t c) {
    return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || (c >= 0x2028 && c <= 0x202E) ||
           (c >= 0x2066 && c <= 0x2069);
  };
  std::vector<char32_t> characters;
  for (char32_t c = 0; c < 0x10000; ++c) {
    if (c < 0xD800 || c > 0xDFFF) characters.push_back(c);  // surrogates are not characters
  }
  for (char32_t c = 0x10000; c <= 0x10FFFF; c += 0x1F7) characters.push_back(c);
  characters.push_back(0x10FFFF);
  int wrong = 0;
  for (const char32_t c : characters) {
    if (c == '\\') continue;
    const std::string text = utf8(c);
    const std::string expected = acted_on(c) ? escaped_bytes(text) : text;
    if (terminal_text(text) != expected && ++wrong < 10) ADD_FAILURE() << "U+" << std::hex << static_cast<unsigned>(c);
  }
  EXPECT_EQ(wrong, 0);
}

TEST(TerminalText, BytesThatAreNotUtf8AreEscapedOneByOne) {
  EXPECT_EQ(terminal_text("\xC0\xAF"), "\\xc0\\xaf");                    // an overlong '/'
  EXPECT_EQ(terminal_text("\xED\xA0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(terminal_text("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(terminal_text("caf\xC3"), "caf\\xc3");                       // cut short at the end
  EXPECT_EQ(terminal_text("\xE2\x82z"), "\\xe2\\x82z");                  // cut short before a letter
  EXPECT_EQ(terminal_text("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
}

// A file name made from outside text keeps what a terminal shows as it is
// and writes '_' for every byte of the rest: on every byte alone and on
// random bytes, the name shows as written and is as long as the text.
TEST(TerminalText, AFileNameFromTextIsShownAsWrittenByteForByte) {
  const auto name = [](std::string_view text) {
    std::string out;
    heapline::name_for_file(text, [&](const char* bytes, std::size_t size) { out.append(bytes, size); });
    return out;
  };
  EXPECT_EQ(name("a\nb\x1b[31m\xe2\x80\xae\xc2\x9b\xff caf\xC3\xA9\\"), "a_b_[31m______ caf\xC3\xA9\\");
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {
    std::string text(1 + random() % 12, '\0');
    for (char& c : text) c = static_cast<char>(random());
    const std::string made = name(text);
    EXPECT_TRUE(heapline::shows_as_written(made)) << terminal_text(text);
    EXPECT_EQ(made.size(), text.size());
    EXPECT_EQ(heapline::name_character_problem(made), "");
  }
}

// Why a name is refused, said as what its first such character is.
TEST(TerminalText, ANamesProblemSaysWhatItsCharacterIs) {
  EXPECT_EQ(heapline::name_character_problem("r.json"), "");
  EXPECT_EQ(heapline::name_character_problem("caf\xC3\xA9.json"), "");
  EXPECT_EQ(heapline::name_character_problem("a\nb"), "the name holds a control character (\\x0a)");
  EXPECT_EQ(heapline::name_character_problem("a\x7f"), "the name holds a control character (\\x7f)");
  EXPECT_EQ(heapline::name_character_problem("a\xc2\x9b"), "the name holds a control character (\\xc2\\x9b)");
  EXPECT_EQ(heapline::name_character_problem("\xe2\x80\xae" "ab"),
            "the name holds a character that reorders or breaks the line (\\xe2\\x80\\xae)");
  EXPECT_EQ(heapline::name_character_problem("ok\xff"), "the name holds a byte that is not UTF-8 (\\xff)");
}

// What it makes is shown as written, and the line form passes it unchanged
// (a message that quotes a name escaped before), on random bytes.
TEST(TerminalText, ItsOutputPassesTheLastDoorUnchanged) {
  std::mt19937_64 random(43);  // fixed seed: the same texts every run
  for (int round = 0; round < 2000; ++round) {
    std::string text(random() % 40, '\0');
    for (char& c : text) c = static_cast<char>(random() % 4 == 0 ? 0x80 | random() % 0x40 : random());
    const std::string once = terminal_text(text);
    EXPECT_TRUE(only_shown_characters(once)) << once;
    EXPECT_EQ(terminal_line(once), once);
    EXPECT_TRUE(only_shown_characters(terminal_line(text))) << terminal_line(text);
  }
  // A name holding the four characters \x0a is told apart from a newline.
  EXPECT_EQ(terminal_text("a\\x0ab"), "a\\x5cx0ab");
  EXPECT_EQ(terminal_text("a\nb"), "a\\x0ab");
  EXPECT_EQ(terminal_line("a\\x0ab\n"), "a\\x0ab\\x0a");
}

TEST(TerminalText, CutAtTheLimitBetweenCharactersAndMarked) {
  EXPECT_EQ(terminal_text("ab\ncd", 3), "ab\\x0a...");
  EXPECT_EQ(terminal_text("abc", 3), "abc");
  EXPECT_EQ(terminal_text("a\xC3\xA9z", 2), "a...");  // never half of é
}

// --- gnuplot ----------------------------------------------------------------

// The text a gnuplot string expression stands for, read by this test's own
// grammar of what gnuplot_string may write: pieces joined by '.', each "'"
// (one quote) or a single-quoted string with no quote inside. Anything else
// fails, so a script can hold nothing more than the string.
std::string gnuplot_value(const std::string& expression) {
  if (expression == "''") return "";
  std::string value;
  for (std::size_t at = 0; at < expression.size();) {
    if (at > 0) {
      if (expression[at] != '.') {
        ADD_FAILURE() << "pieces are joined by '.': " << expression;
        return value;
      }
      ++at;
    }
    if (expression.compare(at, 3, "\"'\"") == 0) {
      value += '\'';
      at += 3;
      continue;
    }
    const std::size_t close = expression.find('\'', at + 1);
    if (expression[at] != '\'' || close == std::string::npos || close == at + 1) {
      ADD_FAILURE() << "not a non-empty single-quoted piece: " << expression;
      return value;
    }
    value += expression.substr(at + 1, close - at - 1);
    at = close + 1;
  }
  return value;
}

TEST(GnuplotString, StandsForTheTextAsATerminalShowsItOnOneLine) {
  const std::vector<std::string> texts = {"",       "plain",   "'",      "''",      "'''a", "'lead",
                                          "trail'", "in'side", "a''''b", "\"q\"",   "a\\b", "`id`",
                                          "@macro", "$x",      "a\nb",   "\x1b[2J", "\xff",  "p]]>q", "]]]>>"};
  for (const std::string& text : texts) {
    const std::string expression = gnuplot_string(text);
    EXPECT_EQ(expression.find('\n'), std::string::npos) << expression;
    EXPECT_TRUE(only_shown_characters(expression)) << expression;
    EXPECT_EQ(gnuplot_value(expression), gnuplot_shown(text)) << expression;
    EXPECT_EQ(gnuplot_value(expression).find("]]>"), std::string::npos) << expression;
  }
  // As a terminal shows it, but for XML's end of a CDATA section, which no
  // SVG's text may hold.
  EXPECT_EQ(gnuplot_shown("a\x1b"), terminal_text("a\x1b"));
  EXPECT_EQ(gnuplot_shown("p]]>q"), "p]]\\x3eq");
  EXPECT_EQ(gnuplot_shown("]]]>>"), "]]]\\x3e>");
  EXPECT_EQ(gnuplot_data_word("p]]>q r"), "p]]\\x3eq_r");
  EXPECT_EQ(gnuplot_string("it's"), "'it'.\"'\".'s'");
  EXPECT_EQ(gnuplot_string("'x"), "\"'\".'x'");
}

// gnuplot itself: every place the launcher's and the harness's scripts put
// a string (the output, a title, an axis label, a label, a tic, a plot's
// title) takes the expression, and draws the text as the terminal shows it.
TEST(GnuplotString, GnuplotTakesItWhereverTheScriptsPutAString) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const fs::path dir = fs::temp_directory_path() / ("heapline-gnuplot-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::vector<std::string> texts = {"'lead",  "''",      "'",  "a''b", "a''''b", "trail'",     "back\\slash",
                                          "\"dq\"", "`false`", "@m", "a\nb", "",       "caf\xC3\xA9", "p]]>q"};
  int index = 0;
  for (const std::string& text : texts) {
    SCOPED_TRACE(terminal_text(text));
    const std::string s = gnuplot_string(text);
    const fs::path svg = dir / (std::to_string(index) + ".svg");
    const fs::path script = dir / (std::to_string(index++) + ".gp");
    std::ofstream(script) << "set terminal svg noenhanced\nset output " << gnuplot_string(svg.string()) << "\n"
                          << "set title " << s << "\nset ylabel " << s << "\nset label " << s << " at 0,0\n"
                          << "set xtics (" << s << " 0)\nplot x title " << s << "\n";
    const int status = std::system(("gnuplot " + script.string() + " 2>" + (dir / "err").string()).c_str());
    std::ifstream err(dir / "err");
    std::stringstream said;
    said << err.rdbuf();
    ASSERT_EQ(status, 0) << said.str();
    std::ifstream drawn(svg);
    std::stringstream content;
    content << drawn.rdbuf();
    std::string shown;  // as SVG writes it
    for (const char c : gnuplot_shown(text)) {
      if (c == '&')
        shown += "&amp;";
      else if (c == '<')
        shown += "&lt;";
      else if (c == '>')
        shown += "&gt;";
      else
        shown += c;
    }
    EXPECT_NE(content.str().find(">" + shown + "<"), std::string::npos) << content.str().substr(0, 2000);
    EXPECT_EQ(content.str().find("]]>"), std::string::npos) << "no text ends a CDATA section: the SVG is XML";
  }
  fs::remove_all(dir);
}
