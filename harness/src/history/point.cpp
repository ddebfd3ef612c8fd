#include "heapline_bench/history/point.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>


#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json raw_runs_to_json(const std::vector<RawRun>& runs) {
  ordered_json out = ordered_json::array();
  for (const auto& r : runs)
    out.push_back({{"wall_s", r.wall_seconds}, {"user_s", r.user_seconds}, {"sys_s", r.system_seconds},
                   {"max_rss_kib", r.max_rss_kib}});
  return out;
}

namespace {
// A time a point records, or null: 0 is "not recorded" (the oldest points).
// Any other value is written as it is, for the reader to judge.
ordered_json recorded_seconds(double seconds) { return seconds != 0 ? ordered_json(seconds) : ordered_json(nullptr); }
}  // namespace

ordered_json run_figure_json(const std::optional<RunFigure>& figure) {
  if (!figure) return nullptr;
  return {{"overhead", figure->overhead},
          {"interval", {figure->interval.low, figure->interval.high}},
          {"median_with_s", recorded_seconds(figure->median_with_seconds)},
          {"median_without_s", recorded_seconds(figure->median_without_seconds)}};
}

namespace {

// "0.3.2" < "0.4.0"; anything unparsable counts as old.
bool version_before(const std::string& version, int major, int minor) {
  int got_major = 0, got_minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &got_major, &got_minor) != 2) return true;
  return got_major < major || (got_major == major && got_minor < minor);
}

}  // namespace

bool is_commit_sha(std::string_view text) {
  if (text.size() < 7 || text.size() > 64) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string default_timing(const std::string& scenario, const std::string& heapline_version) {
  return scenario == kDefaultScenario && version_before(heapline_version, 0, 4) ? "benchmark" : "command";
}

std::string point_identity(const Point& p) {
  char overhead[40];
  std::snprintf(overhead, sizeof overhead, "%.17g", p.overhead);
  // Fields joined by a control character, which no text field of a point
  // holds (point_reader.h): two different points never join alike.
  constexpr char kSeparator = '\x1f';
  return p.scenario + kSeparator + p.commit + kSeparator + p.measured_at + kSeparator + overhead + kSeparator +
         p.fingerprint;
}

Point point_from_measurement(const Measurement& m, const std::string& library_label,
                             const std::string& command_text, double scale) {
  Point point;
  point.scenario = m.request.scenario;
  point.measured_at = utc_now_rfc3339();
  point.overhead = m.overhead;
  point.interval = m.interval;
  point.confidence = m.bootstrap.confidence;
  point.runs = m.request.runs;
  point.median_with_seconds = m.median_with;
  point.median_without_seconds = m.median_without;
  point.with_runs = raw_runs(m.with_runs);
  point.without_runs = raw_runs(m.without_runs);
  point.scale = scale;
  point.cpu = cpu_figure(point.with_runs, point.without_runs);
  point.library_report.extra_peak_rss_kib = extra_peak_rss_kib(point.with_runs, point.without_runs);
  if (!m.with_reports.empty()) {
    std::vector<double> rates;
    for (const auto& r : m.with_reports)
      if (r.calls > 0) rates.push_back(1000.0 * static_cast<double>(r.publishes) / static_cast<double>(r.calls));
    if (!rates.empty()) point.library_report.publishes_per_1000_calls = median(rates);
  }
  point.heapline_version = HEAPLINE_VERSION;
  point.library = library_label;
  point.command = command_text;
  point.machine = this_machine();
  point.fingerprint = point.machine.fingerprint();
  return point;
}

ordered_json to_json(const Point& p) {
  ordered_json out = {
      {"schema", p.schema},
      {"scenario", p.scenario},
      {"commit", p.commit},
      {"commit_range", p.commit_range
                           ? ordered_json{{"first", p.commit_range->first}, {"last", p.commit_range->last}}
                           : ordered_json(nullptr)},
      {"measured_at", p.measured_at},
      {"overhead", p.overhead},
      {"interval", {p.interval.low, p.interval.high}},
      {"confidence", p.confidence},
      // 0 in a point is "not recorded" (the oldest points): null in the
      // line, since a 0 written would be a run count or a time no
      // measurement gives, which the reader refuses.
      {"runs", p.runs != 0 ? ordered_json(p.runs) : ordered_json(nullptr)},
      {"scale", p.scale},
      {"median_with_s", recorded_seconds(p.median_with_seconds)},
      {"median_without_s", recorded_seconds(p.median_without_seconds)},
      {"cpu", run_figure_json(p.cpu)},
      {"instructions", p.instructions ? ordered_json{{"overhead", p.instructions->overhead},
                                                     {"with", p.instructions->with},
                                                     {"without", p.instructions->without},
                                                     {"command", p.instructions->command}}
                                      : ordered_json(nullptr)},
      {"library_report",
       {{"publishes_per_1000_calls", p.library_report.publishes_per_1000_calls
                                         ? ordered_json(*p.library_report.publishes_per_1000_calls)
                                         : ordered_json(nullptr)},
        {"extra_peak_rss_kib", p.library_report.extra_peak_rss_kib
                                   ? ordered_json(*p.library_report.extra_peak_rss_kib)
                                   : ordered_json(nullptr)},
        {"accuracy", p.library_report.accuracy
                         ? ordered_json{{"batched_peak_bytes", p.library_report.accuracy->batched_peak_bytes},
                                        {"exact_peak_bytes", p.library_report.accuracy->exact_peak_bytes},
                                        {"bound_bytes", p.library_report.accuracy->bound_bytes}}
                         : ordered_json(nullptr)}}},
      {"timing", p.timing},
      {"heapline_version", p.heapline_version},
      {"library", p.library},
      {"command", p.command},
      {"machine",
       {{"fingerprint", p.fingerprint},
        {"cpu_model", p.machine.cpu_model},
        {"cores", p.machine.cores},
        {"kernel", p.machine.kernel},
        {"glibc", p.machine.glibc},
        {"compiler", p.machine.compiler},
        {"runner_image", p.machine.runner_image}}},
      // Raw times come last: readers that need only the figures (the page)
      // stop before them.
      {"raw", {{"with", raw_runs_to_json(p.with_runs)}, {"without", raw_runs_to_json(p.without_runs)}}},
  };
  return out;
}

std::string point_line(const Point& point) {
  return to_json(point).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void sort_by_measured_at(std::vector<Point>& points) {
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return utc_time_nanoseconds(a.measured_at).value_or(0) < utc_time_nanoseconds(b.measured_at).value_or(0);
  });
}

}  // namespace heapline::bench
