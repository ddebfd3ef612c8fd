#include "heapline_bench/verdict.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <stdexcept>

#include "heapline_bench/statistics.h"
#include <heapline/splitmix64.h>

namespace heapline::bench {

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile needs p in (0, 1)");
  // Phi(x) = erfc(-x / sqrt 2) / 2 is increasing: bisect to double precision.
  double low = -40, high = 40;
  for (int i = 0; i < 200 && high - low > 1e-12; ++i) {
    const double mid = (low + high) / 2;
    (0.5 * std::erfc(-mid / std::numbers::sqrt2) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

double student_t_quantile(double p, double dof) {
  if (!(dof > 0)) throw std::invalid_argument("student_t_quantile needs positive degrees of freedom");
  const double z = normal_quantile(p);
  const double z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  return z + (z3 + z) / (4 * dof) + (5 * z5 + 16 * z3 + 3 * z) / (96 * dof * dof) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * dof * dof * dof) +
         (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * dof * dof * dof * dof);
}

double robust_sigma(std::span<const double> values) {
  if (values.empty()) return 0;
  const double centre = median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - centre));
  return 1.4826 * median(deviations);
}

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

// --- change points -----------------------------------------------------------
namespace {

// Prefix sums make Welch's t of any split O(1).
struct Prefix {
  std::vector<double> sum, squares;
  explicit Prefix(std::span<const double> x) : sum(x.size() + 1, 0), squares(x.size() + 1, 0) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      sum[i + 1] = sum[i] + x[i];
      squares[i + 1] = squares[i] + x[i] * x[i];
    }
  }
  double mean(std::size_t a, std::size_t b) const { return (sum[b] - sum[a]) / static_cast<double>(b - a); }
  double variance(std::size_t a, std::size_t b) const {  // sample variance
    const double n = static_cast<double>(b - a);
    const double m = mean(a, b);
    return std::max(0.0, (squares[b] - squares[a] - n * m * m) / (n - 1));
  }
};

// Student's two-sample t with the pooled variance: with segments as short as
// five points, a per-side variance (Welch) is often tiny by chance, and the
// largest |t| over all splits of pure noise would then swamp real steps.
double pooled_t(const Prefix& p, std::size_t lo, std::size_t k, std::size_t hi) {
  const double n1 = static_cast<double>(k - lo), n2 = static_cast<double>(hi - k);
  const double difference = p.mean(k, hi) - p.mean(lo, k);
  const double pooled = ((n1 - 1) * p.variance(lo, k) + (n2 - 1) * p.variance(k, hi)) / (n1 + n2 - 2);
  const double se = std::sqrt(pooled * (1 / n1 + 1 / n2));
  if (se == 0) return difference == 0 ? 0 : std::copysign(1e300, difference);
  return difference / se;
}

// The split of x[lo, hi) with the largest |t|, and that |t|.
std::pair<std::size_t, double> best_split(const Prefix& p, std::size_t lo, std::size_t hi, std::size_t min_segment) {
  std::size_t best = 0;
  double best_t = -1;
  for (std::size_t k = lo + min_segment; k + min_segment <= hi; ++k) {
    const double t = std::fabs(pooled_t(p, lo, k, hi));
    if (t > best_t) {
      best_t = t;
      best = k;
    }
  }
  return {best, best_t};
}

void segment(std::span<const double> x, std::size_t lo, std::size_t hi, const ChangePointOptions& options,
             std::vector<ChangePoint>& found) {
  const auto min_segment = static_cast<std::size_t>(std::max(options.min_segment, 2));
  if (hi - lo < 2 * min_segment) return;
  const Prefix prefix(x);
  const auto [split, observed] = best_split(prefix, lo, hi, min_segment);
  if (observed <= 0) return;

  // Permutation test: how often does shuffling the segment give a split at
  // least this strong? The generator is seeded by the segment, so the
  // result does not depend on the order segments are searched in.
  SplitMix64 rng{options.seed ^ (static_cast<std::uint64_t>(lo) << 32) ^ hi};
  std::vector<double> shuffled(x.begin() + static_cast<std::ptrdiff_t>(lo), x.begin() + static_cast<std::ptrdiff_t>(hi));
  int as_strong = 0;
  for (int i = 0; i < options.permutations; ++i) {
    for (std::size_t j = shuffled.size() - 1; j > 0; --j) std::swap(shuffled[j], shuffled[rng.index(j + 1)]);
    const Prefix permuted(shuffled);
    if (best_split(permuted, 0, shuffled.size(), min_segment).second >= observed) ++as_strong;
  }
  const double p_value = (as_strong + 1.0) / (options.permutations + 1.0);
  if (p_value >= options.alpha) return;
  found.push_back({split, prefix.mean(lo, split), prefix.mean(split, hi), p_value});
  segment(x, lo, split, options, found);
  segment(x, split, hi, options, found);
}

}  // namespace

std::vector<ChangePoint> change_points(std::span<const double> series, const ChangePointOptions& options) {
  std::vector<ChangePoint> found;
  segment(series, 0, series.size(), options, found);
  std::sort(found.begin(), found.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  // Report each change with the means of its own neighbouring segments.
  for (std::size_t i = 0; i < found.size(); ++i) {
    const std::size_t lo = i == 0 ? 0 : found[i - 1].index;
    const std::size_t hi = i + 1 == found.size() ? series.size() : found[i + 1].index;
    const Prefix prefix(series);
    found[i].before = prefix.mean(lo, found[i].index);
    found[i].after = prefix.mean(found[i].index, hi);
  }
  return found;
}

std::vector<HistoryChange> history_change_points(const History& history, const std::vector<std::string>& scenarios,
                                                 const ChangePointOptions& options, std::size_t recent) {
  // One series per scenario, machine and timing method, in history order.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const HistoryEntry*>> series;
  for (const auto& e : history.entries) series[{e.scenario, e.fingerprint, e.timing}].push_back(&e);
  std::vector<HistoryChange> changes;
  for (const auto& scenario : scenarios) {
    for (const auto& [key, entries] : series) {
      if (std::get<0>(key) != scenario) continue;
      const std::size_t first = entries.size() > recent ? entries.size() - recent : 0;
      std::vector<double> values;
      for (std::size_t i = first; i < entries.size(); ++i) values.push_back(entries[i]->overhead);
      for (const auto& c : change_points(values, options))
        changes.push_back({scenario, std::get<1>(key), entries[first + c.index - 1], entries[first + c.index], c});
    }
  }
  return changes;
}

}  // namespace heapline::bench
