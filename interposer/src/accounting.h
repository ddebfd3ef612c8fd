// The accounting hot path: what every allocation call pays in libheapline.so.
//
// Each thread owns a slot (in its own static TLS, found by the others
// through the registry) holding its pending delta: the bytes it allocated minus the bytes it freed since it
// last published. A call adds its block size to that delta with one
// instruction; only when |delta| reaches the threshold does the thread publish
// (sampling.cpp: one atomic add to the live counter, peak update, maybe a
// timeline sample). Everything that is not this add-and-compare lives out of
// line (sampling.cpp), so the inlined part stays a handful of instructions.
//
// The threshold is max(min_bytes, live / divisor) rounded down to a power of
// two (threshold_policy.h, with its hysteresis), kept in a read-mostly cache line; with
// HEAPLINE_PRECISION=exact it is 1, so every change publishes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "next_allocator.h"

// Hidden: the compiler then knows these are this library's own and reaches
// them rip-relative, not through an address loaded first (which
// -fvisibility=hidden alone does not give a declaration).
#pragma GCC visibility push(hidden)
namespace heapline::accounting {

enum CallKind : unsigned { kAllocCall = 0, kFreeCall = 1, kReallocCall = 2, kCallKinds = 3 };

// One thread's share of the accounting, in the thread's own static TLS
// (t_own): the hot path reaches it %fs-relative, one load fewer per call
// than through a pointer, and no other thread writes near it. Only its
// owner writes the pending bytes, `calls` and its copy of the threshold;
// other threads read them (through the registry, thread_registry.cpp) only
// to sum the exact figures at exit, at fork and for the API.
//
// The threshold test. The slot keeps headroom = bias - pending, with
// bias = threshold - 1, and span = 2 × threshold - 1 (so bias = span >> 1,
// the threshold being a power of two): pending is within (-threshold,
// threshold) exactly when (uint64)headroom < span. A malloc, the call that
// raises pending, subtracts its bytes from headroom and needs only the sign
// of that very subtraction (one instruction and a `js`: pending reached
// +threshold); every other change (a free, a realloc, the foreign path)
// makes the two-sided unsigned compare. The owner refreshes its threshold
// from the global policy each time it publishes; a stale copy is still a
// threshold that was in force, so the precision bound (built on the largest
// threshold ever used) holds.
//
// A malloc's one-sided test misses pending below -threshold, a state no
// call leaves behind: a free that reaches it publishes, and publish()
// leaves the slot within range (it publishes again should a signal
// handler's bytes, kept pending across a threshold change, exceed the new
// threshold).
//
// A thread without a place in the registry (not registered yet, registry
// full, exiting) has span 0, so every two-sided test publishes, and its
// headroom is kIdleHeadroom (-2^62, the value of a new thread's TLS), so
// every malloc's subtraction stays negative and publishes too: no call
// takes the hot path, which then needs no test of its own. The slow path
// publishes the call's own bytes; headroom drifts by them, 2^62 bytes
// (4 EiB) away from turning positive or wrapping round.
//
// Signal safety. A signal handler that allocates runs the hot path on the
// same slot in the middle of its owner's. Every change to `headroom` is
// therefore a single instruction: an unlocked `sub` or `add` to memory for
// a call (a signal arrives between instructions, never inside one, and the
// malloc's test reads the flags of its own subtraction), the same for the
// slow path taking out what it publishes (it adds back the value it read,
// so a handler's bytes meanwhile stay pending), and a cmpxchg16b when the
// threshold changes or the slot is handed over (headroom and span move
// together). Whatever interleaving, published + pending is exact.
constexpr std::int64_t kIdleHeadroom = INT64_MIN / 2;

struct alignas(64) Slot {
  std::atomic<std::int64_t> headroom{kIdleHeadroom};  // with span: one aligned 16-byte pair
  std::uint64_t span = 0;                             // owner's plain reads: a memory operand
  std::atomic<std::uint64_t> calls[kCallKinds] = {};
  std::atomic<std::uint64_t> publishes{0};

  // The owner's pending bytes (or its signal handler's).
  std::int64_t own_pending() const {
    return static_cast<std::int64_t>(span >> 1) - headroom.load(std::memory_order_relaxed);
  }
  // Whether pending is outside (-threshold, threshold), or span is 0.
  bool out_of_range() const { return static_cast<std::uint64_t>(headroom.load(std::memory_order_relaxed)) >= span; }
  // Another thread's view: the pair read until it is consistent (a threshold
  // change moves both).
  std::int64_t pending_bytes() const {
    for (;;) {
      const std::uint64_t before = __atomic_load_n(&span, __ATOMIC_ACQUIRE);
      const std::int64_t value = headroom.load(std::memory_order_acquire);
      if (__atomic_load_n(&span, __ATOMIC_ACQUIRE) != before) continue;
      // Span 0: not (or no longer) holding anything back.
      return before != 0 ? static_cast<std::int64_t>(before >> 1) - value : 0;
    }
  }
  // The owner's threshold change: the pending bytes kept.
  void set_threshold(std::int64_t threshold);
  // The owner's handover: nothing pending and `threshold` (0: the slow path
  // for every call), in one step whatever a signal handler does meanwhile.
  // Returns what was pending.
  std::int64_t start_over(std::int64_t threshold);

 private:
  // (headroom, span) := what `next` makes of the pair, in one instruction
  // against a signal handler's change (cmpxchg16b, retried).
  template <typename Next>
  void replace_pair(Next next);
};
static_assert(offsetof(Slot, span) == offsetof(Slot, headroom) + 8);

// The global threshold: copied into slots at each publish, and the
// published live values [low, high) it holds for (threshold_policy.h), so
// that a publish only compares. Until the process init sets it from the
// configuration: the default policy's for an empty heap.
struct alignas(128) Policy {
  std::atomic<std::int64_t> threshold{16 * 1024};
  std::atomic<std::int64_t> low{INT64_MIN};
  std::atomic<std::int64_t> high{2 * 1024 * 1024};
};

extern Policy g_policy;
// Whether the processor has cmpxchg16b (set at the process init, before any
// thread has a slot whose threshold could change).
extern bool g_cx16;
// __thread rather than thread_local: no C++ TLS init wrapper, so each access
// is %fs-relative. Zero at thread start: span 0, the slow path.
extern __thread Slot t_own __attribute__((tls_model("initial-exec")));

// Out of line: publishing (what t_own's pending holds), and for a thread
// without a place in the registry (span 0) its first call (registration,
// lazy process init) or an exact publish of `bytes`, this call's change.
[[gnu::noinline]] void publish(std::int64_t bytes, CallKind kind);

// `counter += value` as one instruction on x86-64 (an unlocked `add` to
// memory): not split by a signal, never torn for a reader, and one
// instruction instead of the load/add/store a relaxed atomic compiles to.
// Only the owner thread (and its signal handlers) may use it.
template <typename T>
inline void add_in_place(std::atomic<T>& counter, T value) {
#if defined(__x86_64__)
  static_assert(sizeof(T) == 8);  // addq: an immediate operand says no size of its own
  asm volatile("addq %1, %0" : "+m"(*reinterpret_cast<T*>(&counter)) : "er"(value));
#else
  counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
#endif
}

// `counter -= value`, the same way (a free needs no negation first).
template <typename T>
inline void subtract_in_place(std::atomic<T>& counter, T value) {
#if defined(__x86_64__)
  static_assert(sizeof(T) == 8);
  asm volatile("subq %1, %0" : "+m"(*reinterpret_cast<T*>(&counter)) : "er"(value));
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

// Takes back one count_call, the same way.
inline void uncount_call(std::atomic<std::uint64_t>& counter) {
#if defined(__x86_64__)
  asm volatile("decq %0" : "+m"(*reinterpret_cast<std::uint64_t*>(&counter)));
#else
  counter.store(counter.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
#endif
}

// `counter -= value`, and whether the result is negative, read from the
// flags of that one instruction (so a signal cannot come between them).
// Only the owner thread (and its signal handlers) may use it.
inline bool subtract_turns_negative(std::atomic<std::int64_t>& counter, std::int64_t value) {
#if defined(__x86_64__)
  bool negative;
  asm volatile("subq %2, %0" : "+m"(*reinterpret_cast<std::int64_t*>(&counter)), "=@ccs"(negative) : "er"(value));
  return negative;
#else
  const std::int64_t result = counter.load(std::memory_order_relaxed) - value;
  counter.store(result, std::memory_order_relaxed);
  return result < 0;
#endif
}

// Moves `delta` out of the caller's pending bytes (to be published): one
// instruction, so a signal handler's change meanwhile is kept.
inline void take_pending(Slot& slot, std::int64_t delta) { add_in_place(slot.headroom, delta); }

template <typename Next>
inline void Slot::replace_pair(Next next) {
#if defined(__x86_64__)
  if (g_cx16) [[likely]] {
    // Fails only if a signal handler changed the pair in between; then the
    // new pair is retried.
    using Pair = unsigned __int128 __attribute__((may_alias));
    std::int64_t old_headroom = headroom.load(std::memory_order_relaxed);
    std::uint64_t old_span = span;
    for (;;) {
      std::int64_t new_headroom;
      std::uint64_t new_span;
      next(old_headroom, old_span, &new_headroom, &new_span);
      bool swapped;
      asm volatile("lock cmpxchg16b %1"
                   : "=@ccz"(swapped), "+m"(*reinterpret_cast<Pair*>(&headroom)), "+a"(old_headroom), "+d"(old_span)
                   : "b"(new_headroom), "c"(new_span)
                   : "memory");
      if (swapped) return;
    }
  }
#endif
  // Without cmpxchg16b (a few early x86-64 processors, other
  // architectures): two stores, and a signal handler that allocates between
  // them can shift the pending bytes by one call's. Their order keeps a
  // span of 0 with an idle headroom (the handler's call publishes exactly):
  // leaving span 0, the headroom goes first; entering it, the span.
  std::int64_t new_headroom;
  std::uint64_t new_span;
  const std::uint64_t old_span = span;
  next(headroom.load(std::memory_order_relaxed), old_span, &new_headroom, &new_span);
  if (old_span == 0) headroom.store(new_headroom, std::memory_order_relaxed);
  __atomic_store_n(&span, new_span, __ATOMIC_RELAXED);
  if (old_span != 0) headroom.store(new_headroom, std::memory_order_relaxed);
}

inline void Slot::set_threshold(std::int64_t threshold) {
  const std::uint64_t new_span = static_cast<std::uint64_t>(2 * threshold - 1);
  if (span == new_span) return;
  // Rebased so the pending bytes stay what they were.
  replace_pair([new_span](std::int64_t old_headroom, std::uint64_t old_span, std::int64_t* out_headroom,
                          std::uint64_t* out_span) {
    *out_headroom =
        old_headroom - static_cast<std::int64_t>(old_span >> 1) + static_cast<std::int64_t>(new_span >> 1);
    *out_span = new_span;
  });
}

inline std::int64_t Slot::start_over(std::int64_t threshold) {
  const std::uint64_t new_span = threshold > 0 ? static_cast<std::uint64_t>(2 * threshold - 1) : 0;
  std::int64_t pending = 0;
  replace_pair([new_span, &pending](std::int64_t old_headroom, std::uint64_t old_span, std::int64_t* out_headroom,
                                    std::uint64_t* out_span) {
    pending = old_span != 0 ? static_cast<std::int64_t>(old_span >> 1) - old_headroom : 0;
    *out_headroom = new_span != 0 ? static_cast<std::int64_t>(new_span >> 1) : kIdleHeadroom;
    *out_span = new_span;
  });
  return pending;
}

// The hot path of a malloc (bytes > 0): counts the call in t_own, takes
// its bytes from the headroom and tests the sign of the result. True when
// the thread must publish: the caller then calls publish(bytes, kind), from
// a cold function of its own so that this stays free of spills.
inline bool add_crosses_threshold(std::int64_t bytes, CallKind kind) {
  count_call(t_own.calls[kind]);
  return __builtin_expect(subtract_turns_negative(t_own.headroom, bytes), 0);
}

// The same for bytes that go (a free: bytes >= 0), with the two-sided test.
inline bool remove_crosses_threshold(std::int64_t bytes, CallKind kind) {
  count_call(t_own.calls[kind]);
  add_in_place(t_own.headroom, bytes);
  return __builtin_expect(t_own.out_of_range(), 0);
}

// Any change, of either sign (realloc, calloc, the foreign path): the
// two-sided test.
inline bool change_crosses_threshold(std::int64_t bytes, CallKind kind) {
  count_call(t_own.calls[kind]);
  subtract_in_place(t_own.headroom, bytes);
  return __builtin_expect(t_own.out_of_range(), 0);
}

inline void record(std::int64_t bytes, CallKind kind) {
  if (change_crosses_threshold(bytes, kind)) publish(bytes, kind);
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
#pragma GCC visibility pop
