#include "heapline_bench/verdicts/calibration.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <numbers>
#include <stdexcept>
#include <tuple>

#include <heapline/json_document.h>

#include "heapline_bench/history/point.h"
#include "heapline_bench/text/regular_file.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {

ScenarioCalibration summarise_calibration(std::string scenario, Figure figure, std::vector<double> aa,
                                          std::vector<double> repeated, const VerdictRule& rule) {
  ScenarioCalibration c;
  c.scenario = std::move(scenario);
  c.figure = figure;
  c.aa_overheads = std::move(aa);
  c.repeated_overheads = std::move(repeated);
  c.sigma = std::max({robust_sigma(c.aa_overheads), robust_sigma(c.repeated_overheads), rule.noise_floor_of(figure)});
  const double n = rule.window;
  const double spread = c.sigma * std::sqrt(1 + std::numbers::pi / (2 * n));
  c.threshold = std::max(rule.min_effect_of(figure), rule.quantile(rule.window) * spread);
  // A change is found 80% of the time when it exceeds the threshold by the
  // 80th percentile of the noise.
  c.detectable = std::max(rule.min_effect_of(figure), c.threshold + normal_quantile(0.8) * spread);
  return c;
}

bool spread_goal_met(const ScenarioCalibration& c, double goal) {
  for (double x : c.aa_overheads)
    if (!(std::fabs(x) <= goal)) return false;
  return c.sigma <= goal;
}

nlohmann::json calibration_to_json(const ScenarioCalibration& c, const std::string& fingerprint,
                                   const std::string& machine, int runs, double scale, const std::string& measured_at) {
  return {{"schema", 2},          {"scenario", c.scenario},     {"figure", figure_name(c.figure)},
          {"command", c.command},
          {"fingerprint", fingerprint}, {"machine", machine},   {"measured_at", measured_at},
          {"runs", runs},         {"scale", scale},
          {"aa", c.aa_overheads}, {"repeated", c.repeated_overheads},
          {"sigma", c.sigma},     {"threshold", c.threshold},   {"detectable", c.detectable}};
}

namespace {

std::string shown_figure(double value) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return error == std::errc() ? std::string(text, end) : std::to_string(value);
}

// Every figure of a calibration line is one a measurement can give, as a
// point's are (point.h): a noise (sigma) and a threshold are spreads of
// overheads, from 0 to kMaxOverhead; its A/A and repeated figures are
// overheads; its scale is --scale's. A sigma of 1e300 was read, and put
// every verdict of its figure out of reach without a word.
void check_calibration_figures(const nlohmann::json& line, const NoiseCalibration& c) {
  auto within = [](const std::string& field, double value, double low, double high, bool low_included) {
    if (!(low_included ? value >= low : value > low) || !(value <= high))
      throw std::runtime_error("field \"" + field + "\" must be " + (low_included ? "from " : "above ") +
                               shown_figure(low) + (low_included ? " to " : " and at most ") + shown_figure(high) +
                               ", got " + shown_figure(value));
  };
  within("sigma", c.sigma, 0, kMaxOverhead, true);
  within("scale", c.scale, 0, kMaxScale, false);
  for (const char* spread : {"threshold", "detectable"}) {
    const double none = 0;
    within(spread, heapline::json_field<double>(line, spread, &none), 0, kMaxOverhead, true);
  }
  for (const char* overheads : {"aa", "repeated"}) {
    const std::vector<double> none;
    for (const double value : heapline::json_field<std::vector<double>>(line, overheads, &none))
      within(std::string(overheads) + "[]", value, -1, kMaxOverhead, false);
  }
}

}  // namespace

std::vector<NoiseCalibration> read_calibrations(const std::string& path, std::vector<std::string>& problems) {
  std::map<std::tuple<std::string, std::string, Figure, double, std::string>, NoiseCalibration> newest;
  // No file: no calibration yet. Anything else is read only if regular.
  std::error_code missing;
  if (!std::filesystem::exists(path, missing)) return {};
  std::istringstream in;
  try {
    in.str(read_regular_file(path));
  } catch (const std::runtime_error& e) {
    problems.push_back(e.what());
    return {};
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      // The programs' one reader of a JSON document (heapline/json_document.h).
      const std::string where = path + ":" + std::to_string(number);
      const heapline::JsonDocument document = heapline::read_json_document(line, where, "a calibration");
      if (!document) {
        problems.push_back(terminal_text(document.error));
        continue;
      }
      const auto& j = document.value;
      using heapline::json_field;
      NoiseCalibration c;
      c.scenario = json_field<std::string>(j, "scenario");
      c.fingerprint = json_field<std::string>(j, "fingerprint");
      c.sigma = json_field<double>(j, "sigma");
      const std::string wall = "wall", none;
      const double unscaled = 1.0;
      const std::string figure = json_field<std::string>(j, "figure", &wall);
      const auto known = figure_from_name(figure);
      if (!known) throw std::runtime_error("unknown figure '" + figure + "'");
      c.figure = *known;
      c.scale = json_field<double>(j, "scale", &unscaled);
      c.command = json_field<std::string>(j, "command", &none);
      check_calibration_figures(j, c);
      newest[{c.scenario, c.fingerprint, c.figure, c.scale, c.command}] = c;  // later lines are newer
    } catch (const std::exception& e) {
      problems.push_back(path + ":" + std::to_string(number) + ": " + terminal_text(e.what()));
    }
  }
  std::vector<NoiseCalibration> out;
  for (auto& [key, c] : newest) out.push_back(c);
  return out;
}

}  // namespace heapline::bench
