// The precision budget of a batched run, written once for the three
// programs that need it: the library that keeps it (threshold_policy.h),
// the launcher that states it from a live file (live_view.cpp) and
// heapline-bench that holds a run's bound to it (accuracy.cpp):
//     B = max(BUDGET_FLOOR_BYTES, peak / DIVISOR)
// (HEAPLINE_PRECISION=BYTES,DIVISOR; the defaults are in the library's
// config.h). What the library's threads hold back together never exceeds
// B for the peak published so far, so a published figure is never further
// than B from the true one (the contract at the top of precision_budget.h).
// Pure and allocation-free: the library calls it on its hot path.
#pragma once

#include <cstdint>

namespace heapline {

// B for `peak` (a negative or zero peak gives the floor). A divisor of 0
// is read as 1, so that no caller divides by zero.
constexpr std::uint64_t precision_budget_bytes(std::uint64_t budget_floor_bytes, std::uint64_t budget_divisor,
                                               std::int64_t peak) {
  const std::uint64_t divisor = budget_divisor > 0 ? budget_divisor : 1;
  const std::uint64_t fraction = peak > 0 ? static_cast<std::uint64_t>(peak) / divisor : 0;
  return fraction > budget_floor_bytes ? fraction : budget_floor_bytes;
}

}  // namespace heapline
