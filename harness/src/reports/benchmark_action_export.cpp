#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "heapline_bench/reports/points_export.h"

namespace heapline::bench {

std::string points_benchmark_action_json(const std::vector<Point>& points, const std::string& commit) {
  std::string wanted = commit;
  if (wanted.empty() && !points.empty()) wanted = points.back().commit;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& p : points) {
    // A prefix selects too, as git's short SHAs do.
    if (wanted.empty() || p.commit.compare(0, wanted.size(), wanted) != 0) continue;
    char range[64];
    std::snprintf(range, sizeof range, "95%% CI [%.1f, %.1f]", p.interval.low * 100, p.interval.high * 100);
    out.push_back({{"name", p.scenario + " (" + p.fingerprint + ")"},
                   {"unit", "% overhead"},
                   {"value", p.overhead * 100},
                   {"range", range},
                   {"extra", "commit " + p.commit + ", measured " + p.measured_at + ", " + std::to_string(p.runs) +
                                 " runs, timing " + p.timing + ", heapline " + p.heapline_version + ", on " +
                                 p.machine.describe()}});
  }
  if (out.empty())
    throw std::runtime_error(wanted.empty() ? "the store has no point with a commit to export"
                                            : "the store has no point of commit " + wanted);
  // Text that is not UTF-8 becomes U+FFFD: a JSON writer must not fail on it.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace heapline::bench
