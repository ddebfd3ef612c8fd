// The accounting hot path: what every allocation call pays in libheapline.so.
//
// Each thread owns a registry slot (a cache line of static memory) holding
// its pending delta: the bytes it allocated minus the bytes it freed since it
// last published. A call adds its block size to that delta with one
// instruction; only when |delta| reaches the threshold does the thread publish
// (sampling.cpp: one atomic add to the live counter, peak update, maybe a
// timeline sample). Everything that is not this add-and-compare lives out of
// line (sampling.cpp), so the inlined part stays a handful of instructions.
//
// The threshold is max(min_bytes, live / divisor) rounded down to a power of
// two (threshold_policy.h), kept in a read-mostly cache line; with
// HEAPLINE_PRECISION=exact it is 1, so every change publishes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "next_allocator.h"

namespace heapline::accounting {

enum CallKind : unsigned { kAllocCall = 0, kFreeCall = 1, kReallocCall = 2, kCallKinds = 3 };

// One thread's share of the accounting. Only its owner writes the pending
// bytes, `calls` and its copy of the threshold; other threads read them only
// to sum the exact figures at exit, at fork and for the API. 128-byte aligned
// so neighbouring slots never share a line or an adjacent-line prefetch pair.
//
// The threshold test |pending| >= threshold is one unsigned compare: the slot
// keeps biased = pending + bias, with bias = threshold - 1, and publishes when
// (uint64)biased >= span = 2 × threshold - 1. Since the threshold is a power
// of two, bias = span >> 1 and the pair (biased, span) says everything. The
// owner refreshes its threshold from the global policy each time it
// publishes; a stale copy is still a threshold that was in force, so the
// precision bound (built on the largest threshold ever used) holds.
//
// Signal safety. A signal handler that allocates runs the hot path on the
// same slot in the middle of its owner's. Every change to `biased` is
// therefore a single instruction: an unlocked `add` to memory for a call (a
// signal arrives between instructions, never inside one), the same for the
// slow path taking out what it publishes (it subtracts the value it read, so
// a handler's bytes meanwhile stay pending), and a cmpxchg16b when the
// threshold changes (biased and span move together). Whatever interleaving,
// published + pending is exact.
struct alignas(128) Slot {
  std::atomic<std::int64_t> biased{16 * 1024 - 1};  // with span: one aligned 16-byte pair
  std::uint64_t span = 2 * 16 * 1024 - 1;            // owner's plain reads: a memory operand
  std::atomic<std::uint64_t> calls[kCallKinds] = {};
  std::atomic<std::uint64_t> publishes{0};
  std::atomic<std::uint32_t> in_use{0};

  constexpr Slot() = default;
  constexpr Slot(std::int64_t biased_value, std::uint64_t span_value) : biased(biased_value), span(span_value) {}

  // The owner's pending bytes (or its signal handler's).
  std::int64_t own_pending() const {
    return biased.load(std::memory_order_relaxed) - static_cast<std::int64_t>(span >> 1);
  }
  // Another thread's view: the pair read until it is consistent (a threshold
  // change moves both).
  std::int64_t pending_bytes() const {
    for (;;) {
      const std::uint64_t before = __atomic_load_n(&span, __ATOMIC_ACQUIRE);
      const std::int64_t value = biased.load(std::memory_order_acquire);
      if (__atomic_load_n(&span, __ATOMIC_ACQUIRE) == before) return value - static_cast<std::int64_t>(before >> 1);
    }
  }
  // Nothing pending, threshold unchanged: for a slot no thread is using
  // (claimed, released, or a fork child's copy of another thread's).
  void clear_pending() { biased.store(static_cast<std::int64_t>(span >> 1), std::memory_order_relaxed); }
  // Nothing pending and `threshold`: before the slot is handed to its owner.
  void reset(std::int64_t threshold) {
    __atomic_store_n(&span, static_cast<std::uint64_t>(2 * threshold - 1), __ATOMIC_RELAXED);
    biased.store(threshold - 1, std::memory_order_relaxed);
  }
  // The owner's threshold change: the pending bytes kept.
  void set_threshold(std::int64_t threshold);
};
static_assert(offsetof(Slot, span) == offsetof(Slot, biased) + 8);

// The global threshold: computed at publish time, copied into slots.
struct alignas(128) Policy {
  std::atomic<std::int64_t> threshold{16 * 1024};
};

extern Policy g_policy;
// The slot of every thread that has none (not registered yet, registry full,
// exiting): its span of 0 sends every call to the slow path, so the hot path
// needs no null check. Its `pending` and `calls` are written by all such
// threads at once and mean nothing: the slow path publishes the call's own
// bytes and counts the call itself.
extern Slot g_no_slot;
// __thread rather than thread_local: a plain pointer needs no C++ TLS init
// wrapper, so each access is one %fs-relative load.
extern __thread Slot* t_slot __attribute__((tls_model("initial-exec")));

// Out of line: publishing (what `pending` holds), and for g_no_slot the
// first call of a thread (registration, lazy process init) or an exact
// publish of `bytes`, this call's change.
[[gnu::noinline]] void publish(Slot* slot, std::int64_t bytes, CallKind kind);

// `counter += value` as one instruction on x86-64 (an unlocked `add` to
// memory): not split by a signal, never torn for a reader, and one
// instruction instead of the load/add/store a relaxed atomic compiles to.
// Only the owner thread (and its signal handlers) may use it.
template <typename T>
inline void add_in_place(std::atomic<T>& counter, T value) {
#if defined(__x86_64__)
  asm volatile("add %1, %0" : "+m"(*reinterpret_cast<T*>(&counter)) : "er"(value));
#else
  counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
#endif
}

// `counter -= value`, the same way (a free needs no negation first).
template <typename T>
inline void subtract_in_place(std::atomic<T>& counter, T value) {
#if defined(__x86_64__)
  asm volatile("sub %1, %0" : "+m"(*reinterpret_cast<T*>(&counter)) : "er"(value));
#else
  counter.store(counter.load(std::memory_order_relaxed) - value, std::memory_order_relaxed);
#endif
}

inline void count_call(std::atomic<std::uint64_t>& counter) {
#if defined(__x86_64__)
  asm volatile("incq %0" : "+m"(*reinterpret_cast<std::uint64_t*>(&counter)));
#else
  add_in_place(counter, std::uint64_t{1});
#endif
}

// Moves `delta` out of the caller's pending bytes (to be published): one
// instruction, so a signal handler's change meanwhile is kept.
inline void take_pending(Slot& slot, std::int64_t delta) { subtract_in_place(slot.biased, delta); }

inline void Slot::set_threshold(std::int64_t threshold) {
  const std::uint64_t new_span = static_cast<std::uint64_t>(2 * threshold - 1);
  std::uint64_t old_span = span;
  if (old_span == new_span) return;
#if defined(__x86_64__)
  // cmpxchg16b: biased and span change in one instruction, rebased so the
  // pending bytes stay what they were. It fails only if a signal handler
  // changed the pair in between; then the new pair is retried.
  using Pair = unsigned __int128 __attribute__((may_alias));
  std::int64_t old_biased = biased.load(std::memory_order_relaxed);
  for (;;) {
    const std::int64_t new_biased =
        old_biased - static_cast<std::int64_t>(old_span >> 1) + static_cast<std::int64_t>(new_span >> 1);
    bool swapped;
    asm volatile("lock cmpxchg16b %1"
                 : "=@ccz"(swapped), "+m"(*reinterpret_cast<Pair*>(&biased)), "+a"(old_biased),
                   "+d"(old_span)
                 : "b"(new_biased), "c"(new_span)
                 : "memory");
    if (swapped || old_span == new_span) return;
  }
#else
  const std::int64_t pending = own_pending();
  span = new_span;
  biased.store(pending + static_cast<std::int64_t>(new_span >> 1), std::memory_order_relaxed);
#endif
}

// The hot path: counts the call in `slot` (t_slot, read by the caller),
// adds its bytes, compares. True when the slot must publish: the caller then
// calls publish(slot, bytes, kind), from a cold function of its own so that
// this stays free of spills.
inline bool add_crosses_threshold(Slot* slot, std::int64_t bytes, CallKind kind) {
  count_call(slot->calls[kind]);
  add_in_place(slot->biased, bytes);
  return __builtin_expect(static_cast<std::uint64_t>(slot->biased.load(std::memory_order_relaxed)) >= slot->span, 0);
}

// The same for bytes that go.
inline bool remove_crosses_threshold(Slot* slot, std::int64_t bytes, CallKind kind) {
  count_call(slot->calls[kind]);
  subtract_in_place(slot->biased, bytes);
  return __builtin_expect(static_cast<std::uint64_t>(slot->biased.load(std::memory_order_relaxed)) >= slot->span, 0);
}

inline void record(std::int64_t bytes, CallKind kind) {
  Slot* slot = t_slot;
  if (add_crosses_threshold(slot, bytes, kind)) publish(slot, bytes, kind);
}

// The public API (include/heapline.h, exported by public_api.cpp). Out of
// line and off the hot path; each does nothing or returns 0 before the
// process's lazy init.
void api_mark(const char* name);
std::int64_t api_live_bytes();
std::int64_t api_peak_bytes();
void api_reset_peak();
std::int64_t api_mapped_bytes();
std::int64_t api_total_bytes();
std::int64_t api_total_peak_bytes();

// Called by mapped_memory.cpp after each change of the mapped bytes (now
// `mapped_live`): keeps the peak of heap + mapped.
void mapped_changed(std::int64_t mapped_live);

}  // namespace heapline::accounting
