// The threshold policy (interposer/src/base/threshold_policy.h): the process's
// precision budget and each thread's share of it, as pure functions.
#include "threshold_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdint>
#include <random>
#include <vector>

namespace heapline::accounting {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

bool on_grid(std::uint64_t x) { return x < 8 || (x >> (61 - __builtin_clzll(x)) << (61 - __builtin_clzll(x))) == x; }

TEST(ThresholdPolicy, GridKeepsThreeLeadingBits) {
  for (std::uint64_t x : {0ull, 1ull, 7ull, 8ull, 9ull, 15ull, 16ull, 17ull, 28671ull, 28672ull, 30000ull}) {
    const std::uint64_t below = grid_floor(x);
    EXPECT_TRUE(on_grid(below)) << x;
    EXPECT_LE(below, x);
    EXPECT_GT(grid_next(below), x) << x;  // nothing on the grid between
    EXPECT_GE(grid_ceil(x), x);
    EXPECT_TRUE(on_grid(grid_ceil(x))) << x;
  }
  EXPECT_EQ(grid_floor(30000), 28672u);  // 7 × 4096
  EXPECT_EQ(grid_next(28672), 32768u);
  EXPECT_EQ(grid_next(32768), 40960u);  // 5 × 8192: steps of an eighth to a quarter
  EXPECT_EQ(grid_ceil(17), 20u);
  EXPECT_EQ(grid_ceil(65), 80u);
  // At most a fifth below the value it rounds.
  std::mt19937_64 random(1);
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t x = 8 + random() % (std::uint64_t{1} << (8 + i % 50));
    EXPECT_GE(5 * grid_floor(x), 4 * x) << x;
  }
}

TEST(ThresholdPolicy, BudgetIsTheFloorOrOnePercentOfThePeak) {
  const Precision batched;  // 256 KiB, peak / 100
  EXPECT_EQ(budget_for_peak(0, batched), 256 * kKiB);
  EXPECT_EQ(budget_for_peak(-5 * static_cast<std::int64_t>(kMiB), batched), 256 * kKiB);
  EXPECT_EQ(budget_for_peak(25 * kMiB, batched), 256 * kKiB);
  EXPECT_EQ(budget_for_peak(100 * kMiB, batched), 100 * kMiB / 100);
  Precision exact;
  exact.exact = true;
  EXPECT_EQ(budget_for_peak(100 * kMiB, exact), 0u);
  Precision custom;
  custom.budget_floor_bytes = 1 * kMiB;
  custom.budget_divisor = 1000;
  EXPECT_EQ(budget_for_peak(100 * kMiB, custom), 1 * kMiB);
  EXPECT_EQ(budget_for_peak(10000 * kMiB, custom), 10 * kMiB);
}

// The one rule the library, the launcher and heapline-bench share
// (heapline/precision_budget_rule.h): exact at the boundary where the
// fraction overtakes the floor, and a divisor of 0 never divides.
TEST(ThresholdPolicy, TheSharedBudgetRuleTakesTheLargerOfFloorAndFraction) {
  EXPECT_EQ(heapline::precision_budget_bytes(1000, 10, 10000), 1000u);
  EXPECT_EQ(heapline::precision_budget_bytes(1000, 10, 10019), 1001u);
  EXPECT_EQ(heapline::precision_budget_bytes(1000, 10, 10009), 1000u);
  EXPECT_EQ(heapline::precision_budget_bytes(1000, 0, 5000), 5000u);
  EXPECT_EQ(heapline::precision_budget_bytes(1000, 10, INT64_MIN), 1000u);
  EXPECT_EQ(heapline::precision_budget_bytes(0, 1, INT64_MAX), static_cast<std::uint64_t>(INT64_MAX));
}

TEST(ThresholdPolicy, DividerCoversTheThreadsAndFallsOnlyAtAQuarter) {
  EXPECT_EQ(divider_for_count(kMinDivider, 1), 8u);
  EXPECT_EQ(divider_for_count(8, 8), 8u);
  EXPECT_EQ(divider_for_count(8, 9), 10u);  // raised at once, on the grid
  EXPECT_EQ(divider_for_count(10, 65), 80u);
  EXPECT_EQ(divider_for_count(80, 21), 80u);  // kept while above a quarter
  EXPECT_EQ(divider_for_count(80, 20), 40u);  // lowered to twice the count
  EXPECT_EQ(divider_for_count(80, 1), 8u);    // never below 8
  EXPECT_EQ(divider_for_count(0, 0), 8u);
  for (std::uint64_t count = 1; count < 5000; ++count) {
    for (std::uint64_t divider : {8ull, 10ull, 64ull, 80ull, 1024ull, 2560ull}) {
      const std::uint64_t next = divider_for_count(divider, count);
      EXPECT_GE(next, count);
      EXPECT_GE(next, kMinDivider);
      EXPECT_TRUE(on_grid(next));
      EXPECT_EQ(divider_for_count(next, count), next) << "stable at " << count;
    }
  }
}

TEST(ThresholdPolicy, FairShareIsSevenEighthsOfTheBudgetSplitOnTheGrid) {
  EXPECT_EQ(fair_share(256 * kKiB, 8), 28 * kKiB);  // a lone thread: 7/64 of the budget
  EXPECT_EQ(fair_share(256 * kKiB, 80), 2560u);     // 7/8 × 256 KiB / 80 = 2867, down on the grid
  EXPECT_EQ(fair_share(0, 8), 1u);                  // exact: every change published
  EXPECT_EQ(fair_share(100, 1000), 1u);
  std::mt19937_64 random(2);
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t budget = random() % (std::uint64_t{1} << (10 + i % 40));
    const std::uint64_t divider = divider_for_count(kMinDivider, 1 + random() % 3000);
    const std::uint64_t share = fair_share(budget, divider);
    EXPECT_TRUE(on_grid(share));
    EXPECT_GE(share, 1u);
    // The divider's threads at the fair share and one idle thread holding a
    // lone share (7/64) fit in the budget.
    if (share > 1) {
      EXPECT_LE((divider - 1) * (share - 1) + share_of(fair_share(budget, kMinDivider)), budget);
    }
  }
}

TEST(ThresholdPolicy, PeakForTheNextShareIsExact) {
  const Precision batched;
  Precision coarse;
  coarse.budget_floor_bytes = 1000;
  coarse.budget_divisor = 7;
  for (const Precision& precision : {batched, coarse}) {
    for (std::uint64_t divider : {8ull, 10ull, 80ull, 2560ull}) {
      for (std::int64_t peak : {std::int64_t{0}, std::int64_t{1} << 20, std::int64_t{100} << 20, std::int64_t{3} << 40}) {
        const std::uint64_t share = fair_share(budget_for_peak(peak, precision), divider);
        const std::int64_t grow_at = peak_for_next_share(share, divider, precision);
        ASSERT_GT(grow_at, peak);
        EXPECT_GT(fair_share(budget_for_peak(grow_at, precision), divider), share);
        EXPECT_EQ(fair_share(budget_for_peak(grow_at - 1, precision), divider), share);
      }
    }
  }
  Precision exact;
  exact.exact = true;
  EXPECT_EQ(peak_for_next_share(1, 8, exact), INT64_MAX);
  Precision huge;
  huge.budget_divisor = std::uint64_t{1} << 40;
  EXPECT_EQ(peak_for_next_share(fair_share(budget_for_peak(INT64_MAX, huge), 8), 8, huge), INT64_MAX);
}

TEST(ThresholdPolicy, StepLowersAtOnceAndRaisesWithinTheRoom) {
  // Down to the fair share whatever the budget.
  EXPECT_EQ(threshold_step(64 * kKiB, 28 * kKiB, 10 * kMiB, 256 * kKiB), 28 * kKiB);
  // Up to the fair share when there is room.
  EXPECT_EQ(threshold_step(1, 28 * kKiB, 0, 256 * kKiB), 28 * kKiB);
  // Up as far as the room goes, on the grid: 10 000 bytes left.
  EXPECT_EQ(threshold_step(1024, 28 * kKiB, 256 * kKiB - 10000, 256 * kKiB), 10240u);
  // A newcomer finds nothing: exact (threshold 1, a share of 0).
  EXPECT_EQ(threshold_step(1, 28 * kKiB, 256 * kKiB, 256 * kKiB), 1u);
  EXPECT_EQ(threshold_step(1, 28 * kKiB, 300 * kKiB, 256 * kKiB), 1u);
  std::mt19937_64 random(3);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t budget = random() % (4 * kMiB);
    const std::uint64_t share = grid_floor(1 + random() % (budget / 8 + 1));
    const std::uint64_t threshold = grid_floor(1 + random() % (2 * share + 1));
    const std::uint64_t reserved = share_of(threshold) + random() % (budget + 1);
    const std::uint64_t next = threshold_step(threshold, share, reserved, budget);
    EXPECT_LE(next, threshold > share ? threshold : share);
    if (next > threshold) {
      EXPECT_LE(reserved + (next - threshold), budget);  // the raise fits
    }
    if (threshold > share) {
      EXPECT_EQ(next, share);
    }
  }
}

// The protocol of precision_budget.cpp on a model of threads: whatever the
// order of registrations, publishes, exits and growth of the peak, the
// shares stay within `reserved`, `reserved` within the budget, and once
// every busy thread has published after a request to step down, every one
// holds the fair share, even with one thread idle on a lone share.
TEST(ThresholdPolicy, ModelThreadsStayWithinTheBudgetAndReachTheFairShare) {
  const Precision precision;
  std::mt19937_64 random(4);
  for (int run = 0; run < 50; ++run) {
    struct Thread {
      std::uint64_t threshold = 0;  // 0: not registered
      bool asked_to_step_down = false;
    };
    std::vector<Thread> threads(2 + random() % 300);
    std::uint64_t reserved = 0, divider = kMinDivider, registered = 0;
    std::int64_t peak = static_cast<std::int64_t>(random() % (200 * kMiB));
    auto budget = [&] { return budget_for_peak(peak, precision); };
    auto share = [&] { return fair_share(budget(), divider); };
    auto check = [&] {
      std::uint64_t held = 0;
      for (const Thread& t : threads) held += share_of(t.threshold);
      ASSERT_LE(held, reserved);
      ASSERT_LE(reserved, budget());
    };
    auto publish = [&](Thread& t) {  // move_threshold
      if (t.threshold > share()) {
        reserved -= t.threshold - share();
        t.threshold = share();
      } else {
        const std::uint64_t next = threshold_step(t.threshold, share(), reserved, budget());
        reserved += next - t.threshold;
        t.threshold = next;
        if (next < share()) {
          for (Thread& other : threads) other.asked_to_step_down |= other.threshold > share();
        }
      }
      t.asked_to_step_down = false;
    };
    // Thread 0 registers alone, takes a lone share and idles from then on.
    for (std::size_t step = 0; step < 20 * threads.size(); ++step) {
      Thread& t = threads[step == 0 ? 0 : 1 + random() % (threads.size() - 1)];
      const int action = static_cast<int>(random() % 10);
      if (t.threshold == 0) {  // register: grant_threshold
        divider = divider_for_count(divider, ++registered);
        t.threshold = threshold_step(1, share(), reserved, budget());
        reserved += share_of(t.threshold);
      } else if (action == 0 && step < 10 * threads.size()) {  // exit: release_threshold
        reserved -= share_of(t.threshold);
        t.threshold = 0;
        divider = divider_for_count(divider, --registered);
      } else if (action == 1) {  // the peak grows
        peak += static_cast<std::int64_t>(random() % (8 * kMiB));
      } else if (action < 5 || t.asked_to_step_down) {  // a publish, or the next free after a request
        publish(t);
      }
      check();
      if (HasFatalFailure()) return;
    }
    // Every busy thread publishes twice more (a request, then its answer).
    for (int round = 0; round < 2; ++round) {
      for (std::size_t i = 1; i < threads.size(); ++i) {
        if (threads[i].threshold != 0) publish(threads[i]);
      }
    }
    check();
    for (std::size_t i = 1; i < threads.size(); ++i) {
      if (threads[i].threshold != 0) {
        EXPECT_EQ(threads[i].threshold, share()) << "run " << run << " thread " << i;
      }
    }
  }
}

// The same at every thread count, deterministically, with the budget at its
// floor (a power of two, so nothing of the grid's rounding is left over):
// one idle thread on a lone share and the others at the fair share fit.
TEST(ThresholdPolicy, AnIdleLoneShareAndTheFairSharesFitAtEveryCount) {
  const std::uint64_t budget = budget_for_peak(0, Precision{});
  for (std::uint64_t count = 2; count <= 1024; ++count) {
    const std::uint64_t lone = threshold_step(1, fair_share(budget, divider_for_count(kMinDivider, 1)), 0, budget);
    std::uint64_t reserved = share_of(lone);
    std::uint64_t divider = kMinDivider;
    for (std::uint64_t registered = 2; registered <= count; ++registered) divider = divider_for_count(divider, registered);
    const std::uint64_t share = fair_share(budget, divider);
    for (std::uint64_t busy = 1; busy < count; ++busy) {
      const std::uint64_t threshold = threshold_step(1, share, reserved, budget);
      ASSERT_EQ(threshold, share) << count << " threads: thread " << busy << " gets " << threshold;
      reserved += share_of(threshold);
    }
    ASSERT_LE(reserved, budget);
  }
}


// The limit on what the threads hold back: B at and above the peak, and B
// plus the headroom below it while shares can be lent; so live + the
// limit is never above peak + B, and the exposure it allows is at most B.
TEST(ThresholdPolicy, TheLimitLendsTheHeadroomBelowThePeakAndTheExposureStaysWithinB) {
  const std::int64_t budget = static_cast<std::int64_t>(2 * kMiB);
  const std::int64_t peak = static_cast<std::int64_t>(100 * kMiB);
  EXPECT_EQ(reserve_limit(peak, peak, budget, true), budget);
  EXPECT_EQ(reserve_limit(peak - 40 * static_cast<std::int64_t>(kMiB), peak, budget, true), budget + 40 * static_cast<std::int64_t>(kMiB));
  EXPECT_EQ(reserve_limit(peak - 40 * static_cast<std::int64_t>(kMiB), peak, budget, false), budget) << "no revocation: B alone";
  EXPECT_EQ(reserve_limit(peak + 5, peak + 5, budget, true), budget) << "a publish past the peak is the peak";
  std::mt19937_64 random(7);
  for (int i = 0; i < 10000; ++i) {
    const std::int64_t live = static_cast<std::int64_t>(random() % (2 * peak));
    const std::int64_t top = live > peak ? live : peak;
    const std::int64_t limit = reserve_limit(live, top, budget, true);
    EXPECT_LE(live + limit, top + budget);
    EXPECT_LE(exposure(live, limit, top), budget);
    EXPECT_EQ(exposure(live, limit, top), budget) << "the limit is reached exactly at an exposure of B";
  }
  EXPECT_EQ(exposure(peak, 1000, peak), 1000) << "at the peak: what is held back";
}

// The peak the headroom is lent below: the heap's while nothing is mapped,
// and with mapped memory no higher than the peak of heap + mapped less the
// mapped bytes (claims included), so that the limit keeps what the threads
// hold back within B of the sum's peak too: live + mapped + the limit is
// never above the sum's peak + B, wherever the two peaks are.
TEST(ThresholdPolicy, TheLendingPeakKeepsHeapPlusMappedWithinItsPeakToo) {
  const std::int64_t mib = static_cast<std::int64_t>(kMiB);
  EXPECT_EQ(lending_peak(10 * mib, 100 * mib, 0, 0, 0), 100 * mib) << "nothing mapped: the heap's peak";
  EXPECT_EQ(lending_peak(120 * mib, 100 * mib, 0, 0, 0), 120 * mib) << "a step past the peak is the peak";
  EXPECT_EQ(lending_peak(10 * mib, 100 * mib, 150 * mib, 80 * mib, 80 * mib), 70 * mib)
      << "the sum's peak 150 less 80 mapped: 70, below the heap's 100";
  EXPECT_EQ(lending_peak(10 * mib, 100 * mib, 300 * mib, 80 * mib, 80 * mib), 100 * mib)
      << "the heap's peak when the sum's is far";
  EXPECT_EQ(lending_peak(10 * mib, 100 * mib, 150 * mib, 80 * mib, 120 * mib), 30 * mib)
      << "a claim in flight counts as mapped";
  EXPECT_EQ(lending_peak(10 * mib, 100 * mib, 0, 80 * mib, 80 * mib), 20 * mib)
      << "the sum's peak is at least the heap's (a sum not raised yet)";
  EXPECT_EQ(lending_peak(90 * mib, 100 * mib, 150 * mib, 80 * mib, 80 * mib), 90 * mib)
      << "live + mapped past the sum's peak: the step raises it, no headroom";
  const std::int64_t budget = 2 * mib;
  std::mt19937_64 random(11);
  for (int i = 0; i < 10000; ++i) {
    const std::int64_t live = static_cast<std::int64_t>(random() % (200 * kMiB));
    const std::int64_t heap_peak = static_cast<std::int64_t>(random() % (200 * kMiB));
    const std::int64_t mapped = static_cast<std::int64_t>(random() % (200 * kMiB));
    const std::int64_t claimed = mapped + static_cast<std::int64_t>(random() % (50 * kMiB));
    const std::int64_t total_peak = static_cast<std::int64_t>(random() % (400 * kMiB));
    const std::int64_t peak = lending_peak(live, heap_peak, total_peak, mapped, claimed);
    const std::int64_t limit = reserve_limit(live, peak, budget, true);
    const std::int64_t sum_peak = std::max({total_peak, heap_peak, live, live + mapped});
    EXPECT_LE(live + limit, std::max(heap_peak, live) + budget) << "the heap's own bound";
    EXPECT_LE(live + claimed + limit, std::max(sum_peak, live + claimed) + budget) << "the sum's, claims mapped";
  }
}

// A thread's target: F(B) at the peak, F(B + 2 × headroom) below it while
// shares can be lent; four threads at it fit within the limit.
TEST(ThresholdPolicy, TheTargetIsAFairShareOfTheBudgetAndTwiceTheHeadroom) {
  const std::int64_t budget = static_cast<std::int64_t>(kMiB);
  const std::int64_t peak = static_cast<std::int64_t>(100 * kMiB);
  EXPECT_EQ(pooled_bytes(peak, peak, budget, true), kMiB);
  EXPECT_EQ(pooled_bytes(peak - static_cast<std::int64_t>(10 * kMiB), peak, budget, true), 21 * kMiB);
  EXPECT_EQ(pooled_bytes(peak - static_cast<std::int64_t>(10 * kMiB), peak, budget, false), kMiB);
  EXPECT_EQ(target_threshold(kMiB, kMinDivider), fair_share(kMiB, kMinDivider));
  for (std::int64_t below = 0; below <= 64 * static_cast<std::int64_t>(kMiB); below += static_cast<std::int64_t>(kMiB) / 3) {
    const std::int64_t live = peak - below;
    const std::uint64_t four = 4 * share_of(target_threshold(pooled_bytes(live, peak, budget, true), kMinDivider));
    EXPECT_LE(four, static_cast<std::uint64_t>(reserve_limit(live, peak, budget, true))) << below;
  }
}

// The range in which a threshold stays: while it is at most twice the
// target before the grid and the target at most half as much again as the
// threshold; in live values, the same range under the peak and B.
TEST(ThresholdPolicy, AThresholdStaysWhileItsTargetIsWithinAFactorOfIt) {
  const std::uint64_t divider = kMinDivider;
  const std::uint64_t threshold = 64 * kKiB;
  const KeepRange keep = keep_range(threshold, divider);
  auto raw_target = [&](std::uint64_t pooled) { return 7.0 / 8.0 * static_cast<double>(pooled) / static_cast<double>(divider); };
  EXPECT_LE(static_cast<double>(threshold), 2 * raw_target(keep.from) + 1);
  EXPECT_GT(static_cast<double>(threshold), 2 * raw_target(keep.from - 8));
  EXPECT_GE(1.5 * static_cast<double>(threshold) + 1, raw_target(keep.to));
  EXPECT_LT(1.5 * static_cast<double>(threshold), raw_target(keep.to + 8));
  EXPECT_EQ(keep_range(UINT64_MAX / 2, 1u << 20).to, UINT64_MAX) << "saturated, not wrapped";
  const std::int64_t budget = static_cast<std::int64_t>(256 * kKiB);
  const std::int64_t peak = static_cast<std::int64_t>(100 * kMiB);
  const LiveRange live = keep_live_range(keep, peak, budget, true);
  ASSERT_LT(live.from, live.to);
  EXPECT_LE(pooled_bytes(live.from, peak, budget, true), keep.to);
  EXPECT_GT(pooled_bytes(live.from - 2, peak, budget, true), keep.to);
  EXPECT_GE(pooled_bytes(live.to, peak, budget, true), keep.from);
  EXPECT_LT(pooled_bytes(live.to + 2, peak, budget, true), keep.from);
  const LiveRange never = keep_live_range({budget_for_peak(0, Precision{}) * 4, budget_for_peak(0, Precision{}) * 2}, peak, budget, true);
  EXPECT_GT(never.from, never.to) << "an empty range keeps no live value";
  const LiveRange unlent = keep_live_range({0, UINT64_MAX}, peak, budget, false);
  EXPECT_EQ(unlent.from, INT64_MIN);
  EXPECT_EQ(unlent.to, INT64_MAX);
}

// The free windows' cap: B split over the registered threads, at least 1.
TEST(ThresholdPolicy, TheFreeWindowsOfAllThreadsFitInTheBudget) {
  EXPECT_EQ(free_window_cap(256 * kKiB, 1), 256 * kKiB);
  EXPECT_EQ(free_window_cap(256 * kKiB, 5), 256 * kKiB / 5);
  EXPECT_EQ(free_window_cap(0, 3), 1u) << "exact: every free publishes";
  for (std::uint64_t count = 1; count <= 1024; ++count) EXPECT_LE(count * free_window_cap(kMiB, count), kMiB);
}

}  // namespace
}  // namespace heapline::accounting
