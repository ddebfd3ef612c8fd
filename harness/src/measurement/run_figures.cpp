#include "heapline_bench/measurement/run_figures.h"

#include <cmath>

#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {

std::vector<RawRun> raw_runs(const std::vector<RunResult>& results) {
  std::vector<RawRun> raw;
  raw.reserve(results.size());
  for (const auto& r : results) raw.push_back({r.wall_seconds, r.user_seconds, r.system_seconds, r.max_rss_kib});
  return raw;
}

std::optional<RunFigure> cpu_figure(const std::vector<RawRun>& with, const std::vector<RawRun>& without) {
  std::vector<double> with_cpu, without_cpu;
  bool any = false;
  for (const auto& r : with) with_cpu.push_back(r.user_seconds + r.system_seconds);
  for (const auto& r : without) without_cpu.push_back(r.user_seconds + r.system_seconds);
  for (double v : with_cpu) any |= v > 0;
  if (with_cpu.empty() || without_cpu.empty() || !any) return std::nullopt;
  for (double v : without_cpu)
    if (!(v > 0)) return std::nullopt;  // a run without CPU time: nothing to divide by
  RunFigure figure;
  figure.median_with_seconds = median(with_cpu);
  figure.median_without_seconds = median(without_cpu);
  figure.overhead = overhead_ratio(with_cpu, without_cpu);
  figure.interval = bootstrap_overhead_interval(with_cpu, without_cpu);
  return figure;
}

std::optional<RunFigure> cpu_figure(const Measurement& measurement) {
  return cpu_figure(raw_runs(measurement.with_runs), raw_runs(measurement.without_runs));
}

std::optional<long> extra_peak_rss_kib(const std::vector<RawRun>& with, const std::vector<RawRun>& without) {
  std::vector<double> with_rss, without_rss;
  for (const auto& r : with) with_rss.push_back(static_cast<double>(r.max_rss_kib));
  for (const auto& r : without) without_rss.push_back(static_cast<double>(r.max_rss_kib));
  if (with_rss.empty() || without_rss.empty() || median(without_rss) <= 0) return std::nullopt;
  return std::lround(median(with_rss) - median(without_rss));
}

}  // namespace heapline::bench
