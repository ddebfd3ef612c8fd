// Statistics of heapline-bench: small pure functions on arrays of run times.
// Each names the method it implements, so a reader can check it against the
// source.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace heapline::bench {

// The median: the middle value of the sorted sample, or the mean of the two
// middle values for an even count. Throws std::invalid_argument when empty.
double median(std::span<const double> values);

// The percentile q in [0, 1] of an already sorted sample, by linear
// interpolation between closest ranks (Hyndman & Fan type 7, the default of
// R and NumPy).
double percentile_of_sorted(std::span<const double> sorted, double q);

// heapline's overhead figure: median(with) / median(without) - 1.
double overhead_ratio(std::span<const double> with, std::span<const double> without);

struct Interval {
  double low = 0;
  double high = 0;
  bool operator==(const Interval&) const = default;
};

// The confidence level of every interval heapline-bench computes, and so of
// every interval a point, a page or a table shows.
inline constexpr double kConfidenceLevel = 0.95;

// The level as the pages, tables and help name it: "95%".
std::string confidence_level_text(double confidence = kConfidenceLevel);

struct BootstrapOptions {
  int resamples = 10000;
  double confidence = kConfidenceLevel;
  std::uint64_t seed = 0x686561706c696e65ULL;  // "heapline": same input, same interval
};

// Percentile bootstrap (Efron & Tibshirani, "An Introduction to the
// Bootstrap", ch. 13) of overhead_ratio: each resample draws, with
// replacement, a sample of the same size from each group independently.
// Deterministic for a given seed: the generator is SplitMix64 and the index
// draw is a plain multiply-shift, so no library distribution is involved.
Interval bootstrap_overhead_interval(std::span<const double> with, std::span<const double> without,
                                     const BootstrapOptions& options = {});

// The runs of one round of a comparison: the times with and without.
struct RoundSample {
  std::span<const double> with;
  std::span<const double> without;
};

// The same percentile bootstrap for a figure measured in rounds: the median
// over the rounds of each round's overhead_ratio. Each resample draws every
// round's two groups from that round's own runs (a stratified bootstrap:
// rounds are never mixed, as the figure never mixes them). One round is
// bootstrap_overhead_interval, resample for resample.
Interval bootstrap_rounds_interval(std::span<const RoundSample> rounds, const BootstrapOptions& options = {});

// The normal quantile, by bisection on std::erfc: Phi^-1(p) for p in (0, 1).
double normal_quantile(double p);

// The Student t quantile with `dof` degrees of freedom, from the normal one by
// the Cornish-Fisher expansion (Abramowitz & Stegun 26.7.5, four terms). It
// is below the exact value, by at most 1.5% at 3 degrees and 0.5% from 4 on,
// for p up to 0.9975 (the verdicts' default: 5% over ten tests, two-sided);
// with fewer than 3 degrees it is far off (11% at 1), so it refuses them.
double student_t_quantile(double p, double dof);

// 1.4826 * median absolute deviation: a robust estimate of the standard
// deviation (consistent for normal data), unmoved by a few outliers.
double robust_sigma(std::span<const double> values);

// Rousseeuw and Croux's Qn scale estimator ("Alternatives to the Median
// Absolute Deviation", JASA 88, 1993): the k-th smallest of the n(n-1)/2
// pairwise distances |xi - xj|, k = h(h-1)/2 with h = n/2 + 1, times 2.2219
// (consistency at the normal) and their small-sample factor c_n. Like the
// MAD it ignores up to half the points as outliers, but it is 82% efficient
// at the normal where the MAD is 37%: a noise estimated from 10 points is
// worth 8 points' standard deviation, not 4. 0 for fewer than 2 values.
double qn_sigma(std::span<const double> values);

}  // namespace heapline::bench
