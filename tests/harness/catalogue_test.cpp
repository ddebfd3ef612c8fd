#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/text/text.h"
#include "heapline_bench/verdicts/calibration.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>

namespace heapline::bench {
namespace {

TEST(Catalogue, TheProjectCatalogueDefinesTheFiveScenarios) {
  auto catalogue = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/scenarios.json");
  EXPECT_EQ(catalogue.names(), (std::vector<std::string>{"churn-1t", "churn-4t", "resident-4t", "large-4t", "python"}));
  EXPECT_EQ(catalogue.find("churn-4t")->display_command(), "malloc_churn 4 10000000");
  EXPECT_EQ(catalogue.find("resident-4t")->display_command(), "malloc_churn 4 10000000 16 4096 512");
  // The performance page's own definition, slow as its runs are (docs/regressions.md).
  EXPECT_EQ(catalogue.find("large-4t")->display_command(), "malloc_churn 4 2500000 65536 1048576");
  EXPECT_EQ(catalogue.find("python")->display_command(), "python3 bench/python_churn.py 500");
  for (const auto& scenario : catalogue.scenarios) EXPECT_FALSE(scenario.shows.empty()) << scenario.name;
}

TEST(Catalogue, ExpandsPlaceholdersAndScalesTheOperationCount) {
  auto catalogue = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/scenarios.json");
  const Placeholders where{"/b", "/s"};
  EXPECT_EQ(expand_command(*catalogue.find("churn-1t"), where),
            (std::vector<std::string>{"/b/malloc_churn", "1", "10000000"}));
  EXPECT_EQ(expand_command(*catalogue.find("large-4t"), where, 0.01),
            (std::vector<std::string>{"/b/malloc_churn", "4", "25000", "65536", "1048576"}));
  EXPECT_EQ(expand_command(*catalogue.find("python"), where, 0.5),
            (std::vector<std::string>{"/usr/bin/python3", "/s/bench/python_churn.py", "250"}));
  EXPECT_EQ(expand_command(*catalogue.find("churn-1t"), where, 1e-12)[2], "1") << "never below one operation";
  EXPECT_THROW(expand_command(*catalogue.find("churn-1t"), where, 0), std::invalid_argument);
  EXPECT_THROW(expand_command(*catalogue.find("churn-1t"), where, -1), std::invalid_argument);
}

TEST(Catalogue, EveryScenarioHasAReducedCommandForTheInstructionFigureScaledLikeItsCommand) {
  auto catalogue = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/scenarios.json");
  for (const auto& scenario : catalogue.scenarios) EXPECT_FALSE(scenario.instructions_command.empty()) << scenario.name;
  const Placeholders where{"/b", "/s"};
  EXPECT_EQ(expand_instructions_command(*catalogue.find("churn-1t"), where),
            (std::vector<std::string>{"/b/malloc_churn", "1", "200000"}));
  EXPECT_EQ(expand_instructions_command(*catalogue.find("churn-1t"), where, 0.5)[2], "100000");
  Scenario none;
  EXPECT_TRUE(expand_instructions_command(none, where).empty());
}

TEST(Catalogue, TheAllocatorEntriesAreApartFromTheFive) {
  auto catalogue = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/allocators.json");
  EXPECT_EQ(catalogue.names(), (std::vector<std::string>{"churn-1t-jemalloc", "churn-4t-jemalloc", "churn-1t-tcmalloc",
                                                          "churn-4t-tcmalloc", "churn-1t-mimalloc", "churn-4t-mimalloc"}));
  for (const auto& scenario : catalogue.scenarios) {
    EXPECT_NE(scenario.allocator.find(scenario.name.substr(9)), std::string::npos) << scenario.name;
    EXPECT_FALSE(scenario.shows.empty()) << scenario.name;
  }
  EXPECT_EQ(catalogue.find("churn-4t-mimalloc")->display_command(), "malloc_churn 4 10000000");
  // The five name no allocator: the program's own (glibc's) serves them.
  const Catalogue five = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/scenarios.json");
  for (const auto& scenario : five.scenarios) EXPECT_EQ(scenario.allocator, "") << scenario.name;
  // Each entry runs the command of its scenario of the five, taken from
  // there (command_of), not a copy of it; and, as before, no instruction
  // command of its own.
  for (const auto& scenario : catalogue.scenarios) {
    const Scenario* of = five.find(scenario.name.substr(0, 8));
    ASSERT_NE(of, nullptr) << scenario.name;
    EXPECT_EQ(scenario.command, of->command) << scenario.name;
    EXPECT_EQ(scenario.scale_arg, of->scale_arg) << scenario.name;
    EXPECT_TRUE(scenario.instructions_command.empty()) << scenario.name;
  }
}

// command_of: the command and scale_arg of a scenario of the catalogue that
// commands_from names, and nothing else; a name it does not hold, a
// command beside it, or no catalogue to take it from is refused, naming the
// entry.
TEST(Catalogue, AnEntryTakesTheCommandOfAScenarioOfItsCommandsFrom) {
  const Catalogue base = parse_catalogue(
      R"({"scenarios": [{"name": "churn-1t", "command": ["{bin}/malloc_churn", "1", "100"], "scale_arg": 2,
          "instructions_command": ["{bin}/malloc_churn", "1", "10"], "env": {"A": "1"}}]})",
      "base.json");
  const std::string entry = R"({"commands_from": "base.json", "scenarios": [{"name": "x", "command_of": "churn-1t"}]})";
  const Catalogue extra = parse_catalogue(entry, "extra.json", &base);
  ASSERT_EQ(extra.scenarios.size(), 1u);
  EXPECT_EQ(extra.scenarios[0].command, base.scenarios[0].command);
  EXPECT_EQ(extra.scenarios[0].scale_arg, 2);
  EXPECT_TRUE(extra.scenarios[0].instructions_command.empty());
  EXPECT_TRUE(extra.scenarios[0].env.empty());

  auto refusal = [&](const std::string& text, const Catalogue* from) {
    try {
      parse_catalogue(text, "extra.json", from);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal(entry, nullptr),
            "scenario catalogue extra.json: \"commands_from\" names a catalogue, which only a catalogue read from a "
            "file can have");
  EXPECT_EQ(refusal(R"({"scenarios": [{"name": "x", "command_of": "churn-1t"}]})", nullptr),
            "scenario catalogue extra.json: x: command_of names 'churn-1t', but the catalogue has no commands_from");
  EXPECT_EQ(refusal(R"({"commands_from": "b", "scenarios": [{"name": "x", "command_of": "churn-9t"}]})", &base),
            "scenario catalogue extra.json: x: command_of names 'churn-9t', which is no scenario of commands_from");
  EXPECT_EQ(refusal(R"({"commands_from": "b", "scenarios": [{"name": "x", "command_of": "churn-1t", "command": ["a"]}]})",
                    &base),
            "scenario catalogue extra.json: x: command_of takes the command and scale_arg of 'churn-1t': give neither "
            "beside it");
  EXPECT_EQ(refusal(R"({"commands_from": 3, "scenarios": []})", &base),
            "scenario catalogue extra.json: \"commands_from\" must be the file name of a catalogue beside this one");
}

TEST(Catalogue, CommandsFromIsAFileBesideTheCatalogue) {
  EXPECT_EQ(commands_from_path(R"({"commands_from": "scenarios.json"})", "/s/scenarios/allocators.json"),
            "/s/scenarios/scenarios.json");
  EXPECT_EQ(commands_from_path(R"({"commands_from": "five.json"})", "allocators.json"), "five.json");
  EXPECT_EQ(commands_from_path(R"({"scenarios": []})", "a.json"), "");
  EXPECT_EQ(commands_from_path("not json", "a.json"), "");
}

// What is wrong with a catalogue is said as it is: a catalogue whose
// commands_from names itself (it was blamed on "a catalogue read from a
// file"), one whose commands_from has one of its own, another schema, a
// scale_arg that is no word after the program (-1 left --scale unapplied
// while the point recorded it), a field of the wrong type named (not
// nlohmann's "[json.exception.type_error.302]"), an env that sets
// LD_PRELOAD (preloaded beside the library measured), and a text of the
// file escaped once (a newline was shown as \x5cx0a).
TEST(Catalogue, EachFaultOfACatalogueIsSaidAsItIs) {
  char dir_template[] = "/tmp/catalogue-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    FILE* file = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), file);
    std::fclose(file);
    return path;
  };
  auto load_refusal = [](const std::string& path) {
    try {
      load_catalogue(path);
      return std::string("accepted");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
  };
  const std::string self = write("self.json", R"({"commands_from": "self.json", "scenarios": [{"name": "x", "command_of": "x"}]})");
  EXPECT_EQ(load_refusal(self), "scenario catalogue " + self +
                                    ": \"commands_from\" names this catalogue itself (it names the catalogue the "
                                    "commands come from)");
  write("two.json", R"({"commands_from": "self.json", "scenarios": [{"name": "y", "command_of": "x"}]})");
  const std::string one = write("one.json", R"({"commands_from": "two.json", "scenarios": [{"name": "z", "command_of": "y"}]})");
  EXPECT_EQ(load_refusal(one), "scenario catalogue " + one + ": \"commands_from\" names " + dir +
                                   "/two.json, which has a \"commands_from\" of its own (one level only)");
  std::remove(self.c_str());
  std::remove((dir + "/two.json").c_str());
  std::remove(one.c_str());
  ::rmdir(dir.c_str());

  auto refusal = [](const std::string& text) {
    try {
      parse_catalogue(text, "c.json");
      return std::string("accepted");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(refusal(R"({"schema": "heapline-scenarios/2", "scenarios": [{"name": "a", "command": ["x", "1"]}]})"),
            "scenario catalogue c.json: \"schema\" is \"heapline-scenarios/2\": this heapline-bench reads "
            "\"heapline-scenarios/1\"");
  EXPECT_EQ(refusal(R"({"schema": "heapline-scenarios/1", "scenarios": [{"name": "a", "command": ["x", "1"]}]})"),
            "accepted");
  for (const std::string index : {"-1", "0", "-2", "1.5"}) {
    EXPECT_EQ(refusal(R"({"scenarios": [{"name": "a", "command": ["x", "1"], "scale_arg": )" + index + "}]}"),
              "scenario catalogue c.json: a: scale_arg must be a whole number, the index of a word of the command (1 "
              "to 1), got " + index)
        << index;
  }
  EXPECT_EQ(refusal(R"({"scenarios": [{"name": "a", "command": "x 1"}]})"),
            "scenario catalogue c.json: scenario a: field \"command\" must be an array of strings, got a string");
  EXPECT_EQ(refusal(R"({"scenarios": [7]})"), "scenario catalogue c.json: scenario 1 must be a JSON object, got a whole number");
  EXPECT_EQ(refusal(R"({"scenarios": [{"name": "a", "command": ["x"], "env": {"LD_PRELOAD": "/evil.so"}}]})"),
            "scenario catalogue c.json: a: env may not set LD_PRELOAD (the measurement preloads the library it "
            "measures)");
  // So is every variable the harness sets for a run itself.
  for (const std::string variable : {"HEAPLINE_OUT", "LD_DEBUG", "LD_DEBUG_OUTPUT"}) {
    EXPECT_EQ(refusal(R"({"scenarios": [{"name": "a", "command": ["x"], "env": {")" + variable + R"(": "x"}}]})")
                  .rfind("scenario catalogue c.json: a: env may not set " + variable + " (the measurement ", 0),
              0u)
        << variable;
  }
  // A HEAPLINE_* value the library refuses (it would run with its default
  // under the scenario's name) is refused by the library's own rule.
  EXPECT_EQ(refusal(R"({"scenarios": [{"name": "a", "command": ["x"], "env": {"HEAPLINE_INTERVAL_MS": "-1"}}]})"),
            "scenario catalogue c.json: a: env: HEAPLINE_INTERVAL_MS takes whole milliseconds from 0 to 86400000, "
            "not '-1' (the library would run with its default)");
  EXPECT_EQ(refusal(R"({"scenarios": [{"name": "a", "command": ["x"], "env": {"HEAPLINE_PRECISION": "exact"}}]})"),
            "accepted");
  EXPECT_EQ(refusal(R"({"scenarios": [{"name": "a", "command": ["x"], "shows": "line\nbreak"}]})"),
            "scenario catalogue c.json: a: shows holds a control character ('line\\x0abreak')");
}

// The many-thread entry does churn-4t's work over 64 threads, in full and
// reduced, apart from the five.
TEST(Catalogue, TheManyThreadEntryDoesChurn4tsWorkOver64Threads) {
  auto threads = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/threads.json");
  auto five = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/scenarios.json");
  ASSERT_EQ(threads.names(), (std::vector<std::string>{"churn-64t"}));
  const Scenario& many = threads.scenarios[0];
  const Scenario& four = *five.find("churn-4t");
  const Placeholders where{"/b", "/s"};
  auto work = [](const std::vector<std::string>& argv) { return std::stoll(argv[1]) * std::stoll(argv[2]); };
  EXPECT_EQ(expand_command(many, where)[1], "64");
  EXPECT_EQ(work(expand_command(many, where)), work(expand_command(four, where)));
  EXPECT_EQ(work(expand_instructions_command(many, where)), work(expand_instructions_command(four, where)));
  EXPECT_EQ(many.allocator, "");
  EXPECT_EQ(five.find("churn-64t"), nullptr);
}

TEST(Catalogue, ScenarioEnvironmentIsRead) {
  auto catalogue = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/scenarios.json");
  EXPECT_EQ(catalogue.find("python")->env.at("PYTHONHASHSEED"), "0");
}

// The issue's spread goals: CPU time within 3 points where several threads
// average the host's drift out, 5 for one thread; instructions within 0.1%
// for one thread, 0.5% where valgrind's thread switches move the publishes.
TEST(Catalogue, SpreadGoalsPerFigure) {
  auto catalogue = load_catalogue(HEAPLINE_SOURCE_DIR "/scenarios/scenarios.json");
  const std::map<std::string, std::pair<double, double>> goals = {
      {"churn-1t", {5, 0.1}}, {"churn-4t", {3, 0.5}}, {"resident-4t", {3, 0.5}}, {"large-4t", {3, 0.5}},
      {"python", {5, 0.1}}};
  for (const auto& [name, goal] : goals) {
    const auto& set = catalogue.find(name)->spread_goal_points;
    EXPECT_EQ(set.size(), 2u) << name;
    EXPECT_DOUBLE_EQ(set.at("cpu"), goal.first) << name;
    EXPECT_DOUBLE_EQ(set.at("instructions"), goal.second) << name;
  }
  EXPECT_THROW(parse_catalogue(R"({"scenarios": [{"name": "a", "command": ["x"], "spread_goal_points": {"cycles": 1}}]})",
                               "t"),
               std::runtime_error);
  EXPECT_THROW(parse_catalogue(R"({"scenarios": [{"name": "a", "command": ["x"], "spread_goal_points": {"cpu": 0}}]})",
                               "t"),
               std::runtime_error);
  EXPECT_THROW(parse_catalogue(R"({"scenarios": [{"name": "a", "command": ["x"], "spread_goal_points": {"cpu": "3"}}]})",
                               "t"),
               std::runtime_error);
}

TEST(Catalogue, RejectsMalformedCatalogues) {
  EXPECT_THROW(parse_catalogue("{", "t"), std::runtime_error);
  EXPECT_THROW(parse_catalogue("{}", "t"), std::runtime_error);
  EXPECT_THROW(parse_catalogue(R"({"scenarios": []})", "t"), std::runtime_error);
  EXPECT_THROW(parse_catalogue(R"({"scenarios": [{"name": "a"}]})", "t"), std::runtime_error);
  EXPECT_THROW(parse_catalogue(R"({"scenarios": [{"name": "a", "command": ["x"], "scale_arg": 3}]})", "t"),
               std::runtime_error);
  EXPECT_THROW(parse_catalogue(R"({"scenarios": [{"name": "a", "command": ["x"]}, {"name": "a", "command": ["y"]}]})",
                               "t"),
               std::runtime_error);
  EXPECT_THROW(load_catalogue("/nonexistent/scenarios.json"), std::runtime_error);
}

// Whatever the file holds, a refusal is one runtime_error of one line that
// names the file: a number JSON cannot hold (the parser's out_of_range, not
// a parse_error) aborted heapline-bench, and a parser's message quoting a
// DEL byte broke the line.
TEST(Catalogue, EveryRefusalIsOneLineNamingTheFile) {
  for (const std::string text : {std::string(R"({"scenarios": [{"name": "a", "command": ["x"], "scale_arg": 2e308}]})"),
                                 std::string("{\n  \x7f\"scenarios\": []}")}) {
    try {
      parse_catalogue(text, "my catalogue.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("scenario catalogue my catalogue.json: ", 0), 0u) << message;
      EXPECT_EQ(find_control_character(message), std::string::npos) << message;
    }
  }
}

// A file a user names is read only if it is a regular file: a FIFO in its
// place (no writer) made the catalogue and calibration readers wait for
// ever. The alarm turns a wait into a failure of this test.
TEST(Catalogue, AFifoIsRefusedNotWaitedFor) {
  const std::string fifo = ::testing::TempDir() + "/catalogue-fifo-" + std::to_string(getpid());
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  alarm(20);
  try {
    load_catalogue(fifo);
    ADD_FAILURE() << "a FIFO was read as a catalogue";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "scenario catalogue: " + fifo + " is a FIFO, not a regular file");
  }
  std::vector<std::string> problems;
  EXPECT_TRUE(read_calibrations(fifo, problems).empty());
  EXPECT_EQ(problems, std::vector<std::string>{fifo + " is a FIFO, not a regular file"});
  alarm(0);
  unlink(fifo.c_str());
}

}  // namespace
}  // namespace heapline::bench
