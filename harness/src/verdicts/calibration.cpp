#include "heapline_bench/verdicts/calibration.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <numbers>
#include <stdexcept>
#include <tuple>

#include <heapline/json_document.h>

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
      if (!(c.sigma >= 0) || !(c.scale > 0)) throw std::runtime_error("sigma and scale must be positive numbers");
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
