// The process: its settings, identity and files. start_up.cpp defines this
// state and sets it up (the lazy init inside the first allocation call),
// fork_child.cpp sets it up again in a fork child; the state of each slow
// path is a header of its own above this one, and the functions of all of
// them are declared in slow_paths.h.
#pragma once

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "arch.h"
#include "config.h"
#include "os.h"
#include "text.h"

// Hidden: the compiler then knows these are this library's own and reaches
// them rip-relative, not through an address loaded first (which
// -fvisibility=hidden alone does not give a declaration).
#pragma GCC visibility push(hidden)
namespace heapline::accounting {

enum InitState : int { kNotStarted = 0, kInProgress, kDone };

// Set up once (at init, again in a fork child), or changed rarely.
struct alignas(128) Process {
  // kNotStarted until a thread starts the init, kDone once every field below
  // and the live file are set up; only then are the others read.
  std::atomic<int> init_state{kNotStarted};
  // CLOCK_MONOTONIC and CLOCK_REALTIME at the init (or the fork): every
  // time in the output is counted from start_mono_ns.
  std::atomic<std::uint64_t> start_mono_ns{0};
  std::uint64_t start_unix_ns = 0;
  bool fork_child = false;  // this process is a fork child of one that ran the library
  int pid = 0;       // this process's, set at init and in a fork child (a vfork child has its parent's)
  int root_pid = 0;  // HEAPLINE_ROOT_PID, set by the launcher; 0 when unset
  // When this process started (os::process_start_ticks): with the pid, in
  // the live file, it tells this process's files from those of an earlier
  // process that had the same pid.
  std::uint64_t start_ticks = 0;
  // False for a process HEAPLINE_FOLLOW=command does not follow: it counts
  // (the library is loaded anyway) but writes nothing, not even on stderr.
  bool followed = true;
  // Set by the one thread that writes the exit report; never cleared but in
  // a fork child.
  std::atomic<bool> finished{false};
  pthread_key_t exit_key{};  // its destructor flushes an exiting thread (thread_registry.cpp)
  Config config;  // read once at init (nothing in secure mode), never changed after
  char base_dir[kMaxPath] = {};     // the working directory at init: relative output paths start there
  char live_path[kMaxPath] = {};    // empty: no live file (static fallback, or not yet due)
  os::FileId live_id;               // the file made for live_path
  char report_path[kMaxPath] = {};  // the name claimed with the live file; empty: none claimed
  // Why the live file was not made (the report's live_file_problem); empty
  // when it was, or is not due yet.
  char live_file_problem[256] = {};
  int live_file_error = 0;  // the errno that live_file_problem stated; 0 when none did
  // The heap at which a process that is not the command creates its live
  // file (live_header.cpp); INT64_MAX once created, or for the command.
  // Read at each sample, under g_sampling.busy.
  std::int64_t live_file_floor = INT64_MAX;
  // Markers claimed (the live file's copy is for readers only): only grows.
  std::atomic<std::uint32_t> markers_claimed{0};
};
extern Process g_process;

// Whose state this is. Everything the library keeps (these structures, the
// live file's shared mapping, the report name it claimed) belongs to the
// process that set it up: at init, or, in a fork child, the fork handler.
// Two kinds of process run on it without being that process:
//  - a copy made without glibc's fork, so without its handler
//    (clone(SIGCHLD), _Fork, the fork or clone3 system call): its memory is
//    a copy, but its mapping of the live file is the parent's file, and the
//    report name the parent's. It is told by g_identity, a page marked
//    MADV_WIPEONFORK that every such copy finds zeroed, and it is made a
//    fork child before it writes anything of the parent's (adopt_copy).
//    The slow paths that write shared state ask (adopt_if_copy: one load,
//    no system call); a publish asks nothing more than it did: the time of
//    the next sample is in the same page, so a copy's first publish finds
//    a sample due, and the sample asks.
//  - a process running in another's memory (vfork, posix_spawn's child,
//    clone(CLONE_VM)): whatever it changes is its parent's. Its pid is not
//    the one that set the state up; the exit and exec ask (a system call,
//    acts_as_itself) and do nothing for it.
// Without MADV_WIPEONFORK (Linux before 4.14) a copy looks like the second
// kind: it stays silent at exit and exec, and its publishes reach the
// parent's live file until then.
// The page is the largest a kernel for this processor may use
// (arch::kLargestPageBytes): MADV_WIPEONFORK takes whole pages, so on an
// arm64 kernel of 64 KiB pages a 4 KiB page of its own would be refused, or
// would wipe the library's neighbouring state in every such copy.
struct alignas(arch::kLargestPageBytes) IdentityPage {
  // The pid that set the state up; 0 before the init, and in a copy.
  std::atomic<int> pid{0};
  // CLOCK_MONOTONIC at which the open interval ends: the first publish at or
  // after it closes the interval (sampling.h). Read by every publish, set by
  // every sample; 0 in a copy, so that its first publish samples.
  std::atomic<std::uint64_t> next_sample_ns{0};
  char rest_of_page[arch::kLargestPageBytes - 2 * sizeof(std::uint64_t)] = {};
};
static_assert(sizeof(IdentityPage) == arch::kLargestPageBytes);
extern IdentityPage g_identity;

// Messages and the exit path keep their buffers in static memory: exit() may
// run on a thread with a small stack, and only one thread ever gets that far
// (g_process.finished); init and fork are single-threaded.
extern char g_line[kMaxPath + 256];

using os::clock_ns;

// A CLOCK_MONOTONIC reading as a time of the output: since the start, never
// negative.
inline std::uint64_t since_start(std::uint64_t now) {
  std::uint64_t start = g_process.start_mono_ns.load(std::memory_order_relaxed);
  return now > start ? now - start : 0;
}

}  // namespace heapline::accounting
#pragma GCC visibility pop
