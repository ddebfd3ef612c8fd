#include "heapline_bench/measurement/statistics.h"

#include <heapline/splitmix64.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>

namespace heapline::bench {
namespace {

double median_in_place(std::vector<double>& values) {
  const std::size_t n = values.size();
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (n % 2 == 1) return *middle;
  const double upper = *middle;
  const double lower = *std::max_element(values.begin(), middle);
  return lower + (upper - lower) / 2;
}

void resample(std::span<const double> from, std::vector<double>& into, SplitMix64& rng) {
  into.resize(from.size());
  for (auto& value : into) value = from[rng.index(from.size())];
}

}  // namespace

std::string confidence_level_text(double confidence) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", confidence * 100);
  return text;
}

double median(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty sample");
  std::vector<double> copy(values.begin(), values.end());
  return median_in_place(copy);
}

double percentile_of_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of an empty sample");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("percentile outside [0, 1]");
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

double overhead_ratio(std::span<const double> with, std::span<const double> without) {
  const double baseline = median(without);
  if (!(baseline > 0)) throw std::invalid_argument("median time without the library is not positive");
  return median(with) / baseline - 1;
}

Interval bootstrap_overhead_interval(std::span<const double> with, std::span<const double> without,
                                     const BootstrapOptions& options) {
  const RoundSample round{with, without};
  return bootstrap_rounds_interval({&round, 1}, options);
}

Interval bootstrap_rounds_interval(std::span<const RoundSample> rounds, const BootstrapOptions& options) {
  if (rounds.empty()) throw std::invalid_argument("bootstrap of no round");
  for (const auto& round : rounds)
    if (round.with.empty() || round.without.empty()) throw std::invalid_argument("bootstrap of an empty sample");
  if (options.resamples < 1) throw std::invalid_argument("bootstrap needs at least one resample");
  if (!(options.confidence > 0 && options.confidence < 1))
    throw std::invalid_argument("confidence must be in (0, 1)");

  SplitMix64 rng{options.seed};
  std::vector<double> with_sample, without_sample, round_ratios(rounds.size()), ratios;
  ratios.reserve(static_cast<std::size_t>(options.resamples));
  for (int i = 0; i < options.resamples; ++i) {
    for (std::size_t r = 0; r < rounds.size(); ++r) {
      resample(rounds[r].with, with_sample, rng);
      resample(rounds[r].without, without_sample, rng);
      const double baseline = median_in_place(without_sample);
      if (!(baseline > 0)) throw std::invalid_argument("median time without the library is not positive");
      round_ratios[r] = median_in_place(with_sample) / baseline - 1;
    }
    ratios.push_back(rounds.size() == 1 ? round_ratios[0] : median(round_ratios));
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - options.confidence) / 2;
  return {percentile_of_sorted(ratios, tail), percentile_of_sorted(ratios, 1 - tail)};
}

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
  if (!(dof >= 3)) {
    throw std::invalid_argument("student_t_quantile needs at least 3 degrees of freedom (its expansion is far off below)");
  }
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

double qn_sigma(std::span<const double> values) {
  const std::size_t n = values.size();
  if (n < 2) return 0;
  std::vector<double> distances;
  distances.reserve(n * (n - 1) / 2);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) distances.push_back(std::fabs(values[i] - values[j]));
  const std::size_t h = n / 2 + 1;
  const std::size_t k = h * (h - 1) / 2;
  std::nth_element(distances.begin(), distances.begin() + static_cast<std::ptrdiff_t>(k - 1), distances.end());
  // c_n: Croux and Rousseeuw's table for n <= 9, their formulas above.
  static constexpr double kSmall[] = {0, 0, 0.399, 0.994, 0.512, 0.844, 0.611, 0.857, 0.669, 0.872};
  const double dn = static_cast<double>(n);
  const double c = n <= 9 ? kSmall[n] : n % 2 == 1 ? dn / (dn + 1.4) : dn / (dn + 3.8);
  return 2.2219 * c * distances[k - 1];
}

}  // namespace heapline::bench
