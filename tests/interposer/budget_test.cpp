// The precision budget at work: threads that allocate through the
// accounting's own hot path and slow path (what the allocation wrappers
// call), with the registry, the publishes and the requests to step down of
// the library itself. At every pause of all of them: the shares they hold
// are within `reserved`, `reserved` within the budget, each pending delta
// within its share, and published + pending is exact.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "precision_budget.h"
#include "process.h"
#include "published.h"
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
    const std::int64_t share = static_cast<std::int64_t>(share_of(static_cast<std::uint64_t>(slot->held)));
    const std::int64_t pending = slot->pending_bytes();
    held.shares += share;
    held.pending += pending;
    held.worst_excess = std::max<std::int64_t>(held.worst_excess, std::llabs(pending) - share);
    if (static_cast<std::uint64_t>(2 * slot->held - 1) < g_policy.span.load()) ++held.below_fair_share;
  }
  return held;
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
    const std::int64_t reserved = g_budget.reserved.load();
    EXPECT_LE(last.shares, reserved) << "round " << round;
    EXPECT_LE(reserved, g_budget.bytes.load()) << "round " << round;
    EXPECT_LE(last.worst_excess, 0) << "round " << round;
    std::int64_t held_bytes = 0;
    for (const auto& net : nets) held_bytes += net.load();
    EXPECT_EQ(g_published.live.load() + last.pending - published_before, held_bytes) << "round " << round;
    EXPECT_LE(g_budget.max_reserved.load(), static_cast<std::int64_t>(budget_for_peak(g_published.peak.load(),
                                                                                       g_process.config.precision)));
    // The stated bound covers the true heap: published + pending.
    EXPECT_LE(g_published.live.load() + last.pending - g_published.peak.load(), g_budget.max_reserved.load())
        << "round " << round;
    pause.arrive_and_wait();
  }
  // The busy threads reached the fair share beside the idle one.
  EXPECT_EQ(last.below_fair_share, 0);
  for (std::thread& thread : threads) thread.join();
  // Exact: every thread's pending delta published at its exit.
  EXPECT_EQ(g_published.live.load() - published_before, 0);
  EXPECT_EQ(g_budget.reserved.load(), 0);
}

// Reservations race: threads that take a threshold and hand it back at the
// same moment, over and over, leave the budget as they found it, and never
// hold more than it, whoever wins each race for the reserved count.
TEST(Budget, ThresholdsTakenAndGivenBackAtOnceLeaveTheReservationAsItWas) {
  ASSERT_TRUE(ensure_process_init());
  constexpr int kThreads = 4;
  const std::int64_t reserved_before = g_budget.reserved.load();
  std::atomic<std::int64_t> granted_above_one{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int index = 0; index < kThreads; ++index) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int call = 0; call < 200000; ++call) {
        const std::int64_t threshold = grant_threshold();
        if (threshold > 1) granted_above_one.fetch_add(1);
        EXPECT_LE(g_budget.reserved.load(), g_budget.bytes.load());
        release_threshold(threshold);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_GT(granted_above_one.load(), 0) << "no threshold above 1 was granted: nothing raced";
  EXPECT_EQ(g_budget.reserved.load(), reserved_before);
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
  auto check = [&](const char* phase) {
    const Held held = held_by_registry();
    const std::int64_t peak = g_published.peak.load();
    const std::int64_t bound = g_budget.max_reserved.load();
    EXPECT_LE(g_published.live.load() + held.pending - peak, bound) << phase;
    EXPECT_LE(bound, static_cast<std::int64_t>(budget_for_peak(peak, g_process.config.precision))) << phase;
    EXPECT_LE(held.worst_excess, 0) << phase;
    return held;
  };
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

}  // namespace
}  // namespace heapline::accounting
