// fork: the child starts its own heap line (and its own live file) from the
// heap it inherited. Each part of the state starts again in the file that
// keeps it (slow_paths.h's restart_*_at_fork); this one says in which order.
#include <unistd.h>

#include "exact_shadow.h"
#include "heap_sampler.h"
#include "mapped_memory.h"
#include "os.h"
#include "process.h"
#include "published.h"
#include "sampling.h"
#include "slow_paths.h"
#include "thread_registry.h"

namespace heapline::accounting {

void adopt_copy() {
  // Not set up yet (the init in progress on another thread, or a copy of
  // a process whose init never ran): nothing to adopt.
  if (g_process.init_state.load(std::memory_order_acquire) != kDone) return;
  if (g_identity.pid.load(std::memory_order_relaxed) != 0) return;
  // As in the fork handler, no handler of this process may run in the
  // middle (its allocation would adopt again).
  const os::SignalMask mask = os::block_signals();
  after_fork_in_child();
  os::restore_signals(mask);
}

void after_fork_in_child() {
  // An allocation in an earlier fork handler (another library's) may have
  // found the copy and adopted it already (adopt_copy).
  const int pid = os::pid();
  if (g_identity.pid.load(std::memory_order_relaxed) == pid) return;
  arm_identity(pid);  // first: a call from here on is this process's own
  // Only this thread exists now, but every block of every thread of the
  // parent is in this copy: the child's heap is the published figure plus
  // all pending deltas.
  const std::int64_t inherited = g_published.live.load(std::memory_order_relaxed) + restart_registry_at_fork();
  mapped::after_fork_in_child();
  restart_published_at_fork(inherited, mapped::live_bytes());
  // The budget starts again from the child's own peak, with this thread
  // alone in it (at threshold 1 until its share is granted below).
  restart_budget_at_fork();
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  restart_process_at_fork(pid, now);
  unlock_sampling();  // a parent thread may have held it
  sampler::after_fork_in_child();
  shadow::restart_at_fork();
  // What the child allocates itself decides whether its live file is due:
  // the floor is above the heap it inherited.
  open_live_file(now, inherited);
  // Only now: a grant states the precision in the live file, and until
  // open_live_file the mapping was the parent's.
  if (t_mode == kRegistered) t_own.start_over(grant_threshold());
}

}  // namespace heapline::accounting
