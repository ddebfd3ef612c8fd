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
//     B = max(BYTES, peak / DIVISOR)          (default 256 KiB and 100;
//                                              heapline/precision_budget_rule.h)
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

#include <heapline/precision_budget_rule.h>

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

// B for the run's published peak (heapline/precision_budget_rule.h). 0 in
// exact mode: nothing may be held back.
constexpr std::uint64_t budget_for_peak(std::int64_t peak, const Precision& precision) {
  if (precision.exact) return 0;
  return precision_budget_bytes(precision.budget_floor_bytes, precision.budget_divisor, peak);
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
  if (budget_needed <= precision.budget_floor_bytes) return 0;  // the floor alone gives more
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

// The largest free window (accounting.h, free_window): the budget split
// over the `registered` threads, B / count (not on the grid, without the
// divider's floor of 8: the free windows of all registered threads
// together stay within B, however far below the peak their thresholds are).
// At least 1.
constexpr std::uint64_t free_window_cap(std::uint64_t budget, std::uint64_t registered) {
  const std::uint64_t cap = budget / (registered > 0 ? registered : 1);
  return cap > 1 ? cap : 1;
}

// What a thread at `threshold` may hide: its share of the budget.
constexpr std::uint64_t share_of(std::uint64_t threshold) { return threshold > 0 ? threshold - 1 : 0; }

// The most the registered threads may hold back together (`reserved`)
// while the published live figure is `live` and the run's published peak
// `peak` (at least `live`: a publish that passes the peak raises it): the
// budget B, and, when shares can be revoked, the headroom below the peak.
// So live + reserved never passes peak + B (the peak's bound), and a value
// of `live` is within B + (peak − live) of the true heap (a timeline
// sample's).
constexpr std::int64_t reserve_limit(std::int64_t live, std::int64_t peak, std::int64_t budget, bool lend_headroom) {
  const std::int64_t headroom = lend_headroom && peak > live ? peak - live : 0;
  return budget + headroom;
}

// The peak below which the headroom is lent, once a step has left `live`
// (precision_budget.h, "Heap and mapped"): the heap's published peak (at
// least `live`), and while mapped memory counts (`mapped_for_budget`: the
// mapped bytes and the growth claimed by mapping calls in flight), no
// higher than the peak of heap + mapped less those bytes, so that what
// the threads hold back never hides a peak of the sum either. The peak of
// the sum is at least the heap's (a heap value was a sum with nothing, or
// more, mapped) and at least live + the mapped bytes now, which the step
// raises it to.
constexpr std::int64_t lending_peak(std::int64_t live, std::int64_t heap_peak, std::int64_t total_peak,
                                    std::int64_t mapped_live, std::int64_t mapped_for_budget) {
  const std::int64_t heap = heap_peak > live ? heap_peak : live;
  if (mapped_for_budget <= 0) return heap;
  std::int64_t total = total_peak > heap ? total_peak : heap;
  if (live + mapped_live > total) total = live + mapped_live;
  const std::int64_t below_total = total - mapped_for_budget;
  return below_total < heap ? below_total : heap;
}

// How far `reserved` may take the true heap above the published peak: the
// exposure live + reserved − peak (peak at least live). Its largest value
// of the run is the stated bound of the peak, both ways (precision_budget.h).
constexpr std::int64_t exposure(std::int64_t live, std::int64_t reserved, std::int64_t peak) {
  return live + reserved - (peak > live ? peak : live);
}

// The threshold a thread moves toward at a publish: the fair share of
// `pooled` (pooled_bytes: the budget and, while shares can be revoked,
// twice the headroom below the peak). At the peak that is what the budget
// alone gives; below it, as much as the limit allows once the threads are
// few: with the divider at least 8, four threads at F(B + 2 × headroom)
// hold at most 7/16 × B + 7/8 × headroom, within B + headroom (more
// threads, a larger divider). Shares above the limit's room are not
// granted (reserve_limit decides), and a publish that the limit refuses
// takes its room back (precision_budget.h).
constexpr std::uint64_t target_threshold(std::uint64_t pooled, std::uint64_t divider) {
  return fair_share(pooled, divider);
}

// The range of `pooled` (pooled_bytes) in which a thread at `threshold`
// stays where it is: while its threshold is at most twice 7/8 × pooled /
// divider (the target before the grid) and that is at most half as much
// again as the threshold. The target follows the headroom, which moves at
// every publish; a threshold that followed it closely would change at
// nearly every publish. (One that stays too high costs no precision: a
// publish that the limit refuses gives the share up, precision_budget.h.)
// A publish then only compares.
struct KeepRange {
  std::uint64_t from;
  std::uint64_t to;
};
constexpr KeepRange keep_range(std::uint64_t threshold, std::uint64_t divider) {
  if (divider < 1) divider = 1;
  std::uint64_t scaled;  // threshold × divider, saturated
  if (__builtin_mul_overflow(threshold, divider, &scaled)) scaled = UINT64_MAX;
  // threshold <= 2 × 7/8 × pooled / divider  <=>  pooled >= 4/7 × threshold × divider
  // threshold >= 2/3 × 7/8 × pooled / divider  <=>  pooled <= 12/7 × threshold × divider
  const std::uint64_t from = scaled / 7 * 4 + scaled % 7 * 4 / 7;
  const std::uint64_t to = scaled / 7 > UINT64_MAX / 12 ? UINT64_MAX : scaled / 7 * 12 + scaled % 7 * 12 / 7;
  return {from, to};
}

// The range of published live values in which `pooled` (pooled_bytes, a
// decreasing function of live) stays within `keep`, for the peak and the
// budget as they are: a publish compares its live value with it, two
// compares. (As the peak and B grow, the range grows stale; it is made
// again at the thread's next move, which a change of F(B) also brings.)
struct LiveRange {
  std::int64_t from;
  std::int64_t to;
};
constexpr LiveRange keep_live_range(KeepRange keep, std::int64_t peak, std::int64_t budget, bool lend_headroom) {
  const std::uint64_t floor = static_cast<std::uint64_t>(budget);  // pooled at the peak and above
  if (keep.to < floor) return {INT64_MAX, INT64_MIN};               // no live value keeps it
  if (!lend_headroom) return keep.from <= floor ? LiveRange{INT64_MIN, INT64_MAX} : LiveRange{INT64_MAX, INT64_MIN};
  // pooled = budget + 2 × (peak − live) below the peak: pooled <= keep.to
  // from live = peak − ⌊(keep.to − budget) / 2⌋ up, pooled >= keep.from up
  // to live = peak − ⌈(keep.from − budget) / 2⌉.
  auto live_at = [&](std::uint64_t half) {
    return half >= static_cast<std::uint64_t>(peak) + (std::uint64_t{1} << 62) ? INT64_MIN
                                                                               : peak - static_cast<std::int64_t>(half);
  };
  return {live_at((keep.to - floor) / 2), keep.from <= floor ? INT64_MAX : live_at((keep.from - floor + 1) / 2)};
}

// What a thread's target is a fair share of (target_threshold): B, and
// while shares can be revoked twice the headroom below the peak.
constexpr std::uint64_t pooled_bytes(std::int64_t live, std::int64_t peak, std::int64_t budget, bool lend_headroom) {
  const std::int64_t headroom = lend_headroom && peak > live ? peak - live : 0;
  return static_cast<std::uint64_t>(budget) + 2 * static_cast<std::uint64_t>(headroom);
}

}  // namespace heapline::accounting
