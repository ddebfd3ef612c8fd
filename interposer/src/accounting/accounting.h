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
// Each thread's threshold is its share of the process's precision budget
// (threshold_policy.h): it moves toward the fair share, kept in a
// read-mostly cache line, at the thread's publishes. With
// HEAPLINE_PRECISION=exact it is 1, so every change publishes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "arch.h"
#include "exact_shadow.h"
#include "next_allocator.h"

// Hidden: the compiler then knows these are this library's own and reaches
// them rip-relative, not through an address loaded first (which
// -fvisibility=hidden alone does not give a declaration).
#pragma GCC visibility push(hidden)
namespace heapline::accounting {

enum CallKind : unsigned { kAllocCall = 0, kFreeCall = 1, kReallocCall = 2, kCallKinds = 3 };

// One thread's share of the accounting, in the thread's own static TLS
// (t_own): the hot path reaches it %fs-relative, one load fewer per call
// than through a pointer, and no other thread writes near it but to ask it
// to step down (below). Only its owner writes the pending bytes, `calls`
// and its threshold; other threads read them (through the registry,
// thread_registry.cpp) only to sum the exact figures at exit, at fork and
// for the API.
//
// The threshold test. The slot keeps headroom = bias - pending, with
// bias = threshold - 1, and span = 2 × threshold - 1: pending is within
// (-threshold, threshold) exactly when (uint64)headroom < span. A malloc,
// the call that raises pending, subtracts its bytes from headroom and
// needs only the sign of that very subtraction (one instruction and a
// `js`: pending reached +threshold); every other change (a free, a
// realloc, the foreign path) makes the two-sided unsigned compare. The
// threshold itself is a word of its own, which the headroom is counted
// from; the span only serves the compare. The owner moves its threshold
// toward the policy's fair share when it publishes; whatever threshold a
// slot holds, its share of the budget is counted in the process's
// `reserved` bytes (precision_budget.h), so the precision bound holds however
// long a thread idles.
//
// Asked to step down. Another thread that finds the budget full may set
// the span of a slot whose threshold is above the fair share to 0 (a
// compare-and-swap on the span alone, which the owner never writes with a
// read-modify-write of its own): the pending bytes, counted from the
// threshold word, stay what they were, and the owner's next two-sided test
// fails, so its next free publishes and moves its threshold down (its next
// malloc too, should it reach the threshold). A thread that does not
// allocate keeps its share, which `reserved` counts anyway.
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
// (4 EiB) away from turning positive or wrapping round. An idle headroom
// is how the slow path tells such a thread from one asked to step down.
//
// Signal safety. A signal handler that allocates runs the hot path on the
// same slot in the middle of its owner's. Every change to `headroom` is
// therefore one that a signal cannot split (arch.h: on x86-64 a single
// instruction, an unlocked `sub` or `add` to memory, and the malloc's test
// reads the flags of its own subtraction; on aarch64 an LSE atomic, or an
// exclusive loop that a signal starts again) for a call, the same for the
// slow path taking out what it publishes (it adds back the value it read,
// so a handler's bytes meanwhile stay pending), an `add` of the difference
// of the biases when the threshold changes, and an `xchg` when the slot is
// handed over (its pending bytes taken out, or an idle headroom replaced).
// The owner changes its threshold between two increments of `changes`
// (odd meanwhile): a handler that reaches the slow path then leaves its
// bytes pending, for the interrupted call to publish when the change is
// done (a handover's `xchg` decides which side of it they are on: pending
// of the slot, or of a thread without one, published at once). Whatever
// interleaving, published + pending is exact.
constexpr std::int64_t kIdleHeadroom = INT64_MIN / 2;

// A sampled block's chunk header reads 2^60 (heap_sampler.h): the hot path
// adds or subtracts that marker before its slow path takes it back out. A
// signal handler that runs in between, or another thread reading the
// slot, sees pending bytes off by whole markers, which no real pending
// delta comes near: they are left out of every figure (and left in the
// slot for the interrupted slow path to take back).
constexpr std::int64_t kMarkerInFlight = std::int64_t{1} << 60;
inline std::int64_t markers_in_flight(std::int64_t pending) {
  return (pending + kMarkerInFlight / 2) >> 60 << 60;
}
// Whether `pending` holds any (one compare: no real delta is 2^59).
inline bool has_markers_in_flight(std::int64_t pending) {
  return static_cast<std::uint64_t>(pending + kMarkerInFlight / 2) >= static_cast<std::uint64_t>(kMarkerInFlight);
}

// The bytes a slot holds back, from its threshold (`held`) and headroom:
// the threshold's bias less the headroom, while it has a threshold and
// counts; none with no threshold, or with an idle headroom (a thread
// without a slot, which publishes every call; a signal handler's bytes
// move an idle headroom, never to within half of kIdleHeadroom of zero).
inline std::int64_t pending_of(std::int64_t threshold, std::int64_t headroom) {
  return threshold > 0 && headroom > kIdleHeadroom / 2 ? threshold - 1 - headroom : 0;
}

struct alignas(64) Slot {
  std::atomic<std::int64_t> headroom{kIdleHeadroom};
  std::uint64_t span = 0;  // owner's plain reads: a memory operand; 0 also when asked to step down
  std::atomic<std::uint64_t> calls[kCallKinds] = {};
  std::atomic<std::uint64_t> publishes{0};
  std::int64_t held = 0;                // the threshold the headroom counts from; 0: none
  std::atomic<std::uint64_t> changes{0};  // odd while the owner changes its threshold

  // Whether the headroom counts pending bytes (else the thread has no slot:
  // its calls publish exactly).
  bool counting() const { return headroom.load(std::memory_order_relaxed) > kIdleHeadroom / 2; }
  // Whether the owner is inside a threshold change (true in a signal
  // handler that interrupted it).
  bool changing() const { return (changes.load(std::memory_order_relaxed) & 1) != 0; }
  // The owner's pending bytes (or its signal handler's), while counting.
  // Whole markers in flight included (see publish()).
  std::int64_t own_pending() const { return held - 1 - headroom.load(std::memory_order_relaxed); }
  // Whether the headroom holds a sampled block's marker (kMarkerInFlight).
  bool marker_in_flight() const { return has_markers_in_flight(own_pending()); }
  // Whether pending is outside (-threshold, threshold), or span is 0.
  bool out_of_range() const { return static_cast<std::uint64_t>(headroom.load(std::memory_order_relaxed)) >= span; }
  // Another thread's view: the threshold and the headroom read until no
  // change came between them (a bounded number of times: the owner may be
  // stopped in the middle of one, or be a fork's dead copy).
  std::int64_t pending_bytes(int attempts = 1000) const {
    for (int attempt = 0;; ++attempt) {
      const std::uint64_t before = changes.load(std::memory_order_acquire);
      const std::int64_t threshold = __atomic_load_n(&held, __ATOMIC_RELAXED);
      const std::int64_t value = headroom.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      const bool steady = (before & 1) == 0 && changes.load(std::memory_order_relaxed) == before;
      // No threshold, or an idle headroom: not holding anything back.
      if (steady || attempt >= attempts) {
        const std::int64_t pending = pending_of(threshold, value);
        return pending - markers_in_flight(pending);
      }
    }
  }
  // The owner brackets every read-decide-write of its threshold with these
  // (not nested): a signal handler in between leaves its bytes pending.
  void begin_change() { count_change(); }
  void end_change() { count_change(); }
  // Inside a change: the owner's new threshold, the pending bytes kept
  // (rebased); the span follows, which also answers a request to step down.
  void set_threshold(std::int64_t threshold);
  // The owner's handover, a change of its own: nothing pending and
  // `threshold` (0: none, the slow path for every call). Returns what was
  // pending, and the threshold it replaced in *replaced.
  std::int64_t start_over(std::int64_t threshold, std::int64_t* replaced = nullptr);
  // Another thread's request that this slot step down, if its threshold is
  // above the one of `fair_span`: its span to 0. Whether it was set.
  bool ask_to_step_down(std::uint64_t fair_span);

 private:
  void count_change();
};
static_assert(offsetof(Slot, span) == offsetof(Slot, headroom) + 8);
static_assert(sizeof(Slot) == 64);

// The policy a publish compares with (threshold_policy.h): the fair share's
// span (a slot whose span differs moves its threshold toward it) and the
// live value from which the growing peak may raise the fair share, so that
// a publish only compares. Written when the fair share changes (the peak
// grew past `grow_at`, the thread count crossed the divider): read-mostly.
// Until the process init sets it from the configuration: exact.
struct alignas(128) Policy {
  std::atomic<std::uint64_t> span{1};
  std::atomic<std::int64_t> grow_at{INT64_MAX};
};

extern Policy g_policy;
// __thread rather than thread_local: no C++ TLS init wrapper, so each access
// is %fs-relative. Zero at thread start: span 0, the slow path.
extern __thread Slot t_own __attribute__((tls_model("initial-exec")));

// Out of line: publishing (what t_own's pending holds), and for a thread
// without a place in the registry (span 0) its first call (registration,
// lazy process init) or an exact publish of `bytes`, this call's change.
// Two builds of it: without markers in flight (the heap sampler off: not
// one instruction of theirs on the path, which every call of a large-block
// workload takes) and with them. `publish` calls the one bound in
// g_publish (one indirect call, as many instructions as a direct one); the
// marked one is bound before the sampler marks any block (bind_marked_publish).
[[gnu::noinline]] void publish_unmarked(std::int64_t bytes, CallKind kind);
[[gnu::noinline]] void publish_marked(std::int64_t bytes, CallKind kind);
extern void (*g_publish)(std::int64_t bytes, CallKind kind);
// A plain load, folded into the call (`call *g_publish(%rip)`), as the
// allocator's entries are read; written once, before any block is marked.
inline void publish(std::int64_t bytes, CallKind kind) { g_publish(bytes, kind); }
void bind_marked_publish();

// The counters change in place (arch.h): on x86-64 one unlocked `add`,
// `sub`, `inc` or `dec` to memory; on aarch64 an LSE atomic or an
// exclusive loop. Not split by a signal, never torn for a reader, and no
// more than the architecture needs for that (a relaxed atomic's
// load/add/store can be split). Only the owner thread (and its signal
// handlers) may use them.
template <typename T>
inline void add_in_place(std::atomic<T>& counter, T value) {
  arch::in_place::add(counter, value);
}

// `counter -= value`, the same way (a free needs no negation first).
template <typename T>
inline void subtract_in_place(std::atomic<T>& counter, T value) {
  arch::in_place::subtract(counter, value);
}

inline void count_call(std::atomic<std::uint64_t>& counter) { arch::in_place::increment(counter); }

// Takes back one count_call, the same way.
inline void uncount_call(std::atomic<std::uint64_t>& counter) { arch::in_place::decrement(counter); }

// `counter -= value`, and whether the result is negative, read from that
// one change (so a signal cannot come between them).
// Only the owner thread (and its signal handlers) may use it.
inline bool subtract_turns_negative(std::atomic<std::int64_t>& counter, std::int64_t value) {
  return arch::in_place::subtract_turns_negative(counter, value);
}

// Moves `delta` out of the caller's pending bytes (to be published): one
// instruction, so a signal handler's change meanwhile is kept.
inline void take_pending(Slot& slot, std::int64_t delta) { add_in_place(slot.headroom, delta); }

inline void Slot::count_change() {
  // One change (a signal handler sees the count before or after it),
  // ordered with the stores around it for the other threads' readers.
  arch::in_place::increment_ordered(changes);
}

inline void Slot::set_threshold(std::int64_t threshold) {
  // Rebased in one change: a handler's bytes before or after it are
  // counted from the threshold word of their moment.
  add_in_place(headroom, threshold - held);
  __atomic_store_n(&held, threshold, __ATOMIC_RELAXED);
  __atomic_store_n(&span, static_cast<std::uint64_t>(2 * threshold - 1), __ATOMIC_RELAXED);
}

inline std::int64_t Slot::start_over(std::int64_t threshold, std::int64_t* replaced) {
  begin_change();
  const std::int64_t old_threshold = held;
  // A handler's bytes before the exchange are the old headroom's (pending
  // of the slot, or idle), after it the new one's.
  __atomic_store_n(&held, threshold, __ATOMIC_RELAXED);
  const std::int64_t old_headroom =
      headroom.exchange(threshold > 0 ? threshold - 1 : kIdleHeadroom, std::memory_order_relaxed);
  __atomic_store_n(&span, threshold > 0 ? static_cast<std::uint64_t>(2 * threshold - 1) : 0, __ATOMIC_RELAXED);
  end_change();
  if (replaced != nullptr) *replaced = old_threshold;
  return pending_of(old_threshold, old_headroom);
}

inline bool Slot::ask_to_step_down(std::uint64_t fair_span) {
  std::uint64_t seen = __atomic_load_n(&span, __ATOMIC_RELAXED);
  // Only a threshold in force (an odd span) above the fair one.
  if ((seen & 1) == 0 || seen <= fair_span) return false;
  return __atomic_compare_exchange_n(&span, &seen, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

// The hot path of a malloc (bytes > 0): counts the call in t_own, takes
// its bytes from the headroom and tests the sign of the result. True when
// the thread must publish: the caller then calls publish(bytes, kind), from
// a cold function of its own so that this stays free of spills.
inline bool add_crosses_threshold(std::int64_t bytes, CallKind kind) {
  count_call(t_own.calls[kind]);
  shadow::count(bytes);
  return __builtin_expect(subtract_turns_negative(t_own.headroom, bytes), 0);
}

// The same for bytes that go (a free: bytes >= 0), with the two-sided test.
inline bool remove_crosses_threshold(std::int64_t bytes, CallKind kind) {
  count_call(t_own.calls[kind]);
  shadow::count(-bytes);
  add_in_place(t_own.headroom, bytes);
  return __builtin_expect(t_own.out_of_range(), 0);
}

// Any change, of either sign (realloc, calloc, the foreign path): the
// two-sided test.
inline bool change_crosses_threshold(std::int64_t bytes, CallKind kind) {
  count_call(t_own.calls[kind]);
  shadow::count(bytes);
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

}  // namespace heapline::accounting
#pragma GCC visibility pop
