// The CSV export: every point, one row each, every figure with its interval.
#include <cstdio>
#include <string>

#include "heapline_bench/reports/escaping.h"
#include "heapline_bench/reports/exporter.h"

namespace heapline::bench {
namespace {

std::string number(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

// Columns (RFC 4180, CRLF rows; figures in percent of the time or count
// without the library; an absent figure is an empty field):
// measured_at, commit, range_first, scenario,
// wall_pct, wall_low_pct, wall_high_pct, cpu_pct, cpu_low_pct, cpu_high_pct,
// instructions_pct, instructions_with, instructions_without (a count repeats
// exactly: the two counts instead of an interval),
// publishes_per_1000_calls, extra_peak_rss_kib, confidence, runs, scale,
// timing, heapline_version, fingerprint, machine.
class CsvExporter final : public Exporter {
 public:
  std::string serialize(const std::vector<Point>& points, const ExportRequest&) const override {
    std::string out =
        "measured_at,commit,range_first,scenario,wall_pct,wall_low_pct,wall_high_pct,cpu_pct,cpu_low_pct,"
        "cpu_high_pct,instructions_pct,instructions_with,instructions_without,publishes_per_1000_calls,"
        "extra_peak_rss_kib,confidence,runs,scale,timing,heapline_version,fingerprint,machine\r\n";
    for (const auto& p : points) {
      auto field = [&](const std::string& text) { out += text + ","; };
      field(csv_field(p.measured_at));
      field(csv_field(p.commit));
      field(csv_field(p.commit_range ? p.commit_range->first : ""));
      field(csv_field(p.scenario));
      field(number(p.overhead * 100));
      field(number(p.interval.low * 100));
      field(number(p.interval.high * 100));
      field(p.cpu ? number(p.cpu->overhead * 100) : "");
      field(p.cpu ? number(p.cpu->interval.low * 100) : "");
      field(p.cpu ? number(p.cpu->interval.high * 100) : "");
      field(p.instructions ? number(p.instructions->overhead * 100) : "");
      field(p.instructions ? std::to_string(p.instructions->with) : "");
      field(p.instructions ? std::to_string(p.instructions->without) : "");
      field(p.library_report.publishes_per_1000_calls ? number(*p.library_report.publishes_per_1000_calls) : "");
      field(p.library_report.extra_peak_rss_kib ? std::to_string(*p.library_report.extra_peak_rss_kib) : "");
      field(number(p.confidence));
      field(std::to_string(p.runs));
      field(number(p.scale));
      field(csv_field(p.timing));
      field(csv_field(p.heapline_version));
      field(csv_field(p.fingerprint));
      out += csv_field(p.machine.describe()) + "\r\n";
    }
    return out;
  }
};

}  // namespace

const Exporter& csv_exporter() {
  static const CsvExporter exporter;
  return exporter;
}

}  // namespace heapline::bench
