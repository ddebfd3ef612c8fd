#include "heapline_bench/history/point.h"
#include "heapline_bench/history/history.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace heapline::bench
