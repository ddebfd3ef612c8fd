// Change points of a history: where a scenario's figure moved for good.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "heapline_bench/history/history.h"

namespace heapline::bench {

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

// Change points of one figure of each scenario's history, series by series
// (the same series the verdicts compare: history.h, SeriesKey), with the
// history entries on both sides (for the commit range).
struct HistoryChange {
  std::string scenario;
  std::string fingerprint;
  Figure figure = Figure::wall;
  const HistoryEntry* last_before = nullptr;
  const HistoryEntry* first_after = nullptr;
  ChangePoint change;
};
// Only the last `recent` points of each series are searched: the cost grows
// with the series, and the page shows the recent history.
std::vector<HistoryChange> history_change_points(const History& history, const std::vector<std::string>& scenarios,
                                                 Figure figure, const ChangePointOptions& options = {},
                                                 std::size_t recent = 500);
// The change points of every figure, wall first (kFigures order).
std::vector<HistoryChange> history_change_points(const History& history, const std::vector<std::string>& scenarios,
                                                 const ChangePointOptions& options = {}, std::size_t recent = 500);

}  // namespace heapline::bench
