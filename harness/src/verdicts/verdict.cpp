#include "heapline_bench/verdicts/verdict.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <stdexcept>

#include "heapline_bench/measurement/statistics.h"
#include <heapline/splitmix64.h>

namespace heapline::bench {

double VerdictRule::quantile(int n) const {
  const double dof = std::max(3.0, 0.37 * n);
  return student_t_quantile(1 - false_alarm_rate / (2.0 * std::max(scenarios, 1)), dof);
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::regression: return "regression";
    case Verdict::improvement: return "improvement";
    case Verdict::unchanged: return "unchanged";
    case Verdict::insufficient_history: return "insufficient history";
  }
  return "?";
}

PointVerdict judge_point(const History& history, std::size_t index, const VerdictRule& rule,
                         const std::vector<NoiseCalibration>& calibrations) {
  const HistoryEntry& point = history.entries.at(index);
  PointVerdict v;
  v.scenario = point.scenario;
  v.fingerprint = point.fingerprint;
  v.point = &point;

  std::vector<double> earlier;
  for (std::size_t i = index; i-- > 0 && static_cast<int>(earlier.size()) < rule.window;) {
    const auto& e = history.entries[i];
    if (e.scenario == point.scenario && e.fingerprint == point.fingerprint && e.timing == point.timing)
      earlier.push_back(e.overhead);
  }
  v.history = static_cast<int>(earlier.size());
  if (v.history < rule.min_history) return v;

  v.baseline = median(earlier);
  // MAD underestimates sigma in small samples; Croux & Rousseeuw (1992)
  // correct it by n / (n - 0.8) for n > 9; below that, a conservative 1.2.
  const double small_sample = v.history > 9 ? v.history / (v.history - 0.8) : 1.2;
  v.noise = std::max(robust_sigma(earlier) * small_sample, rule.noise_floor);
  for (const auto& c : calibrations)
    if (c.scenario == point.scenario && c.fingerprint == point.fingerprint) v.noise = std::max(v.noise, c.sigma);
  const double n = static_cast<double>(v.history);
  v.threshold =
      std::max(rule.min_effect, rule.quantile(v.history) * v.noise * std::sqrt(1 + std::numbers::pi / (2 * n)));
  v.change = point.overhead - v.baseline;
  if (v.change > v.threshold && point.low > v.baseline) v.verdict = Verdict::regression;
  else if (-v.change > v.threshold && point.high < v.baseline) v.verdict = Verdict::improvement;
  else v.verdict = Verdict::unchanged;
  return v;
}

std::vector<PointVerdict> judge_newest(const History& history, const std::vector<std::string>& scenarios,
                                       const VerdictRule& rule, const std::vector<NoiseCalibration>& calibrations) {
  std::vector<PointVerdict> verdicts;
  for (const auto& scenario : scenarios) {
    for (std::size_t i = history.entries.size(); i-- > 0;) {
      if (history.entries[i].scenario == scenario) {
        verdicts.push_back(judge_point(history, i, rule, calibrations));
        break;
      }
    }
  }
  return verdicts;
}

}  // namespace heapline::bench
