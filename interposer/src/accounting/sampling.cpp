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
#include "live_region.h"
#include "mapped_memory.h"
#include "os.h"
#include "precision_budget.h"
#include "process.h"
#include "publish_clock.h"
#include "published.h"
#include "sampling.h"
#include "slow_paths.h"
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
  raise_to(h.bound_bytes, static_cast<std::uint64_t>(g_budget.bound.load(std::memory_order_relaxed)));
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
  // A cut of the live file met since the latest sample (one load when none).
  settle_cut_live_file(false);
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

namespace {

// `pending` bytes into `live` and `shares` (at least `pending`: the shares
// covered them while they were held back) out of `reserved`, in one step;
// returns the live figure it left. The exposure cannot rise here; it is
// noted all the same, so that the stated bound stays true whatever this
// step did.
std::int64_t commit_covered(std::int64_t pending, std::int64_t shares) {
  LiveAndReserved seen = read_live_and_reserved();
  while (!change_live_and_reserved(seen, {seen.live + pending, seen.reserved - shares})) {
  }
  const std::int64_t live = seen.live + pending;
  note_exposure(exposure(live, seen.reserved - shares, lending_peak_after(live).exposed));
  return live;
}

}  // namespace

// Below (inlined into every publish).
inline void after_commit(std::int64_t live, bool rose);

// A publish of allocated bytes that reserve_limit refuses as things stand
// (precision_budget.h, "Lending the headroom"): this thread's own share
// first (its threshold down to 1, the share released with the bytes it
// covered), then the other threads' shares, revoked, and the room that no
// revocation can take back waited for: it is held by threads running with
// every signal blocked but SIGBUS (OwnBytesWindow), which only the scheduler delays.
// When nothing can be revoked (no membarrier, a revocation under way in
// this very thread), the bytes are published all the same (they were
// allocated) and the stated bound takes the exposure in.
[[gnu::noinline]] std::int64_t commit_beyond_room(std::int64_t delta) {
  if (t_mode == kRegistered && t_own.counting() && !t_own.changing() && t_own.held > 1) {
    // The share given up covers `released` of these bytes: they go at once,
    // with the share, in a step that cannot raise the exposure
    // (commit_covered); only the rest waits for room, and this thread holds
    // none of `reserved` meanwhile. (Kept until the rest was published, the
    // share of each thread waiting here was room that no revocation could
    // free, a threshold of 1 holding nothing revocable, and that every other
    // waiting thread needed: they waited for one another.)
    std::int64_t live = 0;
    std::int64_t covered = 0;
    {
      const OwnBytesWindow window;
      t_own.begin_change();
      std::int64_t released = 0;
      if (t_own.revoked()) {
        released = t_own.settle_revocation();
      } else {
        released = t_own.held - 1;
        t_own.set_threshold(1);  // before its share is released
      }
      t_own.end_change();
      if (released > 0) {
        covered = delta < released ? delta : released;
        live = commit_covered(covered, released);
      }
    }
    if (covered > 0) {
      delta -= covered;
      if (delta == 0) return live;
      after_commit(live, true);
    }
  }
  bool waiting = true;
  bool revoked = false;
  unsigned tries = 0;
  LiveAndReserved seen = read_live_and_reserved();
  for (;;) {
    const std::int64_t next = seen.live + delta;
    const LendingPeak lent = lending_peak_after(next);
    const std::int64_t peak = lent.peak;
    if (waiting && seen.reserved > reserve_limit(next, peak, g_budget.bytes.load(std::memory_order_relaxed),
                                                 g_budget.lends_headroom.load(std::memory_order_relaxed))) {
      // Revoked already: what is missing is held by threads inside a window
      // of their own bytes; they are running, or about to.
      if (revoked) os::yield_then_nap(++tries);
      if (!revoke_for_room()) {
        waiting = false;  // nothing can be revoked now
        continue;
      }
      revoked = true;
      seen = read_live_and_reserved();
      continue;
    }
    if (change_live_and_reserved(seen, {next, seen.reserved})) {
      note_exposure(exposure(next, seen.reserved, lent.exposed));
      if (mapped_grew_since(lent)) keep_room_for_mapping();
      return next;
    }
  }
}

// Adds `delta` to the published live figure; returns the figure it left.
// Freed bytes (or none) with one locked add: they lower the exposure. A
// raise together with `reserved`, within reserve_limit (precision_budget.h,
// (2)), with the exposure it leaves noted when it is the run's largest.
[[gnu::always_inline]] inline std::int64_t commit_delta(std::int64_t delta) {
  if (delta <= 0) return g_published.live.fetch_add(delta, std::memory_order_relaxed) + delta;
  LiveAndReserved seen = read_live_and_reserved();
  for (;;) {
    const std::int64_t next = seen.live + delta;
    const LendingPeak lent = lending_peak_after(next);
    const std::int64_t peak = lent.peak;
    if (seen.reserved > reserve_limit(next, peak, g_budget.bytes.load(std::memory_order_relaxed),
                                      g_budget.lends_headroom.load(std::memory_order_relaxed))) [[unlikely]] {
      return commit_beyond_room(delta);
    }
    if (change_live_and_reserved(seen, {next, seen.reserved})) {
      if (const std::int64_t left = exposure(next, seen.reserved, lent.exposed);
          left > g_budget.bound.load(std::memory_order_relaxed)) [[unlikely]] {
        note_exposure(left);
      }
      if (mapped_grew_since(lent)) [[unlikely]] keep_room_for_mapping();
      return next;
    }
  }
}

// What every publish does once `live` holds its value: the publish clock
// (publish_clock.h), a sample when the interval has passed, the stores of
// its state, and what is rare (a new maximum, a new budget, a race) out of
// line. `rose`: the publish raised `live` (only then can heap + mapped
// pass its peak, or the peak the budget's next step).
[[gnu::always_inline]] inline void after_commit(std::int64_t live, bool rose) {
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
  if (!rose) return;
  // While nothing is mapped the sum is the heap, whose peak is kept anyway:
  // total_peak() takes the larger of the two, so this costs one load here.
  if (const std::int64_t mapped_live = mapped::live_bytes(); mapped_live != 0) [[unlikely]] {
    raise_total_maxima(live + mapped_live, now);
  }
  // The peak (raised above when live passed it) may raise the budget.
  if (live >= g_policy.grow_at.load(std::memory_order_relaxed)) [[unlikely]] change_policy();
}

// The publish itself, inlined into publish() (the path of every batched
// publish: one call less) and publish_value() (the others): the commit,
// then its bookkeeping. Returns the live figure it left.
[[gnu::always_inline]] inline std::int64_t publish_delta(std::int64_t delta) {
  const std::int64_t live = commit_delta(delta);
  after_commit(live, delta > 0);
  return live;
}

void publish_value(std::int64_t delta) { publish_delta(delta); }

void publish_covered(std::int64_t pending, std::int64_t shares) {
  after_commit(commit_covered(pending, shares), pending > 0);
}

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
  const LiveAndReserved seen = read_live_and_reserved();
  const std::int64_t total = seen.live + mapped_live;
  if (total > g_published.total_peak.load(std::memory_order_relaxed)) raise_total_peak_in_file(total, now);
  // A growth is a step of heap + mapped: what the threads hold back may
  // now count against its peak (room for it was made before the call:
  // before_growth).
  note_exposure(exposure(seen.live, seen.reserved, lending_peak_after(seen.live).exposed));
  // A program that maps without allocating still gets samples.
  if (now >= g_identity.next_sample_ns.load(std::memory_order_relaxed) &&
      g_process.init_state.load(std::memory_order_acquire) == kDone) {
    try_sample(now, SampleNow::kIfQuiet);
  }
}

// The mapping layer's other hook (mapped_memory.h): before a mapping call
// that may add counted bytes, the lent headroom that the growth would use
// is taken back.
void heapline::mapped::before_growth() {
  using namespace heapline::accounting;
  if (g_process.init_state.load(std::memory_order_acquire) != kDone) return;  // nothing lent before the init
  keep_room_for_mapping();
}

namespace heapline::accounting {

namespace {

// This thread's share of `reserved` given back, with the pending bytes it
// covered, in one step that cannot raise the exposure (publish_covered):
// its threshold 1 until its publishes raise it again. Nothing when it holds
// no share, or is inside its own publish or threshold change (a signal
// handler's mapping call), or a sampled block's marker is in flight.
void give_up_own_share() {
  if (t_mode != kRegistered || !t_own.counting() || t_own.changing() || t_own.publishing || t_own.held <= 1 ||
      t_own.marker_in_flight()) {
    return;
  }
  std::int64_t pending = 0;
  {
    const OwnBytesWindow window;  // the share released after it is no longer held
    std::int64_t share_left = 0;
    pending = t_own.start_over(1, nullptr, &share_left);
    const std::int64_t covered = pending < share_left ? pending : share_left;
    if (covered != 0 || share_left != 0) publish_covered(covered, share_left);
    pending -= covered;
  }
  // More than the share (a call of this thread's in flight, interrupted):
  // published as any change.
  if (pending != 0) publish_value(pending);
}

}  // namespace

void keep_room_for_mapping() {
  if (!g_budget.lends_headroom.load(std::memory_order_relaxed)) return;  // the limit is B alone: nothing is lent
  bool own_given_up = false;
  for (unsigned tries = 0;;) {
    const LiveAndReserved seen = read_live_and_reserved();
    const LendingPeak lent = lending_peak_after(seen.live);
    if (seen.reserved <= reserve_limit(seen.live, lent.peak, g_budget.bytes.load(std::memory_order_relaxed),
                                       g_budget.lends_headroom.load(std::memory_order_relaxed))) {
      note_exposure(exposure(seen.live, seen.reserved, lent.exposed));
      return;
    }
    // This thread's own share first, with the bytes it covers (as a publish
    // beyond the room does), then the others', revoked.
    if (!own_given_up) {
      own_given_up = true;
      give_up_own_share();
      continue;
    }
    if (!revoke_for_room()) {  // nothing can be revoked now: the bound takes the exposure in
      note_exposure(exposure(seen.live, seen.reserved, lent.exposed));
      return;
    }
    os::yield_then_nap(++tries);
  }
}

namespace {

// A revocation's offset in this thread's headroom: settled (precision_budget.h).
[[gnu::noinline, gnu::cold]] void settle_own_revocation() {
  const OwnBytesWindow window;  // the share released after it is no longer held
  t_own.begin_change();
  const std::int64_t share = t_own.revoked() ? t_own.settle_revocation() : 0;
  t_own.end_change();
  release_share(share);
}

// Publishes what this thread's slot holds pending (once), then moves its
// threshold toward its target; or settles a revocation, which the next
// round of the caller's loop publishes after.
template <bool kMarkers>
[[gnu::always_inline]] inline void publish_own_pending() {
  t_own.publishing = true;
  std::int64_t delta = t_own.own_pending();
  std::int64_t markers = 0;
  if constexpr (kMarkers) {
    // A marker in flight (accounting.h) stays for its own slow path.
    if (has_markers_in_flight(delta)) [[unlikely]] markers = markers_in_flight(delta);
  }
  delta -= markers;
  if (holds_revocation(delta)) [[unlikely]] {
    t_own.publishing = false;
    settle_own_revocation();
    return;
  }
  // Allocated bytes past a threshold larger than the free window (one lent
  // from the headroom below the peak): what puts the pending delta back in
  // the middle of the window stays pending (it may: allocations held back
  // are within the contract up to the threshold), so that the frees that
  // follow have room. At the peak the window is symmetric and nothing stays.
  if (delta > 0 && t_own.span != 0) {
    const std::int64_t window_middle = (2 * t_own.held - 1 - static_cast<std::int64_t>(t_own.span)) / 2;
    if (window_middle > 0) delta -= window_middle < delta ? window_middle : delta;
  }
  // Covered by the share until committed: a revoker keeps that much of it.
  t_own.in_flight.store(delta, std::memory_order_relaxed);
  take_pending(t_own, delta);  // a signal handler's bytes meanwhile stay pending
  // A revocation's offset that came between the read and the take: the
  // revoker may have adopted `delta` too. Put back, and settled first.
  if (holds_revocation(t_own.own_pending() - markers)) [[unlikely]] {
    subtract_in_place(t_own.headroom, delta);
    t_own.in_flight.store(0, std::memory_order_relaxed);
    t_own.publishing = false;
    settle_own_revocation();
    return;
  }
  t_own.publishing = false;
  count_call(t_own.publishes);
  const std::int64_t live =
      shadow::test_drops_this_publish() ? g_published.live.load(std::memory_order_relaxed) : publish_delta(delta);
  t_own.in_flight.store(0, std::memory_order_relaxed);
  // The threshold moves toward its target (precision_budget.cpp) when live
  // has left the range in which it stays, after a request to step down
  // (its span is then 0) or when F(B) changed (the free window follows it).
  if (live < t_own.keep_from || live > t_own.keep_to || t_own.span == 0 ||
      t_own.kept_under != g_policy.free_window.load(std::memory_order_relaxed)) [[unlikely]] {
    move_threshold(live);
  }
}

template <bool kMarkers>
[[gnu::always_inline]] inline void publish_pending(std::int64_t bytes, CallKind kind) {
  // Span 0 and an idle headroom: no slot (a slot asked to step down has
  // span 0 too, but counts).
  if (t_own.span == 0 && !t_own.counting()) [[unlikely]] {
    unregistered_change(bytes, kind);
    return;
  }
  // A signal handler that interrupted its thread's threshold change or
  // publish: its bytes stay pending, and the interrupted call publishes
  // them once it is done (the loop below, or the handover's own accounting).
  if (t_own.changing() || t_own.publishing) [[unlikely]] return;
  // Left within range (a malloc's one-sided test relies on it): a signal
  // handler's bytes that arrived meanwhile and exceed a lowered threshold
  // are published too.
  do {
    publish_own_pending<kMarkers>();
  } while (__builtin_expect(t_own.out_of_range(), 0) && !(kMarkers && t_own.marker_in_flight()));
}

}  // namespace

void publish_unmarked(std::int64_t bytes, CallKind kind) { publish_pending<false>(bytes, kind); }
void publish_marked(std::int64_t bytes, CallKind kind) { publish_pending<true>(bytes, kind); }

void (*g_publish)(std::int64_t, CallKind) = publish_unmarked;

void bind_marked_publish() { __atomic_store_n(&g_publish, &publish_marked, __ATOMIC_RELEASE); }

void publish_calling_thread() {
  if (t_mode != kRegistered || !t_own.counting() || t_own.changing() || t_own.publishing) return;
  // Whatever is pending, within the threshold too: a revocation settled
  // first, then what it left.
  for (int round = 0; round < 2; ++round) {
    const std::int64_t pending = t_own.own_pending();
    if (pending - markers_in_flight(pending) == 0) return;
    publish_own_pending<true>();
  }
}

}  // namespace heapline::accounting
