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

// The words that CLI11 reads as its list syntax ("[a,b]" two words, "[x]"
// one without brackets) reach a command after `--`, a file list and a
// repeated option as given, once the program's command line is set up as
// both programs set theirs up (take_every_word_as_given before parsing).
TEST(OptionChecks, EveryWordIsTakenAsGiven) {
  const std::vector<std::string> tricky = {"[x]", "a,b", "[a,b]", "[", "]", "[]", "[,]"};
  CLI::App program;
  CLI::App* overhead = program.add_subcommand("overhead");
  std::string scenario;
  std::vector<std::string> command, builds;
  overhead->add_option("SCENARIO", scenario)->required();
  overhead->add_option("COMMAND", command)->required();
  overhead->add_option("--build", builds);
  heapline::option_checks::take_every_word_as_given(program);
  std::vector<std::string> args = {"overhead", "churn-1t"};
  for (const std::string& word : tricky) args.insert(args.end(), {"--build", word});
  args.push_back("--");
  args.push_back("./args.sh");
  args.insert(args.end(), tricky.begin(), tricky.end());
  args.push_back("--build");  // after --, the command's own
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector from its end
  program.parse(args);
  std::vector<std::string> expected = {"./args.sh"};
  expected.insert(expected.end(), tricky.begin(), tricky.end());
  expected.push_back("--build");
  EXPECT_EQ(command, expected);
  EXPECT_EQ(builds, tricky);
  EXPECT_EQ(scenario, "churn-1t");

  // Without a word the command is still required; a list given before
  // `--` (import FILE...) takes every word.
  CLI::App again;
  CLI::App* import = again.add_subcommand("import");
  std::vector<std::string> files;
  import->add_option("FILE", files)->required();
  heapline::option_checks::take_every_word_as_given(again);
  std::vector<std::string> none = {"import"};
  EXPECT_THROW(again.parse(none), CLI::RequiredError);
  CLI::App third;
  third.add_subcommand("import")->add_option("FILE", files)->required();
  heapline::option_checks::take_every_word_as_given(third);
  std::vector<std::string> given = {"import"};
  given.insert(given.end(), tricky.begin(), tricky.end());
  std::reverse(given.begin(), given.end());
  third.parse(given);
  EXPECT_EQ(files, tricky);
}

// Every kind of refusal CLI11 makes itself is said in the programs' words,
// none of CLI11's own texts: an option given twice, a value missing, a word
// too many, a file or directory that is not there.
TEST(OptionChecks, CLI11sOwnRefusalsAreInTheProjectsWords) {
  auto refused = [](const std::vector<std::string>& words) {
    CLI::App program{"", "program"};
    std::string out, follow, file, dir;
    int window = 0, pid = 0;
    program.add_option("--out", out);
    program.add_option("--follow", follow)->check(CLI::IsMember({"tree", "command"}));
    program.add_option("--window", window)->transform(heapline::option_checks::whole_number(2, 10000));
    program.add_option("--file", file)->check(CLI::ExistingFile);
    program.add_option("--dir", dir)->check(CLI::ExistingDirectory);
    program.add_option("PID", pid);
    std::vector<std::string> args = words;
    std::reverse(args.begin(), args.end());
    try {
      program.parse(args);
    } catch (const CLI::ParseError& error) {
      return heapline::option_checks::refusal_text(error, program);
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused({"--out", "a", "--out", "b"}), "--out: given twice (it takes one value)");
  EXPECT_EQ(refused({"--follow"}), "--follow: needs a value (tree or command)");
  EXPECT_EQ(refused({"--window"}), "--window: needs a value (a whole number from 2 to 10000)");
  EXPECT_EQ(refused({"--follow", "all"}), "--follow: must be tree or command, got 'all'");
  EXPECT_EQ(refused({"1", "2"}), "unexpected argument '2'");
  EXPECT_EQ(refused({"1", "2", "3"}), "unexpected arguments '2' '3'");
  EXPECT_EQ(refused({"--file", "/nonexistent/x"}), "--file: no such file: /nonexistent/x");
  EXPECT_EQ(refused({"--file", "/"}), "--file: a directory, not a file: /");
  EXPECT_EQ(refused({"--dir", "/nonexistent"}), "--dir: no such directory: /nonexistent");
  EXPECT_EQ(refused({"--dir", "/etc/passwd"}), "--dir: not a directory: /etc/passwd");
}

}  // namespace
