// The figures every publish moves (sampling.cpp publishes; the exact reads
// of the API and the exit raise the peaks too): the published live heap,
// its peaks and the open interval's maximum. A peak is always a value the
// live figure (published, or exact as read) really had.
#pragma once

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "arch.h"
#include "atomic_max.h"
#include <heapline/peak_rule.h>
#include "mapped_memory.h"
#include "os.h"
#include "process.h"
#include "threshold_policy.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// Written by every publish: kept off the lines the hot path reads.
struct alignas(128) Published {
  // The one shared counter: every publish adds its delta. The true live heap
  // is this plus every registered thread's pending delta (precision_budget.h).
  std::atomic<std::int64_t> live{0};
  // The shares the registered threads hold (the sum of their t - 1), plus
  // raises in flight. Beside `live`, so that the two move together in one
  // step (change_live_and_reserved): what the budget allows depends on both
  // (precision_budget.h).
  std::atomic<std::int64_t> reserved{0};
  // The run's peak (the report's peak_bytes): the largest value `live` took,
  // or an exact live value someone computed (api, exit). Only grows but in a
  // fork child.
  std::atomic<std::int64_t> peak{0};
  // The same, reset by heapline_reset_peak(): phase_peak <= peak.
  std::atomic<std::int64_t> phase_peak{0};
  std::atomic<std::int64_t> interval_max{INT64_MIN};  // since the latest sample; INT64_MIN: no publish yet
  // The latest publish (the clock it read, the live value it left): the
  // private copy of what the live file's header shows, which the sampler
  // reads when it closes an interval (never trusting the shared mapping).
  std::atomic<std::uint64_t> publish_mono_ns{0};
  std::atomic<std::int64_t> publish_live{0};
  std::atomic<std::uint64_t> peak_time_ns{0};  // since start, of the latest raise of `peak`
  // Heap plus mapped memory (mapped_memory.h): its own peak, raised at every
  // heap publish and every mapped change, so it is the peak of the sum and
  // not the sum of two peaks that may be far apart in time.
  std::atomic<std::int64_t> total_peak{0};
  std::atomic<std::uint64_t> total_peak_time_ns{0};
  // The same, reset by heapline_reset_peak() (phase_peak's counterpart).
  std::atomic<std::int64_t> phase_total_peak{0};
};
extern Published g_published;
static_assert(offsetof(Published, reserved) == offsetof(Published, live) + 8 && offsetof(Published, live) % 16 == 0,
              "live and reserved are one 16-byte pair for arch::compare_exchange_pair");

// `live` and `reserved` as one value.
struct LiveAndReserved {
  std::int64_t live;
  std::int64_t reserved;
};

// Both read, each atomically but not together: a first guess for
// change_live_and_reserved, which tells a torn pair.
inline LiveAndReserved read_live_and_reserved() {
  return {g_published.live.load(std::memory_order_relaxed), g_published.reserved.load(std::memory_order_relaxed)};
}

// Replaces `live` and `reserved` with `desired` if both still hold
// `expected`, as one atomic step (arch.h); else loads what they hold into
// `expected`. The single-word changes of either (a publish of freed bytes,
// a share released) are locked instructions on the same 16 bytes, which
// this one sees as changes.
inline bool change_live_and_reserved(LiveAndReserved& expected, LiveAndReserved desired) {
  return arch::compare_exchange_pair(&g_published.live, expected.live, expected.reserved, desired.live,
                                     desired.reserved);
}

// A stretch of the calling thread's in which `reserved` holds bytes that no
// revoker can take back from its slot: a raise reserved and not yet held, a
// share no longer held and not yet released, a threshold change under way
// (the slot's threshold and headroom then disagree). It runs with every
// signal blocked, so that only the scheduler can keep the thread inside it,
// never a signal handler of the program's (a collector's stop-the-world):
// a publish that waits for that room waits for a thread that is running
// (precision_budget.h, "Waiting for room"). Not nested.
class OwnBytesWindow {
 public:
  OwnBytesWindow() : mask_(os::block_signals()) {}
  ~OwnBytesWindow() { os::restore_signals(mask_); }
  OwnBytesWindow(const OwnBytesWindow&) = delete;
  OwnBytesWindow& operator=(const OwnBytesWindow&) = delete;

 private:
  os::SignalMask mask_;
};

// The peak the budget lends its headroom below, for a step that leaves
// `live` (threshold_policy.h, lending_peak), with the claims of mapping
// calls in flight counted as mapped; the same peak with only what is mapped
// counted, which the exposure a step leaves is measured from (a claim is
// room kept for a growth that has not happened); and the mapped figure
// they were computed with: a step made with them reads that figure again
// once made (mapped_grew_since), since a mapping call may have claimed
// growth in between, and that call's own check may have read the figures
// before the step.
struct LendingPeak {
  std::int64_t peak;
  std::int64_t exposed;
  std::int64_t mapped;
};
inline LendingPeak lending_peak_after(std::int64_t live) {
  const std::int64_t mapped = mapped::bytes_for_budget();
  const std::int64_t heap_peak = g_published.peak.load(std::memory_order_relaxed);
  if (mapped == 0) [[likely]] {
    const std::int64_t heap = heap_peak > live ? heap_peak : live;
    return {heap, heap, 0};
  }
  const std::int64_t total_peak = g_published.total_peak.load(std::memory_order_relaxed);
  const std::int64_t mapped_live = mapped::live_bytes();
  return {lending_peak(live, heap_peak, total_peak, mapped_live, mapped),
          lending_peak(live, heap_peak, total_peak, mapped_live, mapped_live), mapped};
}
// After a step made with `lent` (its compare-and-swap a full barrier):
// whether a mapping call claimed more since.
inline bool mapped_grew_since(const LendingPeak& lent) { return mapped::bytes_for_budget() > lent.mapped; }

// A live value that was seen: neither peak may stay below it.
inline void raise_peaks(std::int64_t live, std::uint64_t now) {
  if (raise_to(g_published.peak, live) < live) {
    g_published.peak_time_ns.store(since_start(now), std::memory_order_relaxed);
  }
  raise_to(g_published.phase_peak, live);
}

inline void raise_total_peak(std::int64_t total, std::uint64_t now) {
  if (raise_to(g_published.total_peak, total) < total) {
    g_published.total_peak_time_ns.store(since_start(now), std::memory_order_relaxed);
  }
  raise_to(g_published.phase_total_peak, total);
}

// The run's peak of heap + mapped and its time (peak_rule.h).
inline PeakAt run_total_peak() {
  return whole_peak_of({g_published.peak.load(std::memory_order_relaxed),
                        g_published.peak_time_ns.load(std::memory_order_relaxed)},
                       {g_published.total_peak.load(std::memory_order_relaxed),
                        g_published.total_peak_time_ns.load(std::memory_order_relaxed)});
}

// In a fork child: the figures start again from the heap and the mapped
// bytes it inherited, with no share held back (the parent's threads'
// shares went with them) and no interval open (the parent's is not the
// child's).
inline void restart_published_at_fork(std::int64_t heap, std::int64_t mapped) {
  g_published.live.store(heap, std::memory_order_relaxed);
  g_published.peak.store(heap, std::memory_order_relaxed);
  g_published.phase_peak.store(heap, std::memory_order_relaxed);
  g_published.peak_time_ns.store(0, std::memory_order_relaxed);
  g_published.interval_max.store(INT64_MIN, std::memory_order_relaxed);
  g_published.total_peak.store(heap + mapped, std::memory_order_relaxed);
  g_published.phase_total_peak.store(heap + mapped, std::memory_order_relaxed);
  g_published.total_peak_time_ns.store(0, std::memory_order_relaxed);
  g_published.reserved.store(0, std::memory_order_relaxed);
}

}  // namespace heapline::accounting
#pragma GCC visibility pop
