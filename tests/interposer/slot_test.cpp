// A thread's slot (interposer/src/accounting.h): its pending bytes survive
// a threshold change, with cmpxchg16b and without it (the path of the few
// x86-64 processors that lack it, chosen once at init from cpuid).
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include "accounting.h"

namespace heapline::accounting {
namespace {

// On this thread's own slot (t_own), which the unit test's thread never
// registers: handed over with start_over, as the registry does.
void expect_threshold_change_keeps_pending(bool cx16) {
  const bool saved = g_cx16;
  g_cx16 = cx16;
  Slot& slot = t_own;
  EXPECT_EQ(slot.start_over(16 * 1024), 0);
  EXPECT_FALSE(add_crosses_threshold(10'000, kAllocCall));
  EXPECT_FALSE(remove_crosses_threshold(3'000, kFreeCall));
  EXPECT_EQ(slot.own_pending(), 7'000);
  slot.set_threshold(1024 * 1024);
  EXPECT_EQ(slot.own_pending(), 7'000);
  EXPECT_EQ(slot.pending_bytes(), 7'000);
  // The new threshold is the one in force: 1 MiB pending crosses it, less does not.
  EXPECT_FALSE(add_crosses_threshold(1024 * 1024 - 7'001, kAllocCall));
  EXPECT_TRUE(add_crosses_threshold(1, kAllocCall));
  slot.set_threshold(4096);  // pending above the new threshold: the next call publishes
  EXPECT_EQ(slot.own_pending(), 1024 * 1024);
  EXPECT_TRUE(remove_crosses_threshold(16, kFreeCall));
  EXPECT_EQ(slot.own_pending(), 1024 * 1024 - 16);
  // Handed back: what was pending, and from now on every call is the slow
  // path's, with nothing pending for a reader.
  EXPECT_EQ(slot.start_over(0), 1024 * 1024 - 16);
  EXPECT_TRUE(add_crosses_threshold(1, kAllocCall));
  EXPECT_EQ(slot.pending_bytes(), 0);
  g_cx16 = saved;
}

TEST(Slot, ThresholdChangeKeepsThePendingBytesWithCmpxchg16b) { expect_threshold_change_keeps_pending(true); }

TEST(Slot, ThresholdChangeKeepsThePendingBytesWithoutCmpxchg16b) { expect_threshold_change_keeps_pending(false); }

// A thread without a place in the registry (span 0) must take the slow
// path on every call, whatever its calls did before: a malloc's test is
// only the sign of its subtraction, so the headroom of a new thread's TLS
// and of a slot handed back must stay far below zero. Frees of blocks that
// other threads allocated push it up; 1 GiB of them must not let a malloc
// through.
TEST(Slot, WithoutAPlaceInTheRegistryEveryCallTakesTheSlowPath) {
  std::thread([] {
    for (int round = 0; round < 2; ++round) {  // a new thread's slot, then one handed back
      for (int i = 0; i < 1024; ++i) EXPECT_TRUE(remove_crosses_threshold(1 << 20, kFreeCall));
      EXPECT_TRUE(add_crosses_threshold(16, kAllocCall));
      EXPECT_TRUE(change_crosses_threshold(16, kReallocCall));
      EXPECT_TRUE(change_crosses_threshold(-16, kReallocCall));
      EXPECT_EQ(t_own.pending_bytes(), 0);
      EXPECT_EQ(t_own.start_over(16 * 1024), 0);
      EXPECT_FALSE(add_crosses_threshold(16, kAllocCall));
      EXPECT_EQ(t_own.start_over(0), 16);
    }
  }).join();
}

// The two tests of a registered slot: a malloc's (the sign of the
// subtraction) and every other change's (two-sided), at the threshold's
// edges on both sides.
TEST(Slot, TheThresholdIsCrossedAtExactlyItsValueOnEitherSide) {
  std::thread([] {
    EXPECT_EQ(t_own.start_over(4096), 0);
    EXPECT_FALSE(add_crosses_threshold(4095, kAllocCall));
    EXPECT_TRUE(add_crosses_threshold(1, kAllocCall));
    EXPECT_EQ(t_own.start_over(4096), 4096);
    EXPECT_FALSE(remove_crosses_threshold(4095, kFreeCall));
    EXPECT_TRUE(remove_crosses_threshold(1, kFreeCall));
    EXPECT_EQ(t_own.start_over(4096), -4096);
    EXPECT_FALSE(change_crosses_threshold(4095, kReallocCall));
    EXPECT_TRUE(change_crosses_threshold(1, kReallocCall));
    EXPECT_EQ(t_own.start_over(4096), 4096);
    EXPECT_FALSE(change_crosses_threshold(-4095, kReallocCall));
    EXPECT_TRUE(change_crosses_threshold(-1, kReallocCall));
    EXPECT_EQ(t_own.start_over(0), -4096);
  }).join();
}

}  // namespace
}  // namespace heapline::accounting
