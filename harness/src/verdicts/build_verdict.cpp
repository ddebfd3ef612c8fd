#include "heapline_bench/verdicts/build_verdict.h"

#include <algorithm>

namespace heapline::bench {

BuildVerdict judge_builds(double base, double head, Figure figure, const VerdictRule& rule,
                          const std::map<std::string, double>& spread_goal_points) {
  BuildVerdict v;
  v.change = head - base;
  v.threshold = rule.min_effect_of(figure);
  if (const auto goal = spread_goal_points.find(figure_name(figure)); goal != spread_goal_points.end())
    v.threshold = std::max(v.threshold, goal->second / 100);
  if (v.change > v.threshold) v.verdict = Verdict::regression;
  else if (-v.change > v.threshold) v.verdict = Verdict::improvement;
  return v;
}

}  // namespace heapline::bench
