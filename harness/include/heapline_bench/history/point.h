// A point: one measured overhead figure of one scenario, with everything
// needed to trust it later (raw times, interval, machine, commit). The store
// keeps one point per line; this header is its schema.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "heapline_bench/measurement/machine.h"
#include "heapline_bench/measurement/statistics.h"

namespace heapline::bench {

struct Measurement;
struct RunResult;

inline constexpr int kPointSchema = 1;
inline constexpr const char* kDefaultScenario = "churn-4t";  // points older than scenarios

struct RawRun {
  double wall_seconds = 0;
  double user_seconds = 0;
  double system_seconds = 0;
  long max_rss_kib = 0;
};

struct CommitRange {
  std::string first;  // the oldest commit the point stands for (exclusive base)
  std::string last;   // the measured commit
};

struct Point {
  int schema = kPointSchema;
  std::string scenario;
  std::string commit;                       // the measured commit; empty when unknown
  std::optional<CommitRange> commit_range;  // when skipped pushes are folded into this point
  std::string measured_at;                  // ISO 8601, UTC
  double overhead = 0;
  Interval interval;
  double confidence = 0.95;
  int runs = 0;
  double median_with_seconds = 0;
  double median_without_seconds = 0;
  std::vector<RawRun> with_runs;
  std::vector<RawRun> without_runs;
  std::string timing = "command";  // "command": whole process; "benchmark": self-timed (old points)
  std::string heapline_version;
  std::string library;  // what was preloaded; "none" for an A/A run
  std::string command;
  Machine machine;
  std::string fingerprint;  // machine.fingerprint() when measured
};

// A point from a fresh measurement: the machine is this one, the time now.
Point point_from_measurement(const Measurement& measurement, const std::string& library_label,
                             const std::string& command_text);

nlohmann::ordered_json to_json(const Point& point);

// The raw times of runs, as points (and the release comparison) keep them.
RawRun raw_run(const RunResult& result);
nlohmann::ordered_json raw_runs_to_json(const std::vector<RawRun>& runs);
// Throws std::runtime_error saying which field is missing or of the wrong
// type. Applies the history's rules: no scenario means churn-4t; no timing
// means "benchmark" (self-timed) for churn-4t points before 0.4.0.
Point point_from_json(const nlohmann::json& json);

std::string utc_now_iso8601();

// The history's rule for points without a "timing" (docs/design.md, "The
// history store"): points of churn-4t measured before 0.4.0 (or of no known version)
// were timed by the benchmark itself; every other point times the command.
std::string default_timing(const std::string& scenario, const std::string& heapline_version);

}  // namespace heapline::bench
