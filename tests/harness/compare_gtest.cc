// Round alternation and the median of rounds, with a fake runner.
#include "heapline_bench/measurement/compare.h"
#include "heapline_bench/reports/comparison_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace heapline::bench {
namespace {

TEST(RoundOrder, RotatesTheBuildsFromRoundToRound) {
  EXPECT_EQ(round_order(2, 0), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(round_order(2, 1), (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(round_order(3, 1), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(round_order(3, 3), (std::vector<std::size_t>{0, 1, 2}));
}

// Makes each library look slower by a factor of its own, which changes from
// round to round, and writes the loader trace a real run would leave.
class LibraryCostRunner : public ProcessRunner {
 public:
  std::map<std::string, std::vector<double>> cost_per_round;  // library -> overhead in round r
  std::map<std::string, int> measurements_seen;
  std::vector<std::string> order;  // library of each timed "with" run's measurement, first run only

  RunResult run(const RunSpec& spec) override {
    RunResult r;
    r.started = true;
    r.exit_status = 0;
    r.pid = ++pid_;
    r.wall_seconds = 1.0;
    auto preload = spec.env.find("LD_PRELOAD");
    if (preload != spec.env.end()) {
      const std::string& lib = preload->second;
      if (!spec.ld_debug_output.empty()) {  // the warm-up: a new measurement starts
        std::ofstream(spec.ld_debug_output + "." + std::to_string(r.pid))
            << "file=" << lib << " [0];  generating link map\n";
        order.push_back(lib);
        ++measurements_seen[lib];
      }
      const int round = (measurements_seen[lib] - 1) / scenarios_;
      r.wall_seconds = 1.0 + cost_per_round[lib][static_cast<std::size_t>(round)];
    }
    return r;
  }
  int scenarios_ = 1;

 private:
  int pid_ = 100;
};

// Requests for /bin/true, their loader traces in `scratch`.
RequestForScenario requests_in(const std::filesystem::path& scratch) {
  return [scratch](const std::string& scenario) {
    MeasurementRequest request;
    request.scenario = scenario;
    request.command = {"/bin/true"};
    request.scratch_directory = scratch.string();
    return request;
  };
}

TEST(CompareBuilds, AlternatesBuildsAndTakesTheMedianOfRounds) {
  const auto scratch = std::filesystem::temp_directory_path() / ("heapline-compare-" + std::to_string(getpid()));
  std::filesystem::create_directories(scratch);
  LibraryCostRunner runner;
  runner.scenarios_ = 2;
  runner.cost_per_round["/a.so"] = {0.10, 0.30, 0.20};
  runner.cost_per_round["/b.so"] = {0.05, 0.01, 0.50};
  const RequestForScenario request_for = requests_in(scratch);
  auto comparison = compare_builds(runner, {{"A", "/a.so"}, {"B", "/b.so"}}, {"churn-1t", "python"}, 3, 2, 1.0,
                                   request_for);
  std::filesystem::remove_all(scratch);

  // Round 0: A B (each scenario); round 1: B A; round 2: A B.
  const std::vector<std::string> expected = {"/a.so", "/b.so", "/a.so", "/b.so", "/b.so", "/a.so",
                                             "/b.so", "/a.so", "/a.so", "/b.so", "/a.so", "/b.so"};
  EXPECT_EQ(runner.order, expected);
  ASSERT_EQ(comparison.cells.size(), 2u);
  for (const auto& row : comparison.cells) {
    EXPECT_NEAR(row[0].overhead, 0.20, 1e-9) << "median of 0.10, 0.30, 0.20";
    EXPECT_NEAR(row[1].overhead, 0.05, 1e-9) << "median of 0.05, 0.01, 0.50";
    EXPECT_EQ(row[0].rounds.size(), 3u);
    EXPECT_EQ(row[0].rounds[0].with_runs.size(), 2u);
  }

  const auto markdown = comparison_markdown(comparison);
  EXPECT_NE(markdown.find("| Scenario | A | B |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `churn-1t` | +20.0% | +5.0% |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("median of 3 rounds"), std::string::npos);
  EXPECT_NE(markdown.find("Measured on "), std::string::npos);

  const auto json = comparison_json(comparison);
  EXPECT_EQ(json["scenarios"][1]["results"][0]["rounds"].size(), 3u);
  EXPECT_EQ(json["scenarios"][1]["results"][0]["rounds"][2]["with"].size(), 2u);
  EXPECT_EQ(comparison_markdown_from_json(nlohmann::json::parse(json.dump())), markdown);
}

// A peer's own settings reach both sides of its measurements and no other
// build's; its note, and a peer that is absent, are said under the table.
class EnvRecordingRunner : public LibraryCostRunner {
 public:
  std::map<std::string, std::vector<std::string>> seen;  // library ("" without) -> the variable's values
  RunResult run(const RunSpec& spec) override {
    auto preload = spec.env.find("LD_PRELOAD");
    auto value = spec.env.find("PEER_OUTPUT");
    seen[preload != spec.env.end() ? preload->second : ""].push_back(value != spec.env.end() ? value->second : "-");
    return LibraryCostRunner::run(spec);
  }
};

TEST(CompareBuilds, APeersSettingsReachBothSidesOfItsOwnMeasurementsOnly) {
  const auto scratch = std::filesystem::temp_directory_path() / ("heapline-peer-" + std::to_string(getpid()));
  std::filesystem::create_directories(scratch);
  EnvRecordingRunner runner;
  runner.cost_per_round["/a.so"] = {0.10};
  runner.cost_per_round["/peer.so"] = {2.00};
  const RequestForScenario request_for = requests_in(scratch);
  Build peer{"peer", "/peer.so", {{"PEER_OUTPUT", "/dev/null"}}, "records everything."};
  auto comparison = compare_builds(runner, {{"A", "/a.so"}, peer}, {"churn-1t"}, 1, 2, 1.0, request_for);
  std::filesystem::remove_all(scratch);
  for (const auto& value : runner.seen["/a.so"]) EXPECT_EQ(value, "-");
  ASSERT_FALSE(runner.seen["/peer.so"].empty());
  for (const auto& value : runner.seen["/peer.so"]) EXPECT_EQ(value, "/dev/null");
  // The side without any preload ran once for A (unset) and once for the peer (set).
  EXPECT_NE(std::find(runner.seen[""].begin(), runner.seen[""].end(), "/dev/null"), runner.seen[""].end());
  EXPECT_NE(std::find(runner.seen[""].begin(), runner.seen[""].end(), "-"), runner.seen[""].end());

  comparison.absent.push_back({"missing", "not installed here."});
  const auto json = comparison_json(comparison);
  EXPECT_EQ(json["builds"][1]["env"]["PEER_OUTPUT"], "/dev/null");
  const auto markdown = comparison_markdown_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_NE(markdown.find("| Scenario | A | peer | missing |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `churn-1t` | +10.0% | +200.0% | absent |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("\npeer: records everything.\n"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("\nmissing: absent, not installed here.\n"), std::string::npos) << markdown;
}

TEST(CompareBuilds, NeedsTwoBuilds) {
  LibraryCostRunner runner;
  EXPECT_THROW(compare_builds(runner, {{"A", "/a.so"}}, {"churn-1t"}, 3, 2, 1.0, {}), Refusal);
}

TEST(CompareBuilds, NeedsAtLeastOneRoundAndRunsNothingWithout) {
  LibraryCostRunner runner;
  EXPECT_THROW(compare_builds(runner, {{"A", "/a.so"}, {"B", "/b.so"}}, {"churn-1t"}, 0, 2, 1.0, {}), Refusal);
  EXPECT_TRUE(runner.order.empty());
}

}  // namespace
}  // namespace heapline::bench
