// The process set up (process.h's state, defined here): its identity, the
// lazy init inside the first allocation call, and the library's
// constructor and destructor. The slow paths are one file each, with their
// own state (slow_paths.h lists them); a fork child sets the process up
// again (fork_child.cpp).
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cstdint>

#include "exact_shadow.h"
#include "heap_sampler.h"
#include "heapline/report_format.h"
#include "mapped_memory.h"
#include "os.h"
#include "process.h"
#include "published.h"
#include "sampling.h"
#include "slow_paths.h"

namespace heapline::accounting {

// constinit: the first allocation (and so the lazy init) can come before
// this library's constructors run; a dynamically initialised global would be
// reset after it had been set up. (The same holds for the state of every
// slow path, each defined constinit in its own file.)
constinit Process g_process;
char g_line[kMaxPath + 256];
constinit IdentityPage g_identity;

void arm_identity(int pid) {
  // Marked once, at the init: a fork keeps the mark.
  static bool marked = false;
  if (!marked) marked = os::wipe_on_fork(&g_identity, sizeof g_identity);
  g_identity.pid.store(pid, std::memory_order_relaxed);
}

bool acts_as_itself() {
  if (g_process.init_state.load(std::memory_order_acquire) != kDone) return false;
  adopt_if_copy();
  return os::pid() == g_process.pid;
}

// "heapline: cannot VERB PATH: REASON", without malloc (report_error_text
// returns a static string, unlike strerror it never formats a buffer).
void append_failure(TextSink& text, const char* verb, const char* path, int error) {
  text.append("heapline: cannot ");
  text.append(verb);
  text.append(" ");
  text.append_shown(path);
  text.append(": ");
  text.append(report_error_text(error));
}

void copy_text(char* out, std::size_t capacity, const char* text) { copy_utf8_prefix(out, capacity, text); }

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
  remember_stderr();  // the stream the library's lines may go to, before the first
  std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  g_process.start_mono_ns.store(now, std::memory_order_relaxed);
  g_process.start_unix_ns = clock_ns(CLOCK_REALTIME);
  read_process_settings(g_process.config);  // (nothing but defaults in secure mode)
  g_process.root_pid = g_process.config.root_pid;
  g_process.pid = os::pid();
  // Said by the root of the tree alone: its descendants inherited the same
  // environment, and under the launcher (which names the root) one bad
  // value is one line, not one per process, and a process --follow command
  // leaves untraced writes nothing, not even a line.
  if (is_root_process()) say_refused_settings();
  arm_identity(g_process.pid);
  decide_followed(false);
  os::working_directory(g_process.base_dir, sizeof g_process.base_dir);
  g_sampling.coarse_tick_ns = os::clock_resolution_ns(CLOCK_MONOTONIC_COARSE);
  refresh_policy();
  enable_revocation();
  mapped::configure(g_process.config.mapped);
  pthread_key_create(&g_process.exit_key, flush_exiting_thread);
  // No revocation runs across a fork: the child's copy of a slot is then
  // either revoked whole or not at all.
  pthread_atfork(lock_revocation_for_fork, unlock_revocation_after_fork, after_fork_in_child);
  // Threads without a slot publish (and may sample) while this runs: keep
  // them out of the timeline until it has moved to the live file.
  const bool locked = lock_sampling();
  open_live_file(now, g_published.live.load(std::memory_order_relaxed));
  if (locked) unlock_sampling();
  g_process.init_state.store(kDone, std::memory_order_release);
  errno = saved_errno;
  return true;
}

void restart_process_at_fork(int pid, std::uint64_t now) {
  g_process.start_mono_ns.store(now, std::memory_order_relaxed);
  g_process.start_unix_ns = clock_ns(CLOCK_REALTIME);
  g_process.fork_child = true;
  g_process.pid = pid;
  decide_followed(false);
  g_process.finished.store(false, std::memory_order_relaxed);
}

namespace {

// A program that never allocates still gets its file: init at load time if
// no allocation has done it yet (by then libc is initialised, getenv works).
__attribute__((constructor)) void init_at_load() {
  if (ensure_process_init()) decide_followed(true);
  // Not from an allocation call: dlopen may wait for the loader's lock.
  // What the loader and libunwind allocate for themselves (a few KiB, kept
  // for the process's life) is heapline's, not the program's: taken out of
  // the figures.
  // Nor do they raise the peaks.
  const bool counting = g_process.init_state.load(std::memory_order_acquire) == kDone;
  const std::int64_t before = counting ? exact_live() : 0;
  const std::int64_t peak_before = g_published.peak.load(std::memory_order_relaxed);
  const std::int64_t phase_peak_before = g_published.phase_peak.load(std::memory_order_relaxed);
  const shadow::Mark shadow_before = shadow::mark();
  sampler::load_unwinder();
  if (counting) {
    shadow::forget_since(shadow_before);
    if (const std::int64_t own = exact_live() - before; own != 0) publish_value(-own);
    const std::int64_t live = exact_live();
    const std::int64_t floor = live > peak_before ? live : peak_before;
    if (g_published.peak.load(std::memory_order_relaxed) > floor) g_published.peak.store(floor, std::memory_order_relaxed);
    const std::int64_t phase_floor = live > phase_peak_before ? live : phase_peak_before;
    if (g_published.phase_peak.load(std::memory_order_relaxed) > phase_floor) {
      g_published.phase_peak.store(phase_floor, std::memory_order_relaxed);
    }
  }
}

__attribute__((destructor)) void report_at_unload() { write_report_at_exit(); }

}  // namespace

}  // namespace heapline::accounting
