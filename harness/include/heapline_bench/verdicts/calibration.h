// Noise calibration: how much each scenario's figure moves on this machine
// when nothing changed, measured two ways: A/A runs (the same library on both
// sides, whose figure should be 0) and the same library measured repeatedly
// (whose figures should agree). The larger robust spread is the scenario's
// noise; verdicts never assume a smaller one on that machine.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "heapline_bench/verdicts/verdict.h"

namespace heapline::bench {

struct ScenarioCalibration {
  std::string scenario;
  std::vector<double> aa_overheads;        // A/A figures
  std::vector<double> repeated_overheads;  // the library's figure, repeated
  double sigma = 0;                        // max of the two robust spreads
  double threshold = 0;                    // the change a verdict needs with a full window
  double detectable = 0;                   // the change found 80% of the time
};

// sigma, threshold and detectable from the two samples, under `rule`.
ScenarioCalibration summarise_calibration(std::string scenario, std::vector<double> aa, std::vector<double> repeated,
                                          const VerdictRule& rule);

nlohmann::json calibration_to_json(const ScenarioCalibration& c, const std::string& fingerprint,
                                   const std::string& machine, int runs, const std::string& measured_at);

// The newest calibration of each (scenario, fingerprint) in calibration.jsonl;
// unreadable lines are returned as problems, never dropped silently.
std::vector<NoiseCalibration> read_calibrations(const std::string& path, std::vector<std::string>& problems);

}  // namespace heapline::bench
