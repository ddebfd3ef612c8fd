// `heapline-bench export`: the history in the formats other tools read, one
// file each (csv_export.cpp, benchmark_action_export.cpp,
// commits_export.cpp). Each takes the points oldest first by measured_at
// (sort_by_measured_at).
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/history/point.h"

namespace heapline::bench {

// Every point, one CSV row each (RFC 4180: fields with a comma, a quote or a
// line break are quoted, quotes doubled), oldest first, figures in percent.
// Columns: measured_at, commit, range_first, scenario, overhead_pct, low_pct,
// high_pct, runs, timing, heapline_version, fingerprint, machine.
std::string points_csv(const std::vector<Point>& points);

// github-action-benchmark's "customSmallerIsBetter" input: a JSON array of
// {name, unit, value, range, extra}, one entry per point of `commit` (empty:
// the commit of the newest point), named "<scenario> (<fingerprint>)" so that
// a dashboard never joins figures of different machines. Throws
// std::runtime_error when the store has no point of that commit.
std::string points_benchmark_action_json(const std::vector<Point>& points, const std::string& commit);

// The commits the points measured, newest first, each once, one a line
// (points without a commit have none): what the CI scripts ask of the store
// (tools/ci/run_suite.sh: the newest measured ancestor), read by the one
// reader instead of a copy of it.
std::string points_commits(const std::vector<Point>& points);

}  // namespace heapline::bench
