#include "heapline_bench/verdicts/change_points.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <heapline/splitmix64.h>

namespace heapline::bench {

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
                                                 Figure figure, const ChangePointOptions& options, std::size_t recent) {
  // One series per scenario, machine, timing method, scale and command, in
  // history order: a change of the command is not a change of the library.
  std::map<SeriesKey, std::vector<const HistoryEntry*>> series;
  for (const auto& e : history.entries)
    if (e.figure(figure).present) series[series_key(e, figure)].push_back(&e);
  std::vector<HistoryChange> changes;
  for (const auto& scenario : scenarios) {
    for (const auto& [key, entries] : series) {
      if (key.scenario != scenario) continue;
      const std::size_t first = entries.size() > recent ? entries.size() - recent : 0;
      std::vector<double> values;
      for (std::size_t i = first; i < entries.size(); ++i) values.push_back(entries[i]->figure(figure).overhead);
      for (const auto& c : change_points(values, options))
        changes.push_back({scenario, key.fingerprint, figure, entries[first + c.index - 1], entries[first + c.index], c});
    }
  }
  return changes;
}

std::vector<HistoryChange> history_change_points(const History& history, const std::vector<std::string>& scenarios,
                                                 const ChangePointOptions& options, std::size_t recent) {
  std::vector<HistoryChange> changes;
  for (Figure figure : kFigures) {
    auto found = history_change_points(history, scenarios, figure, options, recent);
    changes.insert(changes.end(), found.begin(), found.end());
  }
  return changes;
}

}  // namespace heapline::bench
