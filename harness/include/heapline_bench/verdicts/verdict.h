// Regression verdicts over the history, one per figure (wall, cpu,
// instructions) of each point.
//
// The rule (documented in docs/regressions.md; its constants live in
// VerdictRule): a point is compared with the earlier points of the same
// scenario, machine fingerprint, timing method, scale and command that have
// the same figure (like with like: history.h, SeriesKey), in the segment
// after the last established change:
//   baseline  = median of the last `window` points of the segment
//   noise     = max(Qn of those points, calibrated noise, noise_floor)
//   threshold = max(min_effect, q * noise * sqrt(1 + pi / (2 * n)))
// where Qn is Rousseeuw and Croux's robust scale (statistics.h) and q is the
// two-sided Student t quantile of false_alarm_rate / tests (Bonferroni over
// the scenarios and the gated figures judged on each push) with the degrees
// of freedom a Qn of n points is worth (0.5 n, below its asymptotic 82%
// efficiency, as short histories need), so that a noise estimated from few
// points widens the threshold; the sqrt term adds the uncertainty of a median of n
// points to that of the new point. A point is a regression when it exceeds
// the baseline by more than the threshold AND its own confidence interval lies
// wholly above the baseline; an improvement is the mirror image; otherwise
// unchanged. With fewer than min_history earlier points the verdict is
// "insufficient history".
//
// Segments: a flagged point opens a candidate step. When the next point is
// flagged the same way against the same baseline, the step is established:
// from then on points are judged against the segment that starts at the
// flagged point (its baseline from its own points, its noise carried over from
// the segment before until it has min_history points of its own), so one step
// raises one alarm (two when the next point does not clear the threshold
// too), not one per push until the window's median catches up. A flagged
// point the next one does not follow was a one-off, and stays an ordinary
// member of its segment (the median is not moved by it).
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
  double false_alarm_rate = 0.05; // per push, over all scenarios and gated figures
  int scenarios = 5;              // scenarios judged per push (Bonferroni)
  int figures = 1;                // figures gated per push (Bonferroni)
  // The timed figures (wall, cpu): changes below 2 points are not reported,
  // and the noise is never taken below half a point.
  double min_effect = 0.02;
  double noise_floor = 0.005;
  // Instruction counts repeat to parts per million (one thread) or per ten
  // thousand (several): a tenth of the timed figures' limits.
  double instructions_min_effect = 0.002;
  double instructions_noise_floor = 0.0005;

  double min_effect_of(Figure figure) const;
  double noise_floor_of(Figure figure) const;
  // The quantile for a noise estimated from n earlier points.
  double quantile(int n) const;
};

enum class Verdict { regression, improvement, unchanged, insufficient_history };
const char* verdict_name(Verdict verdict);

struct PointVerdict {
  std::string scenario;
  std::string fingerprint;
  Figure figure = Figure::wall;
  const HistoryEntry* point = nullptr;  // the point judged
  Verdict verdict = Verdict::insufficient_history;
  int history = 0;         // earlier points the noise was estimated from
  int baseline_points = 0; // earlier points of the segment the baseline is the median of
  double baseline = 0;     // their median
  double noise = 0;        // the noise used
  double threshold = 0;    // the change needed for a verdict
  double change = 0;       // point - baseline
  double value = 0;        // the point's figure
  // The first point of the segment the baseline comes from, when a step was
  // established before this point; nullptr otherwise.
  const HistoryEntry* segment_start = nullptr;
};

// Calibrated noise of one figure of one scenario on one machine, at one scale
// and for one command (from `calibrate`): it applies to the points of that
// series only (history.h, SeriesKey).
struct NoiseCalibration {
  std::string scenario;
  std::string fingerprint;
  double sigma = 0;
  Figure figure = Figure::wall;
  double scale = 1.0;
  std::string command;  // "" in lines written before calibrate recorded it: they apply to no point with a command
};

// The entries comparable with history.entries[index] on `figure`, oldest
// first, ending with index itself: the figure present and the same series
// (scenario, fingerprint, timing, scale and command: history.h, SeriesKey).
// Empty when the point has no such figure.
std::vector<std::size_t> comparable_series(const History& history, std::size_t index, Figure figure);

// The verdict on `index` (an entry of history.entries) for one figure,
// against the entries before it (see the segments above). The sequence of
// segments is replayed over the last `lookback` comparable points, so the
// same history always gives the same verdict.
PointVerdict judge_point(const History& history, std::size_t index, Figure figure, const VerdictRule& rule,
                         const std::vector<NoiseCalibration>& calibrations = {}, std::size_t lookback = 200);
// The wall figure's verdict (the headline).
PointVerdict judge_point(const History& history, std::size_t index, const VerdictRule& rule,
                         const std::vector<NoiseCalibration>& calibrations = {});

// The points `check` judges for one scenario: the newest point of each
// machine that measured the scenario's newest commit (the commit of its
// newest point), newest first. A machine whose newest point is of an older
// commit was judged when that point was added; judging it again on every
// push would repeat its verdict forever after the machine is gone (GitHub's
// runners change fingerprint with their image). A newest point without a
// commit stands alone.
std::vector<std::size_t> newest_points(const History& history, const std::string& scenario);

// The verdict on each figure of newest_points() of each of `scenarios` (each
// compared with its own machine's history), scenario by scenario in the
// order given, then machine by machine, figures in kFigures order; a figure
// a point does not have gets no verdict.
std::vector<PointVerdict> judge_newest(const History& history, const std::vector<std::string>& scenarios,
                                       const VerdictRule& rule, const std::vector<NoiseCalibration>& calibrations = {},
                                       std::span<const Figure> figures = kFigures);

}  // namespace heapline::bench
