// The live file's layout: what libheapline.so maps MAP_SHARED while a
// program runs, and what `heapline top` and `heapline convert` read from
// another process, running or killed at any instruction.
//
// Where: next to the report, `<report path>.live` (HEAPLINE_OUT=off: no
// file). Removed by the process once its JSON report is written at a clean
// exit; left behind when the process ends without running its exit handlers
// (killed, `_exit`, exec without exit).
//
// Layout (version 2, native byte order, x86-64):
//   LiveHeader     4096 + 8192 bytes: identity (written once, before the
//                  magic is published), then the figures of the latest
//                  sample under a seqlock (`seq` odd while updating)
//   LiveMarker[kLiveMarkerCapacity]   64 bytes each; a marker is claimed
//                  with fetch_add on `markers_claimed`, written, then
//                  published by its own `ready` flag
//   TimelineStorage   the samples: a sample is written first, then `count`
//                  is published with a release store, so a reader that loads
//                  `count` with acquire never sees a torn sample. A merge
//                  (the buffer is full: neighbouring samples merge pairwise)
//                  rewrites the array in place, bracketed by `merge_seq` (odd
//                  while merging) and publishing its progress in
//                  `merge_done`; a process killed mid-merge leaves
//                  merged[0, merge_done) then the untouched originals
//                  [2 × merge_done, merge_from), which read_timeline rebuilds.
//   TimelineStorage   the mapped-memory series (mapped_memory.h in the
//                  interposer): samples [t_ns, mapped bytes, the largest
//                  mapped value since the previous sample], one for each
//                  heap sample (ending the same interval, merged the same
//                  way), each at the time of its own latest mapping change
//                  (or, with none in the interval, at the heap sample's).
//                  Added within version 1: a file is the older, shorter
//                  layout (kLiveRegionV1Bytes, without this series and with
//                  zeros where the mapped fields are now) unless
//                  `mapped_mode` is set; readers of the older layout read a
//                  newer file unchanged.
//   ProfileSnapshot   the latest peak profile (version 2)
//   TimelineStorage   the resident-set series: samples [t_ns, resident
//                  bytes, the largest resident reading the sample stands
//                  for], read from /proc at heap samples, at most once per
//                  the series' own interval (it fills and merges on its own,
//                  like the others). Added within version 2: present when
//                  `resident_series` is set (and the file is that long);
//                  readers of the shorter layout read a newer file
//                  unchanged.
//
// Every field another process reads while this one writes is a lock-free
// std::atomic, which is address-free, so it works across processes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heapline/figures.h"
#include "heapline/profile_format.h"
#include "heapline/seqlock.h"

namespace heapline {

// [t_ns since start, live bytes, the largest live value published since the
// previous sample].
struct Sample {
  std::uint64_t t_ns;
  std::int64_t live;
  std::int64_t max_live;
};

constexpr std::size_t kTimelineCapacity = 4096;

struct TimelineStorage {
  std::atomic<std::uint64_t> count{0};        // samples [0, count) are complete
  std::atomic<std::uint64_t> interval_ns{0};  // the interval in force (doubles at each merge)
  std::atomic<std::uint64_t> merge_seq{0};    // odd while a merge rewrites samples
  std::atomic<std::uint64_t> merge_from{0};   // count before the merge in progress
  std::atomic<std::uint64_t> merge_done{0};   // merged samples written so far
  std::uint64_t reserved[3] = {};
  Sample samples[kTimelineCapacity] = {};
};
static_assert(sizeof(Sample) == 24);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the mapped file needs address-free atomics");

// A figure as a reader takes it from a live file: the file may hold any 64
// bits (a writer of another build, a disk, a person), so read_figures and
// read_timeline give only bounded figures (heapline/figures.h), and every
// sum of them is a bounded_sum.

// A consistent copy of a storage written by another process (running, or
// killed at any instruction). `out` must hold kTimelineCapacity samples;
// returns how many were copied. `still_writing` says whether to wait for a
// merge in progress to finish (a live process) or to rebuild it (a dead one).
std::size_t read_timeline(const TimelineStorage& storage, Sample* out, bool still_writing);

constexpr std::uint64_t kLiveMagic = 0x3156494c50414548ull;  // "HEAPLIV1" in memory order
constexpr std::uint32_t kLiveVersion = 2;
constexpr std::uint32_t kLiveVersionWithoutProfile = 1;  // still read
constexpr std::size_t kLiveMarkerCapacity = 256;
constexpr std::size_t kLiveMarkerNameBytes = 48;  // 47 bytes and the NUL
constexpr std::size_t kLiveExeBytes = 4096;

enum LiveMappedMode : std::uint32_t {
  kMappedUnknown = 0,  // the older layout: no mapped figures, no series
  kMappedOn = 1,
  kMappedOff = 2,
};

enum LivePrecisionRule : std::uint32_t {
  kPrecisionPerThread = 0,  // files written before the budget
  kPrecisionBudget = 1,
};

enum LiveState : std::uint32_t {
  kLiveRunning = 1,
  kLiveExited = 2,  // the exit handlers ran and took the final sample
};

struct LiveMarker {
  std::atomic<std::uint32_t> ready{0};
  std::uint32_t reserved = 0;
  std::atomic<std::uint64_t> t_ns{0};
  char name[kLiveMarkerNameBytes] = {};
};
static_assert(sizeof(LiveMarker) == 64);

struct LiveHeader {
  // Identity: written once, then the magic is stored with release.
  std::atomic<std::uint64_t> magic{0};
  std::uint32_t version = 0;
  std::uint32_t header_bytes = 0;
  std::uint32_t marker_capacity = 0;
  std::uint32_t sample_capacity = 0;
  std::uint64_t file_bytes = 0;
  std::int32_t pid = 0;
  std::int32_t ppid = 0;
  std::uint64_t start_unix_ns = 0;
  std::uint32_t exact = 0;
  // The rule of the two figures below and of the stated bound
  // (stated_bound): kPrecisionPerThread in files older than the budget, 0
  // there (a per-thread minimum threshold and divisor; the bound is
  // max_threads × max_threshold_bytes), or kPrecisionBudget (the budget's
  // BYTES and DIVISOR; the bound is bound_bytes).
  std::uint32_t precision_rule = 0;
  std::uint64_t precision_bytes = 0;
  std::uint64_t precision_divisor = 0;
  char allocator[32] = {};
  char size_basis[32] = {};
  // Mapped memory: 0 in a file of the older layout (nothing known), else
  // kMappedOn or kMappedOff (HEAPLINE_MAPPED=off); with it, the mapped
  // series follows the heap's timeline.
  std::uint32_t mapped_mode = 0;
  // 1: the file ends with the resident-set series and the resident figures
  // below are kept; 0 in a file of an earlier library (neither).
  std::uint32_t resident_series = 0;
  std::uint64_t start_mono_ns = 0;  // CLOCK_MONOTONIC at the start: the time base of publish_mono_ns
  // When the process started, in clock ticks since boot (/proc/PID/stat):
  // with `pid` it names one process, whatever images it execs, so a pid
  // reused by another process is told apart. 0: unknown (an older file).
  std::uint64_t process_start_ticks = 0;
  // The program this image exec'd without the library following it, and
  // why ("PATH: statically linked"), written just before such an exec and
  // cleared if it fails: a file left without exit handlers says why. Empty
  // otherwise (and in a file of an earlier library).
  char exec_note[256] = {};
  char reserved1[3960 - 24 - 256] = {};
  char exe[kLiveExeBytes] = {};

  // The latest figures, under the seqlock `seq` (one writer: the thread
  // holding the sampling flag).
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::int64_t> live{0};            // published live at the latest sample
  std::atomic<std::int64_t> peak{0};
  std::atomic<std::uint64_t> peak_time_ns{0};
  std::atomic<std::uint64_t> last_sample_ns{0};  // time of the latest sample, since start
  std::atomic<std::uint64_t> max_threads{0};
  std::atomic<std::uint64_t> max_threshold_bytes{0};
  std::atomic<std::uint64_t> calls[3] = {};      // alloc, free, realloc (as of the latest sample)
  std::atomic<std::uint64_t> publishes{0};
  std::atomic<std::uint32_t> state{0};           // LiveState
  std::atomic<std::uint32_t> markers_claimed{0};  // may pass the capacity: the rest were dropped
  // Mapped memory (mapped_mode set), as of the latest sample; total is
  // heap + mapped, the peak of the sum at one moment.
  std::atomic<std::int64_t> mapped_live{0};
  std::atomic<std::int64_t> mapped_peak{0};
  std::atomic<std::uint64_t> mapped_peak_time_ns{0};
  std::atomic<std::int64_t> total_peak{0};
  std::atomic<std::uint64_t> total_peak_time_ns{0};
  // The latest publish, written by every publish (outside the seqlock: each
  // field on its own, the three on one cache line), so a reader is never
  // further behind than the publishing itself, even after a kill: the live
  // value within the stated precision, and the open interval since the
  // latest sample. read_figures() and read_heap_line() fold it in.
  // The latest publish's time on CLOCK_MONOTONIC's time base (0: none yet),
  // read from CLOCK_MONOTONIC_COARSE where its tick is fine enough for the
  // interval (plus one tick: then within a tick of the publish, early or
  // late), but never before the latest sample.
  std::atomic<std::uint64_t> publish_mono_ns{0};
  std::atomic<std::int64_t> publish_live{0};  // the published live heap after it
  std::atomic<std::int64_t> open_max{0};      // the largest published since the latest sample
  // The stated precision under kPrecisionBudget: the largest share of the
  // budget the threads held together, raised (outside the seqlock) as it
  // grows. 0 in older files.
  std::atomic<std::uint64_t> bound_bytes{0};
  // The latest mapping change (mapped_mode set), written by every counted
  // mapping call as it happens, like the latest publish: its
  // CLOCK_MONOTONIC time (0: none yet), the mapped bytes after it, and the
  // largest mapped value since the mapped series' latest sample. 0 in
  // older files. read_figures() and read_mapped_line() fold it in.
  std::atomic<std::uint64_t> mapped_change_mono_ns{0};
  std::atomic<std::int64_t> mapped_change_live{0};
  std::atomic<std::int64_t> mapped_open_max{0};
  // The resident set (resident_series set), under the seqlock with the
  // figures above, as of its latest reading: that reading (-1: none yet),
  // and the largest reading and its time. 0 in older files.
  std::atomic<std::int64_t> resident_live{0};
  std::atomic<std::int64_t> resident_peak{0};
  std::atomic<std::uint64_t> resident_peak_time_ns{0};
  // The peak of heap + mapped as its latest raise left it, with its time
  // since the start, written at once (outside the seqlock, like the latest
  // publish) by every raise while something is mapped: a process killed
  // after a total peak that no sample holds keeps it. 0 in older files;
  // read_figures() folds it in.
  std::atomic<std::int64_t> total_peak_at_once{0};
  std::atomic<std::uint64_t> total_peak_at_once_ns{0};
  char reserved2[4096 - 16 * 8 - 8 - 3 * 8 - 4 * 8 - 3 * 8 - 2 * 8] = {};
};
static_assert(sizeof(LiveHeader) == 3 * 4096);

struct LiveRegion {
  LiveHeader header;
  LiveMarker markers[kLiveMarkerCapacity];
  TimelineStorage timeline;
  TimelineStorage mapped_timeline;  // present when header.mapped_mode != 0
  ProfileSnapshot peak_profile;     // version 2
  TimelineStorage resident_timeline;  // present when header.resident_series != 0
};

// The size of a file of the older layout, without the mapped series.
constexpr std::size_t kLiveRegionV1Bytes =
    sizeof(LiveHeader) + kLiveMarkerCapacity * sizeof(LiveMarker) + sizeof(TimelineStorage);
// And of version 1 with the mapped series, before the peak profile.
constexpr std::size_t kLiveRegionWithoutProfileBytes = kLiveRegionV1Bytes + sizeof(TimelineStorage);
// And of version 2 before the resident-set series.
constexpr std::size_t kLiveRegionWithoutResidentBytes = kLiveRegionWithoutProfileBytes + sizeof(ProfileSnapshot);
static_assert(sizeof(LiveRegion) == kLiveRegionWithoutResidentBytes + sizeof(TimelineStorage));
// The sizes a reader tells the versions by, written out: a change of any
// part's layout must come with a new version and its size here.
static_assert(sizeof(TimelineStorage) == 64 + 24 * kTimelineCapacity);
static_assert(kLiveRegionV1Bytes == 3 * 4096 + 64 * kLiveMarkerCapacity + 64 + 24 * kTimelineCapacity);
static_assert(sizeof(LiveRegion) == 394104);

// The figures under the seqlock, copied consistently (or, after
// `attempts` tries on a writer that died mid-update, as they are).
struct LiveFigures {
  std::int64_t live, peak;
  std::uint64_t peak_time_ns, last_sample_ns, max_threads, max_threshold_bytes, bound_bytes, calls[3], publishes;
  std::int64_t mapped_live, mapped_peak;
  std::uint64_t mapped_peak_time_ns;
  std::int64_t total_peak;
  std::uint64_t total_peak_time_ns;
  // -1 for resident_live: no reading (or a file without the resident series).
  std::int64_t resident_live, resident_peak;
  std::uint64_t resident_peak_time_ns;
};

// The time of the latest publish since the start (0: none yet). The
// writer stores the clock as it read it; the subtraction is the reader's.
inline std::uint64_t latest_publish_ns(const LiveHeader& h) {
  const std::uint64_t mono = h.publish_mono_ns.load(std::memory_order_acquire);
  return mono > h.start_mono_ns ? bounded_ns(mono - h.start_mono_ns) : 0;
}

// The time of the latest mapping change since the start (0: none yet, or
// a file older than these fields).
inline std::uint64_t latest_mapping_change_ns(const LiveHeader& h) {
  const std::uint64_t mono = h.mapped_change_mono_ns.load(std::memory_order_acquire);
  return mono > h.start_mono_ns ? bounded_ns(mono - h.start_mono_ns) : 0;
}

inline LiveFigures read_figures(const LiveHeader& h, int attempts = 100000) {
  LiveFigures f{};
  read_consistent(h.seq, attempts, [&] {
    f.live = h.live.load(std::memory_order_relaxed);
    f.peak = h.peak.load(std::memory_order_relaxed);
    f.peak_time_ns = h.peak_time_ns.load(std::memory_order_relaxed);
    f.last_sample_ns = h.last_sample_ns.load(std::memory_order_relaxed);
    f.max_threads = h.max_threads.load(std::memory_order_relaxed);
    f.max_threshold_bytes = h.max_threshold_bytes.load(std::memory_order_relaxed);
    f.bound_bytes = h.bound_bytes.load(std::memory_order_relaxed);
    for (int i = 0; i < 3; ++i) f.calls[i] = h.calls[i].load(std::memory_order_relaxed);
    f.publishes = h.publishes.load(std::memory_order_relaxed);
    f.mapped_live = h.mapped_live.load(std::memory_order_relaxed);
    f.mapped_peak = h.mapped_peak.load(std::memory_order_relaxed);
    f.mapped_peak_time_ns = h.mapped_peak_time_ns.load(std::memory_order_relaxed);
    f.total_peak = h.total_peak.load(std::memory_order_relaxed);
    f.total_peak_time_ns = h.total_peak_time_ns.load(std::memory_order_relaxed);
    f.resident_live = h.resident_live.load(std::memory_order_relaxed);
    f.resident_peak = h.resident_peak.load(std::memory_order_relaxed);
    f.resident_peak_time_ns = h.resident_peak_time_ns.load(std::memory_order_relaxed);
  });
  for (std::int64_t* bytes : {&f.live, &f.peak, &f.mapped_live, &f.mapped_peak, &f.total_peak, &f.resident_live,
                              &f.resident_peak}) {
    *bytes = bounded_bytes(*bytes);
  }
  for (std::uint64_t* ns : {&f.peak_time_ns, &f.last_sample_ns, &f.mapped_peak_time_ns, &f.total_peak_time_ns,
                            &f.resident_peak_time_ns}) {
    *ns = bounded_ns(*ns);
  }
  // A publish after the latest sample is the current figure.
  const std::uint64_t publish_ns = latest_publish_ns(h);
  if (publish_ns != 0 && publish_ns >= f.last_sample_ns) {
    f.live = bounded_bytes(h.publish_live.load(std::memory_order_relaxed));
    const std::int64_t open_max = bounded_bytes(h.open_max.load(std::memory_order_relaxed));
    if (open_max > f.peak) f.peak = open_max, f.peak_time_ns = publish_ns;
    if (f.live > f.peak) f.peak = f.live, f.peak_time_ns = publish_ns;
  }
  // The total peak as its latest raise left it, which may be past the
  // latest sample.
  const std::int64_t total_at_once = bounded_bytes(h.total_peak_at_once.load(std::memory_order_relaxed));
  if (total_at_once > f.total_peak) {
    f.total_peak = total_at_once;
    f.total_peak_time_ns = bounded_ns(h.total_peak_at_once_ns.load(std::memory_order_relaxed));
  }
  // So is the latest mapping change (every change writes it), and heap +
  // mapped as they stand now were held together.
  const std::uint64_t mapped_ns = latest_mapping_change_ns(h);
  if (mapped_ns != 0) {
    f.mapped_live = bounded_bytes(h.mapped_change_live.load(std::memory_order_relaxed));
    const std::int64_t open_max = bounded_bytes(h.mapped_open_max.load(std::memory_order_relaxed));
    if (open_max > f.mapped_peak) f.mapped_peak = open_max, f.mapped_peak_time_ns = mapped_ns;
    if (f.mapped_live > f.mapped_peak) f.mapped_peak = f.mapped_live, f.mapped_peak_time_ns = mapped_ns;
    const std::int64_t total = bounded_sum(f.live, f.mapped_live);
    if (total > f.total_peak) f.total_peak = total, f.total_peak_time_ns = mapped_ns > publish_ns ? mapped_ns : publish_ns;
  }
  return f;
}

// The precision the file states: 0 in exact mode; the budget's bound, or
// for a file older than the budget max_threads × max_threshold_bytes.
inline std::uint64_t stated_bound(const LiveHeader& h, const LiveFigures& f) {
  if (h.exact != 0) return 0;
  return h.precision_rule == kPrecisionBudget ? f.bound_bytes : f.max_threads * f.max_threshold_bytes;
}

// Room for a heap line as read_heap_line() copies it: the timeline and the
// open interval after it.
constexpr std::size_t kHeapLineCapacity = kTimelineCapacity + 1;

// The timeline (read_timeline) followed by the state of the latest publish
// when it came after the latest sample ([its time, its live value, the open
// interval's maximum]): the heap line up to the last publish, so that a
// process killed between two samples loses nothing it had published. `out`
// must hold kHeapLineCapacity samples.
std::size_t read_heap_line(const LiveRegion& region, Sample* out, bool still_writing);

// The same for the mapped series: its timeline followed by the latest
// mapping change when it came after its latest sample ([its time, the
// mapped bytes after it, the largest since that sample]). `out` must hold
// kHeapLineCapacity samples. Only for a file with the mapped series.
std::size_t read_mapped_line(const LiveRegion& region, Sample* out, bool still_writing);

}  // namespace heapline
