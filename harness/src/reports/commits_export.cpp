#include <set>

#include "heapline_bench/reports/points_export.h"

namespace heapline::bench {

std::string points_commits(const std::vector<Point>& points) {
  std::string out;
  std::set<std::string> listed;
  for (auto point = points.rbegin(); point != points.rend(); ++point)
    if (!point->commit.empty() && listed.insert(point->commit).second) out += point->commit + "\n";
  return out;
}

}  // namespace heapline::bench
