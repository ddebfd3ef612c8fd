// Bencher Metric Format (BMF), what `bencher run --adapter json` reads:
// {benchmark: {measure: {value, lower_value, upper_value}}}, one benchmark
// per scenario and machine of the commit, three measures (slugs, created by
// Bencher when new): wall-ratio, cpu-ratio, instructions-ratio, each a
// ratio with / without the library within its interval.
#include <nlohmann/json.hpp>

#include "heapline_bench/reports/exporter.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {
namespace {

class BencherExporter final : public Exporter {
 public:
  std::string serialize(const std::vector<Point>& points, const ExportRequest& request) const override {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const Point* p : points_of_commit(points, request)) {
      nlohmann::ordered_json measures = nlohmann::ordered_json::object();
      for (const auto& figure : exported_figures(*p))
        measures[std::string(figure.name) + "-ratio"] = {
            {"value", figure.ratio}, {"lower_value", figure.low}, {"upper_value", figure.high}};
      out[benchmark_name(*p)] = std::move(measures);
    }
    return json_text(out);  // ASCII only, U+FFFD for text that is not UTF-8
  }
};

}  // namespace

const Exporter& bencher_exporter() {
  static const BencherExporter exporter;
  return exporter;
}

}  // namespace heapline::bench
