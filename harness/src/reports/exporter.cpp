#include "heapline_bench/reports/exporter.h"

#include "heapline_bench/reports/escaping.h"

#include <map>
#include <stdexcept>
#include <utility>

namespace heapline::bench {

const Exporter& csv_exporter();
const Exporter& benchmark_action_exporter();
const Exporter& bencher_exporter();
const Exporter& commits_exporter();

const std::vector<ExportFormat>& export_formats() {
  static const std::vector<ExportFormat> formats = {
      {"csv", "every point, every figure with its interval (RFC 4180)", csv_exporter()},
      {"github-action-benchmark", "one commit's figures for customSmallerIsBetter", benchmark_action_exporter()},
      {"bencher", "one commit's figures in Bencher Metric Format (BMF)", bencher_exporter()},
      {"commits", "the measured commits, newest first", commits_exporter()},
  };
  return formats;
}

const Exporter& exporter_named(std::string_view name) {
  for (const auto& format : export_formats())
    if (format.name == name) return format.exporter;
  throw std::invalid_argument("no export format '" + std::string(name) + "'");
}

std::vector<ExportedFigure> exported_figures(const Point& point) {
  std::vector<ExportedFigure> figures;
  figures.push_back({"wall", 1 + point.overhead, 1 + point.interval.low, 1 + point.interval.high, false});
  if (point.cpu)
    figures.push_back(
        {"cpu", 1 + point.cpu->overhead, 1 + point.cpu->interval.low, 1 + point.cpu->interval.high, false});
  if (point.instructions) {
    const double ratio = 1 + point.instructions->overhead;
    figures.push_back({"instructions", ratio, ratio, ratio, true});
  }
  return figures;
}

std::vector<const Point*> points_of_commit(const std::vector<Point>& points, const ExportRequest& request) {
  std::string wanted = request.commit;
  if (wanted.empty())
    for (auto p = points.rbegin(); p != points.rend() && wanted.empty(); ++p) wanted = p->commit;
  if (wanted.empty()) throw std::runtime_error("the store has no point with a commit to export");
  // Oldest first: a later point of the same benchmark replaces an earlier.
  std::vector<const Point*> selected;
  std::map<std::pair<std::string, std::string>, std::size_t> slot;
  for (const auto& p : points) {
    if (p.commit.compare(0, wanted.size(), wanted) != 0) continue;
    const auto [it, fresh] = slot.emplace(std::make_pair(p.scenario, p.fingerprint), selected.size());
    if (fresh)
      selected.push_back(&p);
    else
      selected[it->second] = &p;
  }
  if (selected.empty()) throw std::runtime_error("the store has no point of commit " + wanted);
  return selected;
}

std::string benchmark_name(const Point& point) { return displayable(point.scenario + " (" + point.fingerprint + ")"); }

}  // namespace heapline::bench
