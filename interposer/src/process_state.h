// The state the accounting's slow paths share (one file each: the thread
// registry, sampling and publishing, the live file's header, fork, the exit
// report, the public API; accounting.cpp defines this state and runs the lazy
// process init). The hot path itself is accounting.h.
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

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "accounting.h"
#include "config.h"
#include "live_file.h"
#include "os.h"
#include "publish_clock.h"
#include "text.h"
#include "threshold_policy.h"
#include "timeline.h"

// Hidden: the compiler then knows these are this library's own and reaches
// them rip-relative, not through an address loaded first (which
// -fvisibility=hidden alone does not give a declaration).
#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// What a thread is doing with the registry.
enum ThreadMode : unsigned char {
  kUnregistered = 0,  // no call seen yet (or init was busy in another thread)
  kRegistering,       // inside its first call: nested calls publish exactly
  kRegistered,        // t_own is in the registry
  kNoSlot,            // the registry was full: publishes every change
  kExited,            // past its exit flush: publishes every change
};
extern __thread unsigned char t_mode __attribute__((tls_model("initial-exec")));

// The registry: where the other threads find each registered thread's slot
// (in that thread's TLS). An entry is claimed at the thread's first call and
// released by its exit flush; a reader of other threads' slots holds a
// RegistryReader, and a thread that releases its entry waits for the
// readers of the moment to finish, since its TLS goes away with it.
constexpr std::size_t kSlotCount = 1024;
struct RegistryEntry {
  std::atomic<Slot*> slot{nullptr};
};
extern RegistryEntry g_registry[kSlotCount];
extern std::atomic<std::int32_t> g_registry_readers;

struct RegistryReader {
  RegistryReader() { g_registry_readers.fetch_add(1, std::memory_order_seq_cst); }
  ~RegistryReader() { g_registry_readers.fetch_sub(1, std::memory_order_release); }
  RegistryReader(const RegistryReader&) = delete;
  RegistryReader& operator=(const RegistryReader&) = delete;
};

// Written by every publish: kept off the lines the hot path reads.
struct alignas(128) Published {
  std::atomic<std::int64_t> live{0};
  std::atomic<std::int64_t> peak{0};
  std::atomic<std::int64_t> phase_peak{0};
  std::atomic<std::int64_t> interval_max{INT64_MIN};  // since the latest sample; INT64_MIN: no publish yet
  // The latest publish (the clock it read, the live value it left): the
  // private copy of what the live file's header shows, which the sampler
  // reads when it closes an interval (never trusting the shared mapping).
  std::atomic<std::uint64_t> publish_mono_ns{0};
  std::atomic<std::int64_t> publish_live{0};
  std::atomic<std::uint64_t> peak_time_ns{0};
  // Heap plus mapped memory (mapped_memory.h): its own peak, raised at every
  // heap publish and every mapped change, so it is the peak of the sum and
  // not the sum of two peaks that may be far apart in time.
  std::atomic<std::int64_t> total_peak{0};
  std::atomic<std::uint64_t> total_peak_time_ns{0};
  // The same, reset by heapline_reset_peak() (phase_peak's counterpart).
  std::atomic<std::int64_t> phase_total_peak{0};
};
extern Published g_published;

// Read by every publish, written once per sample.
struct alignas(128) Sampling {
  std::atomic<std::uint64_t> next_sample_ns{0};
  // The clock publishes read (publish_clock.h), chosen for the interval,
  // and what they add to its reading.
  std::atomic<clockid_t> publish_clock{CLOCK_MONOTONIC};
  std::atomic<std::uint64_t> publish_clock_offset_ns{0};
  // The latest sample's clock reading: a publish's time is never below it,
  // so a publish after a sample is never taken for one before it.
  std::atomic<std::uint64_t> sample_mono_ns{0};
  std::atomic<bool> busy{false};
  std::uint64_t last_sample_ns = 0;  // the latest sample's time, since start (written under busy)
  std::uint64_t last_mapped_sample_ns = 0;  // the same for the mapped series
  std::uint64_t last_marker_ns = 0;         // the latest marker's time, since start (written under busy)
  std::uint64_t coarse_tick_ns = 0;  // clock_getres(CLOCK_MONOTONIC_COARSE), set at init; 0: unknown
};
extern Sampling g_sampling;

enum InitState : int { kNotStarted = 0, kInProgress, kDone };

// Everything else: set up once, or changed rarely.
struct alignas(128) Process {
  std::atomic<int> init_state{kNotStarted};
  std::atomic<std::uint32_t> registered{0};
  std::atomic<std::uint32_t> max_registered{0};
  std::atomic<std::uint32_t> slots_used{0};  // registry entries [0, slots_used) were ever claimed
  std::atomic<std::int64_t> max_threshold{1};  // the largest threshold a thread held
  // Calls and publishes of threads that exited, or never had a slot.
  std::atomic<std::uint64_t> folded_calls[kCallKinds] = {};
  std::atomic<std::uint64_t> folded_publishes{0};
  std::atomic<std::uint64_t> start_mono_ns{0};
  std::uint64_t start_unix_ns = 0;
  bool fork_child = false;
  int pid = 0;       // this process's, set at init and in a fork child (a vfork child has its parent's)
  int root_pid = 0;  // HEAPLINE_ROOT_PID, set by the launcher; 0 when unset
  // When this process started (os::process_start_ticks): with the pid, in
  // the live file, it tells this process's files from those of an earlier
  // process that had the same pid.
  std::uint64_t start_ticks = 0;
  // False for a process HEAPLINE_FOLLOW=command does not follow: it counts
  // (the library is loaded anyway) but writes nothing, not even on stderr.
  bool followed = true;
  std::atomic<bool> finished{false};
  pthread_key_t exit_key{};
  Config config;
  char base_dir[kMaxPath] = {};
  char live_path[kMaxPath] = {};    // empty: no live file (static fallback, or not yet due)
  os::FileId live_id;               // the file made for live_path
  char report_path[kMaxPath] = {};  // the name claimed with the live file; empty: none claimed
  // Why the live file was not made (the report's live_file_problem); empty
  // when it was, or is not due yet.
  char live_file_problem[256] = {};
  // The heap at which a process that is not the command creates its live
  // file (live_header.cpp); INT64_MAX once created, or for the command.
  // Read at each sample, under g_sampling.busy.
  std::int64_t live_file_floor = INT64_MAX;
  // Markers claimed (the live file's copy is for readers only).
  std::atomic<std::uint32_t> markers_claimed{0};
};
extern Process g_process;

// The precision budget (threshold_policy.h): written when a thread
// registers, exits or changes its threshold, never on the hot path nor by a
// publish that keeps its threshold.
struct alignas(128) Budget {
  // The shares the registered threads hold (the sum of their t − 1), plus
  // raises in flight: never above `bytes`.
  std::atomic<std::int64_t> reserved{0};
  // The largest `reserved` of the run: the stated bound.
  std::atomic<std::int64_t> max_reserved{0};
  // B in force: max(BYTES, peak / DIVISOR) as of the latest policy change
  // (behind the peak in between, never ahead of it). Only grows.
  std::atomic<std::int64_t> bytes{0};
  // C: the registered threads, rounded up on the grid, with hysteresis.
  std::atomic<std::uint64_t> divider{kMinDivider};
  // Requests to step down (precision_budget.cpp): when the next pass over
  // the registry may come (CLOCK_MONOTONIC_COARSE).
  std::atomic<std::uint64_t> next_room_request_ns{0};
};
extern Budget g_budget;

// precision_budget.cpp. The policy (g_policy) from the run's peak and the
// divider: at init, at fork, and when either makes the fair share change.
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

// The live file's mapping, or g_static_region when it could not be made.
extern LiveRegion g_static_region;
extern LiveRegion* g_region;
extern Timeline g_timeline;
// The mapped-memory series: a sample with every heap sample (while mapped
// memory is counted), ending the same interval so that both merge alike,
// each at the time of its own latest change (sampling.cpp).
extern Timeline g_mapped_timeline;

// Both timelines into `region`, started afresh (init, fork child).
inline void attach_timelines(LiveRegion& region) {
  g_timeline.attach(&region.timeline);
  g_mapped_timeline.attach(&region.mapped_timeline);
}
inline void reset_timelines(std::uint64_t interval_ns) {
  g_timeline.reset(interval_ns);
  g_mapped_timeline.reset(interval_ns);
}

// Messages and the exit path keep their buffers in static memory: exit() may
// run on a thread with a small stack, and only one thread ever gets that far
// (g_process.finished); init and fork are single-threaded.
extern char g_line[kMaxPath + 256];

using os::clock_ns;

inline std::uint64_t since_start(std::uint64_t now) {
  std::uint64_t start = g_process.start_mono_ns.load(std::memory_order_relaxed);
  return now > start ? now - start : 0;
}

inline void raise_to(std::atomic<std::int64_t>& target, std::int64_t value, bool* raised = nullptr) {
  std::int64_t current = target.load(std::memory_order_relaxed);
  while (value > current) {
    if (target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
      if (raised) *raised = true;
      return;
    }
  }
}

inline void raise_unsigned(std::atomic<std::uint64_t>& target, std::uint64_t value) {
  std::uint64_t current = target.load(std::memory_order_relaxed);
  while (value > current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

// A live value that was seen: neither peak may stay below it.
inline void raise_peaks(std::int64_t live, std::uint64_t now) {
  bool new_peak = false;
  raise_to(g_published.peak, live, &new_peak);
  if (new_peak) g_published.peak_time_ns.store(since_start(now), std::memory_order_relaxed);
  raise_to(g_published.phase_peak, live);
}

inline void raise_total_peak(std::int64_t total, std::uint64_t now) {
  bool new_peak = false;
  raise_to(g_published.total_peak, total, &new_peak);
  if (new_peak) g_published.total_peak_time_ns.store(since_start(now), std::memory_order_relaxed);
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

// "heapline: cannot VERB PATH: REASON" into `text`, without malloc.
void append_failure(TextSink& text, const char* verb, const char* path, int error);
void copy_text(char* out, std::size_t capacity, const char* text);

// accounting.cpp: the lazy process init. Returns false when another thread
// is doing it.
bool ensure_process_init();

// thread_registry.cpp
RegistryEntry* claim_entry();
void flush_exiting_thread(void* entry);
void unregistered_change(std::int64_t bytes, CallKind kind);
// Published live plus every registered thread's pending delta.
std::int64_t exact_live();
// Calls and publishes summed over exited threads and live slots, and the
// live slots' pending bytes.
struct RegistryTotals {
  std::uint64_t calls[kCallKinds];
  std::uint64_t publishes;
  std::int64_t pending;
};
RegistryTotals registry_totals();

// sampling.cpp: publishing and the timeline. take_sample needs
// g_sampling.busy held.
void publish_value(std::int64_t delta);
void publish_exactly(std::int64_t bytes, CallKind kind);
// A new timeline's first sample (init, fork): [now, live, the largest
// value published meanwhile].
void start_timeline(std::uint64_t now, std::int64_t live);
// Ends the open interval (see sampling.cpp), then appends [now, live, live]
// at sample_clock(), which it returns.
std::uint64_t take_sample(std::int64_t live);
// Ends the open interval when the sampling interval has passed, unless
// another thread is sampling: never waits. And samples `now` itself:
// kNever (a publish: it opens the next interval), kIfQuiet (a mapping
// change: when no heap publish closed the interval), kAlways (a marker: at
// once, whether the interval has passed or not). Returns the time of the
// sample it took (read under the lock), or `now` when it took none.
enum class SampleNow { kNever, kIfQuiet, kAlways };
std::uint64_t try_sample(std::uint64_t now, SampleNow sample_now);
// The same with the lock held, at `now` read under it.
void sample_locked(std::uint64_t now, SampleNow sample_now);
// A new thread: the live file's stated precision follows.
void note_max_threads(std::uint32_t threads);
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
// Takes the lock, waiting a little (never forever) for a thread that holds
// it; false when it stayed busy.
bool lock_sampling();
// A sample's clock: CLOCK_MONOTONIC read under the sampling lock, and never
// before the latest sample, so that every series goes forward in time
// whichever thread samples.
std::uint64_t sample_clock();

// live_header.cpp
bool is_root_process();
// Decides g_process.followed (HEAPLINE_FOLLOW) for this process; with
// follow=command and no HEAPLINE_ROOT_PID, the first process names itself
// the command for the processes it starts (`in_constructor`: only from the
// library's constructor, where setenv cannot race the program).
void decide_followed(bool in_constructor);
// Starts the heap line at `now` with `live` bytes: identity and first
// sample, and the live file (see live_header.cpp).
void open_live_file(std::uint64_t now, std::int64_t live);
// The live file of a process that is not the command (a fork child; with
// HEAPLINE_ROOT_PID, any other process) is created only once its heap
// reaches this floor: a shell's subshell, `basename` or `sed` that is killed
// (or execs a program the library cannot follow) leaves nothing.
constexpr std::int64_t kLiveFileFloor = 1 << 20;
// Called by take_sample (g_sampling.busy held) when `live` reached the floor.
void create_deferred_live_file();
// Removes the live file at live_path when that name still is this process's
// file (after the report is written, before an exec): never a file that
// another process put there. True when it was removed.
bool remove_live_file();
// exec (exec_override.cpp): the image that execs another gives up its live
// file (the new image, run under the library, makes its own: a wrapper such
// as env, nice or timeout leaves nothing behind), holding the sampling lock
// until the exec is done with; and gets it back when the exec failed.
// Nothing in a vfork child, whose live file is its parent's.
// Whether this process has a live file (or one due) that an exec would give
// up: cheap, asked first.
bool live_file_to_give_up();
bool retire_live_file_for_exec();
// The program an exec is about to start without the library, and why, into
// the live file's header (nullptr: cleared, the exec failed).
void note_exec_not_followed(const char* path, const char* why);
void restore_live_file_after_failed_exec();

// fork_child.cpp
void after_fork_in_child();

// exit_report.cpp: the exact figures, the last sample and the report, once
// (g_process.finished), when the library's destructor runs.
void write_report_at_exit();
// _exit/_Exit (exit_override.cpp): the same report, unless this is a vfork
// child, which shares its parent's memory and must change nothing.
void write_report_at_early_exit();

}  // namespace heapline::accounting
#pragma GCC visibility pop

