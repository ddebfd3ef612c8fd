// The figures every publish moves (sampling.cpp publishes; the exact reads
// of the API and the exit raise the peaks too): the published live heap,
// its peaks and the open interval's maximum. A peak is always a value the
// live figure (published, or exact as read) really had.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>

#include "atomic_max.h"
#include "process.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// Written by every publish: kept off the lines the hot path reads.
struct alignas(128) Published {
  // The one shared counter: every publish adds its delta. The true live heap
  // is this plus every registered thread's pending delta (precision_budget.h).
  std::atomic<std::int64_t> live{0};
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

// The run's peak of heap + mapped and its time: the sum's own peak, raised
// while something was mapped, or else the heap's peak.
struct PeakAt {
  std::int64_t bytes;
  std::uint64_t t_ns;
};
inline PeakAt run_total_peak() {
  const PeakAt heap{g_published.peak.load(std::memory_order_relaxed),
                    g_published.peak_time_ns.load(std::memory_order_relaxed)};
  const PeakAt total{g_published.total_peak.load(std::memory_order_relaxed),
                     g_published.total_peak_time_ns.load(std::memory_order_relaxed)};
  return heap.bytes > total.bytes ? heap : total;
}

}  // namespace heapline::accounting
#pragma GCC visibility pop
