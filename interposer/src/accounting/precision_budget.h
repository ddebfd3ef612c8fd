// The precision budget (precision_budget.cpp applies threshold_policy.h's
// rules): how many bytes the threads may hold back from the published
// figure, all together.
//
// Precision contract. The true live heap is
//     published live + the sum of every registered thread's pending delta
// (a thread without a slot publishes every change, so it has nothing
// pending; a thread that exits publishes its delta first). After each call a
// thread's |pending| is below its slot's threshold t, so it hides at most
// t − 1 bytes, its share. The shares of all registered threads are summed
// in g_budget.reserved, which grows only by a compare-and-swap that keeps it
// within the budget B = max(BYTES, published peak / DIVISOR)
// (threshold_policy.h); a share is reserved before a threshold rises and
// released after it falls. Hence at any moment
//     |published live − true live| <= reserved <= B
// and the largest `reserved` of the run (g_budget.max_reserved) is the
// bound_bytes written to the output: at most max(BYTES, peak / DIVISOR),
// whatever the number of threads. The published peak is the largest
// published live value, a value of the one shared counter, so it is within
// the same bound of the true peak; final_bytes is exact (published live
// plus every pending delta), and the peak is raised to it if needed.
//
// Peaks. g_published.peak is the run's peak (the report's peak_bytes);
// phase_peak is the same figure but reset by heapline_reset_peak(). Both are
// raised to every exact live value anyone computes (the API reads and the
// exit), so a reported peak is never below a value that was seen, even when
// the batched publishing had not yet carried threads' pending bytes.
#pragma once

#include <atomic>
#include <cstdint>

#include "threshold_policy.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// Written when a thread registers, exits or changes its threshold, never on
// the hot path nor by a publish that keeps its threshold.
struct alignas(128) Budget {
  // The shares the registered threads hold (the sum of their t − 1), plus
  // raises in flight: never above `bytes`.
  std::atomic<std::int64_t> reserved{0};
  // The largest `reserved` of the run: the stated bound. Only grows.
  std::atomic<std::int64_t> max_reserved{0};
  // B in force: max(BYTES, peak / DIVISOR) as of the latest policy change
  // (behind the peak in between, never ahead of it). Only grows.
  std::atomic<std::int64_t> bytes{0};
  // C: the registered threads, rounded up on the grid, with hysteresis.
  std::atomic<std::uint64_t> divider{kMinDivider};
  // Requests to step down (precision_budget.cpp): when the next pass over
  // the registry may come (CLOCK_MONOTONIC_COARSE).
  std::atomic<std::uint64_t> next_room_request_ns{0};
  // The largest threshold a thread held (the report's max_threshold_bytes):
  // only grows.
  std::atomic<std::int64_t> max_threshold{1};
};
extern Budget g_budget;

// The policy (g_policy) from the run's peak and the divider: at init, at
// fork, and when either makes the fair share change.
void refresh_policy();
// The registered thread count changed: the divider follows it (and with it
// the policy).
void follow_thread_count(std::uint32_t registered);
// A newcomer's threshold, its share reserved: the fair share, or what the
// budget has left (1 when nothing).
std::int64_t grant_threshold();
// The calling thread's threshold toward the fair share (its slot's span
// differs from the policy's): lowered at once, raised as far as the budget
// allows. Safe against its own signal handlers.
void move_threshold();
// A threshold handed back (a thread's exit): its share returns to the budget.
void release_threshold(std::int64_t threshold);

}  // namespace heapline::accounting
#pragma GCC visibility pop
