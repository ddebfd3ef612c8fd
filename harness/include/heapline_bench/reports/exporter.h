// `heapline-bench export`: the history in the formats other programs read.
// One interface, one file per format (csv_export.cpp,
// benchmark_action_export.cpp, bencher_export.cpp, commits_export.cpp),
// each written and tested against its consumer's own rules. A new format is
// its file (reports/*.cpp are all built) and its row in export_formats()'s
// table (exporter.cpp), which --format and --help read.
//
// The figures leave as ratios, with / without the library (1.019 for a
// 1.9% overhead): a dashboard's alert divides the current value by the
// previous one, and only a ratio keeps that quotient meaningful (a
// percentage can be zero or negative: -1.9% -> +2.7% divides to -1.42 and
// never alerts, while 0.1% -> 0.4% divides to 4 and always does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "heapline_bench/history/point.h"

namespace heapline::bench {

// What a format may be asked for besides the points.
struct ExportRequest {
  // The formats of one commit's figures: its points (a prefix selects, as
  // git's short SHAs do); empty: the newest point's commit.
  std::string commit;
};

class Exporter {
 public:
  virtual ~Exporter() = default;
  // The file's text, from every point of the store, oldest first
  // (sort_by_measured_at). Throws std::runtime_error when the store holds
  // nothing this format can export (its message says what is missing).
  virtual std::string serialize(const std::vector<Point>& points, const ExportRequest& request) const = 0;
};

struct ExportFormat {
  std::string name;         // what --format takes
  std::string description;  // one line for --help
  const Exporter& exporter;
};

// Every format, in the order --help lists them.
const std::vector<ExportFormat>& export_formats();
// The format named `name`; throws std::invalid_argument for another name.
const Exporter& exporter_named(std::string_view name);

// One figure of a point as a ratio with / without the library, and its
// interval (an instruction count repeats exactly: its bounds are its value).
struct ExportedFigure {
  const char* name;  // "wall", "cpu", "instructions"
  double ratio = 1;
  double low = 1;
  double high = 1;
  bool exact = false;  // counted, not timed: no interval
};
// The point's figures that it holds: wall always, cpu and instructions when
// measured.
std::vector<ExportedFigure> exported_figures(const Point& point);

// The points one commit's export is made of: those of request.commit, the
// newest of each scenario on each machine (a re-measured scenario is one
// benchmark, not two of one name). Throws std::runtime_error when there is
// none.
std::vector<const Point*> points_of_commit(const std::vector<Point>& points, const ExportRequest& request);

// A benchmark's name in the dashboards: "<scenario> (<fingerprint>)", so that
// no dashboard ever joins figures of different machines; displayable() (a
// store's points hold no control character, but a name is a key: it must
// never depend on how a JSON writer treats such bytes).
std::string benchmark_name(const Point& point);

}  // namespace heapline::bench
