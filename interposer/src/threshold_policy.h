// The threshold policy: how many bytes a thread may hold back before it
// publishes, as a pure function of the published live heap.
#pragma once

#include <cstdint>

#include "config.h"

namespace heapline::accounting {

// max(min_bytes, live / divisor), rounded down to a power of two so that it
// changes only when the heap doubles or halves: the policy line stays
// read-mostly even while live moves on every publish. 1 (every change
// publishes) in exact mode.
inline std::int64_t threshold_for(std::int64_t live, const Precision& precision) {
  if (precision.exact) return 1;
  std::uint64_t scaled = live > 0 ? static_cast<std::uint64_t>(live) / precision.divisor : 0;
  if (scaled > 0) scaled = std::uint64_t{1} << (63 - __builtin_clzll(scaled));
  std::uint64_t threshold = scaled > precision.min_bytes ? scaled : precision.min_bytes;
  return static_cast<std::int64_t>(threshold);
}

}  // namespace heapline::accounting
