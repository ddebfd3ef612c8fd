// fork: the child starts its own heap line (and its own live file) from the
// heap it inherited.
#include <unistd.h>

#include "exact_shadow.h"
#include "heap_sampler.h"
#include "live_header.h"
#include "mapped_memory.h"
#include "os.h"
#include "precision_budget.h"
#include "process.h"
#include "published.h"
#include "sampling.h"
#include "thread_registry.h"

namespace heapline::accounting {

void after_fork_in_child() {
  // An allocation in an earlier fork handler (another library's) may have
  // found the copy and adopted it already (adopt_copy).
  const int pid = os::pid();
  if (g_identity.pid.load(std::memory_order_relaxed) == pid) return;
  arm_identity(pid);  // first: a call from here on is this process's own
  // Only this thread exists now, but every block of every thread of the
  // parent is in this copy: the child's heap is the published figure plus
  // all pending deltas.
  // (The other threads' slots are the copies of their TLS, still mapped
  // here: read once, then dropped from the registry.)
  g_registry_readers.store(0, std::memory_order_relaxed);  // a parent thread may have been reading
  std::int64_t inherited = g_published.live.load(std::memory_order_relaxed);
  for (RegistryEntry& entry : g_registry) {
    Slot* slot = entry.slot.load(std::memory_order_relaxed);
    if (slot == nullptr) continue;
    inherited += slot->pending_bytes();
    if (slot != &t_own) entry.slot.store(nullptr, std::memory_order_relaxed);
  }
  const bool registered_here = t_mode == kRegistered;
  if (registered_here) t_own.start_over(1);  // nothing pending (it is in `inherited`); its share granted below
  t_own.publishes.store(0, std::memory_order_relaxed);
  for (auto& calls : t_own.calls) calls.store(0, std::memory_order_relaxed);
  std::uint32_t registered = registered_here ? 1 : 0;
  g_threads.registered.store(registered, std::memory_order_relaxed);
  g_threads.max_registered.store(registered, std::memory_order_relaxed);
  for (auto& calls : g_threads.folded_calls) calls.store(0, std::memory_order_relaxed);
  g_threads.folded_publishes.store(0, std::memory_order_relaxed);
  g_published.live.store(inherited, std::memory_order_relaxed);
  g_published.peak.store(inherited, std::memory_order_relaxed);
  g_published.phase_peak.store(inherited, std::memory_order_relaxed);
  g_published.peak_time_ns.store(0, std::memory_order_relaxed);
  g_published.interval_max.store(INT64_MIN, std::memory_order_relaxed);  // the parent's interval is not the child's
  mapped::after_fork_in_child();
  g_published.total_peak.store(inherited + mapped::live_bytes(), std::memory_order_relaxed);
  g_published.phase_total_peak.store(inherited + mapped::live_bytes(), std::memory_order_relaxed);
  g_published.total_peak_time_ns.store(0, std::memory_order_relaxed);
  // The budget starts again from the child's own peak, with this thread
  // alone in it (at threshold 1 until its share is granted below): the
  // parent's threads' shares went with them.
  g_published.reserved.store(0, std::memory_order_relaxed);
  g_budget.bound.store(0, std::memory_order_relaxed);
  g_budget.bytes.store(0, std::memory_order_relaxed);
  g_budget.divider.store(kMinDivider, std::memory_order_relaxed);
  g_budget.max_threshold.store(1, std::memory_order_relaxed);
  refresh_policy();
  // A new memory: membarrier(2) registered again (shares lent by the parent
  // went with its threads), and the revocation lock the fork held released.
  enable_revocation();
  unlock_revocation_after_fork();
  std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  g_process.start_mono_ns.store(now, std::memory_order_relaxed);
  g_process.start_unix_ns = clock_ns(CLOCK_REALTIME);
  g_process.fork_child = true;
  g_process.pid = pid;
  decide_followed(false);
  g_process.finished.store(false, std::memory_order_relaxed);
  unlock_sampling();  // a parent thread may have held it
  sampler::after_fork_in_child();
  shadow::restart_at_fork();
  // What the child allocates itself decides whether its live file is due:
  // the floor is above the heap it inherited.
  open_live_file(now, inherited);
  // Only now: a grant states the precision in the live file, and until
  // open_live_file the mapping was the parent's.
  if (registered_here) t_own.start_over(grant_threshold());
}

}  // namespace heapline::accounting
