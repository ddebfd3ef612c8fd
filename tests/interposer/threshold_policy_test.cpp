// The threshold policy (interposer/src/base/threshold_policy.h): the process's
// precision budget and each thread's share of it, as pure functions.
#include "threshold_policy.h"

#include <gtest/gtest.h>

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
  custom.budget_bytes = 1 * kMiB;
  custom.budget_divisor = 1000;
  EXPECT_EQ(budget_for_peak(100 * kMiB, custom), 1 * kMiB);
  EXPECT_EQ(budget_for_peak(10000 * kMiB, custom), 10 * kMiB);
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
  coarse.budget_bytes = 1000;
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

}  // namespace
}  // namespace heapline::accounting
