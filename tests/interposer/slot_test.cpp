// A thread's slot (interposer/src/accounting/accounting.h): its pending bytes survive
// a threshold change and a request to step down; a handover returns them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#include "accounting.h"
#include "process.h"
#include "slow_paths.h"

namespace heapline::accounting {
namespace {

// What a slot holds back, as a reader and a handover compute it: the
// threshold's bias less the headroom while it has a threshold and counts,
// a negative headroom included (a signal handler's bytes past the
// threshold); nothing without a threshold or with an idle headroom, however
// far a handler's bytes moved it.
// The identity page (process.h) is a page of its own on every kernel of
// the processor: MADV_WIPEONFORK takes whole pages, so it is aligned to and
// covers the largest page (64 KiB on arm64, whose kernels use 4, 16 or 64
// KiB pages; a 4 KiB page of its own was refused there, or wiped the
// library's neighbouring state in a copy).
TEST(IdentityPage, IsTheLargestPageOfTheProcessorAndHasItAlone) {
  EXPECT_EQ(alignof(IdentityPage), arch::kLargestPageBytes);
  EXPECT_EQ(sizeof(IdentityPage), arch::kLargestPageBytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&g_identity) % arch::kLargestPageBytes, 0u);
#if defined(__aarch64__)
  EXPECT_EQ(arch::kLargestPageBytes, 65536u);
#endif
}

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

// Runs an owner thread whose slot holds 50 000 bytes pending at a 64 KiB
// threshold, then `meanwhile` on the caller's thread with that slot while
// the owner waits, then `then` on the owner's.
void with_waiting_owner(const std::function<void(Slot&)>& meanwhile, const std::function<void()>& then) {
  Slot* slot = nullptr;
  std::atomic<int> step{0};
  std::thread owner([&] {
    slot = &t_own;
    t_own.start_over(64 * 1024);
    EXPECT_FALSE(add_crosses_threshold(50'000, kAllocCall));
    step = 1;
    while (step != 2) std::this_thread::yield();
    then();
  });
  while (step != 1) std::this_thread::yield();
  meanwhile(*slot);
  step = 2;
  owner.join();
}

// Another thread asks a slot above the fair share to step down: its span
// goes to 0, its pending bytes stay what they were (counted from its
// threshold), its next free fails the two-sided test (and publishes), and
// a malloc still crosses only at the threshold.
TEST(Slot, AskedToStepDownTheNextFreePublishesAndNothingIsLost) {
  with_waiting_owner(
      [](Slot& slot) {
        EXPECT_FALSE(slot.ask_to_step_down(64 * 1024));  // not above a target of 64 KiB
        EXPECT_TRUE(slot.ask_to_step_down(32 * 1024));
        EXPECT_FALSE(slot.ask_to_step_down(32 * 1024));  // asked already
        EXPECT_EQ(slot.pending_bytes(), 50'000);
      },
      [] {
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
    EXPECT_EQ(t_own.span, span_of(32 * 1024));
    EXPECT_EQ(t_own.own_pending(), 64'000);
    EXPECT_EQ(t_own.start_over(0), 64'000);
      });
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

// A threshold above the free window's cap (one lent from the headroom
// below the peak) holds back allocations up to itself but frees only up to
// the cap: a drop shows at once however far below the peak
// (precision_budget.h).
TEST(Slot, AThresholdAboveTheFreeWindowsCapHoldsBackFreesOnlyUpToIt) {
  ASSERT_TRUE(ensure_process_init());
  const std::int64_t fair = g_policy.free_window.load();
  ASSERT_GT(fair, 1);
  std::thread([fair] {
    const std::int64_t threshold = 64 * fair;
    EXPECT_EQ(free_window(threshold), fair);
    EXPECT_EQ(free_window(fair / 2), fair / 2);
    EXPECT_EQ(t_own.start_over(threshold), 0);
    EXPECT_FALSE(add_crosses_threshold(threshold - 1, kAllocCall));
    EXPECT_TRUE(add_crosses_threshold(1, kAllocCall));
    EXPECT_EQ(t_own.start_over(threshold), threshold);
    EXPECT_FALSE(remove_crosses_threshold(fair - 1, kFreeCall));
    EXPECT_TRUE(remove_crosses_threshold(1, kFreeCall));
    EXPECT_EQ(t_own.start_over(threshold), -fair);
    EXPECT_FALSE(change_crosses_threshold(-(fair - 1), kReallocCall));
    EXPECT_TRUE(change_crosses_threshold(-1, kReallocCall));
    EXPECT_EQ(t_own.start_over(0), -fair);
  }).join();
}


// A revoked slot whose owner is idle (accounting.h, "Revoked"): the
// revoker's mark and offset, then its adoption of the pending bytes, which
// readers no longer count in the slot, and no share either; the owner's
// next call takes the slow path whatever its kind, and it settles: the
// offset and the adopted bytes out, threshold 1, nothing of its own to
// give back, its later bytes pending as before.
TEST(Slot, ARevokerAdoptsAnIdleOwnersPendingBytesAndTheOwnerSettles) {
  with_waiting_owner(
      [](Slot& slot) {
        EXPECT_EQ(slot.reserved_share(), 64 * 1024 - 1);
        EXPECT_TRUE(slot.mark_revoking());
        EXPECT_FALSE(slot.mark_revoking()) << "one revocation at a time";
        slot.place_revocation_offset();
        EXPECT_EQ(slot.pending_bytes(), 50'000) << "the offset is not the owner's bytes";
        EXPECT_FALSE(slot.revocation_erased());
        std::int64_t pending = 0;
        std::int64_t share = 0;
        ASSERT_TRUE(slot.adopt(&pending, &share));
        EXPECT_EQ(pending, 50'000);
        EXPECT_EQ(share, 64 * 1024 - 1);
        EXPECT_EQ(slot.pending_bytes(), 0) << "published by the revoker";
        EXPECT_EQ(slot.reserved_share(), 0) << "released by the revoker";
      },
      [] {
    EXPECT_TRUE(remove_crosses_threshold(16, kFreeCall));  // a free, the two-sided test
    EXPECT_TRUE(add_crosses_threshold(32, kAllocCall));    // a malloc, the sign of its subtraction
    EXPECT_TRUE(t_own.revoked());
    t_own.begin_change();
    EXPECT_EQ(t_own.settle_revocation(), 0) << "the revoker gave the share back";
    t_own.end_change();
    EXPECT_FALSE(t_own.revoked());
    EXPECT_EQ(revocation_of(t_own.control.load()), kNotRevoked);
    EXPECT_EQ(t_own.held, 1);
    EXPECT_EQ(t_own.own_pending(), 16);  // -16 + 32: the calls after the adoption
    EXPECT_EQ(t_own.pending_bytes(), 16);
    EXPECT_EQ(t_own.start_over(0), 16);
      });
}

// The owner sees the offset before the revoker adopts: it takes the
// revocation over, keeps its pending bytes (it publishes them itself) and
// gives its share back itself; the revoker then finds nothing to adopt.
TEST(Slot, AnOwnerThatSeesTheOffsetFirstTakesTheRevocationOver) {
  std::thread([] {
    t_own.start_over(64 * 1024);
    EXPECT_FALSE(add_crosses_threshold(50'000, kAllocCall));
    ASSERT_TRUE(t_own.mark_revoking());
    t_own.place_revocation_offset();
    EXPECT_TRUE(add_crosses_threshold(100, kAllocCall));
    t_own.begin_change();
    std::int64_t pending = 0;
    std::int64_t share = 0;
    EXPECT_FALSE(t_own.adopt(&pending, &share)) << "inside the owner's change";
    EXPECT_EQ(t_own.settle_revocation(), 64 * 1024 - 1) << "the owner's to give back";
    t_own.end_change();
    EXPECT_FALSE(t_own.adopt(&pending, &share)) << "settled";
    EXPECT_EQ(t_own.own_pending(), 50'100);
    EXPECT_EQ(t_own.start_over(0), 50'100);
  }).join();
}

// A call in flight (its bytes subtracted, its slow path not reached yet)
// may leave more pending than the share: the revoker adopts the share's
// worth of it (publishing more for the owner would raise the exposure
// beyond what the share it releases covered), and the rest stays pending
// for the owner's slow path; the owner, stopped there by its program, holds
// no room that a publish waits for.
TEST(Slot, OnlyTheSharesWorthOfPendingBytesIsAdopted) {
  std::thread([] {
    t_own.start_over(4096);
    EXPECT_TRUE(add_crosses_threshold(50'000, kAllocCall));  // the slow path is next
    ASSERT_TRUE(t_own.mark_revoking());
    t_own.place_revocation_offset();
    std::int64_t pending = 0;
    std::int64_t share = 0;
    ASSERT_TRUE(t_own.adopt(&pending, &share)) << "an owner inside a call is no reason to wait";
    EXPECT_EQ(pending, 4095) << "the share's worth of the 50 000 bytes";
    EXPECT_EQ(share, 4095);
    EXPECT_EQ(t_own.pending_bytes(), 50'000 - 4095) << "the rest is still the owner's";
    t_own.begin_change();
    EXPECT_EQ(t_own.settle_revocation(), 0) << "the revoker gave the share back";
    t_own.end_change();
    EXPECT_EQ(t_own.held, 1);
    EXPECT_EQ(t_own.start_over(0), 50'000 - 4095);
    // At the share itself, adopted.
    t_own.start_over(4096);
    EXPECT_FALSE(add_crosses_threshold(4095, kAllocCall));
    ASSERT_TRUE(t_own.mark_revoking());
    t_own.place_revocation_offset();
    ASSERT_TRUE(t_own.adopt(&pending, &share));
    EXPECT_EQ(pending, 4095);
    EXPECT_EQ(share, 4095);
    std::int64_t left = -1;
    EXPECT_EQ(t_own.start_over(0, nullptr, &left), 0);
    EXPECT_EQ(left, 0) << "the revoker released the share";
  }).join();
}

// A publish takes its bytes out of the headroom before it commits them;
// until then only the share covers them, so a revoker that adopts the slot
// meanwhile keeps that much of the share in `reserved` (beside what it
// adopts, never more than the share), and the owner releases it when it
// settles, its publish committed.
TEST(Slot, ARevokerKeepsThePartOfTheShareThatCoversAPublishInFlight) {
  std::thread([] {
    t_own.start_over(4096);
    EXPECT_FALSE(add_crosses_threshold(1'000, kAllocCall));
    t_own.in_flight.store(1'000);  // the owner's publish, as publish_own_pending makes it
    take_pending(t_own, 1'000);
    ASSERT_TRUE(t_own.mark_revoking());
    t_own.place_revocation_offset();
    std::int64_t pending = -1;
    std::int64_t share = -1;
    ASSERT_TRUE(t_own.adopt(&pending, &share));
    EXPECT_EQ(pending, 0);
    EXPECT_EQ(share, 4095 - 1'000) << "the revoker releases all but what covers the publish";
    t_own.in_flight.store(0);  // committed
    t_own.begin_change();
    EXPECT_EQ(t_own.settle_revocation(), 1'000) << "the owner's to release";
    t_own.end_change();
    EXPECT_EQ(t_own.start_over(0), 0);
    // Pending bytes and a publish in flight above the share together: the
    // share covers what it can, the adopted bytes first.
    t_own.start_over(4096);
    EXPECT_FALSE(add_crosses_threshold(3'500, kAllocCall));
    t_own.in_flight.store(1'000);
    ASSERT_TRUE(t_own.mark_revoking());
    t_own.place_revocation_offset();
    ASSERT_TRUE(t_own.adopt(&pending, &share));
    EXPECT_EQ(pending, 3'500);
    EXPECT_EQ(share, 3'500) << "4095 less the 595 bytes left to cover the publish";
    t_own.in_flight.store(0);
    std::int64_t left = -1;
    EXPECT_EQ(t_own.start_over(0, nullptr, &left), 0);
    EXPECT_EQ(left, 595);
  }).join();
}

// An unlocked change of the owner's that read the headroom before the
// revoker's subtraction and stored after it erases the offset whole: the
// revoker sees it gone while the slot is still marked, and subtracts it
// again; an owner's handover (its exit) takes a present offset out with the
// pending bytes, and tells whether the revoker had released the share.
TEST(Slot, AnErasedOffsetIsToldFromASettledOneAndAHandoverSettlesTheRevocation) {
  std::thread([] {
    t_own.start_over(64 * 1024);
    EXPECT_FALSE(add_crosses_threshold(1'000, kAllocCall));
    ASSERT_TRUE(t_own.mark_revoking());
    const std::int64_t before = t_own.headroom.load();
    t_own.place_revocation_offset();
    t_own.headroom.store(before - 24);  // the owner's malloc of 24 bytes, read before the offset
    EXPECT_TRUE(t_own.revocation_erased());
    EXPECT_EQ(t_own.pending_bytes(), 1'024);
    // A revoker out of rounds gives it up: unmarked, so that a later
    // revocation can mark the slot again (a mark left behind would keep
    // every later revocation away from it), the pending bytes untouched.
    t_own.unmark_revoking();
    EXPECT_EQ(revocation_of(t_own.control.load()), kNotRevoked);
    EXPECT_FALSE(t_own.revoked());
    EXPECT_EQ(t_own.pending_bytes(), 1'024);
    ASSERT_TRUE(t_own.mark_revoking()) << "revocable again";
    t_own.place_revocation_offset();
    EXPECT_FALSE(t_own.revocation_erased());
    EXPECT_EQ(t_own.pending_bytes(), 1'024);
    std::int64_t pending = 0;
    std::int64_t share = 0;
    ASSERT_TRUE(t_own.adopt(&pending, &share));
    EXPECT_EQ(pending, 1'024);
    EXPECT_TRUE(add_crosses_threshold(1, kAllocCall)) << "while revoked, every call is the slow path's";
    std::int64_t left = -1;
    std::int64_t replaced = 0;
    EXPECT_EQ(t_own.start_over(0, &replaced, &left), 1) << "what came after the adoption";
    EXPECT_EQ(left, 0);
    EXPECT_EQ(replaced, 64 * 1024);
    EXPECT_EQ(revocation_of(t_own.control.load()), kNotRevoked);
    // Taken over at the handover: the pending bytes are the owner's, and so is the share.
    t_own.start_over(4096);
    EXPECT_FALSE(add_crosses_threshold(100, kAllocCall));
    ASSERT_TRUE(t_own.mark_revoking());
    t_own.place_revocation_offset();
    EXPECT_EQ(t_own.start_over(0, &replaced, &left), 100);
    EXPECT_EQ(left, 4095) << "the owner's to release";
    EXPECT_EQ(revocation_of(t_own.control.load()), kNotRevoked);
  }).join();
}

}  // namespace
}  // namespace heapline::accounting
