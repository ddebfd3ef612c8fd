#include "heapline_bench/reports/summary_export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "heapline_bench/reports/percent_format.h"

namespace heapline::bench {
namespace {

std::string seconds(double value) {
  char text[32];
  if (value < 1) std::snprintf(text, sizeof text, "%.1f ms", value * 1000);
  else std::snprintf(text, sizeof text, "%.3f s", value);
  return text;
}

std::pair<double, double> range_of(const std::vector<RunResult>& runs) {
  auto [lo, hi] = std::minmax_element(runs.begin(), runs.end(), [](const RunResult& a, const RunResult& b) {
    return a.wall_seconds < b.wall_seconds;
  });
  return {lo->wall_seconds, hi->wall_seconds};
}

}  // namespace

std::string format_summary(const Measurement& m, const Point& point) {
  std::ostringstream out;
  const bool aa = m.request.library.empty();
  out << point.scenario << (aa ? " (A/A: the same command on both sides)" : "") << "\n";
  out << "  overhead  " << format_overhead(m.overhead, m.interval) << "  ("
      << static_cast<int>(std::lround(m.bootstrap.confidence * 100)) << "% bootstrap interval, " << m.request.runs
      << " interleaved runs per side)\n";
  auto [with_lo, with_hi] = range_of(m.with_runs);
  auto [without_lo, without_hi] = range_of(m.without_runs);
  out << "  with      median " << seconds(m.median_with) << "  (range " << seconds(with_lo) << " .. "
      << seconds(with_hi) << ")\n";
  out << "  without   median " << seconds(m.median_without) << "  (range " << seconds(without_lo) << " .. "
      << seconds(without_hi) << ")\n";
  if (point.cpu)
    out << "  cpu       " << format_overhead(point.cpu->overhead, point.cpu->interval) << "  (user+sys CPU time, median "
        << seconds(point.cpu->median_with_seconds) << " with, " << seconds(point.cpu->median_without_seconds)
        << " without)\n";
  if (point.instructions)
    out << "  instructions " << format_instructions(point.instructions->overhead) << "  (callgrind, reduced command: "
        << point.instructions->with << " with, " << point.instructions->without << " without)\n";
  if (point.library_report.publishes_per_1000_calls) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.2f", *point.library_report.publishes_per_1000_calls);
    out << "  heapline  " << rate << " publishes per 1000 calls";
    if (point.library_report.extra_peak_rss_kib)
      out << ", " << (*point.library_report.extra_peak_rss_kib >= 0 ? "+" : "") << *point.library_report.extra_peak_rss_kib
          << " KiB peak RSS";
    out << "\n";
  }
  out << "  library   " << point.library << "\n";
  out << "  command   " << point.command << "\n";
  out << "  machine   " << point.machine.describe() << "\n";
  return out.str();
}

}  // namespace heapline::bench
