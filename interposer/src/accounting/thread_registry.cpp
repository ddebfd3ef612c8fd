// The thread registry: a fixed array of entries, one per thread that
// allocates, each pointing to that thread's slot (t_own, in its TLS);
// claimed at the thread's first call and released (its pending delta
// published) by a pthread key destructor at its exit. A thread that finds
// the registry full, or that allocates after its exit flush, publishes every
// change instead.
//
// A thread's TLS is freed after its exit: the readers of other threads'
// slots (exact_live, registry_totals) announce themselves in
// g_registry_readers, and a thread that releases its entry waits until no
// reader that could have seen it is left (seq_cst on both sides: either the
// reader sees the entry gone, or the exiting thread sees the reader).
#include <errno.h>
#include <pthread.h>

#include "atomic_max.h"
#include "exact_shadow.h"
#include "os.h"
#include "process.h"
#include "published.h"
#include "slow_paths.h"
#include "thread_registry.h"

namespace heapline::accounting {

constinit RegistryEntry g_registry[kSlotCount];
constinit std::atomic<std::int32_t> g_registry_readers{0};
constinit Threads g_threads;
__thread Slot t_own __attribute__((tls_model("initial-exec")));
__thread unsigned char t_mode __attribute__((tls_model("initial-exec"))) = kUnregistered;

namespace {

RegistryEntry* claim_entry() {
  // Threads usually exit in creation order, so the scan starts after the
  // last claim: short-lived threads find a free entry at once.
  static std::atomic<std::size_t> hint{0};
  std::size_t start = hint.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kSlotCount; ++i) {
    std::size_t index = (start + i) % kSlotCount;
    RegistryEntry& entry = g_registry[index];
    Slot* free_mark = nullptr;
    if (entry.slot.load(std::memory_order_relaxed) == nullptr &&
        entry.slot.compare_exchange_strong(free_mark, &t_own, std::memory_order_acq_rel)) {
      hint.store(index + 1, std::memory_order_relaxed);
      raise_to(g_threads.slots_used, static_cast<std::uint32_t>(index + 1), std::memory_order_release);
      const std::uint32_t now_registered = g_threads.registered.fetch_add(1, std::memory_order_relaxed) + 1;
      raise_to(g_threads.max_registered, now_registered);
      note_max_threads(now_registered);  // the precision a reader of the live file sees
      follow_thread_count(now_registered);  // the fair share for this many threads
      return &entry;
    }
  }
  return nullptr;
}

// Releases `entry` and returns once no reader can still be reading the
// slot it pointed to.
void release_entry(RegistryEntry& entry) {
  entry.slot.store(nullptr, std::memory_order_seq_cst);
  while (g_registry_readers.load(std::memory_order_seq_cst) > 0) os::yield();
}

}  // namespace

// pthread key destructor: runs at the exit of every thread that registered.
void flush_exiting_thread(void* value) {
  adopt_if_copy();  // before the slot is read: a copy's adoption folds it
  RegistryEntry* entry = static_cast<RegistryEntry*>(value);
  if (entry == nullptr || t_mode != kRegistered || entry->slot.load(std::memory_order_relaxed) != &t_own) return;
  int saved_errno = errno;
  // Any call after this point (later key destructors, libc's own thread
  // teardown) publishes exactly: span 0 and kExited.
  t_mode = kExited;
  std::int64_t pending = 0;
  {
    // The share no longer held and not yet released: a window of its own
    // bytes.
    const OwnBytesWindow window;
    std::int64_t share_left = 0;
    pending = t_own.start_over(0, nullptr, &share_left);
    // After the slot stopped holding anything back (what a revoker did not
    // take back already).
    release_share(share_left);
  }
  std::uint64_t publishes = t_own.publishes.load(std::memory_order_relaxed) + (pending != 0 ? 1 : 0);
  if (pending != 0) publish_value(pending);
  // Folded before the entry goes, so that a reader never misses them (it
  // may count them twice for a moment).
  for (unsigned kind = 0; kind < kCallKinds; ++kind) {
    g_threads.folded_calls[kind].fetch_add(t_own.calls[kind].load(std::memory_order_relaxed),
                                           std::memory_order_relaxed);
  }
  g_threads.folded_publishes.fetch_add(publishes, std::memory_order_relaxed);
  release_entry(*entry);
  for (auto& calls : t_own.calls) calls.store(0, std::memory_order_relaxed);
  t_own.publishes.store(0, std::memory_order_relaxed);
  follow_thread_count(g_threads.registered.fetch_sub(1, std::memory_order_relaxed) - 1);
  errno = saved_errno;
}

// The first call of a thread registers it; calls of threads without a place
// in the registry publish exactly. Out of line: publish() then saves no
// registers for it on its own path.
[[gnu::noinline]] void unregistered_change(std::int64_t bytes, CallKind kind) {
  // The hot path counted this call in t_own already, and each way out below
  // counts it again: record() into the new slot, publish_exactly() into the
  // folded counts. One count goes back first, or a thread's first call (and
  // any call made while it had no slot, which its slot shows once it has
  // one) would count twice.
  uncount_call(t_own.calls[kind]);
  shadow::count(-bytes);  // likewise its bytes
  if (t_mode == kUnregistered) {
    adopt_if_copy();  // a new thread of a copy states its share in the copy's live file
    t_mode = kRegistering;
    if (ensure_process_init()) {
      RegistryEntry* entry = claim_entry();
      if (entry != nullptr) {
        // Without its destructor the entry would outlive the thread's TLS:
        // a thread whose key cannot be set stays out of the registry.
        // pthread_setspecific may allocate for a key beyond its first block:
        // those nested calls publish exactly (span 0, kRegistering).
        int saved_errno = errno;
        const bool keyed = pthread_setspecific(g_process.exit_key, entry) == 0;
        errno = saved_errno;
        if (keyed) {
          // Its share reserved first, then held (from span 0: no signal
          // handler of this thread can have changed it, its calls publish
          // exactly while it registers); reserved and not yet held, a
          // window of its own bytes.
          {
            const OwnBytesWindow window;
            t_own.start_over(grant_threshold());
          }
          t_mode = kRegistered;
          record(bytes, kind);
          return;
        }
        release_entry(*entry);
        follow_thread_count(g_threads.registered.fetch_sub(1, std::memory_order_relaxed) - 1);
      }
      t_mode = kNoSlot;  // graceful degradation: exact for this thread
    } else {
      t_mode = kUnregistered;  // another thread is initialising; retry on the next call
    }
  }
  shadow::count(bytes);
  publish_exactly(bytes, kind);
}

// Published live plus every registered thread's pending delta, the caller's
// included. Exact when other threads are not allocating at this moment; a
// concurrent publish can move bytes between the two parts while they are read.
std::int64_t exact_live() {
  RegistryReader reading;
  std::int64_t live = g_published.live.load(std::memory_order_acquire);
  const std::uint32_t used = g_threads.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    if (const Slot* slot = g_registry[i].slot.load(std::memory_order_seq_cst)) live += slot->pending_bytes();
  }
  return live;
}

RegistryTotals registry_totals() {
  RegistryReader reading;
  RegistryTotals totals{};
  for (unsigned kind = 0; kind < kCallKinds; ++kind) {
    totals.calls[kind] = g_threads.folded_calls[kind].load(std::memory_order_relaxed);
  }
  totals.publishes = g_threads.folded_publishes.load(std::memory_order_relaxed);
  const std::uint32_t used = g_threads.slots_used.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < used && i < kSlotCount; ++i) {
    const Slot* slot = g_registry[i].slot.load(std::memory_order_seq_cst);
    if (slot == nullptr) continue;
    totals.pending += slot->pending_bytes();
    totals.publishes += slot->publishes.load(std::memory_order_relaxed);
    for (unsigned kind = 0; kind < kCallKinds; ++kind) {
      totals.calls[kind] += slot->calls[kind].load(std::memory_order_relaxed);
    }
  }
  return totals;
}

std::int64_t restart_registry_at_fork() {
  g_registry_readers.store(0, std::memory_order_relaxed);  // a parent thread may have been reading
  std::int64_t pending = 0;
  for (RegistryEntry& entry : g_registry) {
    Slot* slot = entry.slot.load(std::memory_order_relaxed);
    if (slot == nullptr) continue;
    pending += slot->pending_bytes();
    if (slot != &t_own) entry.slot.store(nullptr, std::memory_order_relaxed);
  }
  const bool registered_here = t_mode == kRegistered;
  if (registered_here) t_own.start_over(1);  // nothing pending (it is in the sum); its share granted later
  t_own.publishes.store(0, std::memory_order_relaxed);
  for (auto& calls : t_own.calls) calls.store(0, std::memory_order_relaxed);
  const std::uint32_t registered = registered_here ? 1 : 0;
  g_threads.registered.store(registered, std::memory_order_relaxed);
  g_threads.max_registered.store(registered, std::memory_order_relaxed);
  for (auto& calls : g_threads.folded_calls) calls.store(0, std::memory_order_relaxed);
  g_threads.folded_publishes.store(0, std::memory_order_relaxed);
  return pending;
}

}  // namespace heapline::accounting
