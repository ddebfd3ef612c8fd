// The accounting's slow paths: every function one file of this folder
// defines and another calls, by the file that defines it.
//
// Why one header: the slow paths call each other both ways. A publish that
// finds no room revokes the other threads' shares, and a revocation
// publishes what it took back (sampling.cpp <-> precision_budget.cpp); a
// sample creates a live file that was deferred, and creating one starts its
// timeline (sampling.cpp <-> live_header.cpp); a thread's registration
// grants its share and publishes (thread_registry.cpp ->
// precision_budget.cpp, sampling.cpp), and the budget walks the registry.
// Their declarations stand here, beneath all of them, and the state each
// keeps is a header of its own that includes only state below it:
//
//   process.h          the process: identity, settings, files
//   published.h        the figures every publish moves
//   accounting.h       the hot path: a thread's slot
//   thread_registry.h  where each thread's slot is found
//   precision_budget.h the budget the thresholds share
//   sampling.h         the timelines and the sampling lock
//   live_region.h      where the live figures are written: the live file
//
// so that the files of this folder depend one way, and a file that defines
// none of these (an override, a test) includes this header and the state it
// reads. Nothing here is on the hot path: accounting.h's inline functions
// call only g_publish.
#pragma once

#include <cstdint>

#include "accounting.h"
#include "text.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// --- start_up.cpp: the process's identity and its lazy init --------------

// The page marked and the word set to `pid` (at init, and by the fork
// handler and adopt_copy before anything else).
void arm_identity(int pid);
// Whether this process may act on the state as its own: set up, adopted if
// a copy, and its pid the one that set it up (false in a process running in
// another's memory). Asked before anything names, removes or writes a file
// of the process (the exit report, an exec giving the live file up).
bool acts_as_itself();
// "heapline: cannot VERB PATH: REASON" into `text`, without malloc.
void append_failure(TextSink& text, const char* verb, const char* path, int error);
void copy_text(char* out, std::size_t capacity, const char* text);
// Runs once per process, inside its first allocation call (or the library's
// constructor). Returns false when another thread is doing it.
bool ensure_process_init();
// The process's own fields in a fork child (identity, clocks, settings
// decided again), at `now`.
void restart_process_at_fork(int pid, std::uint64_t now);

// --- fork_child.cpp ------------------------------------------------------

// The fork handler in the child: a heap line of its own, from the heap it
// inherited.
void after_fork_in_child();
// Out of line: a copy made without the fork handler (process.h,
// IdentityPage) becomes a fork child of its own (after_fork_in_child),
// once; nothing before the init.
void adopt_copy();
// First thing in every slow path that may write shared state before a
// sample would (a sample, a thread's registration, a mapping change, an
// exiting thread's flush, the API).
inline void adopt_if_copy() {
  if (__builtin_expect(g_identity.pid.load(std::memory_order_relaxed) == 0, 0)) adopt_copy();
}

// --- thread_registry.cpp: the threads' slots -----------------------------

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
// In a fork child, whose only thread is the one that forked: the other
// threads' slots (copies of their TLS, still mapped here) dropped from the
// registry, the counts started again. Returns the bytes they and this
// thread held pending (the child's heap is the published figure plus
// these); this thread's slot, when it had one, is left at threshold 1
// with nothing pending, for its share to be granted once the budget has
// started again.
std::int64_t restart_registry_at_fork();

// --- precision_budget.cpp: the thresholds' shares ------------------------

// The policy (g_policy) from the run's peak and the divider: at init, at
// fork, and when either makes the fair share change.
void refresh_policy();
// The registered thread count changed: the divider follows it (and with it
// the policy).
void follow_thread_count(std::uint32_t registered);
// Revocation made possible for this process image (its init, a fork
// child's): membarrier(2) registered, unless exact or unavailable.
void enable_revocation();
// A newcomer's threshold, its share reserved: the target, or what the
// budget has left (1 when nothing).
std::int64_t grant_threshold();
// The calling thread's threshold toward its target at a publish that left
// `live` (or back after a request to step down): lowered at once, raised as
// far as the budget allows. A revocation that arrived is settled instead.
// Safe against its own signal handlers.
void move_threshold(std::int64_t live);
// Shares given back (a lowered threshold, a settled revocation, a thread's
// exit).
void release_share(std::int64_t bytes);
// A raise of `live` (and of `reserved`) that leaves the exposure at
// `exposure`: the stated bound follows.
void note_exposure(std::int64_t exposure);
// Room for a publish that (2) refuses: the other threads' shares revoked
// (after another thread's revocation under way, if any, has ended). Returns
// false when nothing could be revoked (a revocation runs in this very
// thread, or revocation is not possible). Publishes what it adopted itself.
bool revoke_for_room();
// Whether the publish of `delta` allocated bytes fits (2) as things stand.
bool growth_fits(std::int64_t delta);
// The lock held by a revocation, for fork (start_up.cpp registers these).
void lock_revocation_for_fork();
void unlock_revocation_after_fork();
// In a fork child: the budget started again from the child's own peak,
// with no share lent (the parent's threads' shares went with them),
// revocation registered again for the new memory and its lock released.
void restart_budget_at_fork();

// --- sampling.cpp: publishing and sampling -------------------------------

// take_sample needs g_sampling.busy held.
void publish_value(std::int64_t delta);
// Bytes published together with the shares that covered them while they
// were held back: `pending` into `live` and `shares` (at least `pending`)
// out of `reserved`, in one step, which cannot raise the exposure. A
// revoker's for the owners of the slots it revoked (precision_budget.h,
// "Revocation"), and a refused publish's for its own share.
void publish_covered(std::int64_t pending, std::int64_t shares);
// The calling thread's pending bytes published now, whatever its threshold
// (a marker's heap figure), when it has a slot and is not inside its own
// publish or threshold change.
void publish_calling_thread();
// The budget's limit made true for the mapped bytes as they stand, claims
// of mapping calls in flight included (mapped_memory.h, before_growth):
// this thread's share given back, then the others' revoked, until what the
// threads hold back fits below the peak of heap + mapped too
// (precision_budget.h, "Heap and mapped"). Also after a publish that finds
// that a mapping call claimed growth while it was being made.
void keep_room_for_mapping();
// Heap + mapped reached `total` at `now` (CLOCK_MONOTONIC): the run's total
// peaks raised, and the live file's copy of the total peak at once
// (LiveHeader::total_peak_at_once), as a heap publish writes its own.
void raise_total_peak_in_file(std::int64_t total, std::uint64_t now);
void publish_exactly(std::int64_t bytes, CallKind kind);
// A new timeline's first sample (init, fork): [now, live, the largest
// value published meanwhile].
void start_timeline(std::uint64_t now, std::int64_t live);
// The last sample (at exit): ends the open interval (see sampling.cpp),
// then appends [now, live, live] at sample_clock(), which it returns, with
// a resident reading at that time whether one is due or not.
std::uint64_t take_sample(std::int64_t live);
// Ends the open interval when the sampling interval has passed, unless
// another thread is sampling: never waits. And samples `now` itself:
// kNever (a publish: it opens the next interval), kIfQuiet (a mapping
// change: when no heap publish closed the interval), kAlways (a marker: at
// once, whether the interval has passed or not). Returns the time of the
// sample it took (read under the lock), or `now` when it took none.
enum class SampleNow { kNever, kIfQuiet, kAlways };
std::uint64_t try_sample(std::uint64_t now, SampleNow sample_now);
// The same with the lock held, at `now` read under it. Returns the time of
// the resident reading it claimed (kNoResidentReading, sampling.h: none
// due), which the caller reads with read_claimed_resident once it has
// released the lock: the three system calls never hold up another thread's
// sample.
std::uint64_t sample_locked(std::uint64_t now, SampleNow sample_now);
// Reads the resident set for a claim of sample_locked, without the lock,
// then records it under it (never waiting: a reading that finds the lock
// taken, or that cannot be recorded in time order, is dropped).
void read_claimed_resident(std::uint64_t claim_ns);
// A new thread: the live file's stated precision follows.
void note_max_threads(std::uint32_t threads);
// Takes the sampling lock (sampling.h), waiting a little (never forever)
// for a thread that holds it; false when it stayed busy.
bool lock_sampling();
// A sample's clock: CLOCK_MONOTONIC read under the sampling lock, and never
// before the latest sample, so that every series goes forward in time
// whichever thread samples.
std::uint64_t sample_clock();

// --- live_header.cpp: the live file ---------------------------------------
// Its mapping, its identity and name, claimed at init, created late for a
// process that is not the command, given up at an exec.

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
// Only after a retire_live_file_for_exec that returned true, whose lock it
// releases.
void restore_live_file_after_failed_exec();

// --- cut_live_file.cpp: a live file cut under its running process ---------
// Another process truncated it (`: > x.live`, a log rotator's copytruncate,
// a cleanup script). The kernel drops the pages past the new end: what they
// held is gone. os.h's guard (guard_cut_mapping) puts zeroed memory in their
// place as they are met, so that no store or load of the library's kills
// the host; this keeps the heap line true about the loss: the samples,
// markers and profile that were there are dropped, never read as zeros,
// and the loss is said once on stderr and in the report's
// live_file_problem.

// The live file just mapped at g_region is guarded (nothing is, while
// g_region is the static region). `fresh`: a new heap line (init, fork
// child, a deferred creation), whose record of losses starts empty; false
// for the file remade after a failed exec, which keeps the losses of the
// one it replaces.
void guard_live_file(bool fresh);
// g_region is about to be unmapped (a fork child's copy of its parent's).
void unguard_live_file();
// With the sampling lock held. Before a sample: when a page of the live
// file was met cut (one load otherwise), the pages past its end are
// replaced and what they held is dropped from the series, with one line on
// stderr the first time. `everything`: looked for whether or not a page was
// met (at exit, which reads every series; before the file is remade after a
// failed exec), and any sample that a merge made from zeroed pages (going
// back in time) dropped too.
void settle_cut_live_file(bool everything);
// At exit, after the last settle: the report's live_file_problem says what
// a cut lost (when the live file was cut and nothing else was said).
void describe_cut_live_file();
// False when a cut lost mapped samples beside heap samples it left: the
// report then has no mapped series (its mapped figures are exact all the
// same).
bool mapped_series_kept();

// --- exit_report.cpp -------------------------------------------------------

// The exact figures, the last sample and the report, once
// (g_process.finished), when the library's destructor runs.
void write_report_at_exit();
// _exit/_Exit (exit_override.cpp): the same report, unless this is a vfork
// child, which shares its parent's memory and must change nothing.
void write_report_at_early_exit();

}  // namespace heapline::accounting
#pragma GCC visibility pop
