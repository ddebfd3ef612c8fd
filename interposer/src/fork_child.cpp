// fork: the child starts its own heap line (and its own live file) from the
// heap it inherited.
#include <unistd.h>

#include "mapped_memory.h"
#include "process_state.h"

namespace heapline::accounting {

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
  g_published.phase_total_peak.store(inherited + mapped::live_bytes(), std::memory_order_relaxed);
  g_published.total_peak_time_ns.store(0, std::memory_order_relaxed);
  std::int64_t threshold = policy_threshold(inherited);
  g_policy.threshold.store(threshold, std::memory_order_relaxed);
  g_process.max_threshold.store(threshold, std::memory_order_relaxed);
  if (t_slot != &g_no_slot) t_slot->set_threshold(threshold);
  std::uint64_t now = clock_ns(CLOCK_MONOTONIC);
  g_process.start_mono_ns.store(now, std::memory_order_relaxed);
  g_process.start_unix_ns = clock_ns(CLOCK_REALTIME);
  g_process.fork_child = true;
  g_process.pid = getpid();
  decide_followed(false);
  g_process.finished.store(false, std::memory_order_relaxed);
  g_sampling.busy.store(false, std::memory_order_relaxed);  // a parent thread may have held it
  open_live_file();
  // What the child allocates itself decides whether its live file is due.
  if (g_process.live_file_floor != INT64_MAX) g_process.live_file_floor = inherited + kLiveFileFloor;
  reset_timelines(g_process.config.interval_ns);
  take_sample(now, inherited);
}

}  // namespace heapline::accounting
