// The precision budget at work: threads that allocate through the
// accounting's own hot path and slow path (what the allocation wrappers
// call), with the registry, the publishes and the requests to step down of
// the library itself. At every pause of all of them: the shares they hold
// are within `reserved`, `reserved` within the budget, each pending delta
// within its share, and published + pending is exact.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "mapped_memory.h"
#include "precision_budget.h"
#include "process.h"
#include "published.h"
#include "slow_paths.h"
#include "thread_registry.h"

namespace heapline::accounting {
namespace {

// A malloc and a free of `bytes`, as alloc_override.cpp makes them.
void allocated(std::int64_t bytes) {
  if (add_crosses_threshold(bytes, kAllocCall)) publish(bytes, kAllocCall);
}
void freed(std::int64_t bytes) {
  if (remove_crosses_threshold(bytes, kFreeCall)) publish(-bytes, kFreeCall);
}

// What the threads may hold back together now (threshold_policy.h's
// reserve_limit, with the published figures as they are).
std::int64_t reserve_limit_now() {
  const std::int64_t live = g_published.live.load();
  const std::int64_t peak = std::max(g_published.peak.load(), live);
  return reserve_limit(live, peak, g_budget.bytes.load(), g_budget.lends_headroom.load());
}

struct Held {
  std::int64_t shares = 0;
  std::int64_t pending = 0;
  std::int64_t worst_excess = 0;  // the largest |pending| − share of one slot
  int below_fair_share = 0;
};

Held held_by_registry() {
  RegistryReader reading;
  Held held;
  const std::uint32_t used = g_threads.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    const Slot* slot = g_registry[i].slot.load(std::memory_order_seq_cst);
    if (slot == nullptr) continue;
    const std::int64_t share = slot->reserved_share();
    const std::int64_t pending = slot->pending_bytes();
    held.shares += share;
    held.pending += pending;
    held.worst_excess = std::max<std::int64_t>(held.worst_excess, std::llabs(pending) - share);
    if (static_cast<std::uint64_t>(slot->held) < fair_share(g_budget.bytes.load(), g_budget.divider.load())) {
      ++held.below_fair_share;
    }
  }
  return held;
}

// At a pause of every thread: the true heap (published + pending) within
// the stated bound of the peak, the stated bound within B, each pending
// delta within its share, the shares within `reserved` and `reserved`
// within the limit. Returns what the registry holds.
Held check_the_bound(const char* phase) {
  const Held held = held_by_registry();
  const std::int64_t peak = g_published.peak.load();
  const std::int64_t bound = g_budget.bound.load();
  EXPECT_LE(g_published.live.load() + held.pending - peak, bound) << phase;
  EXPECT_LE(bound, static_cast<std::int64_t>(budget_for_peak(peak, g_process.config.precision))) << phase;
  EXPECT_LE(held.worst_excess, 0) << phase;
  EXPECT_LE(held.shares, g_published.reserved.load()) << phase;
  EXPECT_LE(g_published.reserved.load(), reserve_limit_now()) << phase;
  return held;
}

// A peak of 1 GiB at least (the accounting's own calls: no memory, made
// by a thread of its own, which exits), far above the heap; returns how
// many MiB take the heap from here back past it.
std::int64_t mebibytes_past_a_far_peak() {
  constexpr std::int64_t kMiB = 1 << 20;
  std::thread([&] {
    for (int i = 0; i < 1024; ++i) allocated(kMiB);
    for (int i = 0; i < 1024; ++i) freed(kMiB);
  }).join();
  return (g_published.peak.load() - g_published.live.load()) / kMiB + 64;
}

// 64 threads. The first takes a lone share and then idles; the second
// takes one too and then only allocates and frees 16 bytes at a time,
// never reaching its threshold, so it publishes only when asked to step
// down; the others, started after both, reach the fair share all the same
// (without the request they would not all fit beside the two).
TEST(Budget, SharesStayWithinTheBudgetAndThePendingBytesWithinTheShares) {
  ASSERT_TRUE(ensure_process_init());
  constexpr int kThreads = 64;
  constexpr int kRounds = 40;
  constexpr int kCallsPerRound = 4000;
  const std::int64_t published_before = g_published.live.load();
  std::vector<std::atomic<std::int64_t>> nets(kThreads);  // each thread's bytes held
  std::barrier pause(kThreads + 1);
  std::vector<std::thread> threads;
  for (int index = 0; index < kThreads; ++index) {
    threads.emplace_back([&, index] {
      std::mt19937_64 random(static_cast<std::uint64_t>(index));
      std::int64_t blocks[64] = {};  // the sizes this thread holds
      auto churn = [&](int calls) {
        for (int call = 0; call < calls; ++call) {
          std::int64_t& block = blocks[call % 64];
          if (block != 0) freed(block);
          nets[index] -= block;
          block = 16 + static_cast<std::int64_t>(random() % 4096);
          allocated(block);
          nets[index] += block;
        }
      };
      // Threads 0 and 1 register first (one call each): a lone share each.
      if (index < 2) allocated(16), freed(16);
      pause.arrive_and_wait();         // the others start
      for (int round = 0; round < kRounds; ++round) {
        if (index == 1) {
          for (int call = 0; call < kCallsPerRound; call += 2) allocated(16), freed(16);
        } else if (index != 0) {
          churn(kCallsPerRound);
        }
        pause.arrive_and_wait();  // checked
        pause.arrive_and_wait();
      }
      for (std::int64_t block : blocks) {
        if (block != 0) freed(block);
      }
    });
    if (index < 2) {
      // Threads 0 and 1 register and take their lone shares before any other.
      while (g_threads.registered.load() < static_cast<std::uint32_t>(index + 1)) std::this_thread::yield();
    }
  }
  pause.arrive_and_wait();
  Held last{};
  for (int round = 0; round < kRounds; ++round) {
    pause.arrive_and_wait();
    last = held_by_registry();
    const std::int64_t reserved = g_published.reserved.load();
    EXPECT_LE(last.shares, reserved) << "round " << round;
    EXPECT_LE(reserved, reserve_limit_now()) << "round " << round;
    EXPECT_LE(last.worst_excess, 0) << "round " << round;
    std::int64_t held_bytes = 0;
    for (const auto& net : nets) held_bytes += net.load();
    EXPECT_EQ(g_published.live.load() + last.pending - published_before, held_bytes) << "round " << round;
    EXPECT_LE(g_budget.bound.load(), static_cast<std::int64_t>(budget_for_peak(g_published.peak.load(),
                                                                                g_process.config.precision)));
    // The stated bound covers the true heap: published + pending.
    EXPECT_LE(g_published.live.load() + last.pending - g_published.peak.load(), g_budget.bound.load())
        << "round " << round;
    pause.arrive_and_wait();
  }
  // The busy threads reached the fair share beside the idle one.
  EXPECT_EQ(last.below_fair_share, 0);
  for (std::thread& thread : threads) thread.join();
  // Exact: every thread's pending delta published at its exit.
  EXPECT_EQ(g_published.live.load() - published_before, 0);
  EXPECT_EQ(g_published.reserved.load(), 0);
}

// Reservations race: threads that take a threshold and hand it back at the
// same moment, over and over, leave the budget as they found it, and never
// hold more than it, whoever wins each race for the reserved count.
TEST(Budget, ThresholdsTakenAndGivenBackAtOnceLeaveTheReservationAsItWas) {
  ASSERT_TRUE(ensure_process_init());
  constexpr int kThreads = 4;
  const std::int64_t reserved_before = g_published.reserved.load();
  std::atomic<std::int64_t> granted_above_one{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int index = 0; index < kThreads; ++index) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int call = 0; call < 200000; ++call) {
        const std::int64_t threshold = grant_threshold();
        if (threshold > 1) granted_above_one.fetch_add(1);
        EXPECT_LE(g_published.reserved.load(), reserve_limit_now());
        release_share(threshold - 1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_GT(granted_above_one.load(), 0) << "no threshold above 1 was granted: nothing raced";
  EXPECT_EQ(g_published.reserved.load(), reserved_before);
}

// Down and back up: 8 threads hold 48 MiB (the peak), free 40 of it and
// churn far below the peak, then all of them climb back past it at once
// with blocks of 64 KiB to 1 MiB. At every pause: the true heap (published
// + pending) is within the stated bound of the peak, and the stated bound
// within B. (A design whose shares grow with the headroom below the peak
// fails here: a share cannot be taken back before its holder's next
// publish, and the others' climb exposes it.)
TEST(Budget, TheBoundHoldsWhenManyThreadsClimbBackToThePeakAtOnce) {
  ASSERT_TRUE(ensure_process_init());
  constexpr int kThreads = 8;
  constexpr std::int64_t kMiB = 1 << 20;
  const std::int64_t published_before = g_published.live.load();
  std::barrier pause(kThreads + 1);
  std::vector<std::thread> threads;
  const auto check = check_the_bound;
  for (int index = 0; index < kThreads; ++index) {
    threads.emplace_back([&, index] {
      std::mt19937_64 random(static_cast<std::uint64_t>(100 + index));
      std::vector<std::int64_t> held;
      auto take = [&](std::int64_t bytes) { allocated(bytes), held.push_back(bytes); };
      auto give = [&] {
        freed(held.back());
        held.pop_back();
      };
      for (int i = 0; i < 48; ++i) take(kMiB / 8);  // 6 MiB each, 48 in all: the peak
      pause.arrive_and_wait();
      pause.arrive_and_wait();
      for (int i = 0; i < 40; ++i) give();  // down to 1 MiB each
      for (int call = 0; call < 20000; ++call) {  // churn far below the peak
        if (call % 2 == 0) {
          take(16 + static_cast<std::int64_t>(random() % 65536));
        } else {
          give();
        }
      }
      pause.arrive_and_wait();
      pause.arrive_and_wait();
      for (int round = 0; round < 10; ++round) {  // back up: ~4.6 MiB a round each, past the peak
        for (int i = 0; i < 8; ++i) take(64 * 1024 + static_cast<std::int64_t>(random() % kMiB));
        pause.arrive_and_wait();
        pause.arrive_and_wait();
      }
      while (!held.empty()) give();
    });
  }
  pause.arrive_and_wait();
  check("at the peak");
  pause.arrive_and_wait();
  pause.arrive_and_wait();
  check("far below the peak");
  pause.arrive_and_wait();
  for (int round = 0; round < 10; ++round) {
    pause.arrive_and_wait();
    check("climbing back");
    pause.arrive_and_wait();
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(g_published.live.load() - published_before, 0);
}


// Lent far below the peak, taken back from a thread that does not call.
// A peak of 1 GiB (the accounting's own calls: no memory), then far below
// it thread A takes a large share (lending the headroom: precision_budget.h)
// and allocates most of it without reaching its threshold, and stops. Then
// thread B climbs back past the peak: the room A's share took is needed,
// and A never calls, so only a revocation can give it back, and A's bytes
// held back must be published for it. At every pause: the true heap within
// the stated bound of the peak, the bound within B, published + pending
// exact; and A settles at its next call.
TEST(Budget, ASharePendingInAThreadThatNoLongerCallsIsRevokedWhenTheHeapClimbsBack) {
  ASSERT_TRUE(ensure_process_init());
  ASSERT_TRUE(g_budget.lends_headroom.load()) << "membarrier(2) is needed to lend the headroom";
  constexpr std::int64_t kMiB = 1 << 20;
  const std::int64_t published_before = g_published.live.load();
  const auto check = check_the_bound;
  std::thread([&] {
    for (int i = 0; i < 1024; ++i) allocated(kMiB);
    for (int i = 0; i < 1024; ++i) freed(kMiB);
  }).join();
  const std::uint64_t revocations_before = g_budget.revocations.load();
  std::atomic<int> step{0};
  std::int64_t a_pending = 0;
  std::thread a([&] {
    allocated(16);  // registered: its share is granted far below the peak
    a_pending = t_own.held * 3 / 4 / kMiB * kMiB;
    for (std::int64_t bytes = 0; bytes < a_pending; bytes += kMiB) allocated(kMiB);
    step = 1;
    while (step != 2) std::this_thread::yield();
    // Its next calls settle the revocation, then count as before.
    for (std::int64_t bytes = 0; bytes < a_pending; bytes += kMiB) freed(kMiB);
    freed(16);
  });
  while (step != 1) std::this_thread::yield();
  const Held lent = check("lent");
  ASSERT_GE(a_pending, 64 * kMiB) << "A's share: far below the peak it holds back much more than B";
  EXPECT_GE(lent.pending, a_pending / 2);
  // The true heap before the climb (A's bytes held back included); the
  // climb's top is this plus 1100 MiB: the true peak.
  const std::int64_t true_before = exact_live();
  std::thread([&] {
    for (int i = 0; i < 1100; ++i) allocated(kMiB);  // past the peak
    for (int i = 0; i < 1100; ++i) freed(kMiB);
  }).join();
  const Held back = check("climbed back");
  EXPECT_LE(true_before + 1100 * kMiB - g_published.peak.load(), g_budget.bound.load())
      << "the published peak within the bound of the true one";
  EXPECT_GT(g_budget.revocations.load(), revocations_before);
  EXPECT_LT(back.pending, a_pending) << "A's bytes published for it";
  step = 2;
  a.join();
  check("after");
  EXPECT_EQ(g_published.live.load() - published_before, 0);
}

// A publish that the limit refuses gives its own share back at once, with
// the bytes that share covers, and only the rest waits for room: a thread
// waiting there holds none of `reserved`. (Kept until the rest was
// published, the shares of the threads waiting at once were room that no
// revocation could free and that each of them needed: under load they
// waited for one another until the patience ran out, and published past
// the budget.) Thread C takes a large share far below the peak, then stays
// inside a threshold change, as an owner preempted there would: no revoker
// adopts its bytes. Thread A, with a large share too, climbs back past the
// peak, is refused and waits. While it waits, `reserved` is exactly what
// the registered slots hold. Then C's change ends, a revocation takes C's
// share back, and A's publishes go on within the bound.
TEST(Budget, APublishWaitingForRoomHoldsNoShareOfItsOwn) {
  ASSERT_TRUE(ensure_process_init());
  ASSERT_TRUE(g_budget.lends_headroom.load()) << "membarrier(2) is needed to lend the headroom";
  constexpr std::int64_t kMiB = 1 << 20;
  const std::int64_t published_before = g_published.live.load();
  const std::int64_t climb = mebibytes_past_a_far_peak();
  std::atomic<int> step{0};
  std::thread c([&] {
    allocated(16);  // registered: its share is granted far below the peak
    t_own.begin_change();
    step = 1;
    while (step != 2) std::this_thread::yield();
    t_own.end_change();
    freed(16);
  });
  while (step != 1) std::this_thread::yield();
  const std::uint64_t revocations_before = g_budget.revocations.load();
  std::atomic<const Slot*> a_slot{nullptr};
  std::atomic<std::int64_t> a_share{0};
  std::thread a([&] {
    allocated(16);
    a_share = t_own.held - 1;
    a_slot = &t_own;
    for (std::int64_t i = 0; i < climb; ++i) allocated(kMiB);  // past the peak
    for (std::int64_t i = 0; i < climb; ++i) freed(kMiB);
    freed(16);
  });
  // A refused: its threshold down to 1 and a revocation made, which could
  // not take C's share. A waits for it (precision_budget.h).
  while (a_slot.load() == nullptr || __atomic_load_n(&a_slot.load()->held, __ATOMIC_RELAXED) != 1 ||
         g_budget.revocations.load() == revocations_before) {
    std::this_thread::yield();
  }
  const Held waiting = held_by_registry();
  EXPECT_EQ(g_published.reserved.load(), waiting.shares) << "reserved beyond what the slots hold";
  EXPECT_GT(a_share.load(), kMiB) << "A had a share of its own to give back";
  step = 2;
  c.join();
  a.join();
  check_the_bound("after");
  EXPECT_EQ(g_published.live.load() - published_before, 0);
}

// A revocation that finds an owner inside a threshold change leaves its
// slot marked, the offset in place; once the change has ended the next
// revocation adopts it, even if nothing else is left to mark and the owner
// makes no call any more (a thread that has nothing more to allocate: such
// a share stayed held, and the publish that needed it waited, until that
// thread called again). Thread C takes a large
// share far below the peak and stays inside a change; thread A climbs back
// past the peak and waits for C's share; C ends its change and idles.
TEST(Budget, AShareLeftMarkedInsideAChangeIsTakenByTheNextRevocation) {
  ASSERT_TRUE(ensure_process_init());
  ASSERT_TRUE(g_budget.lends_headroom.load()) << "membarrier(2) is needed to lend the headroom";
  constexpr std::int64_t kMiB = 1 << 20;
  const std::int64_t published_before = g_published.live.load();
  const std::int64_t climb = mebibytes_past_a_far_peak();
  std::atomic<int> step{0};
  std::atomic<const Slot*> c_slot{nullptr};
  std::thread c([&] {
    allocated(16);  // registered: its share is granted far below the peak
    c_slot = &t_own;
    t_own.begin_change();
    step = 1;
    while (step != 2) std::this_thread::yield();
    t_own.end_change();
    step = 3;
    while (step != 4) std::this_thread::yield();  // no call until A is done
    freed(16);
  });
  while (step != 1) std::this_thread::yield();
  const std::uint64_t adoptions_before = g_budget.adoptions.load();
  std::thread a([&] {
    for (std::int64_t i = 0; i < climb; ++i) allocated(kMiB);  // past the peak
    for (std::int64_t i = 0; i < climb; ++i) freed(kMiB);
  });
  // A revocation has marked C's slot and could not adopt it.
  while (revocation_of(c_slot.load()->control.load()) != kRevoking) std::this_thread::yield();
  step = 2;
  a.join();
  EXPECT_GT(g_budget.adoptions.load(), adoptions_before) << "C's share adopted";
  check_the_bound("after");
  step = 4;
  c.join();
  EXPECT_EQ(g_published.live.load() - published_before, 0);
}

// The peak of heap + mapped is not hidden by the headroom lent below the
// heap's peak. Thread A takes a share far below a far heap peak and holds
// most of it back; then the program maps more than the distance to the
// peak of the sum: that sum's true peak holds A's bytes. The mapping call
// takes the lent headroom back before its system call (mapped_memory.h,
// before_growth), so the published peak of the sum is within the bound of
// the true one. (Without it the sum's peak was A's bytes, 64 MiB or more,
// below the truth against a bound of about 10 MiB.)
TEST(Budget, AMappingThatRaisesThePeakOfHeapPlusMappedTakesTheLentHeadroomBack) {
  ASSERT_TRUE(ensure_process_init());
  ASSERT_TRUE(g_budget.lends_headroom.load()) << "membarrier(2) is needed to lend the headroom";
  ASSERT_TRUE(mapped::enabled());
  constexpr std::int64_t kMiB = 1 << 20;
  const std::int64_t published_before = g_published.live.load();
  mebibytes_past_a_far_peak();
  std::atomic<int> step{0};
  std::int64_t a_pending = 0;
  std::thread a([&] {
    allocated(16);  // registered: its share is granted far below the peak
    a_pending = t_own.held * 3 / 4 / kMiB * kMiB;
    for (std::int64_t bytes = 0; bytes < a_pending; bytes += kMiB) allocated(kMiB);
    step = 1;
    while (step != 2) std::this_thread::yield();
    for (std::int64_t bytes = 0; bytes < a_pending; bytes += kMiB) freed(kMiB);
    freed(16);
  });
  while (step != 1) std::this_thread::yield();
  ASSERT_GE(a_pending, 64 * kMiB) << "A's share: far below the peak it holds back much more than B";
  ASSERT_GE(held_by_registry().pending, a_pending / 2);
  const std::int64_t sum_peak_before = run_total_peak().bytes;
  const std::int64_t length = sum_peak_before - g_published.live.load() + 256 * kMiB;
  const std::uint64_t revocations_before = g_budget.revocations.load();
  const std::int64_t true_heap = exact_live();
  // Reserved, never touched: address space only.
  void* mapping = mapped::map(nullptr, static_cast<std::size_t>(length), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0,
                              reinterpret_cast<const void*>(&mebibytes_past_a_far_peak));
  ASSERT_NE(mapping, MAP_FAILED);
  const std::int64_t true_sum = true_heap + length;
  EXPECT_LE(true_sum - run_total_peak().bytes, g_budget.bound.load())
      << "the published peak of heap + mapped within the bound of the true one";
  EXPECT_LE(g_budget.bound.load(), static_cast<std::int64_t>(budget_for_peak(g_published.peak.load(),
                                                                              g_process.config.precision)));
  EXPECT_GT(g_budget.revocations.load(), revocations_before) << "A's share revoked";
  ASSERT_EQ(mapped::unmap(mapping, static_cast<std::size_t>(length)), 0);
  step = 2;
  a.join();
  check_the_bound("after");
  EXPECT_EQ(g_published.live.load() - published_before, 0);
}

}  // namespace
}  // namespace heapline::accounting
