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

#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/statistics.h"

namespace heapline::bench {

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

}  // namespace heapline::bench
