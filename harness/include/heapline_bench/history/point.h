// A point: the measured overhead of one scenario, with everything needed to
// trust it later (raw times, intervals, machine, commit, scale). The store
// keeps one point per line; this header is its schema.
//
// Three figures per point, each the overhead of the library on the same
// scenario: `wall` (the headline: median wall time with / without - 1, the
// user's definition), `cpu` (the same rule on user+sys CPU time of the same
// runs: on a machine with fewer cores than threads, the wall clock mostly
// measures the scheduler, CPU time still counts what heapline costs) and
// `instructions` (the scenario's reduced command under callgrind, with and
// without the library: repeats to a few parts per million). Schema 1 had the
// wall figure only; its cpu figure is computed from its raw runs on read.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heapline_bench/measurement/accuracy.h"
#include "heapline_bench/measurement/instructions.h"
#include "heapline_bench/measurement/machine.h"
#include "heapline_bench/measurement/run_figures.h"
#include "heapline_bench/measurement/statistics.h"
#include "heapline_bench/measurement/utc_time.h"

namespace heapline::bench {

struct Measurement;

inline constexpr int kPointSchema = 2;
inline constexpr const char* kDefaultScenario = "churn-4t";  // points older than scenarios
// The level of the points that do not state theirs (the oldest): a fact of
// those points, not the level of new ones (kConfidenceLevel).
inline constexpr double kConfidenceOfUnlabelledPoints = 0.95;

struct CommitRange {
  std::string first;  // the oldest commit the point stands for (exclusive base)
  std::string last;   // the measured commit
  bool operator==(const CommitRange&) const = default;
};

// What heapline's own report says about the with-runs, and what its
// bookkeeping costs in memory.
struct LibraryReport {
  std::optional<double> publishes_per_1000_calls;  // median over the with-runs
  std::optional<long> extra_peak_rss_kib;          // median peak RSS with - without
  std::optional<Accuracy> accuracy;                // absent: not measured (older points, --command)
  bool operator==(const LibraryReport&) const = default;
};

struct Point {
  int schema = kPointSchema;
  std::string scenario;
  std::string commit;                       // the measured commit; empty when unknown
  std::optional<CommitRange> commit_range;  // when skipped pushes are folded into this point
  std::string measured_at;                  // RFC 3339, UTC (utc_time.h)
  double overhead = 0;  // the wall figure, the headline
  Interval interval;
  double confidence = kConfidenceLevel;
  int runs = 0;
  double scale = 1.0;  // the --scale of the operation counts
  std::optional<RunFigure> cpu;                   // absent: no CPU times were recorded
  std::optional<InstructionFigure> instructions;  // absent: not counted (no valgrind, or older points)
  LibraryReport library_report;
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
  // The same point: every field equal (a duplicate, point_reader.h).
  bool operator==(const Point&) const = default;
};

// What a point's values may be: what one measurement can give. The one
// reader (point_reader.h) refuses any other value with the field's name,
// so every way into the store (suite, import) and out of it (validate,
// render, check, export) refuses the same points (docs/design.md, "The
// history store").
// An overhead is with / without - 1 of two positive figures: above -1; at
// most a million (a program a million times slower than without heapline).
inline constexpr double kMaxOverhead = 1e6;
// A run's time or a median, in seconds: above 0 (a CPU time: at least 0), at
// most 10^7 (116 days).
inline constexpr double kMaxSeconds = 1e7;
inline constexpr std::int64_t kMaxKib = std::int64_t{1} << 40;    // a resident set, in KiB (1 PiB)
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 60;  // a heap figure (heapline/figures.h's limit)
inline constexpr std::int64_t kMaxRuns = 1000000;
inline constexpr std::int64_t kMaxCores = 1 << 20;
inline constexpr double kMaxScale = 1000;  // --scale's limit
inline constexpr double kMaxPublishesPer1000Calls = 1e6;
// How far after this machine's clock a point's measured_at may be: the
// clocks of the machines that measure, a little apart. A point measured
// later than that would stay the newest of the history, the one every
// verdict judges, whatever is measured after it.
inline constexpr std::int64_t kMeasuredAtSkewSeconds = 3600;

// A commit as a point names it: its SHA, 7 to 64 lowercase hexadecimal
// digits (an abbreviated, a SHA-1 or a SHA-256 name); never a branch, a tag
// or a range.
inline constexpr const char* kCommitShaRule = "7 to 64 lowercase hexadecimal digits";
bool is_commit_sha(std::string_view text);

// A point from a fresh measurement: the machine is this one, the time now.
Point point_from_measurement(const Measurement& measurement, const std::string& library_label,
                             const std::string& command_text, double scale = 1.0);

nlohmann::ordered_json to_json(const Point& point);

// The point as one line of the store (no newline): to_json, with any byte
// that is not UTF-8 replaced by U+FFFD (a JSON writer must not fail on it).
std::string point_line(const Point& point);

// Oldest first by measured_at (the instant, utc_time.h), file order kept
// within the same instant: the store's order is not time's, since an import
// appends older points.
void sort_by_measured_at(std::vector<Point>& points);

// A point's "cpu" object (and a release comparison round's): the figure, its
// interval and the two medians, or null when absent.
nlohmann::ordered_json run_figure_json(const std::optional<RunFigure>& figure);

// The raw times of runs as a point's "raw" object holds them.
nlohmann::ordered_json raw_runs_to_json(const std::vector<RawRun>& runs);
// The fields a point shares with another that is the same point: scenario,
// commit, measured_at, wall figure and machine. Points with one key are
// compared whole (operator==, raw runs included): only equal points are the
// same point, which an import adds once and validate reports as stored twice.
std::string point_identity(const Point& point);

// The history's rule for points without a "timing" (docs/design.md, "The
// history store"): points of churn-4t measured before 0.4.0 (or of no known version)
// were timed by the benchmark itself; every other point times the command.
std::string default_timing(const std::string& scenario, const std::string& heapline_version);

}  // namespace heapline::bench
