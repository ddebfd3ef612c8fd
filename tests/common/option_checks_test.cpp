// heapline/option_checks.h: the numeric options' rule, as the two programs
// apply it through CLI11.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <heapline/option_checks.h>

namespace {

namespace fs = std::filesystem;

// What an option given as both programs give theirs reads from `text`.
long long parsed(const std::string& text) {
  CLI::App app;
  long long value = -1;
  app.add_option("--n", value)->transform(heapline::option_checks::whole_number(0, 100));
  std::vector<std::string> args = {"--n", text};  // CLI11 parses a vector from its end
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return value;
}

// A whole number is read in decimal, as every HEAPLINE_* setting reads it:
// 017 is 17 (CLI11's own conversion read it as octal 15) and 08 is 8 (it
// failed with "Could not convert").
TEST(OptionChecks, WholeNumbersAreDecimalWhateverTheirLeadingZeros) {
  EXPECT_EQ(parsed("017"), 17);
  EXPECT_EQ(parsed("08"), 8);
  EXPECT_EQ(parsed("0"), 0);
  EXPECT_EQ(parsed("0100"), 100);
  for (const char* refused : {"0x10", "101", "-1", "1e2", "", "8 "}) {
    EXPECT_THROW(parsed(refused), CLI::ValidationError) << refused;
  }
}

// Every whole-number option of the launcher and heapline-bench is given
// its rule with transform(): with check(), CLI11 runs the rule on a copy
// of the text and converts the original itself (017 as 15).
TEST(OptionChecks, EveryWholeNumberOptionTakesTheDecimalValue) {
  const std::regex checked(R"(check\(\s*(heapline::option_checks::|check::)?whole_number\()");
  int uses = 0;
  for (const char* folder : {"launcher/src", "harness/src"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(SOURCE_DIR) / folder)) {
      if (entry.path().extension() != ".cpp" && entry.path().extension() != ".h") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string code = text.str();
      EXPECT_FALSE(std::regex_search(code, checked)) << entry.path() << " gives whole_number with check()";
      for (std::size_t at = code.find("whole_number("); at != std::string::npos; at = code.find("whole_number(", at + 1)) {
        if (at == 0 || code[at - 1] != '_') ++uses;  // not read_whole_number
      }
    }
  }
  EXPECT_GE(uses, 11) << "the options this test is about were found";
}

}  // namespace
