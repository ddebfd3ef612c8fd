// github-action-benchmark's "customSmallerIsBetter" input: a JSON array of
// {name, unit, value, range, extra}. The action alerts when
// current.value / previous.value of one name exceeds its alert-threshold
// (src/write/findAlerts.ts), so each value is a ratio with / without the
// library: 1.019 -> 1.07 is a 5% worse ratio, whatever the sign of the
// overhead.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "heapline_bench/reports/exporter.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {
namespace {

class BenchmarkActionExporter final : public Exporter {
 public:
  std::string serialize(const std::vector<Point>& points, const ExportRequest& request) const override {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Point* p : points_of_commit(points, request)) {
      for (const auto& figure : exported_figures(*p)) {
        nlohmann::ordered_json entry = {{"name", benchmark_name(*p) + " " + figure.name},
                                        {"unit", "with / without heapline"},
                                        {"value", figure.ratio}};
        char range[96];
        if (figure.exact)
          std::snprintf(range, sizeof range, "exact (%llu / %llu instructions)",
                        static_cast<unsigned long long>(p->instructions->with),
                        static_cast<unsigned long long>(p->instructions->without));
        else
          std::snprintf(range, sizeof range, "%.0f%% CI [%.4f, %.4f]", p->confidence * 100, figure.low, figure.high);
        entry["range"] = range;
        entry["extra"] = "commit " + p->commit + ", measured " + p->measured_at + ", " + std::to_string(p->runs) +
                         " runs, timing " + p->timing + ", heapline " + p->heapline_version + ", on " +
                         p->machine.describe();
        out.push_back(std::move(entry));
      }
    }
    // json_text: ASCII only (nothing in it acts on a terminal), U+FFFD for
    // text that is not UTF-8.
    return json_text(out);
  }
};

}  // namespace

const Exporter& benchmark_action_exporter() {
  static const BenchmarkActionExporter exporter;
  return exporter;
}

}  // namespace heapline::bench
