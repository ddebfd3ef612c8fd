// The figures of a measurement, as numbers: the raw times of its runs and
// what is computed from them besides the wall figure (measurement.h): the
// CPU-time figure and the extra peak resident set. A point (history/point.h)
// keeps them; the release comparison (compare.h) computes them per round.
#pragma once

#include <optional>
#include <vector>

#include "heapline_bench/measurement/statistics.h"

namespace heapline::bench {

struct Measurement;
struct RunResult;

// One timed run as a point keeps it.
struct RawRun {
  double wall_seconds = 0;
  double user_seconds = 0;
  double system_seconds = 0;
  long max_rss_kib = 0;
  bool operator==(const RawRun&) const = default;
};

// A figure computed from the runs: the ratio of medians and its bootstrap
// interval.
struct RunFigure {
  double overhead = 0;
  Interval interval;
  double median_with_seconds = 0;
  double median_without_seconds = 0;
  bool operator==(const RunFigure&) const = default;
};

// The raw times of runs, as points (and the release comparison) keep them.
std::vector<RawRun> raw_runs(const std::vector<RunResult>& results);

// The cpu figure of raw runs (user + sys seconds), as a measurement computes
// it; absent when the runs hold no CPU times (the oldest stores).
std::optional<RunFigure> cpu_figure(const std::vector<RawRun>& with, const std::vector<RawRun>& without);
// The same of a measurement's runs (a point's, a compare round's, calibrate's).
std::optional<RunFigure> cpu_figure(const Measurement& measurement);

// The median peak RSS with the library minus without; absent without RSS.
std::optional<long> extra_peak_rss_kib(const std::vector<RawRun>& with, const std::vector<RawRun>& without);

}  // namespace heapline::bench
