// The verdict on one build against another (a pull request against its
// base), on a figure both measured the same way at the same time. There is
// no history to estimate the noise from: the threshold is the rule's
// minimum effect for the figure (VerdictRule::min_effect_of), or what the
// scenario's figure moves when nothing changed (the catalogue's
// spread_goal_points) when that is larger. A change above the threshold is a
// regression, below minus the threshold an improvement.
#pragma once

#include <map>
#include <string>

#include "heapline_bench/history/history.h"
#include "heapline_bench/verdicts/verdict.h"

namespace heapline::bench {

struct BuildVerdict {
  Verdict verdict = Verdict::unchanged;
  double change = 0;     // head - base, as a ratio (0.004: 0.4 points)
  double threshold = 0;  // the change needed for a verdict, as a ratio
};

// `spread_goal_points`: the scenario's goals by figure name (catalogue.h).
BuildVerdict judge_builds(double base, double head, Figure figure, const VerdictRule& rule,
                          const std::map<std::string, double>& spread_goal_points);

}  // namespace heapline::bench
