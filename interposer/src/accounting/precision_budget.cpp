// The precision budget's slow paths: the policy a publish compares with,
// and each thread's threshold within the budget, granted at registration,
// moved toward the fair share at its publishes, released at its exit. The
// rules are threshold_policy.h's pure functions; the contract they keep is
// at the top of precision_budget.h.
//
// Only `reserved` carries the guarantee: it grows by a compare-and-swap
// that keeps it within the budget before a threshold rises, and falls after
// a threshold has fallen. The divider, the fair share and the budget's
// growth only steer where thresholds go; a stale or racing value of any of
// them can cost publishes, never the bound.
#include "atomic_max.h"
#include "live_header.h"
#include "precision_budget.h"
#include "process.h"
#include "published.h"
#include "thread_registry.h"

namespace heapline::accounting {

constinit Budget g_budget;
constinit Policy g_policy;

namespace {

std::int64_t fair_share_now() { return static_cast<std::int64_t>((g_policy.span.load(std::memory_order_relaxed) + 1) >> 1); }

// The live file states the precision as it grows: a reader of a killed
// process's file has it too.
void state_precision() {
  LiveHeader& h = g_region->header;
  raise_to(h.bound_bytes, static_cast<std::uint64_t>(g_budget.max_reserved.load(std::memory_order_relaxed)));
  raise_to(h.max_threshold_bytes, static_cast<std::uint64_t>(g_budget.max_threshold.load(std::memory_order_relaxed)));
}

// `reserved` += the step from `from` to a higher threshold, as far toward
// the fair share as the budget allows. Returns the threshold reserved for
// (`from` when there is no room).
std::int64_t reserve_raise(std::int64_t from) {
  const std::uint64_t share = static_cast<std::uint64_t>(fair_share_now());
  std::int64_t reserved = g_budget.reserved.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint64_t budget = static_cast<std::uint64_t>(g_budget.bytes.load(std::memory_order_relaxed));
    const std::int64_t target = static_cast<std::int64_t>(threshold_step(
        static_cast<std::uint64_t>(from), share, reserved > 0 ? static_cast<std::uint64_t>(reserved) : 0, budget));
    if (target <= from) return from;
    const std::int64_t raised = reserved + (target - from);
    if (g_budget.reserved.compare_exchange_weak(reserved, raised, std::memory_order_relaxed)) {
      raise_to(g_budget.max_reserved, raised);
      raise_to(g_budget.max_threshold, target);
      state_precision();
      return target;
    }
  }
}

void release(std::int64_t bytes) {
  if (bytes > 0) g_budget.reserved.fetch_sub(bytes, std::memory_order_relaxed);
}

// The budget is too full for this thread's fair share: the threads above
// the fair share are asked to step down (Slot::ask_to_step_down), so that
// the next free of each gives back its excess. Threads whose thresholds
// were granted when there were fewer of them, and which publish rarely at
// them, would otherwise keep what newcomers need for as long as they run.
// At most once per kRoomRequestGapNs in the whole process: one pass over
// the registry serves every thread short of its share.
constexpr std::uint64_t kRoomRequestGapNs = 1'000'000;

void ask_for_room(std::int64_t share) {
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
  std::uint64_t due = g_budget.next_room_request_ns.load(std::memory_order_relaxed);
  if (now < due ||
      !g_budget.next_room_request_ns.compare_exchange_strong(due, now + kRoomRequestGapNs, std::memory_order_relaxed)) {
    return;
  }
  const std::uint64_t fair_span = static_cast<std::uint64_t>(2 * share - 1);
  RegistryReader reading;
  const std::uint32_t used = g_threads.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    Slot* slot = g_registry[i].slot.load(std::memory_order_seq_cst);
    if (slot != nullptr && slot != &t_own) slot->ask_to_step_down(fair_span);
  }
}

struct PolicyInputs {
  std::uint64_t divider;
  std::int64_t peak;
  bool operator==(const PolicyInputs&) const = default;
};

PolicyInputs policy_inputs() {
  return {g_budget.divider.load(std::memory_order_relaxed), g_published.peak.load(std::memory_order_relaxed)};
}

}  // namespace

void refresh_policy() {
  const Precision& precision = g_process.config.precision;
  // Racing refreshes may store in any order: each one checks after its own
  // stores that its inputs are still the latest, so the last to store
  // leaves the policy of the newest inputs.
  PolicyInputs inputs = policy_inputs();
  for (;;) {
    raise_to(g_budget.bytes, static_cast<std::int64_t>(budget_for_peak(inputs.peak, precision)));
    const std::uint64_t budget = static_cast<std::uint64_t>(g_budget.bytes.load(std::memory_order_relaxed));
    const std::uint64_t share = fair_share(budget, inputs.divider);
    g_policy.grow_at.store(peak_for_next_share(share, inputs.divider, precision), std::memory_order_relaxed);
    g_policy.span.store(2 * share - 1, std::memory_order_relaxed);
    const PolicyInputs now = policy_inputs();
    if (now == inputs) return;
    inputs = now;
  }
}

void follow_thread_count(std::uint32_t registered) {
  std::uint64_t divider = g_budget.divider.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint64_t next = divider_for_count(divider, registered);
    if (next == divider) return;
    if (g_budget.divider.compare_exchange_weak(divider, next, std::memory_order_relaxed)) break;
  }
  refresh_policy();
}

std::int64_t grant_threshold() {
  const std::int64_t threshold = reserve_raise(1);
  if (const std::int64_t share = fair_share_now(); threshold < share) ask_for_room(share);
  return threshold;
}

void move_threshold() {
  // One change from the read of the threshold to its new value: a signal
  // handler in between leaves its bytes pending (publish()), so nothing
  // else moves this slot's threshold meanwhile.
  t_own.begin_change();
  const std::int64_t current = t_own.held;
  const std::int64_t share = fair_share_now();
  if (share < current) {
    t_own.set_threshold(share);
    t_own.end_change();
    release(current - share);  // after the slot stopped holding it
    return;
  }
  // Also when it stays where it is: the span comes back after a request to
  // step down.
  const std::int64_t target = reserve_raise(current);
  t_own.set_threshold(target);
  t_own.end_change();
  if (target < share) ask_for_room(share);
}

void release_threshold(std::int64_t threshold) {
  release(static_cast<std::int64_t>(share_of(static_cast<std::uint64_t>(threshold))));
}

}  // namespace heapline::accounting
