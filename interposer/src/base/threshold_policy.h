// The threshold policy: how many bytes each thread may hold back before it
// publishes, as pure functions of the configured precision, the run's
// published peak, the number of registered threads and what the others
// already hold. precision_budget.cpp applies them; the precision contract
// they keep is at the top of precision_budget.h.
//
// One budget for the whole process. A thread's pending delta stays below
// its threshold t, so it hides at most t − 1 bytes (its share; a thread at
// t = 1 publishes every change and hides nothing). The shares of all
// registered threads are summed in one counter, `reserved`, which may only
// grow by a compare-and-swap that keeps it within the budget
//     B = max(BYTES, peak / DIVISOR)          (default 256 KiB and 100)
// where peak is the run's published peak. Then at any moment
//     |published live − true live| <= reserved <= B
// however many threads there are and however stale an idle thread's
// threshold: an idle thread keeps the share it was granted, and that share
// is inside `reserved`. B only grows (it follows the peak), so a share
// granted under it is never a lie later.
//
// The fair share. Each thread moves its threshold, at its publishes, toward
//     F = grid_floor(7/8 × B / C)
// where C, the divider, is the number of registered threads rounded up on
// the grid (below), at least 8, raised at once when a thread registers and
// lowered only once the count has fallen to C / 4. Downwards always (a
// lowered threshold frees its share at once); upwards when `reserved`
// leaves room, else as far as it does. A newcomer starts at what is left,
// down to 1 (exact) when nothing is, and grows at its later publishes as
// the others step down. Why 7/8 and at least 8:
//  - a lone thread takes at most 7/64 of B: newcomers find room at once;
//  - a thread that registered early and then idles (a main thread waiting
//    in pthread_join) keeps its share, which is at most 7/64 of B; C − 1
//    threads at the fair share take at most 7/8 of B. Both together fit, at
//    any count, so no busy thread is left publishing every change because
//    of one idle one.
//
// The grid. Thresholds and the divider take values whose binary form has at
// most three leading significant bits (4, 5, 6 or 7 times a power of two),
// so a fair share is at most 1/5 below the exact fraction (a power of two
// would lose up to half: a quarter of the threshold costs about twice the
// publishes of a random walk) while it still changes only in steps of an
// eighth or more: the policy line stays read-mostly as the peak grows.
#pragma once

#include <cstdint>

#include "config.h"

namespace heapline::accounting {

// The largest grid value <= x (x itself below 8; 0 for 0).
constexpr std::uint64_t grid_floor(std::uint64_t x) {
  if (x < 8) return x;
  const int low_bits = 61 - __builtin_clzll(x);  // keep the three leading bits
  return x & ~((std::uint64_t{1} << low_bits) - 1);
}

// The smallest grid value > x, for x on the grid (saturated at 2^63).
constexpr std::uint64_t grid_next(std::uint64_t x) {
  if (x < 8) return x + 1;
  if (x >= (std::uint64_t{7} << 60)) return std::uint64_t{1} << 63;
  return x + (std::uint64_t{1} << (61 - __builtin_clzll(x)));
}

// The smallest grid value >= x.
constexpr std::uint64_t grid_ceil(std::uint64_t x) {
  const std::uint64_t below = grid_floor(x);
  return below == x ? x : grid_next(below);
}

constexpr std::uint64_t kMinDivider = 8;

// B for the run's published peak: max(BYTES, peak / DIVISOR). 0 in exact
// mode: nothing may be held back.
constexpr std::uint64_t budget_for_peak(std::int64_t peak, const Precision& precision) {
  if (precision.exact) return 0;
  const std::uint64_t divisor = precision.budget_divisor > 0 ? precision.budget_divisor : 1;
  const std::uint64_t fraction = peak > 0 ? static_cast<std::uint64_t>(peak) / divisor : 0;
  return fraction > precision.budget_bytes ? fraction : precision.budget_bytes;
}

// The divider after the count of registered threads became `count`:
// raised at once to cover it, lowered (to twice the count, on the grid)
// only once the count is down to a quarter of it; never below 8.
constexpr std::uint64_t divider_for_count(std::uint64_t divider, std::uint64_t count) {
  if (divider < kMinDivider) divider = kMinDivider;
  if (count > divider) return grid_ceil(count);
  if (count <= divider / 4) {
    const std::uint64_t lowered = grid_ceil(2 * count);
    return lowered > kMinDivider ? lowered : kMinDivider;
  }
  return divider;
}

// F = grid_floor(7/8 × budget / divider), at least 1. (No 128-bit
// arithmetic: its division is libgcc's, which the library does not link.)
constexpr std::uint64_t fair_share(std::uint64_t budget, std::uint64_t divider) {
  if (divider < 1) divider = 1;
  if (divider > (std::uint64_t{1} << 32)) divider = std::uint64_t{1} << 32;
  std::uint64_t times_7;
  const std::uint64_t scaled = __builtin_mul_overflow(budget, 7, &times_7) ? budget / (8 * divider) * 7
                                                                           : times_7 / (8 * divider);
  const std::uint64_t share = scaled > (std::uint64_t{1} << 62) ? std::uint64_t{1} << 62 : scaled;
  return share > 1 ? grid_floor(share) : 1;
}

// The smallest published peak at which the fair share for `divider` rises
// above `share`: a publish whose live value reaches it recomputes the
// policy; INT64_MAX when no peak gets there (exact mode, saturation).
constexpr std::int64_t peak_for_next_share(std::uint64_t share, std::uint64_t divider, const Precision& precision) {
  constexpr std::int64_t kNever = INT64_MAX;
  if (precision.exact || share >= (std::uint64_t{1} << 62)) return kNever;
  if (divider < 1) divider = 1;
  if (divider > (std::uint64_t{1} << 32)) divider = std::uint64_t{1} << 32;
  // fair_share(B) > share  <=>  7 × B >= 8 × divider × grid_next(share)
  // (the budget's largest values, where fair_share divides first, never
  // come from a peak below INT64_MAX: saturated).
  std::uint64_t needed_times_7;
  if (__builtin_mul_overflow(8 * divider, grid_next(share), &needed_times_7) ||
      needed_times_7 > (std::uint64_t{1} << 62)) {
    return kNever;
  }
  const std::uint64_t budget_needed = (needed_times_7 + 6) / 7;  // rounded up
  if (budget_needed <= precision.budget_bytes) return 0;  // the floor alone gives more
  // budget_for_peak(p) >= budget_needed  <=>  p >= budget_needed × DIVISOR
  const std::uint64_t divisor = precision.budget_divisor > 0 ? precision.budget_divisor : 1;
  std::uint64_t peak;
  if (__builtin_mul_overflow(budget_needed, divisor, &peak) || peak >= static_cast<std::uint64_t>(kNever)) {
    return kNever;
  }
  return static_cast<std::int64_t>(peak);
}

// The threshold a thread at `threshold` moves to, given the fair share and
// the shares all registered threads hold (`reserved`, its own t − 1
// included) under `budget`: down to the fair share at once; up toward it as
// far as the budget leaves room, on the grid; else where it is. A newcomer
// asks with threshold 1 (it holds nothing yet): at least 1 comes back.
constexpr std::uint64_t threshold_step(std::uint64_t threshold, std::uint64_t share, std::uint64_t reserved,
                                       std::uint64_t budget) {
  if (threshold >= share) return share;
  const std::uint64_t room = budget > reserved ? budget - reserved : 0;
  const std::uint64_t reachable = grid_floor(threshold + room);
  const std::uint64_t target = reachable < share ? reachable : share;
  return target > threshold ? target : threshold;
}

// What a thread at `threshold` may hide: its share of the budget.
constexpr std::uint64_t share_of(std::uint64_t threshold) { return threshold > 0 ? threshold - 1 : 0; }

}  // namespace heapline::accounting
