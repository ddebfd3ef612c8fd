// The precision budget's slow paths: the policy a publish compares with,
// and each thread's threshold within the budget, granted at registration,
// moved toward its target at its publishes, released at its exit, revoked
// when a publish needs the room. The rules are threshold_policy.h's pure
// functions; the contract they keep is at the top of precision_budget.h.
//
// Only `live` and `reserved`, changed together, carry the guarantee: a
// raise of either is made only within reserve_limit. The divider, the
// targets and the budget's growth only steer where thresholds go; a stale
// or racing value of any of them can cost publishes, never the bound.
#include "atomic_max.h"
#include "live_region.h"
#include "os.h"
#include "precision_budget.h"
#include "process.h"
#include "published.h"
#include "slow_paths.h"
#include "thread_registry.h"

namespace heapline::accounting {

constinit Budget g_budget;
constinit Policy g_policy;

namespace {

// Set while this thread revokes: a signal handler of its own that needs
// room then publishes without (the revoker cannot wait for itself).
__thread bool t_revoking __attribute__((tls_model("initial-exec"))) = false;

bool lends_headroom() { return g_budget.lends_headroom.load(std::memory_order_relaxed); }

std::int64_t budget_bytes() { return g_budget.bytes.load(std::memory_order_relaxed); }

std::int64_t published_peak() { return g_published.peak.load(std::memory_order_relaxed); }

// B and the headroom below the peak (the one it is lent below:
// lending_peak_after) after a publish that left `live`.
std::uint64_t pooled_for(std::int64_t live, std::int64_t peak) {
  return pooled_bytes(live, peak, budget_bytes(), lends_headroom());
}

// The target of a thread whose publish left `live`.
std::int64_t target_for(std::int64_t live) {
  return static_cast<std::int64_t>(
      target_threshold(pooled_for(live, lending_peak_after(live).peak), g_budget.divider.load(std::memory_order_relaxed)));
}

// The live file states the precision as it grows: a reader of a killed
// process's file has it too.
void state_precision() {
  LiveHeader& h = g_region->header;
  raise_to(h.bound_bytes, static_cast<std::uint64_t>(g_budget.bound.load(std::memory_order_relaxed)));
  raise_to(h.max_threshold_bytes, static_cast<std::uint64_t>(g_budget.max_threshold.load(std::memory_order_relaxed)));
}

// `reserved` += the step from `from` to a higher threshold, as far toward
// `target` as the budget allows (reserve_limit, with `live` as it is when
// the step is made). Returns the threshold reserved for (`from` when there
// is no room).
std::int64_t reserve_raise(std::int64_t from, std::int64_t target) {
  LiveAndReserved seen = read_live_and_reserved();
  for (;;) {
    const LendingPeak lent = lending_peak_after(seen.live);
    const std::int64_t peak = lent.peak;
    const std::int64_t limit = reserve_limit(seen.live, peak, budget_bytes(), lends_headroom());
    const std::int64_t raised = static_cast<std::int64_t>(
        threshold_step(static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(target),
                       seen.reserved > 0 ? static_cast<std::uint64_t>(seen.reserved) : 0,
                       limit > 0 ? static_cast<std::uint64_t>(limit) : 0));
    if (raised <= from) return from;
    const std::int64_t reserved = seen.reserved + (raised - from);
    if (change_live_and_reserved(seen, {seen.live, reserved})) {
      raise_to(g_budget.max_threshold, raised);
      note_exposure(exposure(seen.live, reserved, lent.exposed));
      state_precision();
      if (mapped_grew_since(lent)) [[unlikely]] keep_room_for_mapping();
      return raised;
    }
  }
}

// The budget is too full for this thread's target: the threads above the
// target are asked to step down (Slot::ask_to_step_down), so that the next
// free of each gives back its excess. Threads whose thresholds were granted
// when there were fewer of them, or further below the peak, and which
// publish rarely at them, would otherwise keep what newcomers need for as
// long as they run. At most once per kRoomRequestGapNs in the whole
// process: one pass over the registry serves every thread short of its
// share.
constexpr std::uint64_t kRoomRequestGapNs = 1'000'000;

void ask_for_room(std::int64_t target) {
  const std::uint64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
  std::uint64_t due = g_budget.next_room_request_ns.load(std::memory_order_relaxed);
  if (now < due ||
      !g_budget.next_room_request_ns.compare_exchange_strong(due, now + kRoomRequestGapNs, std::memory_order_relaxed)) {
    return;
  }
  RegistryReader reading;
  const std::uint32_t used = g_threads.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    Slot* slot = g_registry[i].slot.load(std::memory_order_seq_cst);
    if (slot != nullptr && slot != &t_own) slot->ask_to_step_down(target);
  }
}

struct PolicyInputs {
  std::uint64_t divider;
  std::int64_t peak;
  std::uint32_t registered;
  bool operator==(const PolicyInputs&) const = default;
};

PolicyInputs policy_inputs() {
  return {g_budget.divider.load(std::memory_order_relaxed), published_peak(),
          g_threads.registered.load(std::memory_order_relaxed)};
}

// What one revocation adopted: the pending bytes it publishes for their
// owners, and their shares, released in the same step.
struct Adopted {
  std::int64_t pending = 0;
  std::int64_t shares = 0;
};

// A barrier on every running thread of the process; false when the kernel
// refuses it (from then on no share is lent: what is lent comes back at the
// owners' own publishes).
bool barrier_or_stop_lending() {
  if (os::membarrier_private_expedited()) return true;
  g_budget.lends_headroom.store(false, std::memory_order_relaxed);
  return false;
}

// Rounds of barrier, look, offset placed again: an offset is erased only by
// an unlocked change of its owner's that was in flight, so one more round
// almost always ends it. After the last round a slot whose owner was inside
// a change keeps its offset and settles it at its owner's next call (its
// share released by the owner); one whose offset was erased again is
// unmarked (no offset is left to settle, and a later revocation may mark it
// again), its share still reserved.
constexpr int kRevocationRounds = 4;

// Revokes the shares of every registered thread but the caller (which
// holds the revocation lock).
Adopted revoke_others() {
  RegistryReader reading;
  const std::uint32_t used = g_threads.slots_used.load(std::memory_order_acquire);
  auto slot_at = [](std::uint32_t i) { return g_registry[i].slot.load(std::memory_order_seq_cst); };
  bool placed = false;
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    Slot* slot = slot_at(i);
    if (slot == nullptr || slot == &t_own || __atomic_load_n(&slot->held, __ATOMIC_RELAXED) <= 1) continue;
    if (!slot->counting()) continue;
    if (slot->mark_revoking()) {
      slot->place_revocation_offset();
      placed = true;
    } else if (revocation_of(slot->control.load(std::memory_order_seq_cst)) == kRevoking) {
      // Left marked, its offset in place, by an earlier revocation that
      // found its owner inside a change: adoptable now that the change may
      // have ended. (Looked at only when something was newly marked, such a
      // slot kept its share until its owner's next call, for ever if the
      // owner had nothing more to allocate.)
      placed = true;
    }
  }
  Adopted adopted;
  for (int round = 0; placed && round < kRevocationRounds; ++round) {
    if (!barrier_or_stop_lending()) break;
    placed = false;
    for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
      Slot* slot = slot_at(i);
      if (slot == nullptr || slot == &t_own) continue;
      // The headroom before the mark: the owner marks the slot taken
      // before it takes the offset out, so an offset gone while the mark
      // stays was erased, never settled.
      const std::int64_t headroom = slot->headroom.load(std::memory_order_seq_cst);
      std::uint64_t control = slot->control.load(std::memory_order_seq_cst);
      if (revocation_of(control) != kRevoking) continue;
      if (headroom <= kIdleHeadroom / 2) {
        // Handed over (its thread exited): its owner released the share.
        slot->control.compare_exchange_strong(control, with_revocation(control, kNotRevoked), std::memory_order_seq_cst);
        continue;
      }
      std::int64_t pending = 0;
      std::int64_t share = 0;
      if (slot->adopt(&pending, &share)) {
        adopted.pending += pending;
        adopted.shares += share;
        g_budget.adoptions.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (slot->revocation_erased()) {
        // Looked at after a barrier: the erasing change has completed, and
        // nothing puts an offset back but this revoker.
        if (round + 1 == kRevocationRounds) {
          slot->unmark_revoking();
          continue;
        }
        slot->place_revocation_offset();
      }
      placed = true;  // erased, or the owner is inside a change: look again after a barrier
    }
  }
  return adopted;
}

// Waits for another thread's revocation to end; the lock is then this
// thread's. The holder runs with every signal but SIGBUS blocked (revoke_for_room) and
// waits for no other thread (its barriers are the kernel's), so the wait
// ends once the holder has run: a signal handler that stops its thread
// (a collector's stop-the-world) cannot stop it inside a revocation.
void lock_revocation() {
  for (;;) {
    bool expected = false;
    if (g_budget.revoking.compare_exchange_strong(expected, true, std::memory_order_acquire)) return;
    os::yield();
  }
}

void unlock_revocation() { g_budget.revoking.store(false, std::memory_order_release); }

}  // namespace

void refresh_policy() {
  const Precision& precision = g_process.config.precision;
  // Racing refreshes may store in any order: each one checks after its own
  // stores that its inputs are still the latest, so the last to store
  // leaves the policy of the newest inputs.
  PolicyInputs inputs = policy_inputs();
  for (;;) {
    raise_to(g_budget.bytes, static_cast<std::int64_t>(budget_for_peak(inputs.peak, precision)));
    const std::uint64_t budget = static_cast<std::uint64_t>(budget_bytes());
    const std::uint64_t share = fair_share(budget, inputs.divider);
    g_policy.grow_at.store(peak_for_next_share(share, inputs.divider, precision), std::memory_order_relaxed);
    g_policy.free_window.store(static_cast<std::int64_t>(free_window_cap(budget, inputs.registered)),
                               std::memory_order_relaxed);
    const PolicyInputs now = policy_inputs();
    if (now == inputs) return;
    inputs = now;
  }
}

void follow_thread_count(std::uint32_t registered) {
  std::uint64_t divider = g_budget.divider.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint64_t next = divider_for_count(divider, registered);
    if (next == divider || g_budget.divider.compare_exchange_weak(divider, next, std::memory_order_relaxed)) break;
  }
  // The free windows follow the count itself.
  refresh_policy();
}

void enable_revocation() {
  const bool possible = !g_process.config.precision.exact && os::register_membarrier_private_expedited();
  g_budget.lends_headroom.store(possible, std::memory_order_relaxed);
}

std::int64_t grant_threshold() {
  const std::int64_t target = target_for(g_published.live.load(std::memory_order_relaxed));
  const std::int64_t threshold = reserve_raise(1, target);
  if (threshold < target) ask_for_room(target);
  return threshold;
}

void move_threshold(std::int64_t live) {
  // A raise reserved before it is held, a share released after it is no
  // longer held: a window of the thread's own bytes, signals blocked.
  const OwnBytesWindow window;
  // One change from the read of the threshold to its new value: nothing
  // else moves this slot's threshold meanwhile, and no revoker adopts its
  // bytes (precision_budget.h).
  t_own.begin_change();
  if (t_own.revoked()) {
    const std::int64_t share = t_own.settle_revocation();
    t_own.end_change();
    release_share(share);
    return;
  }
  const std::int64_t current = t_own.held;
  const std::int64_t peak = lending_peak_after(live).peak;
  const std::uint64_t pooled = pooled_for(live, peak);
  const std::uint64_t divider = g_budget.divider.load(std::memory_order_relaxed);
  const std::int64_t target = static_cast<std::int64_t>(target_threshold(pooled, divider));
  const std::int64_t moved = target < current ? target : reserve_raise(current, target);
  // Also when it stays where it is: the span comes back after a request to
  // step down, the free window follows F(B).
  t_own.set_threshold(moved);
  KeepRange keep = keep_range(static_cast<std::uint64_t>(moved), divider);
  // Short of its target: asks again once B + headroom has grown by an
  // eighth, not at every publish (others' shares come back at their own
  // publishes, hastened by the request below).
  if (moved < target && keep.to > pooled + pooled / 8) keep.to = pooled + pooled / 8;
  const LiveRange live_range = keep_live_range(keep, peak, budget_bytes(), lends_headroom());
  t_own.keep_from = live_range.from;
  t_own.keep_to = live_range.to;
  t_own.kept_under = g_policy.free_window.load(std::memory_order_relaxed);
  t_own.end_change();
  if (moved < current) release_share(current - moved);  // after the slot stopped holding it
  if (moved < target) ask_for_room(target);
}

void release_share(std::int64_t bytes) {
  if (bytes > 0) g_published.reserved.fetch_sub(bytes, std::memory_order_seq_cst);
}

void note_exposure(std::int64_t exposure) {
  if (exposure > g_budget.bound.load(std::memory_order_relaxed) && raise_to(g_budget.bound, exposure) < exposure) {
    state_precision();
  }
}

bool growth_fits(std::int64_t delta) {
  const LiveAndReserved seen = read_live_and_reserved();
  const std::int64_t next = seen.live + delta;
  return seen.reserved <= reserve_limit(next, lending_peak_after(next).peak, budget_bytes(), lends_headroom());
}

bool revoke_for_room() {
  if (t_revoking || !lends_headroom()) return false;
  // No signal handler runs in this thread until the revocation is over:
  // the slots it adopted are published before anyone else can wait on them.
  const os::SignalMask mask = os::block_signals();
  lock_revocation();
  t_revoking = true;
  g_budget.revocations.fetch_add(1, std::memory_order_relaxed);
  const Adopted adopted = revoke_others();
  // The adopted bytes into `live` and their shares out of `reserved` in one
  // step: it lowers the exposure (each share covered its bytes).
  if (adopted.pending != 0 || adopted.shares != 0) publish_covered(adopted.pending, adopted.shares);
  t_revoking = false;
  unlock_revocation();
  os::restore_signals(mask);
  return true;
}

void lock_revocation_for_fork() {
  // The forking thread may be the revoker itself (a signal handler that
  // forks): then it holds the lock already.
  if (t_revoking) return;
  lock_revocation();
}

void unlock_revocation_after_fork() {
  if (!t_revoking) unlock_revocation();
}

void restart_budget_at_fork() {
  g_budget.bound.store(0, std::memory_order_relaxed);
  g_budget.bytes.store(0, std::memory_order_relaxed);
  g_budget.divider.store(kMinDivider, std::memory_order_relaxed);
  g_budget.max_threshold.store(1, std::memory_order_relaxed);
  refresh_policy();
  // A new memory: membarrier(2) registered again (shares lent by the parent
  // went with its threads), and the revocation lock the fork held released.
  enable_revocation();
  unlock_revocation_after_fork();
}

}  // namespace heapline::accounting
