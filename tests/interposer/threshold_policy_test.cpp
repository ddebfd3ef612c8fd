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

}  // namespace
}  // namespace heapline::accounting
