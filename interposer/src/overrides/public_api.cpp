// The public API (include/heapline.h): its exported symbols and what they
// do. Versioned names: a later incompatible change adds heapline_v2_* beside
// these. Off the hot path; each does nothing or returns 0 before the
// process's lazy init.
#include <errno.h>

#include <cstdint>

#include "atomic_max.h"
#include "heap_sampler.h"
#include "intercepted.h"
#include "live_region.h"
#include "mapped_memory.h"
#include "process.h"
#include "published.h"
#include "sampling.h"
#include "slow_paths.h"
#include "thread_registry.h"

namespace heapline::accounting {

namespace {

// Set up, and a copy made without the fork handler adopted first: a
// marker or a reset is never its parent's.
bool ready_for_api() {
  if (g_process.init_state.load(std::memory_order_acquire) != kDone) return false;
  adopt_if_copy();
  return true;
}

}  // namespace

void api_mark(const char* name) {
  if (!ready_for_api()) return;
  int saved_errno = errno;
  // The heap at the marker: publish the caller's pending bytes first (which
  // may take a sample of its own).
  publish_calling_thread();
  // Markers are ordered as samples are: the index and the time are taken
  // under the sampling lock, the time never before the latest marker's, and
  // the marker's sample is taken at once. Signals are blocked meanwhile, so
  // that a handler's marker never comes between this one's index and time.
  // A handler that interrupted its thread's sampling (which holds the lock,
  // and cannot run until the handler returns) writes its marker without it
  // and takes no sample. Waiting for another thread is bounded: past it, the
  // marker is written unlocked.
  const os::SignalMask mask = os::block_signals();
  const bool locked = !t_holds_sampling && lock_sampling();
  const std::uint64_t now = sample_clock();
  std::uint64_t t_ns = since_start(now);
  const std::uint64_t latest = raise_to(g_sampling.last_marker_ns, t_ns);
  if (t_ns < latest) t_ns = latest;
  LiveRegion& region = *g_region;
  const std::uint32_t index = g_process.markers_claimed.fetch_add(1, std::memory_order_relaxed);
  region.header.markers_claimed.fetch_add(1, std::memory_order_relaxed);
  if (index < kLiveMarkerCapacity) {
    LiveMarker& marker = region.markers[index];
    marker.t_ns.store(t_ns, std::memory_order_relaxed);
    copy_text(marker.name, sizeof marker.name, name != nullptr ? name : "");
    marker.ready.store(1, std::memory_order_release);
  }
  std::uint64_t resident_claim = kNoResidentReading;
  if (locked) {
    resident_claim = sample_locked(now, SampleNow::kAlways);
    unlock_sampling();
  }
  read_claimed_resident(resident_claim);
  os::restore_signals(mask);
  errno = saved_errno;
}

std::int64_t api_live_bytes() {
  if (!ready_for_api()) return 0;
  const std::int64_t live = exact_live();
  raise_peaks(live, clock_ns(CLOCK_MONOTONIC));
  return live;
}

std::int64_t api_peak_bytes() {
  if (!ready_for_api()) return 0;
  raise_peaks(exact_live(), clock_ns(CLOCK_MONOTONIC));
  return g_published.phase_peak.load(std::memory_order_relaxed);
}

void api_reset_peak() {
  if (!ready_for_api()) return;
  const std::int64_t live = exact_live();
  g_published.phase_peak.store(live, std::memory_order_relaxed);
  sampler::phase_reset();
  g_published.phase_total_peak.store(live + mapped::live_bytes(), std::memory_order_relaxed);
  raise_peaks(live, clock_ns(CLOCK_MONOTONIC));  // the run's peak keeps every value seen
}

// Mapped memory is published at every change: its figure is exact as read.
std::int64_t api_mapped_bytes() { return ready_for_api() ? mapped::live_bytes() : 0; }

std::int64_t api_total_bytes() {
  if (!ready_for_api()) return 0;
  const std::int64_t live = exact_live();
  const std::int64_t total = live + mapped::live_bytes();
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  raise_peaks(live, now);
  raise_total_peak_in_file(total, now);
  return total;
}

std::int64_t api_total_peak_bytes() {
  if (!ready_for_api()) return 0;
  api_total_bytes();  // the value now is part of the peak
  // While nothing was mapped the sum was the heap, whose phase peak is kept.
  const std::int64_t heap = g_published.phase_peak.load(std::memory_order_relaxed);
  const std::int64_t total = g_published.phase_total_peak.load(std::memory_order_relaxed);
  return total > heap ? total : heap;
}

}  // namespace heapline::accounting

HEAPLINE_EXPORT(heapline_v1_mark) void heapline_v1_mark(const char* name) noexcept { heapline::accounting::api_mark(name); }
HEAPLINE_EXPORT(heapline_v1_live_bytes) std::int64_t heapline_v1_live_bytes() noexcept { return heapline::accounting::api_live_bytes(); }
HEAPLINE_EXPORT(heapline_v1_peak_bytes) std::int64_t heapline_v1_peak_bytes() noexcept { return heapline::accounting::api_peak_bytes(); }
HEAPLINE_EXPORT(heapline_v1_reset_peak) void heapline_v1_reset_peak() noexcept { heapline::accounting::api_reset_peak(); }
HEAPLINE_EXPORT(heapline_v1_mapped_bytes) std::int64_t heapline_v1_mapped_bytes() noexcept { return heapline::accounting::api_mapped_bytes(); }
HEAPLINE_EXPORT(heapline_v1_total_bytes) std::int64_t heapline_v1_total_bytes() noexcept { return heapline::accounting::api_total_bytes(); }
HEAPLINE_EXPORT(heapline_v1_total_peak_bytes) std::int64_t heapline_v1_total_peak_bytes() noexcept {
  return heapline::accounting::api_total_peak_bytes();
}
