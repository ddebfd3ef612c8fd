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
};

// What heapline's own report says about the with-runs, and what its
// bookkeeping costs in memory.
struct LibraryReport {
  std::optional<double> publishes_per_1000_calls;  // median over the with-runs
  std::optional<long> extra_peak_rss_kib;          // median peak RSS with - without
  std::optional<Accuracy> accuracy;                // absent: not measured (older points, --command)
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
};

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
// Reads a point with the one schema reader (point_reader.h). Throws
// std::runtime_error saying which field is missing or of the wrong type.
Point point_from_json(const nlohmann::json& json);

// Two points are the same measurement when scenario, commit, measured_at,
// wall figure and machine agree: an import adds a point once, and validate
// reports a point stored twice.
std::string point_identity(const Point& point);

// The history's rule for points without a "timing" (docs/design.md, "The
// history store"): points of churn-4t measured before 0.4.0 (or of no known version)
// were timed by the benchmark itself; every other point times the command.
std::string default_timing(const std::string& scenario, const std::string& heapline_version);

}  // namespace heapline::bench
