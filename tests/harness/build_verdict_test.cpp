// The verdict on a build against its base (the pull-request gate).
#include "heapline_bench/verdicts/build_verdict.h"

#include <gtest/gtest.h>

namespace heapline::bench {
namespace {

TEST(BuildVerdict, ThresholdIsTheMinimumEffectOfTheFigure) {
  const VerdictRule rule;  // 0.2 points for instructions, 2 for the timed figures
  const auto above = judge_builds(0.10, 0.1021, Figure::instructions, rule, {});
  EXPECT_EQ(above.verdict, Verdict::regression);
  EXPECT_NEAR(above.change, 0.0021, 1e-12);
  EXPECT_DOUBLE_EQ(above.threshold, 0.002);
  EXPECT_EQ(judge_builds(0.10, 0.1019, Figure::instructions, rule, {}).verdict, Verdict::unchanged);
  EXPECT_EQ(judge_builds(0.10, 0.0979, Figure::instructions, rule, {}).verdict, Verdict::improvement);
  EXPECT_EQ(judge_builds(0.10, 0.11, Figure::cpu, rule, {}).verdict, Verdict::unchanged);
  EXPECT_EQ(judge_builds(0.10, 0.13, Figure::cpu, rule, {}).verdict, Verdict::regression);
}

TEST(BuildVerdict, ALargerSpreadGoalOfTheScenarioWidensTheThreshold) {
  const VerdictRule rule;
  const std::map<std::string, double> goals = {{"instructions", 0.5}, {"cpu", 3}};
  const auto within = judge_builds(0.10, 0.104, Figure::instructions, rule, goals);
  EXPECT_EQ(within.verdict, Verdict::unchanged);
  EXPECT_DOUBLE_EQ(within.threshold, 0.005);
  EXPECT_EQ(judge_builds(0.10, 0.106, Figure::instructions, rule, goals).verdict, Verdict::regression);
  // A goal below the minimum effect does not narrow it.
  EXPECT_DOUBLE_EQ(judge_builds(0.1, 0.1, Figure::instructions, rule, {{"instructions", 0.1}}).threshold, 0.002);
}

// The threshold is a least effect to exceed, the same way up and down: a
// change of exactly the threshold is neither a regression nor an
// improvement. (A 25-point goal, 0.25, and the changes below are exact in
// binary, so the boundary is met exactly.)
TEST(BuildVerdict, AChangeOfExactlyTheThresholdIsNoVerdictEitherWay) {
  const VerdictRule rule;
  const std::map<std::string, double> goals = {{"cpu", 25}};
  const auto up = judge_builds(0.5, 0.75, Figure::cpu, rule, goals);
  ASSERT_EQ(up.threshold, 0.25);
  ASSERT_EQ(up.change, 0.25);
  EXPECT_EQ(up.verdict, Verdict::unchanged);
  const auto down = judge_builds(0.5, 0.25, Figure::cpu, rule, goals);
  ASSERT_EQ(down.change, -0.25);
  EXPECT_EQ(down.verdict, Verdict::unchanged);
  EXPECT_EQ(judge_builds(0.5, 0.7500001, Figure::cpu, rule, goals).verdict, Verdict::regression);
  EXPECT_EQ(judge_builds(0.5, 0.2499999, Figure::cpu, rule, goals).verdict, Verdict::improvement);
}

}  // namespace
}  // namespace heapline::bench
