// Regression verdicts over the history, and change points.
//
// The rule (documented in docs/regressions.md; its constants live in
// VerdictRule): the newest point of a scenario is compared with the last
// `window` earlier points of the same scenario, machine fingerprint and timing
// method.
//   baseline  = median of those points
//   noise     = max(1.4826 * MAD of those points, calibrated noise, noise_floor)
//   threshold = max(min_effect, q * noise * sqrt(1 + pi / (2 * n)))
// where q is the two-sided Student t quantile of false_alarm_rate / scenarios
// (Bonferroni: the suite tests every scenario on each push) with the degrees
// of freedom a MAD of n points is worth (0.37 n: its efficiency for normal
// data), so that a noise estimated from few points widens the threshold; the
// sqrt term adds the uncertainty of a median of n points to that of the new
// point. A point is a regression when it exceeds the baseline by more than
// the threshold AND its own 95% interval lies wholly above the baseline; an
// improvement is the mirror image; otherwise unchanged. With fewer than
// min_history earlier points the verdict is "insufficient history".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heapline_bench/history.h"

namespace heapline::bench {

// The normal quantile, by bisection on std::erfc: Phi^-1(p) for p in (0, 1).
double normal_quantile(double p);

// The Student t quantile with `dof` degrees of freedom, from the normal one by
// the Cornish-Fisher expansion (Abramowitz & Stegun 26.7.5, four terms);
// within 1% of the exact value for dof >= 3 at the tails used here.
double student_t_quantile(double p, double dof);

// 1.4826 * median absolute deviation: a robust estimate of the standard
// deviation (consistent for normal data), unmoved by a few outliers.
double robust_sigma(std::span<const double> values);

struct VerdictRule {
  int window = 20;                // earlier points compared with
  int min_history = 8;            // fewer: insufficient history
  double false_alarm_rate = 0.05; // per push, over all scenarios
  int scenarios = 5;              // tests per push (Bonferroni)
  double min_effect = 0.02;       // 2 percentage points: smaller changes are not reported
  double noise_floor = 0.005;     // noise never taken below half a point
  // The quantile for a noise estimated from n earlier points.
  double quantile(int n) const;
};

enum class Verdict { regression, improvement, unchanged, insufficient_history };
const char* verdict_name(Verdict verdict);

struct PointVerdict {
  std::string scenario;
  std::string fingerprint;
  const HistoryEntry* point = nullptr;  // the newest point
  Verdict verdict = Verdict::insufficient_history;
  int history = 0;         // earlier points compared with
  double baseline = 0;     // their median
  double noise = 0;        // the noise used
  double threshold = 0;    // the change needed for a verdict
  double change = 0;       // point - baseline
};

// Calibrated noise of one scenario on one machine (from `calibrate`).
struct NoiseCalibration {
  std::string scenario;
  std::string fingerprint;
  double sigma = 0;
};

// The verdict on `index` (an entry of history.entries) against the entries
// before it.
PointVerdict judge_point(const History& history, std::size_t index, const VerdictRule& rule,
                         const std::vector<NoiseCalibration>& calibrations = {});

// The verdict on the newest point of each of `scenarios` (any machine: each
// is compared with its own fingerprint's history).
std::vector<PointVerdict> judge_newest(const History& history, const std::vector<std::string>& scenarios,
                                       const VerdictRule& rule, const std::vector<NoiseCalibration>& calibrations = {});

// --- change points ---------------------------------------------------------
// Binary segmentation with a two-sample t statistic (the t-test variant of
// E-divisive used for performance histories, e.g. MongoDB's and Hunter's):
// the split that maximises |t| over segments of at least min_segment points
// is kept when a seeded permutation test finds it significant (p < alpha),
// then each side is searched again. Deterministic for a given seed.
struct ChangePointOptions {
  int min_segment = 5;
  double alpha = 0.005;
  int permutations = 1999;  // p = (as strong + 1) / 2000: alpha allows at most 9 as strong
  std::uint64_t seed = 0x636861696e676573ULL;
};

struct ChangePoint {
  std::size_t index = 0;  // the first point after the change
  double before = 0;      // mean of the segment before
  double after = 0;       // mean of the segment after
  double p_value = 1;
};

std::vector<ChangePoint> change_points(std::span<const double> series, const ChangePointOptions& options = {});

// Change points of each scenario's history on each machine, with the indices
// of the history entries on both sides (for the commit range).
struct HistoryChange {
  std::string scenario;
  std::string fingerprint;
  const HistoryEntry* last_before = nullptr;
  const HistoryEntry* first_after = nullptr;
  ChangePoint change;
};
// Only the last `recent` points of each series are searched: the cost grows
// with the series, and the page shows the recent history.
std::vector<HistoryChange> history_change_points(const History& history, const std::vector<std::string>& scenarios,
                                                 const ChangePointOptions& options = {}, std::size_t recent = 500);

}  // namespace heapline::bench
