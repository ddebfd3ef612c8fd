// Round alternation and the median of rounds, with a fake runner; the table
// from the JSON, old files included.
#include "heapline_bench/measurement/compare.h"
#include "heapline_bench/reports/comparison_export.h"
#include "heapline_bench/measurement/statistics.h"
#include "heapline_bench/reports/percent_format.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

namespace heapline::bench {
namespace {

// The times of one side of a round of a comparison file.
std::vector<double> side_of(const nlohmann::json& runs) {
  std::vector<double> times;
  for (const auto& run : runs) times.push_back(run["wall_s"].get<double>());
  return times;
}

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
    EXPECT_FALSE(row[0].cpu_overhead) << "the runs held no CPU times";
  }

  const auto markdown = comparison_markdown(comparison);
  EXPECT_NE(markdown.find("| Scenario | Figure | A | B |"), std::string::npos) << markdown;
  // Every run of a round takes as long: each interval is its figure. With B
  // against A the rounds give -4.5%, -22.3% and +25%: faster by their median.
  EXPECT_NE(markdown.find("| `churn-1t` | wall | +20.0% [20.0, 20.0] | +5.0% [5.0, 5.0] ▼ faster |"),
            std::string::npos)
      << markdown;
  EXPECT_EQ(markdown.find("| cpu |"), std::string::npos) << "no CPU times, no cpu row";
  EXPECT_NE(markdown.find("median of 3 rounds"), std::string::npos);
  EXPECT_NE(markdown.find("Measured on "), std::string::npos);
  EXPECT_NE(markdown.find("kept no CPU-time figure."), std::string::npos) << markdown;

  const auto json = comparison_json(comparison);
  EXPECT_EQ(json["scenarios"][1]["results"][0]["rounds"].size(), 3u);
  EXPECT_EQ(json["scenarios"][1]["results"][0]["rounds"][2]["with"].size(), 2u);
  EXPECT_EQ(comparison_markdown_from_json(nlohmann::json::parse(json.dump())), markdown);
}

// The instruction figure: counted once per build and scenario after the
// timed rounds, with the build's library and settings, kept in the JSON and
// shown as a row of its own, marked against the first column by the change
// in points (exact counts: no interval).
TEST(CompareBuilds, CountsInstructionsOncePerBuildAfterTheRounds) {
  const auto scratch = std::filesystem::temp_directory_path() / ("heapline-compare-i-" + std::to_string(getpid()));
  std::filesystem::create_directories(scratch);
  LibraryCostRunner runner;
  runner.cost_per_round["/a.so"] = {0.1, 0.1, 0.1};
  runner.cost_per_round["/b.so"] = {0.1, 0.1, 0.1};
  runner.cost_per_round["/c.so"] = {0.1, 0.1, 0.1};
  std::vector<std::string> counted;  // scenario/library/setting of each count, in order
  const std::size_t timed_before = runner.order.size();
  const InstructionsForRequest count = [&](const std::string& scenario, const MeasurementRequest& request) {
    EXPECT_EQ(runner.order.size() - timed_before, 9u) << "every timed round ran first";
    const auto setting = request.env.find("SETTING");
    counted.push_back(scenario + " " + request.library + (setting == request.env.end() ? "" : " " + setting->second));
    InstructionFigure figure;
    figure.without = 1000;
    figure.with = request.library == "/a.so" ? 1050 : request.library == "/b.so" ? 1051 : 1040;
    figure.overhead = static_cast<double>(figure.with) / 1000.0 - 1;
    figure.command = "reduced";
    return std::optional<InstructionFigure>(figure);
  };
  Build with_setting{"C", "/c.so", {{"SETTING", "x"}}};
  auto comparison = compare_builds(runner, {{"A", "/a.so"}, {"B", "/b.so"}, with_setting}, {"churn-1t"}, 3, 2, 1.0,
                                   requests_in(scratch), {}, count);
  std::filesystem::remove_all(scratch);
  EXPECT_EQ(counted, (std::vector<std::string>{"churn-1t /a.so", "churn-1t /b.so", "churn-1t /c.so x"}));
  ASSERT_TRUE(comparison.cells[0][1].instructions);
  EXPECT_EQ(comparison.cells[0][1].instructions->with, 1051u);

  const auto json = comparison_json(comparison);
  EXPECT_EQ(json["scenarios"][0]["results"][2]["instructions"]["with"], 1040);
  EXPECT_EQ(json["scenarios"][0]["results"][2]["instructions"]["command"], "reduced");
  const auto markdown = comparison_markdown(comparison);
  // B is 0.1 point above A: within the 0.2-point minimum effect, the same;
  // C is 1 point below: faster.
  EXPECT_NE(markdown.find("| `churn-1t` | instructions | +5.00% | +5.10% = same | +4.00% ▼ faster |"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("at least 0.20 points"), std::string::npos) << markdown;
  EXPECT_EQ(comparison_markdown_from_json(nlohmann::json::parse(json.dump())), markdown);

  // A file written before compare counted instructions has no such row.
  nlohmann::json older = json;
  for (auto& result : older["scenarios"][0]["results"]) result.erase("instructions");
  EXPECT_EQ(comparison_markdown_from_json(older).find("instructions"), std::string::npos);
}

// A count that is refused (a library that never reached the program under
// callgrind) empties that cell with its reason: the timed rounds of every
// build are kept, the other builds are counted, and the table says why.
TEST(CompareBuilds, ARefusedCountKeepsTheRoundsAndSaysWhy) {
  const auto scratch = std::filesystem::temp_directory_path() / ("heapline-compare-r-" + std::to_string(getpid()));
  std::filesystem::create_directories(scratch);
  LibraryCostRunner runner;
  runner.scenarios_ = 2;
  runner.cost_per_round["/a.so"] = {0.1, 0.1, 0.1};
  runner.cost_per_round["/peer.so"] = {0.5, 0.5, 0.5};
  const InstructionsForRequest count = [&](const std::string&, const MeasurementRequest& request) {
    if (request.library == "/peer.so") throw Refusal("callgrind counted no instruction of /peer.so in the program.");
    InstructionFigure figure;
    figure.without = 1000;
    figure.with = 1050;
    figure.overhead = 0.05;
    return std::optional<InstructionFigure>(figure);
  };
  auto comparison = compare_builds(runner, {{"A", "/a.so"}, {"peer", "/peer.so"}}, {"churn-1t", "churn-4t"}, 3, 2,
                                   1.0, requests_in(scratch), {}, count);
  std::filesystem::remove_all(scratch);
  for (std::size_t s = 0; s < 2; ++s) {
    EXPECT_EQ(comparison.cells[s][1].rounds.size(), 3u);
    EXPECT_NEAR(comparison.cells[s][1].overhead, 0.5, 1e-9);
    ASSERT_TRUE(comparison.cells[s][0].instructions);
    EXPECT_FALSE(comparison.cells[s][1].instructions);
    EXPECT_NE(comparison.cells[s][1].instructions_not_counted.find("no instruction of /peer.so"), std::string::npos);
  }
  const auto json = comparison_json(comparison);
  const auto markdown = comparison_markdown(comparison);
  EXPECT_NE(markdown.find("| `churn-1t` | instructions | +5.00% | not counted |"), std::string::npos) << markdown;
  // The reason once, under the table.
  const std::string reason = "peer: instructions not counted: callgrind counted no instruction of /peer.so";
  ASSERT_NE(markdown.find(reason), std::string::npos) << markdown;
  EXPECT_EQ(markdown.find(reason, markdown.find(reason) + 1), std::string::npos) << markdown;
  EXPECT_EQ(comparison_markdown_from_json(nlohmann::json::parse(json.dump())), markdown);
}

// CPU time that differs from the wall clock, and whose user and sys shares
// differ: each round's CPU overhead (user + sys) is cpu_cost_per_round, while
// user alone, sys alone or wall time give other figures. Each side's sys time
// is jittered by -d, 0, +d over any three consecutive runs, so the medians stay
// exact and the intervals are not points.
class CpuCostRunner : public LibraryCostRunner {
 public:
  std::map<std::string, std::vector<double>> cpu_cost_per_round;
  RunResult run(const RunSpec& spec) override {
    RunResult r = LibraryCostRunner::run(spec);
    auto preload = spec.env.find("LD_PRELOAD");
    const std::string lib = preload != spec.env.end() ? preload->second : "";
    double cost = 0;
    if (!lib.empty()) {
      const auto round = static_cast<std::size_t>((measurements_seen[lib] - 1) / scenarios_);
      cost = cpu_cost_per_round[lib][round];
    }
    const int k = runs_on_side_[lib]++;
    r.user_seconds = 0.7 + 0.25 * cost;
    r.system_seconds = 0.3 + 0.75 * cost + 0.01 * (k % 3 - 1);
    return r;
  }

 private:
  std::map<std::string, int> runs_on_side_;
};

// A against B on churn-1t, three rounds of three runs: wall figures of
// medians 0.20 and 0.05, cpu figures of medians 0.08 and 0.06 (neither the
// mean, the first nor the last round).
Comparison compare_a_and_b(CpuCostRunner& runner) {
  const auto scratch = std::filesystem::temp_directory_path() / ("heapline-cpu-" + std::to_string(getpid()));
  std::filesystem::create_directories(scratch);
  runner.cost_per_round["/a.so"] = {0.10, 0.30, 0.20};
  runner.cost_per_round["/b.so"] = {0.05, 0.01, 0.50};
  runner.cpu_cost_per_round["/a.so"] = {0.30, 0.08, 0.04};
  runner.cpu_cost_per_round["/b.so"] = {0.02, 0.50, 0.06};
  auto comparison =
      compare_builds(runner, {{"A", "/a.so"}, {"B", "/b.so"}}, {"churn-1t"}, 3, 3, 1.0, requests_in(scratch));
  std::filesystem::remove_all(scratch);
  return comparison;
}

TEST(CompareBuilds, CpuFigureIsUserPlusSysOfEachRoundThenTheMedianOfRounds) {
  CpuCostRunner runner;
  const Comparison comparison = compare_a_and_b(runner);

  const auto& a = comparison.cells[0][0];
  ASSERT_EQ(a.round_cpu.size(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    ASSERT_TRUE(a.round_cpu[r]) << "round " << r;
    EXPECT_NEAR(a.round_cpu[r]->overhead, runner.cpu_cost_per_round["/a.so"][r], 1e-9) << "round " << r;
    // The interval of the suite's cpu figure: the bootstrap of user + sys.
    std::vector<double> with, without;
    for (const auto& run : a.rounds[r].with_runs) with.push_back(run.user_seconds + run.system_seconds);
    for (const auto& run : a.rounds[r].without_runs) without.push_back(run.user_seconds + run.system_seconds);
    const Interval expected = bootstrap_overhead_interval(with, without);
    EXPECT_DOUBLE_EQ(a.round_cpu[r]->interval.low, expected.low);
    EXPECT_DOUBLE_EQ(a.round_cpu[r]->interval.high, expected.high);
    EXPECT_LT(expected.low, expected.high);
    EXPECT_NEAR(a.round_cpu[r]->median_without_seconds, 1.0, 1e-9);
  }
  ASSERT_TRUE(a.cpu_overhead);
  EXPECT_NEAR(*a.cpu_overhead, 0.08, 1e-9) << "median of 0.30, 0.08, 0.04";
  ASSERT_TRUE(comparison.cells[0][1].cpu_overhead);
  EXPECT_NEAR(*comparison.cells[0][1].cpu_overhead, 0.06, 1e-9) << "median of 0.02, 0.50, 0.06";
  EXPECT_NEAR(a.overhead, 0.20, 1e-9) << "the wall figure is unchanged";

  const auto json = comparison_json(comparison);
  const auto& result = json["scenarios"][0]["results"][0];
  EXPECT_NEAR(result["cpu_overhead"].get<double>(), 0.08, 1e-9);
  EXPECT_NEAR(result["rounds"][0]["cpu"]["overhead"].get<double>(), 0.30, 1e-9);
  EXPECT_DOUBLE_EQ(result["rounds"][0]["cpu"]["interval"][0].get<double>(), a.round_cpu[0]->interval.low);

  const auto markdown = comparison_markdown(comparison);
  EXPECT_NE(markdown.find("| Scenario | Figure | A | B |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `churn-1t` | wall | +20.0% [20.0, 20.0] | +5.0% [5.0, 5.0] ▼ faster |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| `churn-1t` | cpu | +8.0% ["), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("in wall-clock time and in CPU time (user + sys of the same runs)"), std::string::npos)
      << markdown;
  EXPECT_EQ(markdown.find("kept no CPU-time figure"), std::string::npos) << markdown;

  // A file whose results kept no cpu figure (older than the figure, or runs
  // without CPU times) shows "–" in those cells.
  auto older = nlohmann::json::parse(json.dump());
  older["scenarios"][0]["results"][1].erase("cpu_overhead");
  const auto mixed = comparison_markdown_from_json(older);
  EXPECT_NE(mixed.find("| `churn-1t` | cpu | +8.0% ["), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("] | – |"), std::string::npos) << mixed;
}

// A round whose runs held no CPU time has no cpu figure, and the build then
// has none (never the median of the rounds that had one): its cpu cell is
// "–", its wall figure and the other build's cpu figure are kept.
TEST(CompareBuilds, ARoundWithoutCpuTimesLeavesItsBuildWithoutACpuFigure) {
  class CpuMissingRunner : public CpuCostRunner {
   public:
    RunResult run(const RunSpec& spec) override {
      RunResult r = CpuCostRunner::run(spec);
      auto preload = spec.env.find("LD_PRELOAD");
      if (preload != spec.env.end() && preload->second == "/b.so" && measurements_seen["/b.so"] == 2) {
        r.user_seconds = r.system_seconds = 0;  // B's second round: no CPU times on its side
      }
      return r;
    }
  };
  CpuMissingRunner runner;
  const Comparison comparison = compare_a_and_b(runner);

  const auto& b = comparison.cells[0][1];
  ASSERT_EQ(b.round_cpu.size(), 3u);
  EXPECT_TRUE(b.round_cpu[0]);
  EXPECT_FALSE(b.round_cpu[1]);
  EXPECT_TRUE(b.round_cpu[2]);
  EXPECT_FALSE(b.cpu_overhead) << "a figure of two rounds of three is none";
  EXPECT_NEAR(b.overhead, 0.05, 1e-9) << "the wall figure is kept";
  ASSERT_TRUE(comparison.cells[0][0].cpu_overhead);
  EXPECT_NEAR(*comparison.cells[0][0].cpu_overhead, 0.08, 1e-9);

  const auto json = comparison_json(comparison);
  const auto& result = json["scenarios"][0]["results"][1];
  EXPECT_TRUE(result["cpu_overhead"].is_null()) << result.dump();
  EXPECT_TRUE(result["rounds"][1]["cpu"].is_null()) << result.dump();
  EXPECT_FALSE(result["rounds"][0]["cpu"].is_null()) << result.dump();
  const auto markdown = comparison_markdown_from_json(nlohmann::json::parse(json.dump()));
  EXPECT_NE(markdown.find("| `churn-1t` | cpu | +8.0% ["), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("] | – |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `churn-1t` | wall | +20.0% [20.0, 20.0] | +5.0% [5.0, 5.0] ▼ faster |"),
            std::string::npos)
      << markdown;
}

// Rounds with missing figures, as a property over every pattern of them:
// for 1 to 4 rounds and each set of rounds whose runs held no CPU time on
// B's side, B has a cpu figure only when every round has one (then the
// median of the rounds'); its wall figure, and A's figures, are the medians
// of all the rounds whatever B's CPU times. Each round's cpu figure is kept
// or absent as its runs were. Seeded round costs, all distinct.
TEST(CompareBuilds, ABuildHasACpuFigureOnlyWhenEveryRoundHasOne) {
  class CpuMissingInRounds : public CpuCostRunner {
   public:
    unsigned missing_mask = 0;  // bit r: B's round r holds no CPU time
    RunResult run(const RunSpec& spec) override {
      RunResult r = CpuCostRunner::run(spec);
      auto preload = spec.env.find("LD_PRELOAD");
      if (preload != spec.env.end() && preload->second == "/b.so" &&
          (missing_mask >> (measurements_seen["/b.so"] - 1) & 1u) != 0) {
        r.user_seconds = r.system_seconds = 0;
      }
      return r;
    }
  };
  std::mt19937 random(44);
  std::uniform_real_distribution<double> cost(0.01, 0.6);
  const auto scratch = std::filesystem::temp_directory_path() / ("heapline-missing-" + std::to_string(getpid()));
  std::filesystem::create_directories(scratch);
  for (int rounds = 1; rounds <= 4; ++rounds) {
    for (unsigned mask = 0; mask < (1u << rounds); ++mask) {
      SCOPED_TRACE(std::to_string(rounds) + " rounds, missing mask " + std::to_string(mask));
      CpuMissingInRounds runner;
      runner.missing_mask = mask;
      for (const std::string lib : {"/a.so", "/b.so"}) {
        for (int r = 0; r < rounds; ++r) {
          runner.cost_per_round[lib].push_back(cost(random));
          runner.cpu_cost_per_round[lib].push_back(cost(random));
        }
      }
      const Comparison comparison = compare_builds(runner, {{"A", "/a.so"}, {"B", "/b.so"}}, {"churn-1t"}, rounds, 3,
                                                   1.0, requests_in(scratch));
      const auto& a = comparison.cells[0][0];
      const auto& b = comparison.cells[0][1];
      ASSERT_EQ(b.round_cpu.size(), static_cast<std::size_t>(rounds));
      for (int r = 0; r < rounds; ++r) {
        EXPECT_EQ(b.round_cpu[static_cast<std::size_t>(r)].has_value(), (mask >> r & 1u) == 0) << "round " << r;
      }
      EXPECT_EQ(b.cpu_overhead.has_value(), mask == 0);
      if (mask == 0) EXPECT_NEAR(*b.cpu_overhead, median(runner.cpu_cost_per_round["/b.so"]), 1e-9);
      EXPECT_NEAR(b.overhead, median(runner.cost_per_round["/b.so"]), 1e-9);
      ASSERT_TRUE(a.cpu_overhead);
      EXPECT_NEAR(*a.cpu_overhead, median(runner.cpu_cost_per_round["/a.so"]), 1e-9);
      EXPECT_NEAR(a.overhead, median(runner.cost_per_round["/a.so"]), 1e-9);
      const auto json = comparison_json(comparison);
      EXPECT_EQ(json["scenarios"][0]["results"][1]["cpu_overhead"].is_null(), mask != 0);
    }
  }
  std::filesystem::remove_all(scratch);
}

// The repository's comparison, written before compare kept a cpu figure, is
// still read: every cell shows its wall figure, and a cpu figure only where
// the file has one.
TEST(ComparisonMarkdown, ReadsTheRepositorysComparison) {
  std::ifstream in(HEAPLINE_SOURCE_DIR "/docs/release-comparison.json");
  ASSERT_TRUE(in) << "docs/release-comparison.json";
  const auto json = nlohmann::json::parse(in);
  const auto markdown = comparison_markdown_from_json(json);
  std::size_t rows = 0;
  for (const auto& row : json.at("scenarios")) {
    // Each cell: its figure, then its interval (and, after the first, a mark).
    const std::string name = row.at("name").get<std::string>();
    std::size_t at = markdown.find("| `" + name + "` | wall |");
    ASSERT_NE(at, std::string::npos) << markdown;
    for (const auto& result : row.at("results")) {
      at = markdown.find(' ' + format_percent(result.at("overhead").get<double>()) + "% [", at);
      EXPECT_NE(at, std::string::npos) << name << "\n" << markdown;
    }
    ++rows;
  }
  EXPECT_EQ(rows, 5u);
  EXPECT_NE(markdown.find("Each "), std::string::npos) << markdown;
}

// A comparison file as compare writes it: one scenario, two rounds of six
// runs per side for each build, each run `with_s` seconds with its build
// (1.0 without), give or take a fixed jitter (times `spread`); CPU time
// equal to wall time.
nlohmann::json comparison_file(const std::vector<std::pair<std::string, double>>& builds, double spread = 1.0) {
  const double jitter[] = {-0.02, -0.01, 0.0, 0.01, 0.02, 0.005};
  auto runs = [&](double seconds, int round) {
    nlohmann::json out = nlohmann::json::array();
    for (int k = 0; k < 6; ++k) {
      const double t = seconds + spread * jitter[(k + round) % 6] * (round + 1);
      out.push_back({{"wall_s", t}, {"user_s", 0.75 * t}, {"sys_s", 0.25 * t}, {"max_rss_kib", 1}});
    }
    return out;
  };
  nlohmann::json file = {{"schema", "heapline-comparison/1"}, {"measured_at", "2026-12-01T00:00:00Z"},
                         {"rounds", 2}, {"runs", 6}, {"scale", 1.0},
                         {"machine", {{"description", "Test CPU, 2 cores"}}}, {"builds", nlohmann::json::array()}};
  nlohmann::json results = nlohmann::json::array();
  for (const auto& [label, with_s] : builds) {
    file["builds"].push_back({{"label", label}, {"library", "lib.so"}});
    nlohmann::json rounds = nlohmann::json::array();
    std::vector<double> overheads;
    for (int r = 0; r < 2; ++r) {
      rounds.push_back({{"with", runs(with_s, r)}, {"without", runs(1.0, r + 1)}});
      overheads.push_back(overhead_ratio(side_of(rounds.back()["with"]), side_of(rounds.back()["without"])));
    }
    const double figure = median(overheads);
    results.push_back({{"build", label}, {"overhead", figure}, {"cpu_overhead", figure}, {"rounds", rounds}});
  }
  file["scenarios"] = {{{"name", "churn-1t"}, {"results", results}}};
  return file;
}

// Each cell's interval is the bootstrap of the median of its rounds, drawn
// within each round from the runs the file keeps; each build after the first
// is marked against the first by its runs' time against the first's.
TEST(ComparisonMarkdown, IntervalsFromTheRoundsAndMarksAgainstTheFirstBuild) {
  const auto file = comparison_file({{"old", 1.20}, {"same", 1.20}, {"slower", 1.50}, {"faster", 1.05}});
  const auto markdown = comparison_markdown_from_json(file);
  const auto& old = file["scenarios"][0]["results"][0];
  std::vector<std::vector<double>> sides;
  for (const auto& round : old["rounds"]) {
    sides.push_back(side_of(round["with"]));
    sides.push_back(side_of(round["without"]));
  }
  const std::vector<RoundSample> rounds = {{sides[0], sides[1]}, {sides[2], sides[3]}};
  const Interval expected = bootstrap_rounds_interval(rounds);
  EXPECT_LT(expected.low, expected.high);
  const std::string old_cell = format_overhead(old["overhead"].get<double>(), expected);
  for (const char* figure : {"wall", "cpu"}) {
    const std::string row = std::string("| `churn-1t` | ") + figure + " | " + old_cell + " | ";
    const auto at = markdown.find(row);
    ASSERT_NE(at, std::string::npos) << row << "\n" << markdown;
    const std::string line = markdown.substr(at, markdown.find('\n', at) - at);
    EXPECT_NE(line.find("] = same | "), std::string::npos) << line;
    EXPECT_NE(line.find("] ▲ slower | "), std::string::npos) << line;
    EXPECT_NE(line.find("] ▼ faster |"), std::string::npos) << line;
  }
  EXPECT_NE(markdown.find("The marks compare each build with the first column (old)"), std::string::npos) << markdown;
  // A difference smaller than the minimum effect is "same", however sure
  // (runs that repeat to a thousandth: an interval far from no change).
  const auto close = comparison_markdown_from_json(comparison_file({{"old", 1.20}, {"close", 1.21}}, 0.05));
  EXPECT_NE(close.find("] = same |\n"), std::string::npos) << close;
}

// The operation counts' scale is named only when it is not 1, and a file
// without it (written before compare had --scale) ran at 1.
TEST(ComparisonMarkdown, TheScaleIsNamedOnlyWhenItIsNotOne) {
  auto file = comparison_file({{"old", 1.20}});
  const std::string named = "operation counts scaled by";
  EXPECT_EQ(comparison_markdown_from_json(file).find(named), std::string::npos);
  file["scale"] = 0.5;
  EXPECT_NE(comparison_markdown_from_json(file).find(named + " 0.5"), std::string::npos);
  file.erase("scale");
  EXPECT_EQ(comparison_markdown_from_json(file).find(named), std::string::npos) << comparison_markdown_from_json(file);
}

// The file's counts are whole numbers: a fraction, a string or zero is an
// error naming the field, never a count truncated into the text.
TEST(ComparisonMarkdown, RoundsAndRunsMustBeWholeCounts) {
  const auto good = comparison_file({{"old", 1.20}});
  ASSERT_NO_THROW(comparison_markdown_from_json(good));
  for (const char* key : {"rounds", "runs"}) {
    for (const nlohmann::json& bad : {nlohmann::json(2.5), nlohmann::json("3"), nlohmann::json(0), nlohmann::json(-1)}) {
      auto file = good;
      file[key] = bad;
      try {
        comparison_markdown_from_json(file);
        ADD_FAILURE() << key << " = " << bad.dump() << " was accepted";
      } catch (const std::exception& error) {
        EXPECT_NE(std::string(error.what()).find(std::string("\"") + key + "\" must be a whole number"),
                  std::string::npos)
            << error.what();
      }
    }
  }
}

// A file of another schema is refused, not read as this one's.
TEST(ComparisonMarkdown, AFileOfAnotherSchemaIsRefused) {
  auto file = comparison_file({{"old", 1.20}});
  file["schema"] = "heapline-comparison/9";
  try {
    comparison_markdown_from_json(file);
    ADD_FAILURE() << "another schema was read";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "\"schema\" is \"heapline-comparison/9\": this heapline-bench reads \"heapline-comparison/1\"");
  }
  file.erase("schema");  // files older than the field
  EXPECT_NO_THROW(comparison_markdown_from_json(file));
}

// A file whose cells do not line up (a build with a round more or less than
// the file's count, or a scenario with a result more or less than there are
// builds: a file edited by hand, or cut) is refused with one line that says
// where, whichever build it is.
TEST(ComparisonMarkdown, EveryScenarioHasAResultPerBuildAndEachTheFilesRounds) {
  const auto good = comparison_file({{"old", 1.20}, {"new", 1.10}});
  ASSERT_NO_THROW(comparison_markdown_from_json(good));
  auto refused = [](const nlohmann::json& file, const std::string& expected) {
    try {
      comparison_markdown_from_json(file);
      ADD_FAILURE() << "accepted; expected: " << expected;
    } catch (const std::exception& error) {
      EXPECT_EQ(std::string(error.what()), expected);
    }
  };
  for (std::size_t b : {0u, 1u}) {
    auto more = good;
    auto& rounds = more["scenarios"][0]["results"][b]["rounds"];
    rounds.push_back(rounds[0]);
    refused(more, "scenario churn-1t, build " + good["builds"][b]["label"].get<std::string>() +
                      " has 3 rounds, the file's \"rounds\" 2");
    auto fewer = good;
    fewer["scenarios"][0]["results"][b]["rounds"].erase(0);
    refused(fewer, "scenario churn-1t, build " + good["builds"][b]["label"].get<std::string>() +
                       " has 1 round, the file's \"rounds\" 2");
  }
  auto cut = good;
  cut["scenarios"][0]["results"].erase(1);
  refused(cut, "scenario churn-1t has 1 result for 2 builds");
  auto extra = good;
  extra["scenarios"][0]["results"].push_back(good["scenarios"][0]["results"][1]);
  refused(extra, "scenario churn-1t has 3 results for 2 builds");
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
  EXPECT_NE(markdown.find("| Scenario | Figure | A | peer | missing |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `churn-1t` | wall | +10.0% [10.0, 10.0] | +200.0% [200.0, 200.0] ▲ slower | absent |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("\npeer: records everything.\n"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("\nmissing: absent, not installed here.\n"), std::string::npos) << markdown;
}

TEST(CompareBuilds, NeedsTwoBuilds) {
  LibraryCostRunner runner;
  EXPECT_THROW(compare_builds(runner, {{"A", "/a.so"}}, {"churn-1t"}, 3, 2, 1.0, {}), PreconditionFailed);
}

TEST(CompareBuilds, NeedsAtLeastOneRoundAndRunsNothingWithout) {
  LibraryCostRunner runner;
  EXPECT_THROW(compare_builds(runner, {{"A", "/a.so"}, {"B", "/b.so"}}, {"churn-1t"}, 0, 2, 1.0, {}),
               PreconditionFailed);
  EXPECT_TRUE(runner.order.empty());
}

}  // namespace
}  // namespace heapline::bench
