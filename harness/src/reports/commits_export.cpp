// The commits the points measured, newest first, each once, one a line
// (points without a commit have none): what the CI scripts ask of the store
// (tools/ci/run_suite.sh: the newest measured ancestor), read by the one
// reader instead of a copy of it.
#include <set>

#include "heapline_bench/reports/exporter.h"

namespace heapline::bench {
namespace {

class CommitsExporter final : public Exporter {
 public:
  std::string serialize(const std::vector<Point>& points, const ExportRequest&) const override {
    std::string out;
    std::set<std::string> listed;
    for (auto point = points.rbegin(); point != points.rend(); ++point)
      if (!point->commit.empty() && listed.insert(point->commit).second) out += point->commit + "\n";
    return out;
  }
};

}  // namespace

const Exporter& commits_exporter() {
  static const CommitsExporter exporter;
  return exporter;
}

}  // namespace heapline::bench
