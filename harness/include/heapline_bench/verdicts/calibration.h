// Noise calibration: how much each figure (wall, cpu, instructions) of each
// scenario moves on this machine when nothing changed, measured two ways: A/A
// runs (the same library on both sides, whose figure should be 0) and the
// same library measured repeatedly (whose figures should agree). The larger
// robust spread is that figure's noise; verdicts never assume a smaller one
// on that machine at that scale.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "heapline_bench/verdicts/verdict.h"

namespace heapline::bench {

struct ScenarioCalibration {
  std::string scenario;
  Figure figure = Figure::wall;
  std::string command;                     // what was measured (the timed or the counted command)
  std::vector<double> aa_overheads;        // A/A figures
  std::vector<double> repeated_overheads;  // the library's figure, repeated
  double sigma = 0;                        // max of the two robust spreads
  double threshold = 0;                    // the change a verdict needs with a full window
  double detectable = 0;                   // the change found 80% of the time
};

// sigma, threshold and detectable from the two samples, under `rule` (the
// figure's own minimum effect and noise floor).
ScenarioCalibration summarise_calibration(std::string scenario, Figure figure, std::vector<double> aa,
                                          std::vector<double> repeated, const VerdictRule& rule);

// Whether a figure moved as little as its goal allows (the catalogue's
// spread_goal_points, as a fraction): every A/A figure within +-goal, and the
// noise (sigma, the larger robust spread) within it too.
bool spread_goal_met(const ScenarioCalibration& c, double goal);

nlohmann::json calibration_to_json(const ScenarioCalibration& c, const std::string& fingerprint,
                                   const std::string& machine, int runs, double scale, const std::string& measured_at);

// The newest calibration of each (scenario, fingerprint, figure, scale,
// command) in calibration.jsonl (lines without a figure are the wall
// figure's, at scale 1, as calibrate wrote them before there were three
// figures; lines without a command have an empty one, and apply to no point
// that records its command); unreadable lines are returned as problems,
// never dropped silently.
std::vector<NoiseCalibration> read_calibrations(const std::string& path, std::vector<std::string>& problems);

}  // namespace heapline::bench
