#include "heapline_bench/verdicts/verdict.h"

#include <algorithm>
#include <set>
#include <cmath>
#include <numbers>
#include <optional>

#include "heapline_bench/measurement/statistics.h"

namespace heapline::bench {

double VerdictRule::min_effect_of(Figure figure) const {
  return figure == Figure::instructions ? instructions_min_effect : min_effect;
}

double VerdictRule::noise_floor_of(Figure figure) const {
  return figure == Figure::instructions ? instructions_noise_floor : noise_floor;
}

double VerdictRule::quantile(int n) const {
  // Qn is 82% efficient for large n, less for the short histories judged
  // here: 0.5 n degrees of freedom keeps the simulated A/A false-alarm rate
  // within the documented 5% from 8 to 20 points (verdict_test.cpp), where
  // the MAD needed 0.37 n and a wider threshold.
  const double dof = std::max(3.0, 0.5 * n);
  const int tests = std::max(scenarios, 1) * std::max(figures, 1);
  return student_t_quantile(1 - false_alarm_rate / (2.0 * tests), dof);
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

std::vector<std::size_t> comparable_series(const History& history, std::size_t index, Figure figure) {
  const HistoryEntry& point = history.entries.at(index);
  std::vector<std::size_t> series;
  if (!point.figure(figure).present) return series;
  const SeriesKey key = series_key(point, figure);
  for (std::size_t i = 0; i <= index; ++i) {
    const HistoryEntry& e = history.entries[i];
    // Cheap fields first: the page judges 375 cells of a 100 000-point store.
    if (e.scenario == point.scenario && e.figure(figure).present && series_key(e, figure) == key)
      series.push_back(i);
  }
  return series;
}

namespace {

// One figure's series, replayed point by point (see verdict.h, Segments).
class SeriesJudge {
 public:
  SeriesJudge(const History& history, std::vector<std::size_t> series, Figure figure, const VerdictRule& rule,
              double calibrated_sigma)
      : history_(history), series_(std::move(series)), figure_(figure), rule_(rule), calibrated_(calibrated_sigma) {
    for (std::size_t i : series_) values_.push_back(history_.entries[i].figure(figure_));
  }

  // The verdict on the last point of the series, after replaying the
  // segments over the `lookback` points before it.
  PointVerdict judge_last(std::size_t lookback) {
    const std::size_t last = series_.size() - 1;
    segment_begin_ = last > lookback ? last - lookback : 0;
    PointVerdict verdict;
    for (std::size_t pos = segment_begin_; pos <= last; ++pos) {
      resolve_pending(pos);
      verdict = judge(pos);
      if (verdict.verdict == Verdict::regression || verdict.verdict == Verdict::improvement) {
        pending_ = pos;
        pending_verdict_ = verdict.verdict;
      }
    }
    return verdict;
  }

 private:
  // A flagged point is an established step when the next point is flagged
  // the same way against the same segment (two in a row: by chance, about
  // the square of the false-alarm rate). Otherwise it stays an ordinary
  // member of its segment: the median and the MAD are not moved by a one-off,
  // and leaving it out would bias the noise low.
  void resolve_pending(std::size_t pos) {
    if (!pending_) return;
    const std::size_t flagged_pos = *pending_;
    pending_.reset();
    if (judge(pos).verdict != pending_verdict_) return;
    carried_noise_ = last_sample_noise_;
    carried_points_ = last_sample_points_;
    segment_begin_ = flagged_pos;
    established_ = true;
  }

  PointVerdict judge(std::size_t pos) {
    const HistoryEntry& point = history_.entries[series_[pos]];
    const FigureValue& value = values_[pos];
    PointVerdict v;
    v.scenario = point.scenario;
    v.fingerprint = point.fingerprint;
    v.figure = figure_;
    v.point = &point;
    v.value = value.overhead;
    if (established_) v.segment_start = &history_.entries[series_[segment_begin_]];

    std::vector<double> earlier;
    for (std::size_t p = pos; p-- > segment_begin_ && static_cast<int>(earlier.size()) < rule_.window;)
      earlier.push_back(values_[p].overhead);
    v.baseline_points = static_cast<int>(earlier.size());

    double sample_noise = 0;
    if (v.baseline_points >= rule_.min_history) {
      // Qn: as robust as the MAD, twice as efficient, so a short history
      // gives a usable threshold (statistics.h).
      sample_noise = qn_sigma(earlier);
      v.history = v.baseline_points;
      last_sample_noise_ = sample_noise;
      last_sample_points_ = v.history;
    } else if (carried_points_ > 0 && v.baseline_points > 0) {
      // A young segment: the noise of the machine did not change with the
      // step, so the previous segment's estimate stands in.
      sample_noise = carried_noise_;
      v.history = carried_points_;
    } else {
      v.history = v.baseline_points;
      return v;  // insufficient history
    }

    v.baseline = median(earlier);
    v.noise = std::max({sample_noise, calibrated_, rule_.noise_floor_of(figure_)});
    const double n = static_cast<double>(v.baseline_points);
    v.threshold = std::max(rule_.min_effect_of(figure_),
                           quantile(v.history) * v.noise * std::sqrt(1 + std::numbers::pi / (2 * n)));
    v.change = value.overhead - v.baseline;
    if (v.change > v.threshold && value.low > v.baseline) v.verdict = Verdict::regression;
    else if (-v.change > v.threshold && value.high < v.baseline) v.verdict = Verdict::improvement;
    else v.verdict = Verdict::unchanged;
    return v;
  }

  // The replay asks for the same few quantiles again and again; each is a
  // bisection on erfc.
  double quantile(int n) {
    const auto at = static_cast<std::size_t>(n);
    if (quantiles_.size() <= at) quantiles_.resize(at + 1, -1);
    if (quantiles_[at] < 0) quantiles_[at] = rule_.quantile(n);
    return quantiles_[at];
  }

  const History& history_;
  std::vector<std::size_t> series_;
  std::vector<double> quantiles_;
  std::vector<FigureValue> values_;
  Figure figure_;
  const VerdictRule& rule_;
  double calibrated_;

  std::size_t segment_begin_ = 0;
  bool established_ = false;
  std::optional<std::size_t> pending_;
  Verdict pending_verdict_ = Verdict::unchanged;
  double last_sample_noise_ = 0;
  int last_sample_points_ = 0;
  double carried_noise_ = 0;
  int carried_points_ = 0;
};

}  // namespace

PointVerdict judge_point(const History& history, std::size_t index, Figure figure, const VerdictRule& rule,
                         const std::vector<NoiseCalibration>& calibrations, std::size_t lookback) {
  const HistoryEntry& point = history.entries.at(index);
  auto series = comparable_series(history, index, figure);
  if (series.empty()) {
    PointVerdict absent;
    absent.scenario = point.scenario;
    absent.fingerprint = point.fingerprint;
    absent.figure = figure;
    absent.point = &point;
    return absent;
  }
  double calibrated = 0;
  const std::string& command = series_key(point, figure).command;
  for (const auto& c : calibrations)
    if (c.scenario == point.scenario && c.fingerprint == point.fingerprint && c.figure == figure &&
        c.scale == point.scale && c.command == command)
      calibrated = std::max(calibrated, c.sigma);
  return SeriesJudge(history, std::move(series), figure, rule, calibrated).judge_last(lookback);
}

PointVerdict judge_point(const History& history, std::size_t index, const VerdictRule& rule,
                         const std::vector<NoiseCalibration>& calibrations) {
  return judge_point(history, index, Figure::wall, rule, calibrations);
}

std::vector<std::size_t> newest_points(const History& history, const std::string& scenario) {
  std::vector<std::size_t> points;
  std::set<std::string> machines;
  const std::string* commit = nullptr;
  for (std::size_t i = history.entries.size(); i-- > 0;) {
    const HistoryEntry& entry = history.entries[i];
    if (entry.scenario != scenario) continue;
    if (commit == nullptr) {
      commit = &entry.commit;
    } else if (commit->empty() || entry.commit != *commit) {
      continue;  // another commit's (a point without a commit stands alone)
    }
    if (machines.insert(entry.fingerprint).second) points.push_back(i);
  }
  return points;
}

std::vector<PointVerdict> judge_newest(const History& history, const std::vector<std::string>& scenarios,
                                       const VerdictRule& rule, const std::vector<NoiseCalibration>& calibrations,
                                       std::span<const Figure> figures) {
  std::vector<PointVerdict> verdicts;
  for (const auto& scenario : scenarios)
    for (std::size_t i : newest_points(history, scenario))
      for (Figure figure : figures)
        if (history.entries[i].figure(figure).present)
          verdicts.push_back(judge_point(history, i, figure, rule, calibrations));
  return verdicts;
}

}  // namespace heapline::bench
