// A thread's slot (interposer/src/accounting/accounting.h): its pending bytes survive
// a threshold change and a request to step down; a handover returns them.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include "accounting.h"

namespace heapline::accounting {
namespace {

// What a slot holds back, as a reader and a handover compute it: the
// threshold's bias less the headroom while it has a threshold and counts,
// a negative headroom included (a signal handler's bytes past the
// threshold); nothing without a threshold or with an idle headroom, however
// far a handler's bytes moved it.
TEST(Slot, PendingIsHeldBackOnlyByAThresholdThatCounts) {
  EXPECT_EQ(pending_of(100, 99), 0);
  EXPECT_EQ(pending_of(100, 49), 50);
  EXPECT_EQ(pending_of(100, 149), -50);
  EXPECT_EQ(pending_of(100, -51), 150);
  EXPECT_EQ(pending_of(0, 49), 0) << "no threshold";
  EXPECT_EQ(pending_of(100, kIdleHeadroom), 0) << "idle";
  EXPECT_EQ(pending_of(100, kIdleHeadroom + 1'000'000), 0) << "idle, moved by a handler's bytes";
  EXPECT_EQ(pending_of(100, kIdleHeadroom - 1'000'000), 0) << "idle, moved the other way";
}

// On a fresh thread's own slot (t_own), which the test never registers:
// handed over with start_over, as the registry does.
TEST(Slot, ThresholdChangeKeepsThePendingBytes) {
  std::thread([] {
    Slot& slot = t_own;
    EXPECT_FALSE(slot.counting());  // a new thread's TLS: idle
    std::int64_t replaced = -1;
    EXPECT_EQ(slot.start_over(16 * 1024, &replaced), 0);
    EXPECT_EQ(replaced, 0);
    EXPECT_TRUE(slot.counting());
    EXPECT_FALSE(add_crosses_threshold(10'000, kAllocCall));
    EXPECT_FALSE(remove_crosses_threshold(3'000, kFreeCall));
    EXPECT_EQ(slot.own_pending(), 7'000);
    slot.begin_change();
    EXPECT_TRUE(slot.changing());
    slot.set_threshold(1024 * 1024);
    slot.end_change();
    EXPECT_FALSE(slot.changing());
    EXPECT_EQ(slot.own_pending(), 7'000);
    EXPECT_EQ(slot.pending_bytes(), 7'000);
    // The new threshold is the one in force: 1 MiB pending crosses it, less does not.
    EXPECT_FALSE(add_crosses_threshold(1024 * 1024 - 7'001, kAllocCall));
    EXPECT_TRUE(add_crosses_threshold(1, kAllocCall));
    slot.begin_change();
    slot.set_threshold(4096);  // pending above the new threshold: the next call publishes
    slot.end_change();
    EXPECT_EQ(slot.own_pending(), 1024 * 1024);
    EXPECT_TRUE(remove_crosses_threshold(16, kFreeCall));
    EXPECT_EQ(slot.own_pending(), 1024 * 1024 - 16);
    // Handed back: what was pending and the threshold, and from now on
    // every call is the slow path's, with nothing pending for a reader.
    EXPECT_EQ(slot.start_over(0, &replaced), 1024 * 1024 - 16);
    EXPECT_EQ(replaced, 4096);
    EXPECT_FALSE(slot.counting());
    EXPECT_TRUE(add_crosses_threshold(1, kAllocCall));
    EXPECT_EQ(slot.pending_bytes(), 0);
  }).join();
}

// Another thread asks a slot above the fair share to step down: its span
// goes to 0, its pending bytes stay what they were (counted from its
// threshold), its next free fails the two-sided test (and publishes), and
// a malloc still crosses only at the threshold.
TEST(Slot, AskedToStepDownTheNextFreePublishesAndNothingIsLost) {
  Slot* slot = nullptr;
  std::atomic<int> step{0};
  std::thread owner([&] {
    slot = &t_own;
    t_own.start_over(64 * 1024);
    EXPECT_FALSE(add_crosses_threshold(50'000, kAllocCall));
    step = 1;
    while (step != 2) std::this_thread::yield();
    EXPECT_TRUE(t_own.counting());
    EXPECT_EQ(t_own.span, 0u);
    EXPECT_EQ(t_own.own_pending(), 50'000);
    EXPECT_FALSE(add_crosses_threshold(14'000, kAllocCall));  // 64 000 pending: below 64 KiB
    EXPECT_TRUE(add_crosses_threshold(1'536, kAllocCall));    // 65 536: at it
    EXPECT_TRUE(remove_crosses_threshold(1'536, kFreeCall));  // any free now
    EXPECT_EQ(t_own.own_pending(), 64'000);
    // The owner's answer: its threshold down to the fair share, the span back.
    t_own.begin_change();
    t_own.set_threshold(32 * 1024);
    t_own.end_change();
    EXPECT_EQ(t_own.span, 2u * 32 * 1024 - 1);
    EXPECT_EQ(t_own.own_pending(), 64'000);
    EXPECT_EQ(t_own.start_over(0), 64'000);
  });
  while (step != 1) std::this_thread::yield();
  EXPECT_FALSE(slot->ask_to_step_down(2 * 64 * 1024 - 1));  // not above a fair share of 64 KiB
  EXPECT_TRUE(slot->ask_to_step_down(2 * 32 * 1024 - 1));
  EXPECT_FALSE(slot->ask_to_step_down(2 * 32 * 1024 - 1));  // asked already
  EXPECT_EQ(slot->pending_bytes(), 50'000);
  step = 2;
  owner.join();
}

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
      EXPECT_FALSE(t_own.counting());  // still idle: the slow path tells it from a slot asked to step down
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
