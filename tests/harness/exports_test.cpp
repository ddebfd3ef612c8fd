// The exports, each checked against its consumer's own rules: the
// github-action-benchmark alert rule (src/write/findAlerts.ts of the action)
// run over a stored history with a known step, Bencher's BMF schema and
// name rules, and RFC 4180 CSV with every figure's columns.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "heapline_bench/history/store.h"
#include "heapline_bench/reports/exporter.h"

namespace heapline::bench {
namespace {

using nlohmann::json;

// A point of churn-4t (or `scenario`) at `commit`, measured at `minute`, with
// wall, CPU and instruction overheads.
Point point_at(const std::string& commit, int minute, double wall, double cpu, double instructions,
               const std::string& scenario = "churn-4t") {
  Point p;
  p.scenario = scenario;
  p.commit = commit;
  char at[32];
  std::snprintf(at, sizeof at, "2026-11-30T%02d:%02d:00Z", minute / 60, minute % 60);
  p.measured_at = at;
  p.overhead = wall;
  p.interval = {wall - 0.004, wall + 0.005};
  p.runs = 2;
  p.median_with_seconds = 1 + wall;
  p.median_without_seconds = 1;
  p.with_runs = {{1 + wall, 1 + cpu, 0, 10}, {1 + wall, 1 + cpu, 0, 10}};
  p.without_runs = {{1, 1, 0, 10}, {1, 1, 0, 10}};
  p.cpu = RunFigure{cpu, {cpu - 0.003, cpu + 0.002}, 1 + cpu, 1};
  InstructionFigure counted;
  counted.overhead = instructions;
  counted.without = 1000000;
  counted.with = static_cast<std::uint64_t>(std::llround(1000000 * (1 + instructions)));
  counted.command = "malloc_churn 4 1000";
  p.instructions = counted;
  p.heapline_version = "0.5.0";
  p.machine = {"Some CPU", 2, "6.1", "2.36", "gcc", ""};
  p.fingerprint = p.machine.fingerprint();
  return p;
}

// The history as the store gives it back (the one reader), oldest first.
std::vector<Point> stored(const std::vector<Point>& points) {
  const std::string dir = ::testing::TempDir() + "/exports-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  const Store store(dir, [](const std::string&) {});
  EXPECT_EQ(store.append_new(points), points.size());
  StoreContents contents = store.read();
  EXPECT_TRUE(contents.problems.empty());
  sort_by_measured_at(contents.points);
  std::filesystem::remove_all(dir);
  return contents.points;
}

// github-action-benchmark's reading of a customSmallerIsBetter file
// (extractCustomBenchmarkResult): an array of {name, value, unit, range?,
// extra?}; its checks: each name a string, value a number, unit a string.
std::map<std::string, double> action_benches(const std::string& text) {
  const json parsed = json::parse(text);
  EXPECT_TRUE(parsed.is_array());
  std::map<std::string, double> benches;
  for (const auto& b : parsed) {
    EXPECT_TRUE(b.at("name").is_string());
    EXPECT_TRUE(b.at("value").is_number());
    EXPECT_TRUE(b.at("unit").is_string());
    if (b.contains("range")) EXPECT_TRUE(b["range"].is_string());
    if (b.contains("extra")) EXPECT_TRUE(b["extra"].is_string());
    EXPECT_TRUE(benches.emplace(b["name"].get<std::string>(), b["value"].get<double>()).second)
        << "a name twice in one suite: the action compares only the first";
  }
  return benches;
}

// The action's alert rule (findAlerts, customSmallerIsBetter): for each bench
// of the current suite with a bench of that name in the previous one,
// ratio = current.value / previous.value, an alert when ratio > threshold
// (alert-threshold "105%" is 1.05).
std::vector<std::string> action_alerts(const std::map<std::string, double>& previous,
                                       const std::map<std::string, double>& current, double threshold) {
  std::vector<std::string> alerts;
  for (const auto& [name, value] : current) {
    const auto prev = previous.find(name);
    if (prev == previous.end()) continue;
    if (value / prev->second > threshold) alerts.push_back(name);
  }
  return alerts;
}

std::string export_as(const char* format, const std::vector<Point>& points, const std::string& commit = {}) {
  return exporter_named(format).serialize(points, {commit});
}

TEST(BenchmarkActionExport, TheActionsAlertRuleFindsTheStepAndNothingElse) {
  // c4 makes every figure of churn-4t about 5% worse in ratio terms; the
  // noise around it is small; resident-1t never changes.
  const std::vector<std::string> commits = {"c1aaaaa", "c2aaaaa", "c3aaaaa", "c4aaaaa", "c5aaaaa", "c6aaaaa"};
  std::vector<Point> points;
  for (std::size_t i = 0; i < commits.size(); ++i) {
    const bool stepped = i >= 3;
    const double jitter = (i % 2 ? 0.002 : -0.001);
    points.push_back(point_at(commits[i], static_cast<int>(10 * i), (stepped ? 0.075 : 0.019) + jitter,
                              (stepped ? 0.081 : 0.021) + jitter, stepped ? 0.072 : 0.0125));
    points.push_back(point_at(commits[i], static_cast<int>(10 * i + 1), 0.01, 0.012, 0.004, "resident-1t"));
  }
  const auto history = stored(points);
  std::map<std::string, double> previous;
  std::map<std::string, std::vector<std::string>> alerts_at;
  for (const auto& commit : commits) {
    const auto current = action_benches(export_as("github-action-benchmark", history, commit));
    ASSERT_EQ(current.size(), 6u) << "two scenarios, three figures each";
    if (!previous.empty()) alerts_at[commit] = action_alerts(previous, current, 1.05);
    previous = current;
  }
  const std::string machine = point_at("x", 0, 0, 0, 0).fingerprint;
  const std::vector<std::string> stepped = {"churn-4t (" + machine + ") cpu", "churn-4t (" + machine + ") instructions",
                                            "churn-4t (" + machine + ") wall"};
  for (const auto& commit : {"c2aaaaa", "c3aaaaa", "c5aaaaa", "c6aaaaa"}) EXPECT_TRUE(alerts_at[commit].empty()) << commit;
  EXPECT_EQ(alerts_at["c4aaaaa"], stepped);
}

TEST(BenchmarkActionExport, ARatioAlertsOnARealStepWhateverTheSignOfTheOverhead) {
  // The two cases that a "% overhead" value gets wrong: -1.9% -> +2.7% is
  // 4.6 points worse (it divided to -1.42: no alert), 0.1% -> 0.4% is noise
  // (it divided to 4: an alert).
  const auto history = stored({point_at("a1aaaaa", 0, -0.019, -0.019, -0.019), point_at("a2aaaaa", 1, 0.027, 0.027, 0.027),
                               point_at("b1aaaaa", 2, 0.001, 0.001, 0.001), point_at("b2aaaaa", 3, 0.004, 0.004, 0.004)});
  auto benches = [&](const char* commit) { return action_benches(export_as("github-action-benchmark", history, commit)); };
  EXPECT_EQ(action_alerts(benches("a1aaaaa"), benches("a2aaaaa"), 1.04).size(), 3u);
  EXPECT_TRUE(action_alerts(benches("b1aaaaa"), benches("b2aaaaa"), 1.04).empty());
  for (const auto& [name, value] : benches("a2aaaaa")) EXPECT_GT(value, 0) << name;
}

TEST(BenchmarkActionExport, EachFigureIsARatioWithItsInterval) {
  const auto history = stored({point_at("abc1230", 0, 0.019, 0.025, 0.0125)});
  const json parsed = json::parse(export_as("github-action-benchmark", history, "abc"));
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_NEAR(parsed[0]["value"].get<double>(), 1.019, 1e-12);
  EXPECT_EQ(parsed[0]["range"], "95% CI [1.0150, 1.0240]");
  EXPECT_NEAR(parsed[1]["value"].get<double>(), 1.025, 1e-12);
  EXPECT_EQ(parsed[1]["range"], "95% CI [1.0220, 1.0270]");
  EXPECT_NEAR(parsed[2]["value"].get<double>(), 1.0125, 1e-12);
  EXPECT_EQ(parsed[2]["range"], "exact (1012500 / 1000000 instructions)");
  EXPECT_THROW(export_as("github-action-benchmark", history, "fff"), std::runtime_error);
}

TEST(BenchmarkActionExport, AReMeasuredScenarioIsOneBenchmarkItsNewestPoint) {
  const auto history = stored({point_at("c1aaaaa", 0, 0.5, 0.5, 0.5), point_at("c1aaaaa", 5, 0.02, 0.02, 0.02)});
  const auto benches = action_benches(export_as("github-action-benchmark", history, "c1aaaaa"));
  ASSERT_EQ(benches.size(), 3u);
  for (const auto& [name, value] : benches) EXPECT_NEAR(value, 1.02, 1e-12) << name;
}

// Bencher's rules for BMF (https://bencher.dev/docs/reference/bencher-metric-format):
// the JSON schema (an object of benchmarks, each an object of measures, each
// an object with a number "value" and optional numbers "lower_value" and
// "upper_value"), a benchmark name of 1 to 1024 characters, a measure slug
// of at most 64 lower-case letters, digits and hyphens; and the interval
// around its value.
void expect_bencher_accepts(const std::string& text) {
  const json parsed = json::parse(text);
  ASSERT_TRUE(parsed.is_object());
  ASSERT_FALSE(parsed.empty());
  for (const auto& [benchmark, measures] : parsed.items()) {
    EXPECT_FALSE(benchmark.empty());
    EXPECT_LE(benchmark.size(), 1024u);
    EXPECT_FALSE(std::regex_search(benchmark, std::regex("-bencher-ignore$"))) << "would silence its alerts";
    ASSERT_TRUE(measures.is_object()) << benchmark;
    for (const auto& [measure, metric] : measures.items()) {
      EXPECT_TRUE(std::regex_match(measure, std::regex("[a-z0-9]+(-[a-z0-9]+)*"))) << measure;
      EXPECT_LE(measure.size(), 64u);
      ASSERT_TRUE(metric.is_object());
      ASSERT_TRUE(metric.contains("value") && metric["value"].is_number()) << benchmark << " " << measure;
      for (const auto& [key, value] : metric.items()) {
        EXPECT_TRUE(key == "value" || key == "lower_value" || key == "upper_value") << key;
        EXPECT_TRUE(value.is_number()) << key;
      }
      if (metric.contains("lower_value")) EXPECT_LE(metric["lower_value"].get<double>(), metric["value"].get<double>());
      if (metric.contains("upper_value")) EXPECT_GE(metric["upper_value"].get<double>(), metric["value"].get<double>());
    }
  }
}

TEST(BencherExport, BencherAcceptsItWallCpuAndInstructionsEachWithTheirInterval) {
  const auto history =
      stored({point_at("c1aaaaa", 0, 0.019, 0.025, 0.0125), point_at("c1aaaaa", 1, 0.03, 0.04, 0.01, "resident-1t"),
              point_at("c0aaaaa", 2, 0.9, 0.9, 0.9)});
  const std::string text = export_as("bencher", history, "c1aaaaa");
  expect_bencher_accepts(text);
  const json parsed = json::parse(text);
  ASSERT_EQ(parsed.size(), 2u);
  const json& churn = parsed["churn-4t (" + history.front().fingerprint + ")"];
  EXPECT_NEAR(churn["wall-ratio"]["value"].get<double>(), 1.019, 1e-12);
  EXPECT_NEAR(churn["wall-ratio"]["lower_value"].get<double>(), 1.015, 1e-12);
  EXPECT_NEAR(churn["wall-ratio"]["upper_value"].get<double>(), 1.024, 1e-12);
  EXPECT_NEAR(churn["cpu-ratio"]["value"].get<double>(), 1.025, 1e-12);
  EXPECT_NEAR(churn["cpu-ratio"]["lower_value"].get<double>(), 1.022, 1e-12);
  EXPECT_NEAR(churn["instructions-ratio"]["value"].get<double>(), 1.0125, 1e-12);
}

TEST(BencherExport, APointWithoutCpuOrInstructionsHasTheWallMeasureOnly) {
  Point old = point_at("c1aaaaa", 0, 0.02, 0, 0);
  old.cpu.reset();
  old.instructions.reset();
  const std::string text = export_as("bencher", stored({old}));
  expect_bencher_accepts(text);
  const json parsed = json::parse(text);
  EXPECT_EQ(parsed.begin()->size(), 1u);
  EXPECT_TRUE(parsed.begin()->contains("wall-ratio"));
}

// The JSON exports go to standard output by default: ASCII only, every other
// character as \uXXXX, so nothing in them acts on a terminal (a right-to-left
// override in a machine's description), and a JSON reader gets the text back.
TEST(Exports, TheJsonFormatsAreAsciiAndReadBackTheSameText) {
  Point p = point_at("c1aaaaa", 0, 0.019, 0.025, 0.0125);
  p.machine.cpu_model = "CPU \xE2\x80\xAE" "LIVE caf\xC3\xA9";  // U+202E, an e with its accent
  p.fingerprint = p.machine.fingerprint();
  const auto history = stored({p});
  for (const char* format : {"github-action-benchmark", "bencher"}) {
    const std::string text = export_as(format, history);
    for (const char c : text) EXPECT_LT(static_cast<unsigned char>(c), 0x80u) << format;
    EXPECT_NO_THROW(json::parse(text)) << format;
  }
  const std::string action_text = export_as("github-action-benchmark", history);
  EXPECT_NE(action_text.find("\\u202e"), std::string::npos);
  const json action = json::parse(action_text);
  EXPECT_NE(action[0]["extra"].get<std::string>().find(p.machine.cpu_model), std::string::npos);
}

// RFC 4180 rows of fields (CRLF between rows, quoted fields with doubled
// quotes).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row(1);
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
      row.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == ',') {
      row.emplace_back();
    } else if (!quoted && c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.push_back(row);
      row.assign(1, "");
      ++i;
    } else {
      row.back() += c;
    }
  }
  EXPECT_FALSE(quoted);
  EXPECT_EQ(row, std::vector<std::string>(1)) << "the last row ends with CRLF";
  return rows;
}

// Every text cell of the CSV (OWASP's CSV injection): a point whose every
// text is a spreadsheet formula exports no cell that a spreadsheet would
// run; only numbers (a negative figure) start with a sign.
TEST(CsvExport, NoCellIsASpreadsheetFormula) {
  const std::vector<std::string> formulas = {"=HYPERLINK(\"http://x\")", "+cmd|' /C calc'!A0", "-1+1", "@SUM(A1)",
                                             "\t=1", "\r=1"};
  std::vector<Point> points;
  for (const std::string& formula : formulas) {
    Point p = point_at("c1aaaaa", 0, -0.019, -0.02, -0.01);
    p.scenario = p.commit = p.measured_at = p.timing = p.heapline_version = p.fingerprint = formula;
    p.commit_range = CommitRange{formula, formula};
    p.machine = {formula, 2, formula, formula, formula, formula};
    points.push_back(p);
  }
  const auto rows = csv_rows(export_as("csv", points));
  ASSERT_EQ(rows.size(), formulas.size() + 1);
  for (std::size_t row = 1; row < rows.size(); ++row) {
    for (const std::string& cell : rows[row]) {
      if (cell.empty() || std::string_view("=+-@\t\r").find(cell.front()) == std::string_view::npos) continue;
      char* end = nullptr;
      std::strtod(cell.c_str(), &end);
      EXPECT_EQ(*end, '\0') << "row " << row << ": a formula cell: " << cell;
    }
  }
}

TEST(CsvExport, EveryFigureWithItsIntervalColumns) {
  Point with_comma = point_at("c2aaaaa", 1, 0.03, 0.04, 0.01, "resident-1t");
  with_comma.machine.cpu_model = "Some \"Fast\" CPU, 2 GHz";
  with_comma.library_report = {12.5, 300};
  Point old = point_at("c1aaaaa", 0, 0.019, 0, 0);
  old.cpu.reset();
  old.instructions.reset();
  const auto rows = csv_rows(export_as("csv", stored({old, with_comma})));
  ASSERT_EQ(rows.size(), 3u);
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < rows[0].size(); ++i) column[rows[0][i]] = i;
  for (const auto& row : rows) ASSERT_EQ(row.size(), rows[0].size());
  auto at = [&](std::size_t row, const char* name) {
    EXPECT_TRUE(column.count(name)) << name;
    return rows[row][column[name]];
  };
  auto number = [&](std::size_t row, const char* name) { return std::stod(at(row, name)); };
  EXPECT_NEAR(number(1, "wall_pct"), 1.9, 1e-9);
  EXPECT_NEAR(number(1, "wall_low_pct"), 1.5, 1e-9);
  EXPECT_NEAR(number(1, "wall_high_pct"), 2.4, 1e-9);
  EXPECT_EQ(at(1, "cpu_pct"), "");
  EXPECT_EQ(at(1, "instructions_pct"), "");
  EXPECT_NEAR(number(2, "cpu_pct"), 4, 1e-9);
  EXPECT_NEAR(number(2, "cpu_low_pct"), 3.7, 1e-9);
  EXPECT_NEAR(number(2, "cpu_high_pct"), 4.2, 1e-9);
  EXPECT_NEAR(number(2, "instructions_pct"), 1, 1e-9);
  EXPECT_EQ(at(2, "instructions_with"), "1010000");
  EXPECT_EQ(at(2, "instructions_without"), "1000000");
  EXPECT_NEAR(number(2, "publishes_per_1000_calls"), 12.5, 1e-9);
  EXPECT_EQ(at(2, "extra_peak_rss_kib"), "300");
  EXPECT_EQ(at(2, "scenario"), "resident-1t");
  EXPECT_EQ(at(2, "commit"), "c2aaaaa");
  EXPECT_EQ(at(2, "machine"), with_comma.machine.describe());
}

TEST(Exports, EveryFormatIsNamedOnceAndUnknownNamesAreRefused) {
  std::vector<std::string> names;
  for (const auto& format : export_formats()) names.push_back(format.name);
  EXPECT_EQ(names, (std::vector<std::string>{"csv", "github-action-benchmark", "bencher", "commits"}));
  EXPECT_THROW(exporter_named("xml"), std::invalid_argument);
  const auto history = stored({point_at("c1aaaaa", 0, 0.01, 0.01, 0.01), point_at("c2aaaaa", 1, 0.01, 0.01, 0.01),
                               point_at("c1aaaaa", 2, 0.01, 0.01, 0.01, "resident-1t")});
  EXPECT_EQ(export_as("commits", history), "c1aaaaa\nc2aaaaa\n");
}

}  // namespace
}  // namespace heapline::bench
