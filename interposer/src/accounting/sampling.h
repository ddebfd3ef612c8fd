// The state of publishing and sampling (sampling.cpp: the slow path a
// thread takes when its pending delta reaches its threshold): the timelines
// of the heap, the mapped and the resident series, and the sampling lock.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

#include "accounting.h"
#include "live_file.h"
#include "published.h"
#include "timeline.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// Sampling::last_resident_ns before a timeline's first resident reading.
constexpr std::uint64_t kNoResidentReading = UINT64_MAX;

// Read by every publish, written once per sample (under `busy`).
struct alignas(128) Sampling {
  // When the open interval ends: g_identity.next_sample_ns (process.h), in
  // the page a copy of the process finds zeroed.
  // The clock publishes read (publish_clock.h), chosen for the interval,
  // and what they add to its reading.
  std::atomic<clockid_t> publish_clock{CLOCK_MONOTONIC};
  std::atomic<std::uint64_t> publish_clock_offset_ns{0};
  // The latest sample's clock reading: a publish's time is never below it,
  // so a publish after a sample is never taken for one before it.
  std::atomic<std::uint64_t> sample_mono_ns{0};
  std::atomic<bool> busy{false};  // the sampling lock (try_lock_sampling)
  std::uint64_t last_sample_ns = 0;  // the latest sample's time, since start (written under busy)
  std::uint64_t last_mapped_sample_ns = 0;  // the same for the mapped series
  // The resident-set series (written under busy): the time of its latest
  // attempt to read (kNoResidentReading: none in this timeline), and its
  // latest reading (-1: none), largest reading and that reading's time,
  // all since start.
  std::uint64_t last_resident_ns = kNoResidentReading;
  std::int64_t resident_live = -1;
  std::int64_t resident_peak = 0;
  std::uint64_t resident_peak_ns = 0;
  // The latest marker's time, since start: raised by every marker, also by
  // one placed without busy (a signal handler's, or after a wait too long).
  std::atomic<std::uint64_t> last_marker_ns{0};
  std::uint64_t coarse_tick_ns = 0;  // clock_getres(CLOCK_MONOTONIC_COARSE), set at init; 0: unknown
};
extern Sampling g_sampling;

extern Timeline g_timeline;
// The mapped-memory series: a sample with every heap sample (while mapped
// memory is counted), ending the same interval so that both merge alike,
// each at the time of its own latest change (sampling.cpp).
extern Timeline g_mapped_timeline;
// The resident-set series: [t, resident bytes, the largest reading merged
// into the sample], read (os::resident_bytes) at a sample when the
// series' own interval has passed since its latest reading, so at most once
// per interval however often markers or mappings sample: three system
// calls, never on a publish that does not sample, and outside the sampling
// lock (sample_locked, read_claimed_resident). It fills and merges on its
// own (fewer samples than the heap's).
extern Timeline g_resident_timeline;
// The least time between two resident readings when the sampling interval
// is 0 (a sample at every publish).
constexpr std::uint64_t kResidentMinSpacingNs = 1'000'000;

// The timelines into `region`, started afresh (init, fork child).
inline void attach_timelines(LiveRegion& region) {
  g_timeline.attach(&region.timeline);
  g_mapped_timeline.attach(&region.mapped_timeline);
  g_resident_timeline.attach(&region.resident_timeline);
}
inline void reset_timelines(std::uint64_t interval_ns) {
  g_timeline.reset(interval_ns);
  g_mapped_timeline.reset(interval_ns);
  g_resident_timeline.reset(interval_ns);
}

// The sampling lock, g_sampling.busy: one thread at a time writes samples,
// the latest figures and markers. A publish only ever tries it; the thread
// that holds it knows (t_holds_sampling), so that a signal handler
// interrupting it never waits for itself.
extern __thread bool t_holds_sampling __attribute__((tls_model("initial-exec")));
inline bool try_lock_sampling() {
  // Set before the lock is taken: a handler that interrupts in between
  // must not wait for its own thread.
  const bool held = t_holds_sampling;
  t_holds_sampling = true;
  if (!g_sampling.busy.exchange(true, std::memory_order_acquire)) return true;
  t_holds_sampling = held;
  return false;
}
inline void unlock_sampling() {
  t_holds_sampling = false;
  g_sampling.busy.store(false, std::memory_order_release);
}
// Taken waiting a little (never forever): lock_sampling (slow_paths.h).

}  // namespace heapline::accounting
#pragma GCC visibility pop
