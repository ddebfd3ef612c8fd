// The threshold policy: how many bytes a thread may hold back before it
// publishes, as a pure function of the published live heap.
#pragma once

#include <cstdint>

#include "config.h"

namespace heapline::accounting {

// A threshold and the published live values [low, high) for which it stays
// in force: a publish only compares its live value with the range (two
// compares on a read-mostly line) and computes a new threshold, with its
// division, only when the heap has left it. Upwards the range ends where the
// policy gives the next threshold; downwards it reaches half as far again
// (hysteresis), so that a heap that moves around a boundary of the policy
// does not change every thread's threshold at each crossing. A threshold
// kept there is at most twice the policy's, never above the largest
// threshold used, which is what the stated precision bound is made of.
struct ThresholdRange {
  std::int64_t threshold;
  std::int64_t low;
  std::int64_t high;
};

// max(min_bytes, live / divisor), rounded down to a power of two so that it
// changes only when the heap doubles or halves: the policy line stays
// read-mostly even while live moves on every publish. 1 (every change
// publishes) in exact mode.
inline ThresholdRange threshold_range(std::int64_t live, const Precision& precision) {
  constexpr std::int64_t kLowest = INT64_MIN, kHighest = INT64_MAX;
  if (precision.exact) return {1, kLowest, kHighest};
  const std::uint64_t divisor = precision.divisor > 0 ? precision.divisor : 1;
  const std::uint64_t min_bytes = precision.min_bytes > 0 ? precision.min_bytes : 1;
  const std::uint64_t scaled = live > 0 ? static_cast<std::uint64_t>(live) / divisor : 0;
  const std::uint64_t power = scaled > 0 ? std::uint64_t{1} << (63 - __builtin_clzll(scaled)) : 0;
  // `times_divisor(p)` is the smallest live value whose live / divisor
  // reaches p (saturated: no heap gets there).
  auto times_divisor = [divisor](std::uint64_t p) -> std::int64_t {
    std::uint64_t product;
    if (__builtin_mul_overflow(p, divisor, &product) || product > static_cast<std::uint64_t>(kHighest)) return kHighest;
    return static_cast<std::int64_t>(product);
  };
  if (power <= min_bytes) {
    // The minimum holds until live / divisor reaches the first power of
    // two above it.
    const int bits = 64 - __builtin_clzll(min_bytes);  // 2^bits > min_bytes
    const std::int64_t high = bits >= 63 ? kHighest : times_divisor(std::uint64_t{1} << bits);
    return {static_cast<std::int64_t>(min_bytes), kLowest, high};
  }
  const std::int64_t high = power >= (std::uint64_t{1} << 62) ? kHighest : times_divisor(power << 1);
  return {static_cast<std::int64_t>(power), times_divisor(power >> 1), high};
}

inline std::int64_t threshold_for(std::int64_t live, const Precision& precision) {
  return threshold_range(live, precision).threshold;
}

}  // namespace heapline::accounting
