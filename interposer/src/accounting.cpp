// The accounting's slow paths: publishing, thread registration and exit,
// lazy process init, fork, and the report at process exit.
//
// Precision contract. The true live heap is
//     published live + the sum of every registered thread's pending delta
// (a thread without a slot publishes every change, so it has nothing
// pending; a thread that exits publishes its delta first). After each call a
// thread's |pending| is below its slot's copy of the threshold, and that copy
// is a value the global threshold once had, so never above the largest
// threshold ever used (max_threshold). At most
// max_threads threads are registered at once, hence at any moment
//     |published live − true live| < max_threads × max_threshold
// which is the bound_bytes written to the output. The published peak is the
// largest published live value, so it is within the same bound of the true
// peak; final_bytes is exact (published live plus every pending delta), and
// the peak is raised to it if needed.
//
// Peaks. g_published.peak is the run's peak (the report's peak_bytes);
// phase_peak is the same figure but reset by heapline_reset_peak(). Both are
// raised to every exact live value anyone computes (the API reads and the
// exit), so a reported peak is never below a value that was seen, even when
// the batched publishing had not yet carried threads' pending bytes.
//
// The live file (live_file.h). The timeline's samples, the latest figures and
// the markers are written into a file-backed shared mapping created during
// the lazy init, so a killed process leaves its heap line on disk. Only the
// sampling slow path writes there (under g_sampling.busy), plus the marker
// API (lock-free: a claimed index, then a ready flag). When the file cannot
// be created, the same layout lives in static memory (g_static_region) and
// one line on stderr says so.
#include "accounting.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "config.h"
#include "live_file.h"
#include "mapped_memory.h"
#include "output.h"
#include "text.h"
#include "timeline.h"

namespace heapline::accounting {

constinit Policy g_policy;
constinit Slot g_no_slot{0, 0};  // span 0: every call takes the slow path
__thread Slot* t_slot __attribute__((tls_model("initial-exec"))) = &g_no_slot;

namespace {

// "heapline: cannot VERB PATH: REASON", without malloc (strerrordesc_np
// returns a static string, unlike strerror it never formats a buffer).
void append_failure(TextSink& text, const char* verb, const char* path, int error) {
  text.append("heapline: cannot ");
  text.append(verb);
  text.append(" ");
  text.append(path);
  text.append(": ");
  const char* reason = strerrordesc_np(error);
  text.append(reason != nullptr ? reason : "unknown error");
}

// What a thread is doing with the registry.
enum ThreadMode : unsigned char {
  kUnregistered = 0,  // no call seen yet (or init was busy in another thread)
  kRegistering,       // inside its first call: nested calls publish exactly
  kRegistered,        // owns t_slot
  kNoSlot,            // the registry was full: publishes every change
  kExited,            // past its exit flush: publishes every change
};
__thread unsigned char t_mode __attribute__((tls_model("initial-exec"))) = kUnregistered;

constexpr std::size_t kSlotCount = 1024;
constinit Slot g_slots[kSlotCount];

// Written by every publish: kept off the lines the hot path reads.
struct alignas(128) Published {
  std::atomic<std::int64_t> live{0};
  std::atomic<std::int64_t> peak{0};
  std::atomic<std::int64_t> phase_peak{0};
  std::atomic<std::int64_t> interval_max{0};
  std::atomic<std::uint64_t> peak_time_ns{0};
  // Heap plus mapped memory (mapped_memory.h): its own peak, raised at every
  // heap publish and every mapped change, so it is the peak of the sum and
  // not the sum of two peaks that may be far apart in time.
  std::atomic<std::int64_t> total_peak{0};
  std::atomic<std::uint64_t> total_peak_time_ns{0};
};
constinit Published g_published;

// Read by every publish, written once per sample.
struct alignas(128) Sampling {
  std::atomic<std::uint64_t> next_sample_ns{0};
  std::atomic<bool> busy{false};
};
constinit Sampling g_sampling;

enum InitState : int { kNotStarted = 0, kInProgress, kDone };

// Everything else: set up once, or changed rarely.
struct alignas(128) Process {
  std::atomic<int> init_state{kNotStarted};
  std::atomic<std::uint32_t> registered{0};
  std::atomic<std::uint32_t> max_registered{0};
  std::atomic<std::uint32_t> slots_used{0};  // slots [0, slots_used) were ever claimed
  std::atomic<std::int64_t> max_threshold{16 * 1024};
  // Calls and publishes of threads that exited, or never had a slot.
  std::atomic<std::uint64_t> folded_calls[kCallKinds] = {};
  std::atomic<std::uint64_t> folded_publishes{0};
  std::atomic<std::uint64_t> start_mono_ns{0};
  std::uint64_t start_unix_ns = 0;
  bool fork_child = false;
  int root_pid = 0;  // HEAPLINE_ROOT_PID, set by the launcher; 0 when unset
  std::atomic<bool> finished{false};
  pthread_key_t exit_key{};
  Config config;
  char base_dir[kMaxPath] = {};
  char live_path[kMaxPath] = {};  // empty: no live file (static fallback)
};
// constinit: the first allocation (and so the lazy init) can come before
// this library's constructors run; a dynamically initialised global would be
// reset after it had been set up.
constinit Process g_process;
constinit LiveRegion g_static_region;
LiveRegion* g_region = &g_static_region;
constinit Timeline g_timeline{&g_static_region.timeline};

// Messages and the exit path keep their buffers in static memory: exit() may
// run on a thread with a small stack, and only one thread ever gets that far
// (g_process.finished); init and fork are single-threaded.
char g_line[kMaxPath + 256];

std::uint64_t clock_ns(clockid_t clock) {
  timespec now;
  clock_gettime(clock, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(now.tv_nsec);
}

std::uint64_t since_start(std::uint64_t now) {
  std::uint64_t start = g_process.start_mono_ns.load(std::memory_order_relaxed);
  return now > start ? now - start : 0;
}

void raise_to(std::atomic<std::int64_t>& target, std::int64_t value, bool* raised = nullptr) {
  std::int64_t current = target.load(std::memory_order_relaxed);
  while (value > current) {
    if (target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
      if (raised) *raised = true;
      return;
    }
  }
}

// A live value that was seen: neither peak may stay below it.
void raise_peaks(std::int64_t live, std::uint64_t now) {
  bool new_peak = false;
  raise_to(g_published.peak, live, &new_peak);
  if (new_peak) g_published.peak_time_ns.store(since_start(now), std::memory_order_relaxed);
  raise_to(g_published.phase_peak, live);
}

void raise_total_peak(std::int64_t total, std::uint64_t now) {
  bool new_peak = false;
  raise_to(g_published.total_peak, total, &new_peak);
  if (new_peak) g_published.total_peak_time_ns.store(since_start(now), std::memory_order_relaxed);
}

// max(min_bytes, live / divisor), rounded down to a power of two so that it
// changes only when the heap doubles or halves: the policy line stays
// read-mostly even while live moves on every publish.
std::int64_t threshold_for(std::int64_t live) {
  const Precision& precision = g_process.config.precision;
  if (precision.exact) return 1;
  std::uint64_t scaled = live > 0 ? static_cast<std::uint64_t>(live) / precision.divisor : 0;
  if (scaled > 0) scaled = std::uint64_t{1} << (63 - __builtin_clzll(scaled));
  std::uint64_t threshold = scaled > precision.min_bytes ? scaled : precision.min_bytes;
  return static_cast<std::int64_t>(threshold);
}

// The figures of the latest sample into the live file's header, under its
// seqlock. Called with g_sampling.busy held: one writer at a time.
void publish_figures(std::uint64_t t_ns, std::int64_t live) {
  LiveHeader& h = g_region->header;
  std::uint64_t calls[kCallKinds];
  for (unsigned kind = 0; kind < kCallKinds; ++kind) {
    calls[kind] = g_process.folded_calls[kind].load(std::memory_order_relaxed);
  }
  std::uint64_t publishes = g_process.folded_publishes.load(std::memory_order_relaxed);
  const std::uint32_t used = g_process.slots_used.load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    const Slot& slot = g_slots[i];
    if (slot.in_use.load(std::memory_order_relaxed) == 0) continue;
    publishes += slot.publishes.load(std::memory_order_relaxed);
    for (unsigned kind = 0; kind < kCallKinds; ++kind) calls[kind] += slot.calls[kind].load(std::memory_order_relaxed);
  }
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
  for (unsigned kind = 0; kind < kCallKinds; ++kind) h.calls[kind].store(calls[kind], std::memory_order_relaxed);
  h.publishes.store(publishes, std::memory_order_relaxed);
  h.seq.store(seq + 2, std::memory_order_release);
}

// Appends a sample of `live` (with the interval's maximum) at `now`. Called
// with g_sampling.busy held.
void take_sample(std::uint64_t now, std::int64_t live) {
  // A concurrent publish lands either in this sample's maximum or in the
  // next one's: never in neither.
  std::int64_t max_live = g_published.interval_max.exchange(live, std::memory_order_relaxed);
  if (max_live < live) max_live = live;
  const std::uint64_t t_ns = since_start(now);
  g_timeline.append(Sample{t_ns, live, max_live});
  g_sampling.next_sample_ns.store(now + g_timeline.interval_ns(), std::memory_order_relaxed);
  publish_figures(t_ns, live);
}

// Takes a sample unless another thread is taking one: never waits. `force`
// samples even before the interval has passed (a marker).
void try_sample(std::uint64_t now, bool force = false) {
  if (g_sampling.busy.exchange(true, std::memory_order_acquire)) return;
  if (force || now >= g_sampling.next_sample_ns.load(std::memory_order_relaxed)) {
    take_sample(now, g_published.live.load(std::memory_order_relaxed));
  }
  g_sampling.busy.store(false, std::memory_order_release);
}

void publish_value(std::int64_t delta) {
  const std::int64_t live = g_published.live.fetch_add(delta, std::memory_order_relaxed) + delta;
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  raise_peaks(live, now);
  // While nothing is mapped the sum is the heap, whose peak is kept anyway:
  // total_peak() takes the larger of the two, so this costs one load here.
  if (const std::int64_t mapped_live = mapped::live_bytes(); mapped_live != 0) raise_total_peak(live + mapped_live, now);
  raise_to(g_published.interval_max, live);
  const std::int64_t threshold = threshold_for(live);
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

// pthread key destructor: runs at the exit of every thread that registered.
void flush_exiting_thread(void* value) {
  Slot* slot = static_cast<Slot*>(value);
  if (slot == nullptr || slot != t_slot || slot == &g_no_slot) return;
  int saved_errno = errno;
  // Any call after this point (later key destructors, libc's own thread
  // teardown) publishes exactly instead of touching a released slot.
  t_slot = &g_no_slot;
  t_mode = kExited;
  for (unsigned kind = 0; kind < kCallKinds; ++kind) {
    g_process.folded_calls[kind].fetch_add(slot->calls[kind].load(std::memory_order_relaxed),
                                           std::memory_order_relaxed);
    slot->calls[kind].store(0, std::memory_order_relaxed);
  }
  std::int64_t pending = slot->own_pending();
  slot->clear_pending();
  std::uint64_t publishes = slot->publishes.load(std::memory_order_relaxed) + (pending != 0 ? 1 : 0);
  slot->publishes.store(0, std::memory_order_relaxed);
  g_process.folded_publishes.fetch_add(publishes, std::memory_order_relaxed);
  if (pending != 0) publish_value(pending);
  g_process.registered.fetch_sub(1, std::memory_order_relaxed);
  slot->in_use.store(0, std::memory_order_release);
  errno = saved_errno;
}

Slot* claim_slot() {
  // Threads usually exit in creation order, so the scan starts after the
  // last claim: short-lived threads find a free slot at once.
  static std::atomic<std::size_t> hint{0};
  std::size_t start = hint.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kSlotCount; ++i) {
    std::size_t index = (start + i) % kSlotCount;
    Slot& slot = g_slots[index];
    std::uint32_t free_mark = 0;
    if (slot.in_use.load(std::memory_order_relaxed) == 0 &&
        slot.in_use.compare_exchange_strong(free_mark, 1, std::memory_order_acquire)) {
      hint.store(index + 1, std::memory_order_relaxed);
      std::uint32_t used = g_process.slots_used.load(std::memory_order_relaxed);
      while (index + 1 > used && !g_process.slots_used.compare_exchange_weak(used, static_cast<std::uint32_t>(index + 1),
                                                                           std::memory_order_relaxed)) {
      }
      slot.reset(g_policy.threshold.load(std::memory_order_relaxed));
      std::uint32_t now_registered = g_process.registered.fetch_add(1, std::memory_order_relaxed) + 1;
      std::uint32_t most = g_process.max_registered.load(std::memory_order_relaxed);
      while (now_registered > most &&
             !g_process.max_registered.compare_exchange_weak(most, now_registered, std::memory_order_relaxed)) {
      }
      return &slot;
    }
  }
  return nullptr;
}

void after_fork_in_child();

void copy_text(char* out, std::size_t capacity, const char* text) {
  std::size_t i = 0;
  for (; text != nullptr && text[i] != 0 && i + 1 < capacity; ++i) out[i] = text[i];
  out[i] = 0;
}

// Whether this process's report keeps the plain name (see output.h).
bool is_root_process() {
  const int pid = getpid();
  return !g_process.fork_child && (g_process.root_pid == 0 || g_process.root_pid == pid);
}

// Creates this process's live file (at init, and in a fork child, whose
// inherited mapping is its parent's file) and writes its identity. Falls
// back to g_static_region, with one line on stderr, when the file cannot be
// made. Makes no allocation: runs inside the first malloc call.
void open_live_file() {
  if (g_region != &g_static_region) release_live_region(g_region);  // a fork child: the parent's file
  g_region = &g_static_region;
  char* path = g_process.live_path;
  path[0] = 0;
  const Config& config = g_process.config;
  if (!config.output_off) {
    const int pid = getpid();
    if (format_output_path(config.out_template, g_process.base_dir, pid, program_invocation_short_name,
                           !is_root_process(), path, kMaxPath - 8)) {
      std::size_t length = strlen(path);
      memcpy(path + length, ".live", 6);
      LiveRegion* mapped = create_live_region(path);
      if (mapped != nullptr) {
        g_region = mapped;
      } else {
        char* line = g_line;
        TextSink text(line, sizeof g_line);
        append_failure(text, "create", path, errno);
        text.append("; the heap line is kept in memory only (lost if the process is killed)\n");
        write_stderr(line, text.size());
        path[0] = 0;
      }
    } else {
      path[0] = 0;
    }
  }
  LiveRegion& region = *g_region;
  LiveHeader& h = region.header;
  h.magic.store(0, std::memory_order_relaxed);
  h.version = kLiveVersion;
  h.header_bytes = sizeof(LiveHeader);
  h.marker_capacity = kLiveMarkerCapacity;
  h.sample_capacity = Timeline::kCapacity;
  h.file_bytes = sizeof(LiveRegion);
  h.pid = getpid();
  h.ppid = getppid();
  h.start_unix_ns = g_process.start_unix_ns;
  h.exact = config.precision.exact ? 1 : 0;
  h.min_threshold_bytes = config.precision.exact ? 1 : config.precision.min_bytes;
  h.divisor = config.precision.exact ? 0 : config.precision.divisor;
  const NextAllocator& next = next_allocator();
  copy_text(h.allocator, sizeof h.allocator, next.name);
  copy_text(h.size_basis, sizeof h.size_basis, next.size_basis);
  ssize_t exe_length = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
  h.exe[exe_length > 0 ? exe_length : 0] = 0;
  h.seq.store(0, std::memory_order_relaxed);
  h.state.store(kLiveRunning, std::memory_order_relaxed);
  h.markers_claimed.store(0, std::memory_order_relaxed);
  for (LiveMarker& marker : region.markers) marker.ready.store(0, std::memory_order_relaxed);
  g_timeline.attach(&region.timeline);
  h.magic.store(kLiveMagic, std::memory_order_release);  // identity complete
}

// Runs once per process, inside its first allocation call (nested calls made
// from here publish exactly). Returns false when another thread is doing it.
bool ensure_process_init() {
  int state = g_process.init_state.load(std::memory_order_acquire);
  if (state == kDone) return true;
  if (state == kInProgress || !g_process.init_state.compare_exchange_strong(state, kInProgress,
                                                                             std::memory_order_acq_rel)) {
    return g_process.init_state.load(std::memory_order_acquire) == kDone;
  }
  int saved_errno = errno;
  std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  g_process.start_mono_ns.store(now, std::memory_order_relaxed);
  g_process.start_unix_ns = clock_ns(CLOCK_REALTIME);
  load_config(g_process.config, [](const char* name) -> const char* { return getenv(name); });
  if (const char* root = getenv("HEAPLINE_ROOT_PID"); root != nullptr) g_process.root_pid = atoi(root);
  if (getcwd(g_process.base_dir, sizeof g_process.base_dir) == nullptr) g_process.base_dir[0] = 0;
  std::int64_t threshold = threshold_for(g_published.live.load(std::memory_order_relaxed));
  g_policy.threshold.store(threshold, std::memory_order_relaxed);
  g_process.max_threshold.store(threshold, std::memory_order_relaxed);
  mapped::configure(g_process.config.mapped);
  pthread_key_create(&g_process.exit_key, flush_exiting_thread);
  pthread_atfork(nullptr, nullptr, after_fork_in_child);
  // Threads without a slot publish (and may sample) while this runs: keep
  // them out of the timeline until it has moved to the live file.
  bool locked = false;
  for (int attempt = 0; attempt < 1000 && !locked; ++attempt) {
    locked = !g_sampling.busy.exchange(true, std::memory_order_acquire);
    if (!locked) sched_yield();
  }
  open_live_file();
  g_timeline.reset(g_process.config.interval_ns);
  take_sample(now, g_published.live.load(std::memory_order_relaxed));
  if (locked) g_sampling.busy.store(false, std::memory_order_release);
  g_process.init_state.store(kDone, std::memory_order_release);
  errno = saved_errno;
  return true;
}

void after_fork_in_child() {
  // Only this thread exists now, but every block of every thread of the
  // parent is in this copy: the child's heap is the published figure plus
  // all pending deltas.
  std::int64_t inherited = g_published.live.load(std::memory_order_relaxed);
  for (Slot& slot : g_slots) {
    if (slot.in_use.load(std::memory_order_relaxed) != 0) inherited += slot.pending_bytes();
    if (&slot != t_slot) slot.in_use.store(0, std::memory_order_relaxed);
    slot.clear_pending();
    slot.publishes.store(0, std::memory_order_relaxed);
    for (auto& calls : slot.calls) calls.store(0, std::memory_order_relaxed);
  }
  std::uint32_t registered = t_slot != &g_no_slot ? 1 : 0;
  g_process.registered.store(registered, std::memory_order_relaxed);
  g_process.max_registered.store(registered, std::memory_order_relaxed);
  for (auto& calls : g_process.folded_calls) calls.store(0, std::memory_order_relaxed);
  g_process.folded_publishes.store(0, std::memory_order_relaxed);
  g_published.live.store(inherited, std::memory_order_relaxed);
  g_published.peak.store(inherited, std::memory_order_relaxed);
  g_published.phase_peak.store(inherited, std::memory_order_relaxed);
  g_published.interval_max.store(inherited, std::memory_order_relaxed);
  g_published.peak_time_ns.store(0, std::memory_order_relaxed);
  mapped::after_fork_in_child();
  g_published.total_peak.store(inherited + mapped::live_bytes(), std::memory_order_relaxed);
  g_published.total_peak_time_ns.store(0, std::memory_order_relaxed);
  std::int64_t threshold = threshold_for(inherited);
  g_policy.threshold.store(threshold, std::memory_order_relaxed);
  g_process.max_threshold.store(threshold, std::memory_order_relaxed);
  if (t_slot != &g_no_slot) t_slot->set_threshold(threshold);
  std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  g_process.start_mono_ns.store(now, std::memory_order_relaxed);
  g_process.start_unix_ns = clock_ns(CLOCK_REALTIME);
  g_process.fork_child = true;
  g_process.finished.store(false, std::memory_order_relaxed);
  g_sampling.busy.store(false, std::memory_order_relaxed);  // a parent thread may have held it
  open_live_file();
  g_timeline.reset(g_process.config.interval_ns);
  take_sample(now, inherited);
}

char g_exe[kMaxPath];
char g_path[kMaxPath];

void print_summary(const Report& report, std::size_t samples, const char* path, int write_error) {
  char* line = g_line;
  TextSink text(line, sizeof g_line);
  text.append("heapline: peak ");
  text.append_bytes(report.peak_bytes);
  text.append(" at ");
  text.append_seconds(report.peak_time_ns);
  text.append(" s, final ");
  text.append_bytes(report.final_bytes);
  text.append(", precision ");
  if (report.exact) {
    text.append("exact");
  } else {
    text.append("+/-");
    text.append_bytes(static_cast<std::int64_t>(report.bound_bytes));
  }
  text.append(", ");
  text.append_unsigned(samples);
  text.append(" samples, ");
  if (path == nullptr) {
    text.append("no output (HEAPLINE_OUT=off)");
  } else if (write_error != 0) {
    text.append("output not written");
  } else {
    text.append("output ");
    text.append(path);
  }
  text.append('\n');
  write_stderr(line, text.size());
}

// A program that never allocates still gets its file: init at load time if
// no allocation has done it yet (by then libc is initialised, getenv works).
__attribute__((constructor)) void init_at_load() { ensure_process_init(); }

__attribute__((destructor)) void write_report_at_exit() {
  if (g_process.init_state.load(std::memory_order_acquire) != kDone) return;
  if (g_process.finished.exchange(true)) return;
  int saved_errno = errno;

  // Exact figures: the published value plus every registered thread's
  // pending delta, so an idle thread never hides bytes.
  std::int64_t final_bytes = g_published.live.load(std::memory_order_relaxed);
  std::uint64_t calls[kCallKinds];
  for (unsigned kind = 0; kind < kCallKinds; ++kind) {
    calls[kind] = g_process.folded_calls[kind].load(std::memory_order_relaxed);
  }
  std::uint64_t publishes = g_process.folded_publishes.load(std::memory_order_relaxed);
  for (Slot& slot : g_slots) {
    if (slot.in_use.load(std::memory_order_acquire) == 0) continue;
    final_bytes += slot.pending_bytes();
    publishes += slot.publishes.load(std::memory_order_relaxed);
    for (unsigned kind = 0; kind < kCallKinds; ++kind) calls[kind] += slot.calls[kind].load(std::memory_order_relaxed);
  }
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  raise_peaks(final_bytes, now);
  const mapped::Figures mapped_figures = mapped::figures();
  raise_total_peak(final_bytes + mapped_figures.live, now);

  // The final sample. Another thread may be appending one right now (exit()
  // does not stop threads); wait for it a little, never forever.
  bool locked = false;
  for (int attempt = 0; attempt < 1000 && !locked; ++attempt) {
    locked = !g_sampling.busy.exchange(true, std::memory_order_acquire);
    if (!locked) sched_yield();
  }
  if (locked) take_sample(now, final_bytes);
  g_region->header.state.store(kLiveExited, std::memory_order_release);

  const Config& config = g_process.config;
  const NextAllocator& next = next_allocator();
  char* exe = g_exe;
  ssize_t exe_length = readlink("/proc/self/exe", exe, sizeof g_exe - 1);
  exe[exe_length > 0 ? exe_length : 0] = 0;
  const std::uint64_t max_threads = g_process.max_registered.load(std::memory_order_relaxed);
  const std::uint64_t max_threshold = static_cast<std::uint64_t>(g_process.max_threshold.load(std::memory_order_relaxed));
  Report report{};
  report.pid = getpid();
  report.ppid = getppid();
  report.exe = exe;
  report.start_unix_ns = g_process.start_unix_ns;
  report.duration_ns = since_start(now);
  report.allocator = next.name;
  report.size_basis = next.size_basis;
  report.exact = config.precision.exact;
  report.bound_bytes = config.precision.exact ? 0 : max_threads * max_threshold;
  report.min_threshold_bytes = config.precision.exact ? 1 : config.precision.min_bytes;
  report.divisor = config.precision.exact ? 0 : config.precision.divisor;
  report.max_threshold_bytes = config.precision.exact ? 1 : max_threshold;
  report.max_threads = max_threads;
  report.peak_bytes = g_published.peak.load(std::memory_order_relaxed);
  report.peak_time_ns = g_published.peak_time_ns.load(std::memory_order_relaxed);
  report.final_bytes = final_bytes;
  report.mapped_enabled = mapped::enabled();
  report.mapped_peak_bytes = mapped_figures.peak;
  report.mapped_peak_time_ns = since_start(mapped_figures.peak_time_ns);
  report.mapped_final_bytes = mapped_figures.live;
  report.mapped_changes = mapped_figures.changes;
  report.mapped_untracked = mapped_figures.untracked;
  // The peak of the sum: raised while something was mapped, else the heap's.
  report.total_peak_bytes = g_published.total_peak.load(std::memory_order_relaxed);
  report.total_peak_time_ns = g_published.total_peak_time_ns.load(std::memory_order_relaxed);
  if (report.peak_bytes > report.total_peak_bytes) {
    report.total_peak_bytes = report.peak_bytes;
    report.total_peak_time_ns = report.peak_time_ns;
  }
  report.alloc_calls = calls[kAllocCall];
  report.free_calls = calls[kFreeCall];
  report.realloc_calls = calls[kReallocCall];
  report.publishes = publishes;
  report.interval_ns = g_timeline.interval_ns();
  report.markers = g_region->markers;
  report.marker_slots = g_region->header.markers_claimed.load(std::memory_order_acquire);
  report.ended = "exit";

  char* path = g_path;
  const char* written_path = nullptr;
  int error = 0;
  if (!config.output_off) {
    const bool root = !g_process.fork_child && (g_process.root_pid == 0 || g_process.root_pid == report.pid);
    if (!format_output_path(config.out_template, g_process.base_dir, report.pid, program_invocation_short_name,
                            !root, path, sizeof g_path)) {
      error = ENAMETOOLONG;
    } else {
      error = write_report_file(path, report, g_timeline, config.kill_writer);
    }
    written_path = path;
    // The report is on disk: the live file has served its purpose. (Still
    // mapped: later destructors may allocate and sample into it, harmlessly.)
    if (error == 0 && g_process.live_path[0] != 0) unlink(g_process.live_path);
    if (error != 0) {
      char* line = g_line;
      TextSink text(line, sizeof g_line);
      append_failure(text, "write", path, error);
      if (g_process.live_path[0] != 0) {
        text.append("; the heap line stays in ");
        text.append(g_process.live_path);
      }
      text.append('\n');
      write_stderr(line, text.size());
    }
  }
  if (locked) g_sampling.busy.store(false, std::memory_order_release);
  if (config.summary) print_summary(report, g_timeline.size(), written_path, error);
  errno = saved_errno;
}

// The first call of a thread registers it; calls of threads without a slot
// publish exactly.
// Out of line: publish() then saves no registers for it on its own path.
[[gnu::noinline]] void unregistered_change(std::int64_t bytes, CallKind kind) {
  if (t_mode == kUnregistered) {
    t_mode = kRegistering;
    if (ensure_process_init()) {
      Slot* slot = claim_slot();
      if (slot != nullptr) {
        // Set before pthread_setspecific, which may allocate for a key
        // beyond its first block: those nested calls then count normally.
        t_slot = slot;
        t_mode = kRegistered;
        int saved_errno = errno;
        pthread_setspecific(g_process.exit_key, slot);
        errno = saved_errno;
        record(bytes, kind);
        return;
      }
      t_mode = kNoSlot;  // graceful degradation: exact for this thread
    } else {
      t_mode = kUnregistered;  // another thread is initialising; retry on the next call
    }
  }
  publish_exactly(bytes, kind);
}

// Published live plus every registered thread's pending delta, the caller's
// included. Exact when other threads are not allocating at this moment; a
// concurrent publish can move bytes between the two parts while they are read.
std::int64_t exact_live() {
  std::int64_t live = g_published.live.load(std::memory_order_acquire);
  const std::uint32_t used = g_process.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    const Slot& slot = g_slots[i];
    if (slot.in_use.load(std::memory_order_acquire) != 0) live += slot.pending_bytes();
  }
  return live;
}

bool ready_for_api() { return g_process.init_state.load(std::memory_order_acquire) == kDone; }

}  // namespace

void api_mark(const char* name) {
  if (!ready_for_api()) return;
  int saved_errno = errno;
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  LiveRegion& region = *g_region;
  const std::uint32_t index = region.header.markers_claimed.fetch_add(1, std::memory_order_relaxed);
  if (index < kLiveMarkerCapacity) {
    LiveMarker& marker = region.markers[index];
    marker.t_ns.store(since_start(now), std::memory_order_relaxed);
    copy_text(marker.name, sizeof marker.name, name != nullptr ? name : "");
    marker.ready.store(1, std::memory_order_release);
  }
  // The heap at the marker: publish the caller's pending bytes and sample now
  // (unless another thread is sampling at this very moment).
  Slot* slot = t_slot;
  if (slot != &g_no_slot) {
    std::int64_t pending = slot->own_pending();
    if (pending != 0) {
      take_pending(*slot, pending);
      count_call(slot->publishes);
      publish_value(pending);
    }
  }
  try_sample(now, true);
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
  raise_peaks(live, clock_ns(CLOCK_MONOTONIC));  // the run's peak keeps every value seen
}

void mapped_changed(std::int64_t mapped_live) {
  // The clock is read only for a new peak: most mapping calls make none.
  const std::int64_t total = g_published.live.load(std::memory_order_relaxed) + mapped_live;
  if (total > g_published.total_peak.load(std::memory_order_relaxed)) raise_total_peak(total, clock_ns(CLOCK_MONOTONIC));
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
