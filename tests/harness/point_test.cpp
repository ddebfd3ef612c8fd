#include "heapline_bench/history/point.h"
#include "heapline_bench/history/history.h"
#include "heapline_bench/history/point_reader.h"
#include "heapline_bench/history/store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

namespace heapline::bench {
namespace {

Point sample_point() {
  Point p;
  p.scenario = "resident-4t";
  p.commit = "0123456789abcdef0123456789abcdef01234567";
  p.commit_range = CommitRange{"aaaaaaa", "0123456789abcdef0123456789abcdef01234567"};
  p.measured_at = "2026-11-30T01:02:03Z";
  p.overhead = 0.031;
  p.interval = {0.024, 0.039};
  p.confidence = 0.95;
  p.runs = 2;
  p.median_with_seconds = 1.031;
  p.median_without_seconds = 1.0;
  p.with_runs = {{1.03, 2.0, 0.1, 5000}, {1.032, 2.1, 0.11, 5001}};
  p.without_runs = {{1.0, 1.9, 0.1, 4900}, {1.0, 1.95, 0.09, 4901}};
  p.timing = "command";
  p.heapline_version = "0.1.0";
  p.library = "/x/libheapline.so";
  p.command = "malloc_churn 4 10000000 16 4096 512";
  p.machine = {"Some CPU", 2, "6.1.0", "2.36", "GNU 12.2.0", "ubuntu24 20261101"};
  p.fingerprint = p.machine.fingerprint();
  p.scale = 0.25;
  p.cpu = RunFigure{0.02, {0.01, 0.03}, 2.05, 2.0};
  p.instructions = InstructionFigure{0.125, 1125, 1000, "malloc_churn 4 100000 16 4096 64"};
  p.library_report = {5.25, 128, Accuracy{67'577'232, 67'614'768, 131'070}};
  return p;
}

TEST(Point, RoundTripsEveryField) {
  const Point original = sample_point();
  const Point back = point_from_json(nlohmann::json::parse(to_json(original).dump()));
  EXPECT_EQ(nlohmann::json(to_json(back)), nlohmann::json(to_json(original)));
  EXPECT_EQ(back.commit_range->first, "aaaaaaa");
  EXPECT_EQ(back.with_runs[1].max_rss_kib, 5001);
  EXPECT_DOUBLE_EQ(back.interval.high, 0.039);
  EXPECT_EQ(back.fingerprint, original.machine.fingerprint());
  EXPECT_DOUBLE_EQ(back.scale, 0.25);
  EXPECT_DOUBLE_EQ(back.cpu->interval.high, 0.03);
  EXPECT_EQ(back.instructions->with, 1125u);
  EXPECT_EQ(back.instructions->command, "malloc_churn 4 100000 16 4096 64");
  const HistoryEntry entry = history_entry(back, 1);
  EXPECT_EQ(entry.command, "malloc_churn 4 10000000 16 4096 512");
  EXPECT_EQ(entry.instructions_command, "malloc_churn 4 100000 16 4096 64");
  EXPECT_EQ(*back.library_report.extra_peak_rss_kib, 128);
  EXPECT_EQ(back.library_report.accuracy->exact_peak_bytes, 67'614'768);
  EXPECT_EQ(entry.accuracy->bound_bytes, 131'070);
}

// The library's contract, |batched peak - exact peak| <= stated bound, on
// either side of the exact peak; a point without the figure has none.
TEST(Point, AccuracyIsWithinTheBoundOnEitherSide) {
  EXPECT_TRUE((Accuracy{1000, 1100, 100}).within_bound());
  EXPECT_TRUE((Accuracy{1100, 1000, 100}).within_bound());
  EXPECT_FALSE((Accuracy{1000, 1101, 100}).within_bound());
  EXPECT_FALSE((Accuracy{1101, 1000, 100}).within_bound());
  EXPECT_EQ((Accuracy{1000, 1101, 100}).error_bytes(), -101);
  const Point old = point_from_json(nlohmann::json::parse(R"({"measured_at": "2026-03-01T12:00:00Z", "overhead": 1,
      "library_report": {"publishes_per_1000_calls": 1.5}})"));
  EXPECT_FALSE(old.library_report.accuracy);
  EXPECT_THROW(point_from_json(nlohmann::json::parse(R"({"measured_at": "2026-03-01T12:00:00Z", "overhead": 1,
      "library_report": {"accuracy": {"batched_peak_bytes": 1, "exact_peak_bytes": 2}}})")),
               std::runtime_error);
}

TEST(Point, CpuFigureIsTheRatioOfMedianUserPlusSystemTimes) {
  const std::vector<RawRun> with = {{9, 1.0, 0.2, 0}, {9, 1.1, 0.2, 0}, {9, 1.2, 0.2, 0}};
  const std::vector<RawRun> without = {{1, 0.9, 0.1, 0}, {1, 1.0, 0.1, 0}, {1, 1.1, 0.1, 0}};
  const auto cpu = cpu_figure(with, without);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_NEAR(cpu->overhead, 1.3 / 1.1 - 1, 1e-12) << "wall times play no part";
  EXPECT_LE(cpu->interval.low, cpu->overhead);
  EXPECT_GE(cpu->interval.high, cpu->overhead);
  EXPECT_FALSE(cpu_figure({{1, 0, 0, 0}}, {{1, 0, 0, 0}}).has_value()) << "no CPU times, no figure";
  EXPECT_EQ(extra_peak_rss_kib({{1, 0, 0, 300}}, {{1, 0, 0, 100}}), 200);
}

TEST(Point, PointWithoutScenarioBelongsToChurn4t) {
  auto p = point_from_json(nlohmann::json::parse(R"({"measured_at": "2025-01-01T00:00:00Z", "overhead": 4.09})"));
  EXPECT_EQ(p.scenario, "churn-4t");
  EXPECT_EQ(p.timing, "benchmark") << "points without a version predate 0.4.0: self-timed";
}

TEST(Point, OnlyChurn4tPointsBefore040WereSelfTimed) {
  // The history's rule names churn-4t: another scenario's old point timed
  // the whole command.
  auto other = point_from_json(nlohmann::json::parse(
      R"({"measured_at": "2025-01-01T00:00:00Z", "overhead": 0.2, "scenario": "resident-4t", "heapline_version": "0.3.0"})"));
  EXPECT_EQ(other.timing, "command");
  auto unversioned = point_from_json(nlohmann::json::parse(
      R"({"measured_at": "2025-01-01T00:00:00Z", "overhead": 0.2, "scenario": "churn-1t"})"));
  EXPECT_EQ(unversioned.timing, "command");
  auto churn = point_from_json(nlohmann::json::parse(
      R"({"measured_at": "2025-01-01T00:00:00Z", "overhead": 3.63, "scenario": "churn-4t", "heapline_version": "0.3.0"})"));
  EXPECT_EQ(churn.timing, "benchmark");
  EXPECT_EQ(default_timing("large-4t", "0.2.0"), "command");
  EXPECT_EQ(default_timing("churn-4t", "0.4.0"), "command");
  EXPECT_EQ(default_timing("churn-4t", ""), "benchmark");
}

TEST(Point, TimingDefaultsByVersion) {
  auto old = point_from_json(nlohmann::json::parse(
      R"({"measured_at": "2025-01-01T00:00:00Z", "overhead": 3.63, "heapline_version": "0.3.0"})"));
  auto recent = point_from_json(nlohmann::json::parse(
      R"({"measured_at": "2025-06-01T00:00:00Z", "overhead": 1.68, "heapline_version": "0.4.0"})"));
  EXPECT_EQ(old.timing, "benchmark");
  EXPECT_EQ(recent.timing, "command");
}

TEST(Point, RejectsBadFields) {
  using nlohmann::json;
  EXPECT_THROW(point_from_json(json::array()), std::runtime_error);
  EXPECT_THROW(point_from_json(json::parse(R"({"overhead": 1})")), std::runtime_error);  // no time
  EXPECT_THROW(point_from_json(json::parse(R"({"measured_at": "x", "overhead": "big"})")), std::runtime_error);
  EXPECT_THROW(point_from_json(json::parse(R"({"measured_at": "x", "overhead": 1, "timing": "guess"})")),
               std::runtime_error);
  EXPECT_THROW(point_from_json(json::parse(R"({"schema": 99, "measured_at": "x", "overhead": 1})")),
               std::runtime_error);
}

TEST(Machine, FingerprintChangesWithAnyField) {
  Machine a{"cpu", 2, "6.1", "2.36", "gcc", ""};
  Machine b = a;
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  b.kernel = "6.2";
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  b = a;
  b.runner_image = "ubuntu24 1";
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  EXPECT_EQ(a.fingerprint().size(), 12u);
}

// A machine's fingerprint names its series in every store already written
// (bench-data, a user's history): the same machine must get the same
// fingerprint from every version of heapline-bench, or its next point
// starts a series of its own. Values computed by hand (FNV-1a, 64 bits, a
// 0x1f byte after each field, the first 12 hex digits).
TEST(Machine, FingerprintIsTheSameFromEveryVersion) {
  EXPECT_EQ((Machine{"cpu", 2, "6.1", "2.36", "gcc", ""}.fingerprint()), "000f4c4f4796");
  EXPECT_EQ((Machine{"Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", 2, "6.1.0-18-cloud-amd64", "2.36", "gcc 12.2.0", ""}
                 .fingerprint()),
            "6fc50c33ff62");
}

// --- the store takes only points that can be true ----------------------------

// Every value no measurement can give, each refused by every way into the
// store and out of it, with one line that names the line and the field: the
// reader (import's files, export's store), validate's scan, the history
// (render, check), the suite's append and import's append. Fails when any
// rule of the reader is dropped (each case is one rule).
TEST(PointRules, EveryWayRefusesAPointNoMeasurementCanGive) {
  struct Case {
    const char* what;
    std::function<void(Point&)> hostile;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"an overhead of -5", [](Point& p) { p.overhead = -5, p.interval = {-6, -4}; },
       "field \"overhead\" must be above -1"},
      {"an overhead of exactly -1", [](Point& p) { p.overhead = -1, p.interval = {-1, -1}; },
       "field \"overhead\" must be above -1"},
      {"an overhead of 1e300", [](Point& p) { p.overhead = 1e300, p.interval = {1e300, 1e300}; },
       "field \"overhead\" must be at most 1e+06"},
      {"an overhead outside its interval", [](Point& p) { p.overhead = 0.5; },
       "field \"overhead\" 0.5 is outside its own interval [0.024, 0.039]"},
      {"an inverted interval", [](Point& p) { p.interval = {0.09, 0.01}; },
       "field \"interval\" is inverted"},
      {"an interval bound of -3", [](Point& p) { p.interval = {-3, 0.09}; },
       "field \"interval[0]\" must be above -1"},
      {"a cpu overhead of -2", [](Point& p) { p.cpu->overhead = -2, p.cpu->interval = {-3, -1.5}; },
       "field \"cpu.overhead\" must be above -1"},
      {"a cpu overhead outside its interval", [](Point& p) { p.cpu->overhead = 0.2; },
       "field \"cpu.overhead\" 0.2 is outside its own interval"},
      {"an instruction overhead of -1.5", [](Point& p) { p.instructions->overhead = -1.5; },
       "field \"instructions.overhead\" must be above -1"},
      {"a negative median", [](Point& p) { p.median_with_seconds = -1; },
       "field \"median_with_s\" must be above 0 seconds, got -1"},
      {"a median of 1e300 s", [](Point& p) { p.median_without_seconds = 1e300; },
       "field \"median_without_s\" must be at most 1e+07 seconds"},
      {"a negative cpu median", [](Point& p) { p.cpu->median_without_seconds = -2; },
       "field \"cpu.median_without_s\" must be above 0 seconds"},
      {"a negative raw time", [](Point& p) { p.with_runs[1].wall_seconds = -0.5; },
       "field \"raw.with[1].wall_s\" must be above 0 seconds"},
      {"a negative CPU time", [](Point& p) { p.without_runs[1].user_seconds = -1; },
       "field \"raw.without[1].user_s\" must be at least 0 seconds"},
      {"a negative peak resident set", [](Point& p) { p.with_runs[0].max_rss_kib = -10; },
       "field \"raw.with[0].max_rss_kib\" must be from 0"},
      {"runs that the raw runs do not match", [](Point& p) { p.runs = 5; },
       "field \"runs\" is 5 but raw holds 2 run(s) with the library and 2 without"},
      {"raw runs that runs does not count", [](Point& p) { p.without_runs.pop_back(); },
       "field \"runs\" is 2 but raw holds 2 run(s) with the library and 1 without"},
      {"negative cores", [](Point& p) { p.machine.cores = -4, p.fingerprint = p.machine.fingerprint(); },
       "field \"machine.cores\" must be from 0"},
      {"a negative bound", [](Point& p) { p.library_report.accuracy->bound_bytes = -64; },
       "field \"library_report.accuracy.bound_bytes\" must be from 0"},
      {"a negative rate of publishes", [](Point& p) { p.library_report.publishes_per_1000_calls = -1; },
       "field \"library_report.publishes_per_1000_calls\" must be from 0"},
      {"an empty fingerprint", [](Point& p) { p.fingerprint = ""; }, "field \"machine.fingerprint\" is empty"},
      {"a commit that is no SHA", [](Point& p) { p.commit = "zz", p.commit_range.reset(); },
       "field \"commit\" must be a commit's SHA (7 to 64 lowercase hexadecimal digits), got \"zz\""},
      {"a branch for a commit", [](Point& p) { p.commit = "main", p.commit_range.reset(); },
       "field \"commit\" must be a commit's SHA"},
      {"a range from no SHA", [](Point& p) { p.commit_range->first = "zz"; },
       "field \"commit_range.first\" must be a commit's SHA"},
      {"a range that ends elsewhere", [](Point& p) { p.commit_range->last = "89abcdef0123456789abcdef0123456789abcdef"; },
       "field \"commit_range.last\" must be the point's commit"},
      {"a scenario that is a path", [](Point& p) { p.scenario = "../../x"; },
       "field \"scenario\" must be a scenario's name"},
      {"an empty scenario", [](Point& p) { p.scenario = ""; }, "field \"scenario\" must be a scenario's name"},
      {"a point measured in 2099", [](Point& p) { p.measured_at = "2099-01-01T00:00:00Z"; },
       "field \"measured_at\" is in the future"},
      {"a scale of 1e300", [](Point& p) { p.scale = 1e300; }, "field \"scale\" must be above 0 and at most 1000"},
  };
  const std::string dir = ::testing::TempDir() + "/point-rules";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string good_line = point_line(sample_point());
  ASSERT_NO_THROW(parse_point_line(good_line));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Point hostile = sample_point();
    c.hostile(hostile);
    const std::string line = point_line(hostile);
    // The readers, on a store of a good point then this one: line 2 refused.
    const std::string path = dir + "/points.jsonl";
    std::ofstream(path, std::ios::trunc | std::ios::binary) << good_line << "\n" << line << "\n";
    std::vector<std::pair<std::string, std::vector<StoreProblem>>> refusals;
    for (const RawTimes raw : {RawTimes::read, RawTimes::skip}) {
      refusals.emplace_back("import's and export's reader", read_points_file(path, raw).problems);
    }
    std::vector<StoreProblem> validated;
    scan_points_file(path, RawTimes::read, [](Point&&, int) {}, validated);
    refusals.emplace_back("validate", validated);
    refusals.emplace_back("render and check", read_history(path).problems);
    for (const auto& [way, problems] : refusals) {
      ASSERT_EQ(problems.size(), 1u) << way << " took: " << line;
      EXPECT_EQ(problems[0].line, 2) << way;
      EXPECT_EQ(problems[0].reason.find(c.reason), 0u) << way << ": " << problems[0].describe();
      EXPECT_EQ(problems[0].reason.find('\n'), std::string::npos) << way;
    }
    // The suite's append and import's: refused, and the store as it was.
    const Store store(dir + "/store", [](const std::string&) {});
    try {
      store.append(hostile);
      ADD_FAILURE() << "the suite's append took it";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos) << e.what();
    }
    EXPECT_THROW(store.append_new({sample_point(), hostile}), std::runtime_error);
    EXPECT_TRUE(store.read().points.empty());
  }
}

// The hour of slack for clocks a little apart: a point measured half an
// hour after this machine's clock is taken, one of an hour and a half is
// from the future, refused.
TEST(PointRules, AnHourOfSlackForTheMeasuringMachinesClock) {
  auto rfc3339_after_now = [](std::chrono::seconds ahead) {
    const std::time_t when = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + ahead);
    std::tm utc{};
    gmtime_r(&when, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(text);
  };
  auto line = [](const std::string& measured_at) {
    return nlohmann::json::parse(R"({"overhead": 0.05, "measured_at": ")" + measured_at + "\"}");
  };
  EXPECT_NO_THROW(point_from_json(line(rfc3339_after_now(std::chrono::minutes(30)))));
  try {
    point_from_json(line(rfc3339_after_now(std::chrono::minutes(90))));
    ADD_FAILURE() << "a point an hour and a half ahead was taken";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("is in the future"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("60 minutes after this machine's clock"), std::string::npos)
        << error.what();
  }
}

// "Not recorded" is null (or absent) for `runs` and each median, as the
// writer puts it: an explicit 0 is a point no measurement gives, refused;
// null reads as 0, not recorded.
TEST(PointRules, AnExplicitZeroForRunsOrAMedianIsRefused) {
  const std::string head = R"({"measured_at": "2026-03-01T12:00:00Z", "overhead": 0.05, )";
  for (const char* field : {"runs", "median_with_s", "median_without_s"}) {
    SCOPED_TRACE(field);
    try {
      point_from_json(nlohmann::json::parse(head + "\"" + field + "\": 0}"));
      ADD_FAILURE() << "an explicit 0 was taken";
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find(std::string("\"") + field + "\""), std::string::npos) << error.what();
    }
    const Point unrecorded = point_from_json(nlohmann::json::parse(head + "\"" + field + "\": null}"));
    EXPECT_EQ(unrecorded.runs, 0);
    EXPECT_EQ(unrecorded.median_with_seconds, 0);
    EXPECT_EQ(unrecorded.median_without_seconds, 0);
  }
  EXPECT_EQ(point_from_json(nlohmann::json::parse(head + R"("runs": 1})")).runs, 1);
}

// Points that share scenario, commit, time, figure and machine but differ in
// anything else (their interval, a median, a raw run) are points of their
// own, for every reader; only an equal one is the same point again.
TEST(PointRules, OnlyAnEqualPointIsTheSamePoint) {
  const Point first = sample_point();
  std::vector<Point> others(4, first);
  others[0].interval = {0.02, 0.08};
  others[1].median_with_seconds = 1.051;
  others[2].with_runs[1].wall_seconds = 1.07;
  others[3].library = "another/libheapline.so";
  std::string text = point_line(first) + "\n";
  for (const Point& other : others) text += point_line(other) + "\n";
  text += point_line(first) + "\n";  // the first again
  for (const RawTimes raw : {RawTimes::read, RawTimes::skip}) {
    const PointsRead read = read_points(text, "store", raw);
    EXPECT_EQ(read.points.size(), 5u);
    ASSERT_EQ(read.problems.size(), 1u);
    EXPECT_EQ(read.problems[0].describe(), "store:6: the same point as line 1 (a duplicate)");
  }
  const std::string dir = ::testing::TempDir() + "/point-equal";
  std::filesystem::remove_all(dir);
  const Store store(dir, [](const std::string&) {});
  EXPECT_EQ(store.append_new({first, others[0]}), 2u);
  EXPECT_EQ(store.append_new({others[0], others[1], others[2], others[3], first}), 3u);
  EXPECT_EQ(store.read().points.size(), 5u);
}

}  // namespace
}  // namespace heapline::bench
