// The peak of heap + mapped memory and its moment, written once for the
// library that reports it (published.h) and the launcher that adds a tree's
// processes from their reports (process_tree.cpp).
// Pure and allocation-free: the library calls it at its samples.
#pragma once

#include <cstdint>

namespace heapline {

// A peak and the first moment it was reached, in ns since the process's
// start.
struct PeakAt {
  std::int64_t bytes;
  std::uint64_t t_ns;
};

// The peak of heap + mapped from the heap's own peak and the sum's, as the
// library keeps them: the sum's is raised while something is mapped (and by
// the exit's last reading), so where nothing was ever mapped it may lag the
// heap's. The sum is at least the heap at every moment, so where the two
// are equal the sum held that value at both times: the earlier is its first.
constexpr PeakAt whole_peak_of(PeakAt heap, PeakAt sum) {
  if (heap.bytes > sum.bytes) return heap;
  if (heap.bytes == sum.bytes && heap.t_ns < sum.t_ns) return heap;
  return sum;
}

}  // namespace heapline
