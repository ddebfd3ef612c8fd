// The library's defaults are written once, in C++ (config.h), and said in
// four more places: the line a bad value gets (config.cpp), the settings
// tables of docs/usage.md and interposer/README.md, and the launcher's
// --help. Each must say the value the library uses, so that changing a
// default in config.h fails here until every place says the new one.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <heapline/live_format.h>

#include "config.h"

namespace heapline {
namespace {

std::string file_text(const std::string& relative) {
  std::ifstream file(std::string(HEAPLINE_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_FALSE(text.str().empty()) << relative;
  return text.str();
}

// The last cell of the row of `variable` in a Markdown settings table.
std::string table_default(const std::string& text, const std::string& variable) {
  const auto row = text.find("\n| `" + variable + "` |");
  if (row == std::string::npos) return "no row for " + variable;
  const auto end = text.find('\n', row + 1);
  const std::string line = text.substr(row + 1, end - row - 1);
  const auto last_bar = line.rfind(" |");
  const auto before = line.rfind(" | ", last_bar - 1);
  return line.substr(before + 3, last_bar - before - 3);
}

// What the line for a bad value of `variable` says is the default.
std::string default_said_for(const char* variable) {
  static std::string said;
  static const char* asked;
  said.clear();
  asked = variable;
  Config config;
  load_config(
      config, [](const char* name) -> const char* { return std::string(name) == asked ? "not a value" : nullptr; },
      [](const char* line, std::size_t size) { said.append(line, size); });
  const std::string marker = "; using the default ";
  const auto at = said.find(marker);
  if (at == std::string::npos) return "no line: " + said;
  return said.substr(at + marker.size(), said.size() - at - marker.size() - 1);  // without the newline
}

TEST(Defaults, TheSamplingIntervalIsSaidAlikeEverywhere) {
  const std::string ms = std::to_string(kDefaultIntervalMs);
  EXPECT_EQ(Config{}.interval_ns, kDefaultIntervalMs * 1'000'000) << "config.h writes it twice";
  EXPECT_EQ(default_said_for("HEAPLINE_INTERVAL_MS"), ms);
  EXPECT_EQ(table_default(file_text("docs/usage.md"), "HEAPLINE_INTERVAL_MS"), "`" + ms + "`");
  EXPECT_EQ(table_default(file_text("interposer/README.md"), "HEAPLINE_INTERVAL_MS"), "`" + ms + "`");
  EXPECT_NE(file_text("launcher/src/commands/run_command.cpp")
                .find("HEAPLINE_INTERVAL_MS (sampling interval, default " + ms + ")"),
            std::string::npos);
}

TEST(Defaults, ThePrecisionBudgetIsSaidAlikeEverywhere) {
  const Precision batched;
  ASSERT_FALSE(batched.exact);
  const std::string pair = std::to_string(batched.budget_floor_bytes) + "," + std::to_string(batched.budget_divisor);
  EXPECT_EQ(default_said_for("HEAPLINE_PRECISION"), "batched (" + pair + ")");
  const std::string kib = std::to_string(batched.budget_floor_bytes / 1024);
  const std::string percent = std::to_string(100 / batched.budget_divisor);
  EXPECT_EQ(table_default(file_text("docs/usage.md"), "HEAPLINE_PRECISION"),
            "batched: `" + pair + "`, max(" + kib + " KiB, " + percent + "% of the peak)");
  const std::string readme = file_text("interposer/README.md");
  EXPECT_EQ(table_default(readme, "HEAPLINE_PRECISION"), "`batched`");
  EXPECT_NE(readme.find("| `HEAPLINE_PRECISION` | `batched` (= `" + pair + "`)"), std::string::npos);
}

// The live file's size is the layout's (heapline/live_format.h), which a
// live file on disk has (interposer.Interposer.LiveFileIsRemovedAfterA...
// stats one); the docs that say it, and the file size limit the README says
// it does not fit under, follow it.
TEST(Defaults, TheLiveFileSizeIsSaidAlikeEverywhere) {
  const std::size_t bytes = sizeof(LiveRegion);
  const std::string kib = std::to_string((bytes + 512) / 1024) + " KiB";
  const std::string readme = file_text("interposer/README.md");
  std::smatch said;
  const std::string flat = std::regex_replace(readme, std::regex("\\s+"), " ");
  ASSERT_TRUE(std::regex_search(flat, said,
                                std::regex(R"(The live file is (\d+) bytes, (\d+ KiB) \(`sizeof\(LiveRegion\)`.*?\)\. )"
                                           R"(Under a limit below that \(`ulimit -f (\d+)` or less, in blocks of 1 KiB\))")));
  EXPECT_EQ(said[1].str(), std::to_string(bytes));
  EXPECT_EQ(said[2].str(), kib);
  // The largest limit that refuses the file, and no larger.
  const std::size_t limit_blocks = std::stoul(said[3].str());
  EXPECT_LT(limit_blocks * 1024, bytes);
  EXPECT_GE((limit_blocks + 1) * 1024, bytes);
  // Every other "(N KiB, fixed)" of the live file.
  for (const std::string& doc : {std::string("interposer/README.md"), std::string("docs/usage.md")}) {
    const std::string text = std::regex_replace(file_text(doc), std::regex("\\s+"), " ");
    EXPECT_NE(text.find("(" + kib + ", fixed)"), std::string::npos) << doc;
    std::smatch size;
    for (auto at = text.cbegin(); std::regex_search(at, text.cend(), size, std::regex(R"(\((\d+ KiB), fixed\))")); at = size[0].second) {
      EXPECT_EQ(size[1].str(), kib) << doc;
    }
    // A size of the live file said as "the live file's N KiB".
    for (auto at = text.cbegin(); std::regex_search(at, text.cend(), size, std::regex(R"(live file's (\d+ KiB))")); at = size[0].second) {
      EXPECT_EQ(size[1].str(), kib) << doc;
    }
  }
}

}  // namespace
}  // namespace heapline
