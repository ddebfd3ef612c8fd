// Publishing and sampling: the slow path a thread takes when its pending
// delta reaches the threshold, and the timeline samples it may take.
//
// The live file (live_format.h). The timeline's samples, the latest figures
// and the markers are written into a file-backed shared mapping created
// during the lazy init, so a killed process leaves its heap line on disk.
// Only the sampling slow path writes there (under g_sampling.busy), plus the
// marker API (lock-free: a claimed index, then a ready flag).
#include <sched.h>

#include "mapped_memory.h"
#include "process_state.h"

namespace heapline::accounting {

namespace {

// The mapped-memory part of publish_figures, inside its seqlock.
void publish_mapped_figures(LiveHeader& h, std::int64_t mapped_live) {
  const mapped::Figures figures = mapped::figures();
  h.mapped_live.store(mapped_live, std::memory_order_relaxed);
  h.mapped_peak.store(figures.peak, std::memory_order_relaxed);
  h.mapped_peak_time_ns.store(figures.peak != 0 ? since_start(figures.peak_time_ns) : 0, std::memory_order_relaxed);
  const PeakAt total = run_total_peak();
  h.total_peak.store(total.bytes, std::memory_order_relaxed);
  h.total_peak_time_ns.store(total.t_ns, std::memory_order_relaxed);
}

// The figures of the latest sample into the live file's header, under its
// seqlock. Called with g_sampling.busy held: one writer at a time.
void publish_figures(std::uint64_t t_ns, std::int64_t live, std::int64_t mapped_live) {
  LiveHeader& h = g_region->header;
  const RegistryTotals totals = registry_totals();
  const std::uint64_t seq = h.seq.load(std::memory_order_relaxed);
  h.seq.store(seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  h.live.store(live, std::memory_order_relaxed);
  h.peak.store(g_published.peak.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h.peak_time_ns.store(g_published.peak_time_ns.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h.last_sample_ns.store(t_ns, std::memory_order_relaxed);
  h.max_threads.store(g_process.max_registered.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h.max_threshold_bytes.store(static_cast<std::uint64_t>(g_process.max_threshold.load(std::memory_order_relaxed)),
                              std::memory_order_relaxed);
  for (unsigned kind = 0; kind < kCallKinds; ++kind) {
    h.calls[kind].store(totals.calls[kind], std::memory_order_relaxed);
  }
  h.publishes.store(totals.publishes, std::memory_order_relaxed);
  publish_mapped_figures(h, mapped_live);
  h.seq.store(seq + 2, std::memory_order_release);
}

}  // namespace

// Appends a sample of `live` (with the interval's maximum) at `now`. Called
// with g_sampling.busy held.
void take_sample(std::uint64_t now, std::int64_t live) {
  // A concurrent publish lands either in this sample's maximum or in the
  // next one's: never in neither.
  std::int64_t max_live = g_published.interval_max.exchange(live, std::memory_order_relaxed);
  if (max_live < live) max_live = live;
  const std::uint64_t t_ns = since_start(now);
  g_timeline.append(Sample{t_ns, live, max_live});
  // The mapped series: a sample at the same moment, merged the same way.
  const std::int64_t mapped_live = mapped::live_bytes();
  if (mapped::enabled()) g_mapped_timeline.append(Sample{t_ns, mapped_live, mapped::take_interval_max(mapped_live)});
  g_sampling.next_sample_ns.store(now + g_timeline.interval_ns(), std::memory_order_relaxed);
  publish_figures(t_ns, live, mapped_live);
  if (max_live >= g_process.live_file_floor) create_deferred_live_file();
}

// Takes a sample unless another thread is taking one: never waits. `force`
// samples even before the interval has passed (a marker).
void try_sample(std::uint64_t now, bool force) {
  if (g_sampling.busy.exchange(true, std::memory_order_acquire)) return;
  if (force || now >= g_sampling.next_sample_ns.load(std::memory_order_relaxed)) {
    take_sample(now, g_published.live.load(std::memory_order_relaxed));
  }
  g_sampling.busy.store(false, std::memory_order_release);
}

bool lock_sampling() {
  bool locked = false;
  for (int attempt = 0; attempt < 1000 && !locked; ++attempt) {
    locked = !g_sampling.busy.exchange(true, std::memory_order_acquire);
    if (!locked) sched_yield();
  }
  return locked;
}

void publish_value(std::int64_t delta) {
  const std::int64_t live = g_published.live.fetch_add(delta, std::memory_order_relaxed) + delta;
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  raise_peaks(live, now);
  // While nothing is mapped the sum is the heap, whose peak is kept anyway:
  // total_peak() takes the larger of the two, so this costs one load here.
  if (const std::int64_t mapped_live = mapped::live_bytes(); mapped_live != 0) raise_total_peak(live + mapped_live, now);
  raise_to(g_published.interval_max, live);
  const std::int64_t threshold = policy_threshold(live);
  if (threshold != g_policy.threshold.load(std::memory_order_relaxed)) {
    g_policy.threshold.store(threshold, std::memory_order_relaxed);
    raise_to(g_process.max_threshold, threshold);
  }
  if (now >= g_sampling.next_sample_ns.load(std::memory_order_relaxed)) try_sample(now);
}

void publish_exactly(std::int64_t bytes, CallKind kind) {
  g_process.folded_calls[kind].fetch_add(1, std::memory_order_relaxed);
  if (bytes == 0) return;
  g_process.folded_publishes.fetch_add(1, std::memory_order_relaxed);
  publish_value(bytes);
}

void mapped_changed(std::int64_t mapped_live) {
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  const std::int64_t total = g_published.live.load(std::memory_order_relaxed) + mapped_live;
  if (total > g_published.total_peak.load(std::memory_order_relaxed)) raise_total_peak(total, now);
  // A program that maps without allocating still gets samples.
  if (now >= g_sampling.next_sample_ns.load(std::memory_order_relaxed) &&
      g_process.init_state.load(std::memory_order_acquire) == kDone) {
    try_sample(now);
  }
}

void publish(Slot* slot, std::int64_t bytes, CallKind kind) {
  if (slot == &g_no_slot) {
    unregistered_change(bytes, kind);
    return;
  }
  const std::int64_t delta = slot->own_pending();
  take_pending(*slot, delta);  // a signal handler's bytes meanwhile stay pending
  count_call(slot->publishes);
  publish_value(delta);
  slot->set_threshold(g_policy.threshold.load(std::memory_order_relaxed));
}

}  // namespace heapline::accounting
