#include <sstream>

#include "heapline_bench/reports/escaping.h"
#include "heapline_bench/reports/points_export.h"

namespace heapline::bench {
std::string points_csv(const std::vector<Point>& points) {
  std::ostringstream out;
  out.precision(10);
  out << "measured_at,commit,range_first,scenario,overhead_pct,low_pct,high_pct,runs,timing,heapline_version,"
         "fingerprint,machine\r\n";
  for (const auto& p : points) {
    out << csv_field(p.measured_at) << ',' << csv_field(p.commit) << ','
        << csv_field(p.commit_range ? p.commit_range->first : "") << ',' << csv_field(p.scenario) << ','
        << p.overhead * 100 << ',' << p.interval.low * 100 << ',' << p.interval.high * 100 << ',' << p.runs << ','
        << csv_field(p.timing) << ',' << csv_field(p.heapline_version) << ',' << csv_field(p.fingerprint) << ','
        << csv_field(p.machine.describe()) << "\r\n";
  }
  return out.str();
}

}  // namespace heapline::bench
