// The threshold policy (interposer/src/threshold_policy.h): a pure function
// of the published live heap and the configured precision.
#include "threshold_policy.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace heapline::accounting {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;

TEST(ThresholdPolicy, ExactModeIsOneByteWhateverTheHeap) {
  Precision exact;
  exact.exact = true;
  EXPECT_EQ(threshold_for(0, exact), 1);
  EXPECT_EQ(threshold_for(64 * kMiB, exact), 1);
}

TEST(ThresholdPolicy, SmallOrNegativeHeapsUseTheMinimum) {
  const Precision batched;  // 16 KiB, live / 64
  EXPECT_EQ(threshold_for(0, batched), 16 * kKiB);
  EXPECT_EQ(threshold_for(-5 * kMiB, batched), 16 * kKiB);  // a published value may dip below 0
  EXPECT_EQ(threshold_for(1 * kMiB, batched), 16 * kKiB);   // 1 MiB / 64 = 16 KiB exactly
}

TEST(ThresholdPolicy, LargeHeapsUseAFractionRoundedDownToAPowerOfTwo) {
  const Precision batched;
  EXPECT_EQ(threshold_for(64 * kMiB, batched), 1 * kMiB);
  // 100 MiB / 64 = 1.5625 MiB, rounded down: 1 MiB. It changes only when
  // the heap doubles or halves.
  EXPECT_EQ(threshold_for(100 * kMiB, batched), 1 * kMiB);
  EXPECT_EQ(threshold_for(128 * kMiB - 1, batched), 1 * kMiB);
  EXPECT_EQ(threshold_for(128 * kMiB, batched), 2 * kMiB);
}

TEST(ThresholdPolicy, FollowsTheConfiguredMinimumAndDivisor) {
  Precision custom;
  custom.min_bytes = 4096;
  custom.divisor = 1024;
  EXPECT_EQ(threshold_for(1 * kMiB, custom), 4096);
  EXPECT_EQ(threshold_for(64 * kMiB, custom), 64 * kKiB);
  Precision odd;
  odd.min_bytes = 3000;  // not a power of two: used as given below the fraction
  odd.divisor = 1;
  EXPECT_EQ(threshold_for(100, odd), 3000);
  EXPECT_EQ(threshold_for(5000, odd), 4096);
}


// The range a publish compares with: upwards exactly the live values that
// give the same threshold (at its end the policy changes); downwards half as
// far again, where the policy gives a smaller threshold, never a larger one.
void expect_range_is_exact(std::int64_t live, const Precision& precision) {
  const ThresholdRange range = threshold_range(live, precision);
  EXPECT_EQ(range.threshold, threshold_for(live, precision));
  EXPECT_LE(range.low, live);
  EXPECT_LT(live, range.high);
  if (range.low != INT64_MIN) {
    EXPECT_LT(threshold_for(range.low, precision), range.threshold) << live;
    EXPECT_EQ(threshold_for(2 * range.low, precision), range.threshold) << live;
    EXPECT_LT(threshold_for(2 * range.low - 1, precision), range.threshold) << live;
  }
  if (range.high != INT64_MAX) {
    EXPECT_EQ(threshold_for(range.high - 1, precision), range.threshold) << live;
    EXPECT_NE(threshold_for(range.high, precision), range.threshold) << live;
  }
}

TEST(ThresholdPolicy, RangeKeepsTheThresholdUntilTheHeapDoublesOrHalvesTwice) {
  const Precision batched;
  Precision odd;
  odd.min_bytes = 3000;
  odd.divisor = 1;
  Precision huge_divisor;
  huge_divisor.divisor = std::uint64_t{1} << 40;
  Precision exact;
  exact.exact = true;
  for (const Precision& precision : {batched, odd, huge_divisor}) {
    for (std::int64_t live : {std::int64_t{-5} * kMiB, std::int64_t{0}, std::int64_t{1}, 2 * kMiB - 1, 2 * kMiB,
                              100 * kMiB, 128 * kMiB, std::int64_t{3} << 40, INT64_MAX / 2, INT64_MAX - 1}) {
      expect_range_is_exact(live, precision);
    }
  }
  EXPECT_EQ(threshold_range(2 * kMiB - 1, batched).high, 2 * kMiB);  // 16 KiB until live / 64 reaches 32 KiB
  EXPECT_EQ(threshold_range(100 * kMiB, batched).low, 32 * kMiB);  // 1 MiB from 64 MiB, kept down to 32 MiB
  EXPECT_EQ(threshold_range(100 * kMiB, batched).high, 128 * kMiB);
  const ThresholdRange every_change = threshold_range(64 * kMiB, exact);
  EXPECT_EQ(every_change.threshold, 1);
  EXPECT_EQ(every_change.low, INT64_MIN);
  EXPECT_EQ(every_change.high, INT64_MAX);
}

}  // namespace
}  // namespace heapline::accounting
