// Publishing and sampling: the slow path a thread takes when its pending
// delta reaches the threshold, and the timeline samples it may take.
//
// The live file (live_format.h). The timeline's samples, the latest figures
// and the markers are written into a file-backed shared mapping created
// during the lazy init, so a killed process leaves its heap line on disk.
//
// Every publish leaves its state in the live file's header (its time, the
// published live value, and the open interval's maximum when it raises it):
// plain stores to one cache line, so a reader (`heapline top`, or `convert`
// after a kill) is never behind the publishing, whenever the next sample
// comes. The timeline is a sequence of closed intervals: the first publish
// after the sampling interval has passed ends the open one, whose last
// publish becomes a sample with its own time, its live value and the
// interval's maximum; then it opens the next one. So a drop followed by a
// quiet spell is drawn where it happened, not at the next publish after
// the spell. Samples and markers are written under g_sampling.busy (one
// writer at a time), each at a time read under it and never before the
// latest sample, so every series goes forward in time whichever threads (or
// signal handlers) sample.

#include "atomic_max.h"
#include "exact_shadow.h"
#include "heap_sampler.h"
#include "heapline/seqlock.h"
#include "live_header.h"
#include "mapped_memory.h"
#include "os.h"
#include "precision_budget.h"
#include "process.h"
#include "publish_clock.h"
#include "published.h"
#include "sampling.h"
#include "thread_registry.h"

namespace heapline::accounting {

__thread bool t_holds_sampling __attribute__((tls_model("initial-exec"))) = false;
constinit Published g_published;
constinit shadow::ExactShadow shadow::g_exact_shadow;
constinit Sampling g_sampling;
constinit Timeline g_timeline{&g_static_region.timeline};
constinit Timeline g_mapped_timeline{&g_static_region.mapped_timeline};
constinit Timeline g_resident_timeline{&g_static_region.resident_timeline};

namespace {

// g_published.interval_max when no publish came since the latest sample.
constexpr std::int64_t kNoPublish = INT64_MIN;

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

// The resident figures, inside publish_figures' seqlock.
void publish_resident_figures(LiveHeader& h) {
  h.resident_live.store(g_sampling.resident_live, std::memory_order_relaxed);
  h.resident_peak.store(g_sampling.resident_peak, std::memory_order_relaxed);
  h.resident_peak_time_ns.store(g_sampling.resident_peak_ns, std::memory_order_relaxed);
}

// The figures of the latest sample into the live file's header, under its
// seqlock. Called with g_sampling.busy held: one writer at a time. The
// stated precision only grows, and is also raised where it changes
// (precision_budget.cpp, note_max_threads): raised here, never lowered.
void publish_figures(std::uint64_t t_ns, std::int64_t live, std::int64_t mapped_live) {
  LiveHeader& h = g_region->header;
  const RegistryTotals totals = registry_totals();
  const SeqlockWrite change(h.seq);
  h.live.store(live, std::memory_order_relaxed);
  h.peak.store(g_published.peak.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h.peak_time_ns.store(g_published.peak_time_ns.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h.last_sample_ns.store(t_ns, std::memory_order_relaxed);
  raise_to(h.max_threads, g_threads.max_registered.load(std::memory_order_relaxed));
  raise_to(h.max_threshold_bytes, static_cast<std::uint64_t>(g_budget.max_threshold.load(std::memory_order_relaxed)));
  raise_to(h.bound_bytes, static_cast<std::uint64_t>(g_budget.max_reserved.load(std::memory_order_relaxed)));
  for (unsigned kind = 0; kind < kCallKinds; ++kind) {
    h.calls[kind].store(totals.calls[kind], std::memory_order_relaxed);
  }
  h.publishes.store(totals.publishes, std::memory_order_relaxed);
  publish_mapped_figures(h, mapped_live);
  publish_resident_figures(h);
}

// The least time between two resident readings: the resident series' own
// interval (the sampling interval, doubled at each of its merges), at least
// kResidentMinSpacingNs.
std::uint64_t resident_spacing() {
  const std::uint64_t interval = g_resident_timeline.interval_ns();
  return interval > kResidentMinSpacingNs ? interval : kResidentMinSpacingNs;
}

// Whether a sample reads the resident set: kIfDue when the resident
// series' interval has passed since its latest reading, kAlways for the
// first sample of a timeline and the last at exit.
enum class ResidentReading { kIfDue, kAlways };

// Claims the resident reading of a sample at `t_ns` (since start), when one
// is due: returns its time, or kNoResidentReading. With g_sampling.busy
// held. A reading that then fails (no /proc, no descriptor left) records
// nothing, and the next is due an interval later.
std::uint64_t claim_resident_reading(std::uint64_t t_ns, ResidentReading when) {
  const std::uint64_t last = g_sampling.last_resident_ns;
  if (last != kNoResidentReading) {
    if (when == ResidentReading::kAlways ? t_ns == last : t_ns - last < resident_spacing()) return kNoResidentReading;
  }
  g_sampling.last_resident_ns = t_ns;
  return t_ns;
}

// A reading into the series and its figures into the live file. With
// g_sampling.busy held. A reading older than the series' latest (a sample
// claimed another while this one was being read) is dropped: the series
// goes forward in time.
void record_resident(std::uint64_t t_ns, std::int64_t resident) {
  const std::size_t count = g_resident_timeline.size();
  if (resident < 0 || (count > 0 && g_resident_timeline[count - 1].t_ns > t_ns)) return;
  g_resident_timeline.append(Sample{t_ns, resident, resident});
  g_sampling.resident_live = resident;
  if (resident > g_sampling.resident_peak) {
    g_sampling.resident_peak = resident;
    g_sampling.resident_peak_ns = t_ns;
  }
  LiveHeader& h = g_region->header;
  const SeqlockWrite change(h.seq);
  publish_resident_figures(h);
}

// The reading at once, the lock held throughout: a timeline's first sample
// and the last at exit, where no thread publishes meanwhile.
void read_resident_locked(std::uint64_t t_ns) {
  if (claim_resident_reading(t_ns, ResidentReading::kAlways) != kNoResidentReading) {
    record_resident(t_ns, os::resident_bytes());
  }
}

// Appends a heap sample, and the mapped series' sample that ends the same
// interval (so the two merge alike), at `closing_ns` (since start). Each
// carries the time of the change it shows: the heap sample its last
// publish's, the mapped sample its latest mapping change's (read from
// CLOCK_MONOTONIC), or, with no mapping change in the interval, the heap
// sample's (the mapped bytes held then too).
void append(const Sample& sample, std::uint64_t closing_ns) {
  g_timeline.append(sample);
  g_sampling.last_sample_ns = sample.t_ns;
  if (mapped::enabled()) {
    const mapped::Interval interval = mapped::take_interval();
    std::uint64_t t = interval.changed ? since_start(interval.change_mono_ns) : sample.t_ns;
    // A change that raced this sample may be a moment past its closing.
    if (t > closing_ns) t = closing_ns;
    if (t < g_sampling.last_mapped_sample_ns) t = g_sampling.last_mapped_sample_ns;
    g_mapped_timeline.append(Sample{t, interval.live, interval.max});
    g_sampling.last_mapped_sample_ns = t;
  }
  // A process that is not the command gets its live file once its heap
  // matters (live_header.cpp); the timelines move over with it.
  if (sample.max_live >= g_process.live_file_floor) create_deferred_live_file();
}

// The next interval runs from `now`, a sample's CLOCK_MONOTONIC reading;
// the clock of its publishes follows the interval, which doubles as the
// timeline fills.
void schedule_next_sample(std::uint64_t now) {
  const std::uint64_t interval_ns = g_timeline.interval_ns();
  const PublishClock clock = publish_clock_for(interval_ns, g_sampling.coarse_tick_ns);
  g_sampling.publish_clock.store(clock.clock, std::memory_order_relaxed);
  g_sampling.publish_clock_offset_ns.store(clock.offset_ns, std::memory_order_relaxed);
  g_sampling.sample_mono_ns.store(now, std::memory_order_relaxed);
  g_identity.next_sample_ns.store(now + interval_ns, std::memory_order_relaxed);
}

// A publish's time: the publish clock (plus its offset: within a tick of
// CLOCK_MONOTONIC), but after the latest sample, or a reader of the live
// file would take the publish for one the sample already holds.
inline std::uint64_t publish_time() {
  const std::uint64_t now = clock_ns(g_sampling.publish_clock.load(std::memory_order_relaxed)) +
                            g_sampling.publish_clock_offset_ns.load(std::memory_order_relaxed);
  const std::uint64_t sampled = g_sampling.sample_mono_ns.load(std::memory_order_relaxed);
  return now > sampled ? now : sampled + 1;
}

// Ends the open interval: the state of its last publish, with that
// publish's own time, and the interval's maximum become a sample. Nothing
// when no publish came since the latest sample. Called with
// g_sampling.busy held; `t_ns` is now, since start.
bool close_interval(std::uint64_t t_ns) {
  const std::int64_t max_live = g_published.interval_max.exchange(kNoPublish, std::memory_order_relaxed);
  if (max_live == kNoPublish) return false;
  // Racing publishers store these in any order: whatever they left is a
  // value published in this interval, its time kept between the samples
  // around it (a publish that raced the previous close may predate it).
  std::uint64_t t = since_start(g_published.publish_mono_ns.load(std::memory_order_relaxed));
  const std::int64_t live = g_published.publish_live.load(std::memory_order_relaxed);
  if (t < g_sampling.last_sample_ns) t = g_sampling.last_sample_ns;
  if (t > t_ns) t = t_ns;
  append(Sample{t, live, max_live > live ? max_live : live}, t_ns);
  return true;
}

// A new peak's time: CLOCK_MONOTONIC, which the publish read already unless
// it read the coarse clock (a new peak is rare once the heap has grown).
std::uint64_t peak_clock(std::uint64_t publish_now) {
  return g_sampling.publish_clock.load(std::memory_order_relaxed) == CLOCK_MONOTONIC ? publish_now
                                                                                      : clock_ns(CLOCK_MONOTONIC);
}

// Raises the interval's maximum (and records it in the live file for a
// reader of the open interval) and the peaks. Out of line: most publishes
// raise nothing.
[[gnu::noinline]] void raise_maxima(std::int64_t live, std::uint64_t now, LiveHeader& h) {
  if (raise_to(g_published.interval_max, live) < live) h.open_max.store(live, std::memory_order_relaxed);
  if (live > g_published.phase_peak.load(std::memory_order_relaxed)) {
    const std::uint64_t at = peak_clock(now);
    raise_peaks(live, at);
    sampler::peak_raised(g_region->peak_profile, live, mapped::live_bytes(), since_start(at));
  }
}

// Another publish moved live between this one's add and its store to the
// live file: store until the file holds a value that is still the newest.
// Each publisher checks after its own store, so the last to store leaves the
// newest value.
[[gnu::noinline]] void refresh_publish_live(LiveHeader& h) {
  for (;;) {
    const std::int64_t live = g_published.live.load(std::memory_order_relaxed);
    g_published.publish_live.store(live, std::memory_order_relaxed);
    h.publish_live.store(live, std::memory_order_relaxed);
    if (g_published.live.load(std::memory_order_relaxed) == live) return;
  }
}

// Heap plus mapped memory above its phase peak (which is at most the run's):
// both raised. Out of line: only while something is mapped.
[[gnu::noinline]] void raise_total_maxima(std::int64_t total, std::uint64_t now) {
  if (total > g_published.phase_total_peak.load(std::memory_order_relaxed)) raise_total_peak_in_file(total, peak_clock(now));
}

// The peak grew enough to raise the fair share (rare: an eighth of the
// budget at least).
[[gnu::noinline]] void change_policy() { refresh_policy(); }

}  // namespace

void note_max_threads(std::uint32_t threads) { raise_to(g_region->header.max_threads, threads); }

void start_timeline(std::uint64_t now, std::int64_t live) {
  std::int64_t max_live = g_published.interval_max.exchange(kNoPublish, std::memory_order_relaxed);
  if (max_live < live) max_live = live;
  const std::uint64_t t_ns = since_start(now);
  g_sampling.last_mapped_sample_ns = 0;  // a new timeline
  g_sampling.last_resident_ns = kNoResidentReading;
  g_sampling.resident_live = -1;
  g_sampling.resident_peak = 0;
  g_sampling.resident_peak_ns = 0;
  append(Sample{t_ns, live, max_live}, t_ns);
  schedule_next_sample(now);
  publish_figures(t_ns, live, mapped::live_bytes());
  read_resident_locked(t_ns);
}

std::uint64_t sample_clock() {
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  const std::uint64_t latest = g_sampling.sample_mono_ns.load(std::memory_order_relaxed);
  return now > latest ? now : latest;
}

std::uint64_t take_sample(std::int64_t live) {
  const std::uint64_t now = sample_clock();
  const std::uint64_t t_ns = since_start(now);
  close_interval(t_ns);
  append(Sample{t_ns, live, live}, t_ns);
  schedule_next_sample(now);
  publish_figures(t_ns, live, mapped::live_bytes());
  read_resident_locked(t_ns);
  return now;
}

std::uint64_t sample_locked(std::uint64_t now, SampleNow sample_now) {
  const std::uint64_t t_ns = since_start(now);
  const bool closed = close_interval(t_ns);
  if ((sample_now == SampleNow::kAlways && (!closed || g_sampling.last_sample_ns != t_ns)) ||
      (sample_now == SampleNow::kIfQuiet && !closed)) {
    // The heap at this moment too (a marker, or a mapping change with no
    // heap publish to close the interval).
    const std::int64_t live = g_published.live.load(std::memory_order_relaxed);
    append(Sample{t_ns, live, live}, t_ns);
    publish_figures(t_ns, live, mapped::live_bytes());
  } else if (closed) {
    const Sample& sample = g_timeline[g_timeline.size() - 1];
    publish_figures(sample.t_ns, sample.live, mapped::live_bytes());
  }
  schedule_next_sample(now);
  return claim_resident_reading(t_ns, ResidentReading::kIfDue);
}

void read_claimed_resident(std::uint64_t claim_ns) {
  if (claim_ns == kNoResidentReading) return;
  const std::int64_t resident = os::resident_bytes();
  // Never a wait on a publish's path: taken by another sample meanwhile
  // (rare: it was just scheduled an interval away), the reading is dropped.
  if (resident < 0 || !try_lock_sampling()) return;
  record_resident(claim_ns, resident);
  unlock_sampling();
}

// Out of line, as the rare branch of every publish that it is.
[[gnu::noinline]] std::uint64_t try_sample(std::uint64_t now, SampleNow sample_now) {
  // A copy made without the fork handler finds the next sample due at its
  // first publish (process.h), before the publish writes the live file's
  // header: it becomes a fork child here, whatever lock a thread of its
  // parent held, and the publish goes on in its own heap line.
  adopt_if_copy();
  if (!try_lock_sampling()) return now;
  // The caller's clock said the interval has passed; the sample's own time
  // is read now that no other thread can sample.
  std::uint64_t resident_claim = kNoResidentReading;
  if (sample_now == SampleNow::kAlways || now >= g_identity.next_sample_ns.load(std::memory_order_relaxed)) {
    now = sample_clock();
    resident_claim = sample_locked(now, sample_now);
  }
  unlock_sampling();
  read_claimed_resident(resident_claim);
  return now;
}

bool lock_sampling() {
  bool locked = false;
  for (int attempt = 0; attempt < 1000 && !locked; ++attempt) {
    locked = try_lock_sampling();
    if (!locked) os::yield();
  }
  return locked;
}

// The publish itself, inlined into publish() (the path of every batched
// publish: one call less) and publish_value() (the others). What is rare
// (a new maximum, a new threshold, a race, a sample) is out of line, so the
// common path is the add, the publish clock (publish_clock.h), the stores
// of its state and a few compares.
[[gnu::always_inline]] inline void publish_delta(std::int64_t delta) {
  const std::int64_t live = g_published.live.fetch_add(delta, std::memory_order_relaxed) + delta;
  std::uint64_t now = publish_time();
  // The interval has passed: it ends with its last publish, before this
  // one opens the next, at a sample's own CLOCK_MONOTONIC reading.
  if (now >= g_identity.next_sample_ns.load(std::memory_order_relaxed)) [[unlikely]] {
    now = try_sample(clock_ns(CLOCK_MONOTONIC), SampleNow::kNever);
  }
  // The clock as read: made relative to the start only when it is used.
  g_published.publish_mono_ns.store(now, std::memory_order_relaxed);  // the line the add above just took
  g_published.publish_live.store(live, std::memory_order_relaxed);
  LiveHeader& h = g_region->header;
  h.publish_mono_ns.store(now, std::memory_order_relaxed);
  h.publish_live.store(live, std::memory_order_relaxed);
  if (g_published.live.load(std::memory_order_relaxed) != live) [[unlikely]] refresh_publish_live(h);
  // phase_peak <= peak (a reset lowers only the phase's): one compare for
  // both.
  if (live > g_published.interval_max.load(std::memory_order_relaxed) ||
      live > g_published.phase_peak.load(std::memory_order_relaxed)) [[unlikely]] {
    raise_maxima(live, now, h);
  }
  // While nothing is mapped the sum is the heap, whose peak is kept anyway:
  // total_peak() takes the larger of the two, so this costs one load here.
  if (const std::int64_t mapped_live = mapped::live_bytes(); mapped_live != 0) [[unlikely]] {
    raise_total_maxima(live + mapped_live, now);
  }
  // The peak (raised above when live passed it) may raise the fair share.
  if (live >= g_policy.grow_at.load(std::memory_order_relaxed)) [[unlikely]] change_policy();
}

void publish_value(std::int64_t delta) { publish_delta(delta); }

void raise_total_peak_in_file(std::int64_t total, std::uint64_t now) {
  raise_total_peak(total, now);
  // The peak profile follows heap + mapped.
  const std::int64_t mapped_live = mapped::live_bytes();
  sampler::peak_raised(g_region->peak_profile, total - mapped_live, mapped_live, since_start(now));
  LiveHeader& h = g_region->header;
  if (raise_to(h.total_peak_at_once, total) < total) {
    h.total_peak_at_once_ns.store(since_start(now), std::memory_order_relaxed);
  }
}

void publish_exactly(std::int64_t bytes, CallKind kind) {
  g_threads.folded_calls[kind].fetch_add(1, std::memory_order_relaxed);
  if (bytes == 0) return;
  g_threads.folded_publishes.fetch_add(1, std::memory_order_relaxed);
  publish_value(bytes);
}

}  // namespace heapline::accounting

// The mapping layer's hook (mapped_memory.h): the change in the live file at
// once, the peak of heap + mapped, a sample when one is due.
void heapline::mapped::on_change(std::int64_t mapped_live, std::uint64_t now, std::int64_t open_max) {
  using namespace heapline::accounting;
  adopt_if_copy();  // a copy's change is its own, never in its parent's live file
  // In the live file at once, like a heap publish: a reader (top, convert
  // after a kill) has the change whenever the next sample comes, if ever.
  LiveHeader& h = g_region->header;
  h.mapped_change_live.store(mapped_live, std::memory_order_relaxed);
  h.mapped_open_max.store(open_max, std::memory_order_relaxed);
  h.mapped_change_mono_ns.store(now, std::memory_order_release);
  const std::int64_t total = g_published.live.load(std::memory_order_relaxed) + mapped_live;
  if (total > g_published.total_peak.load(std::memory_order_relaxed)) raise_total_peak_in_file(total, now);
  // A program that maps without allocating still gets samples.
  if (now >= g_identity.next_sample_ns.load(std::memory_order_relaxed) &&
      g_process.init_state.load(std::memory_order_acquire) == kDone) {
    try_sample(now, SampleNow::kIfQuiet);
  }
}

namespace heapline::accounting {

namespace {

template <bool kMarkers>
[[gnu::always_inline]] inline void publish_pending(std::int64_t bytes, CallKind kind) {
  // Span 0 and an idle headroom: no slot (a slot asked to step down has
  // span 0 too, but counts).
  if (t_own.span == 0 && !t_own.counting()) [[unlikely]] {
    unregistered_change(bytes, kind);
    return;
  }
  // A signal handler that interrupted its thread's threshold change: its
  // bytes stay pending, and the interrupted call publishes them once the
  // change is done (the loop below, or the handover's own accounting).
  if (t_own.changing()) [[unlikely]] return;
  // Left within range (a malloc's one-sided test relies on it): a signal
  // handler's bytes that arrived meanwhile and exceed a lowered threshold
  // are published too.
  do {
    std::int64_t delta = t_own.own_pending();
    if constexpr (kMarkers) {
      if (has_markers_in_flight(delta)) [[unlikely]] delta -= markers_in_flight(delta);
    }
    take_pending(t_own, delta);  // a signal handler's bytes meanwhile stay pending
    count_call(t_own.publishes);
    if (!shadow::test_drops_this_publish()) publish_delta(delta);
    // The threshold moves toward the fair share (precision_budget.cpp).
    if (t_own.span != g_policy.span.load(std::memory_order_relaxed)) [[unlikely]] move_threshold();
    // A marker in flight (accounting.h) stays for its own slow path.
  } while (__builtin_expect(t_own.out_of_range(), 0) && !(kMarkers && t_own.marker_in_flight()));
}

}  // namespace

void publish_unmarked(std::int64_t bytes, CallKind kind) { publish_pending<false>(bytes, kind); }
void publish_marked(std::int64_t bytes, CallKind kind) { publish_pending<true>(bytes, kind); }

void (*g_publish)(std::int64_t, CallKind) = publish_unmarked;

void bind_marked_publish() { __atomic_store_n(&g_publish, &publish_marked, __ATOMIC_RELEASE); }


}  // namespace heapline::accounting
