// The publish clock's choice (publish_clock.h): the coarse clock only while
// its tick is at most half the sampling interval, its readings then one tick
// later (the coarse clock lags by 0 to 2 ticks).
#include "publish_clock.h"

#include <gtest/gtest.h>

namespace heapline::accounting {
namespace {

constexpr std::uint64_t kMs = 1'000'000;

TEST(PublishClock, CoarseWhenItsTickIsAtMostHalfTheInterval) {
  EXPECT_EQ(publish_clock_for(10 * kMs, 4 * kMs).clock, CLOCK_MONOTONIC_COARSE);  // HZ=250, the default interval
  EXPECT_EQ(publish_clock_for(10 * kMs, 5 * kMs).clock, CLOCK_MONOTONIC_COARSE);  // exactly half
  EXPECT_EQ(publish_clock_for(10 * kMs, 1 * kMs).clock, CLOCK_MONOTONIC_COARSE);  // HZ=1000
}

TEST(PublishClock, PreciseWhenTheTickIsTooCoarseForTheInterval) {
  EXPECT_EQ(publish_clock_for(10 * kMs, 10 * kMs).clock, CLOCK_MONOTONIC);  // HZ=100
  EXPECT_EQ(publish_clock_for(10 * kMs, 5 * kMs + 1).clock, CLOCK_MONOTONIC);
  EXPECT_EQ(publish_clock_for(1 * kMs, 4 * kMs).clock, CLOCK_MONOTONIC);  // HEAPLINE_INTERVAL_MS=1
  EXPECT_EQ(publish_clock_for(0, 4 * kMs).clock, CLOCK_MONOTONIC);        // a sample at every publish
}

TEST(PublishClock, CoarseReadingsAreMovedOneTickLaterPreciseOnesNot) {
  EXPECT_EQ(publish_clock_for(10 * kMs, 4 * kMs).offset_ns, 4 * kMs);
  EXPECT_EQ(publish_clock_for(10 * kMs, 1 * kMs).offset_ns, 1 * kMs);
  EXPECT_EQ(publish_clock_for(10 * kMs, 10 * kMs).offset_ns, 0u);
  EXPECT_EQ(publish_clock_for(10 * kMs, 0).offset_ns, 0u);
}

TEST(PublishClock, PreciseWhenTheTickIsUnknown) { EXPECT_EQ(publish_clock_for(10 * kMs, 0).clock, CLOCK_MONOTONIC); }

TEST(PublishClock, FollowsTheIntervalAsItDoubles) {
  EXPECT_EQ(publish_clock_for(4 * kMs, 4 * kMs).clock, CLOCK_MONOTONIC);
  EXPECT_EQ(publish_clock_for(8 * kMs, 4 * kMs).clock, CLOCK_MONOTONIC_COARSE);
}

}  // namespace
}  // namespace heapline::accounting
