// The thread registry: a fixed array of slots, one per thread that
// allocates, claimed at the thread's first call and released (its pending
// delta published) by a pthread key destructor at its exit. A thread that
// finds the registry full, or that allocates after its exit flush,
// publishes every change instead.
#include <errno.h>
#include <pthread.h>

#include "process_state.h"

namespace heapline::accounting {

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
      note_max_threads(now_registered);  // the precision a reader of the live file sees
      return &slot;
    }
  }
  return nullptr;
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

// The first call of a thread registers it; calls of threads without a slot
// publish exactly. Out of line: publish() then saves no registers for it on
// its own path.
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

RegistryTotals registry_totals() {
  RegistryTotals totals{};
  for (unsigned kind = 0; kind < kCallKinds; ++kind) {
    totals.calls[kind] = g_process.folded_calls[kind].load(std::memory_order_relaxed);
  }
  totals.publishes = g_process.folded_publishes.load(std::memory_order_relaxed);
  const std::uint32_t used = g_process.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    const Slot& slot = g_slots[i];
    if (slot.in_use.load(std::memory_order_acquire) == 0) continue;
    totals.pending += slot.pending_bytes();
    totals.publishes += slot.publishes.load(std::memory_order_relaxed);
    for (unsigned kind = 0; kind < kCallKinds; ++kind) {
      totals.calls[kind] += slot.calls[kind].load(std::memory_order_relaxed);
    }
  }
  return totals;
}

}  // namespace heapline::accounting
