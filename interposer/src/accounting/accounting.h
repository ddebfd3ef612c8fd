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
// bias = threshold - 1, and span = threshold + free window - 1: pending is
// within (-free window, threshold) exactly when (uint64)headroom < span.
// The free window (free_window) is the threshold, or the fair share of the
// budget alone when the threshold is larger (a share lent from the headroom
// below the peak is lent to allocations only: precision_budget.h). A
// malloc, the call that raises pending, subtracts its bytes from headroom
// and needs only the sign of that very subtraction (one instruction and a
// `js`: pending reached +threshold); every other change (a free, a
// realloc, the foreign path) makes the two-sided unsigned compare. The
// threshold itself is a word of its own, which the headroom is counted
// from; the span only serves the compare. The owner moves its threshold
// toward its target when it publishes; whatever threshold a slot holds,
// its share of the budget (threshold - 1, the larger side) is counted in
// the process's `reserved` bytes (precision_budget.h), so the precision
// bound holds however long a thread idles.
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
// Revoked. A request to step down reaches only the owner's frees; a share
// that must come back at once (the budget has no room for a publish, or the
// owner has been idle: precision_budget.h, "Revocation") is revoked: the
// revoker marks the slot (kRevoking, in the top bits of `control`) and
// subtracts kRevokedOffset (2^58) from its headroom with a locked
// instruction, so that every later call of the owner, malloc or free, takes
// the slow path. The owner's own changes of the headroom are unlocked
// read-modify-writes, so one of them may have read the headroom before the
// revoker's subtraction and stored after it, erasing it whole (never half
// of it); the revoker then has every thread of the process pass a barrier
// (membarrier(2): each instruction in flight has completed and is visible)
// and reads the headroom again: the offset is either there, and stays, or
// gone, and it subtracts it again. Once it is there the revoker publishes
// the slot's pending bytes for the owner and gives its share back (kAdopted,
// `adopted`), unless the owner, which saw the offset first, settles the
// revocation itself (kTaken). Either way the owner's threshold ends at 1.
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
// The owner changes its threshold between two increments of `control`'s
// count (odd meanwhile): a handler that reaches the slow path then leaves
// its bytes pending, for the interrupted call to publish when the change is
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

// A revoked slot's headroom holds kRevokedOffset less (above: "Revoked"):
// its pending bytes, whole markers in flight taken out, read 2^58 more,
// which no real delta comes near, and a marker (2^60) rounds away as
// before. Neither moves an idle headroom's test (2^62 from zero).
constexpr std::int64_t kRevokedOffset = std::int64_t{1} << 58;
// Whether `pending` (markers in flight taken out) holds a revocation's offset.
inline bool holds_revocation(std::int64_t pending) { return pending >= kRevokedOffset / 2; }

// Where a slot's revocation is, in the top two bits of its `control` word
// (the change count below them): kRevoking from the revoker's mark until
// it adopts the pending bytes (kAdopted) or the owner takes the revocation
// over (kTaken); back to kNotRevoked when the owner has settled it.
enum Revocation : std::uint64_t { kNotRevoked = 0, kRevoking = 1, kAdopted = 2, kTaken = 3 };
constexpr int kRevocationShift = 62;
constexpr std::uint64_t kChangeCountMask = (std::uint64_t{1} << kRevocationShift) - 1;
inline Revocation revocation_of(std::uint64_t control) { return static_cast<Revocation>(control >> kRevocationShift); }
inline std::uint64_t with_revocation(std::uint64_t control, Revocation state) {
  return (control & kChangeCountMask) | (static_cast<std::uint64_t>(state) << kRevocationShift);
}

// What a slot holds back for the figures, from its raw pending bytes (the
// threshold's bias less the headroom): whole markers in flight out, a
// revocation's offset out, and once a revoker has published them for the
// owner (kAdopted), the bytes it adopted.
inline std::int64_t counted_pending(std::int64_t raw, Revocation state, std::int64_t adopted) {
  std::int64_t pending = raw - markers_in_flight(raw);
  if (holds_revocation(pending)) {
    pending -= kRevokedOffset;
    if (state == kAdopted) pending -= adopted;
  }
  return pending;
}

struct alignas(arch::kThreadSlotAlignment) Slot {
  std::atomic<std::int64_t> headroom{kIdleHeadroom};
  std::uint64_t span = 0;  // owner's plain reads: a memory operand; 0 also when asked to step down
  std::atomic<std::uint64_t> calls[kCallKinds] = {};
  std::atomic<std::uint64_t> publishes{0};
  std::int64_t held = 0;                // the threshold the headroom counts from; 0: none
  // The change count (odd while the owner changes its threshold) and, in
  // the top two bits, the revocation (Revocation). Both the owner and a
  // revoker write it, always with locked instructions.
  std::atomic<std::uint64_t> control{0};
  // While kAdopted: the pending bytes the revoker published for the owner.
  // Off the hot path's line: 64 bytes from the slot's start (asserted
  // below), the hot path's fields filling the 64 before it.
  std::atomic<std::int64_t> adopted{0};
  // While kAdopted: the part of the share the revoker left in `reserved`
  // for the owner's publish in flight, which the owner releases when it
  // settles.
  std::atomic<std::int64_t> kept{0};
  // The owner's: the allocated bytes its publish has taken out of the
  // headroom and not yet committed (0 between publishes), which its share
  // still covers; a revoker keeps that much of the share.
  std::atomic<std::int64_t> in_flight{0};
  // The owner's own: the range of published live values in which its
  // threshold stays where it is (threshold_policy.h, keep_live_range), and
  // the policy's free window it was set under; an empty range (every publish moves
  // it) after any change of the threshold until the policy sets it
  // (precision_budget.cpp).
  std::int64_t keep_from = INT64_MAX;
  std::int64_t keep_to = INT64_MIN;
  std::int64_t kept_under = 0;
  // The owner's own: set while its publish has read its pending bytes and
  // not yet decided to publish them (sampling.cpp). A signal handler that
  // reaches the slow path meanwhile leaves its bytes pending, for the
  // interrupted publish's loop: it could otherwise settle a revocation
  // whose adopted bytes hold the interrupted publish's.
  bool publishing = false;

  // Whether the headroom counts pending bytes (else the thread has no slot:
  // its calls publish exactly).
  bool counting() const { return headroom.load(std::memory_order_relaxed) > kIdleHeadroom / 2; }
  // Whether the owner is inside a threshold change (true in a signal
  // handler that interrupted it).
  bool changing() const { return (control.load(std::memory_order_relaxed) & 1) != 0; }
  // The owner's pending bytes (or its signal handler's), while counting.
  // Whole markers in flight and a revocation's offset included (see
  // publish()).
  std::int64_t own_pending() const { return held - 1 - headroom.load(std::memory_order_relaxed); }
  // Whether the headroom holds a sampled block's marker (kMarkerInFlight).
  bool marker_in_flight() const { return has_markers_in_flight(own_pending()); }
  // Whether the headroom holds a revocation's offset (the owner's view).
  bool revoked() const {
    const std::int64_t pending = own_pending();
    return counting() && holds_revocation(pending - markers_in_flight(pending));
  }
  // The share `reserved` counts for this slot (another thread's view): its
  // threshold's, but none once a revoker adopted its pending bytes and gave
  // the share back (the owner has not settled yet).
  std::int64_t reserved_share() const {
    const std::int64_t threshold = __atomic_load_n(&held, __ATOMIC_RELAXED);
    if (revocation_of(control.load(std::memory_order_acquire)) == kAdopted || threshold <= 1) return 0;
    return threshold - 1;
  }
  // Whether pending is outside (-free window, threshold), or span is 0.
  bool out_of_range() const { return static_cast<std::uint64_t>(headroom.load(std::memory_order_relaxed)) >= span; }
  // Another thread's view: the threshold and the headroom read until no
  // change came between them (a bounded number of times: the owner may be
  // stopped in the middle of one, or be a fork's dead copy).
  std::int64_t pending_bytes(int attempts = 1000) const {
    for (int attempt = 0;; ++attempt) {
      const std::uint64_t before = control.load(std::memory_order_acquire);
      const std::int64_t threshold = __atomic_load_n(&held, __ATOMIC_RELAXED);
      const std::int64_t value = headroom.load(std::memory_order_relaxed);
      const std::int64_t adopted_bytes = adopted.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      const bool steady = (before & 1) == 0 && control.load(std::memory_order_relaxed) == before;
      // No threshold, or an idle headroom: not holding anything back.
      if (steady || attempt >= attempts) {
        return counted_pending(pending_of(threshold, value), revocation_of(before), adopted_bytes);
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
  // pending (a revocation's offset and adopted bytes taken out), the
  // threshold it replaced in *replaced, and in *share_left what of that
  // threshold's share the caller must release (all of it, or once a
  // revoker adopted the slot what it kept).
  std::int64_t start_over(std::int64_t threshold, std::int64_t* replaced = nullptr, std::int64_t* share_left = nullptr);
  // Another thread's request that this slot step down, if its threshold is
  // above `target`: its span to 0. Whether it was set.
  bool ask_to_step_down(std::int64_t target);

  // --- revocation (precision_budget.cpp revokes, the owner settles) ---
  // The revoker's mark: false when the slot is being revoked or settled
  // already.
  bool mark_revoking();
  // The revoker's offset, with a locked subtraction.
  void place_revocation_offset() { headroom.fetch_sub(kRevokedOffset, std::memory_order_seq_cst); }
  // The revoker, after a barrier: whether its offset was erased by an
  // unlocked change of the owner's that read the headroom before it (the
  // slot still marked kRevoking, still counting, and no offset in the
  // headroom, read first: the owner marks the slot taken before it takes
  // an offset out, so one it settled is never taken for an erased one).
  bool revocation_erased() const;
  // The revoker gives up a revocation whose offset was erased (no offset
  // left in the headroom): the slot marked kNotRevoked again.
  void unmark_revoking();
  // The revoker, once the offset is in place: publishes nothing itself but
  // records the pending bytes it will publish for the owner (at most the
  // share: more is a call of the owner's in flight, whose excess stays
  // pending) and the share it will give back: all of it but what covers
  // the owner's publish in flight (`kept`). False (nothing adopted) when
  // the owner is inside a change or took the revocation over, or the
  // offset is not there.
  bool adopt(std::int64_t* pending, std::int64_t* share);
  // The owner, inside a change, its headroom holding the offset: the offset
  // (and what the revoker adopted) out of its pending bytes, its threshold
  // 1, the revocation cleared. Returns the share the owner must give back
  // itself (what the revoker kept, once it adopted the slot).
  std::int64_t settle_revocation();

 private:
  void count_change();
};
static_assert(offsetof(Slot, span) == offsetof(Slot, headroom) + 8);
static_assert(offsetof(Slot, adopted) == 64);
static_assert(sizeof(Slot) == 128);

// The policy (threshold_policy.h): the largest free window of a slot (the
// budget's fair share over the registered threads, free_window_cap), and
// the live value from which the growing peak raises the budget, so that a
// publish only compares. Written when either changes (the peak grew past
// `grow_at`, a thread registered or exited): read-mostly. Until the process
// init sets it from the configuration: exact.
struct alignas(128) Policy {
  std::atomic<std::int64_t> free_window{1};
  std::atomic<std::int64_t> grow_at{INT64_MAX};
};

extern Policy g_policy;

// The free side of the window of a slot whose threshold (its allocation
// side) is `threshold`: the threshold, at most the policy's cap. Bytes
// freed and not yet published keep every published figure high until they
// are; each at most the cap, together within the budget, a drop shows at
// once however far below the peak the heap falls, while allocated bytes
// held back below the peak do not move it (precision_budget.h).
inline std::int64_t free_window(std::int64_t threshold) {
  const std::int64_t cap = g_policy.free_window.load(std::memory_order_relaxed);
  return threshold < cap ? threshold : cap;
}
// The span of a slot at `threshold` (0: none).
inline std::uint64_t span_of(std::int64_t threshold) {
  return threshold > 0 ? static_cast<std::uint64_t>(threshold + free_window(threshold) - 1) : 0;
}
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
  // One instruction (a signal handler sees the count before or after it),
  // locked: a revoker's compare-and-swap on the same word is never lost.
  control.fetch_add(1, std::memory_order_seq_cst);
}

inline void Slot::set_threshold(std::int64_t threshold) {
  // Rebased in one change: a handler's bytes before or after it are
  // counted from the threshold word of their moment.
  add_in_place(headroom, threshold - held);
  __atomic_store_n(&held, threshold, __ATOMIC_RELAXED);
  __atomic_store_n(&span, span_of(threshold), __ATOMIC_RELAXED);
  keep_from = INT64_MAX;
  keep_to = INT64_MIN;
}

inline std::int64_t Slot::start_over(std::int64_t threshold, std::int64_t* replaced, std::int64_t* share_left) {
  begin_change();
  const std::int64_t old_threshold = held;
  // A handler's bytes before the exchange are the old headroom's (pending
  // of the slot, or idle), after it the new one's. A revoker's offset
  // before it comes out with the old headroom (settled here); one after it
  // lands on the new headroom, a revocation of the new threshold (or, on an
  // idle headroom, nothing the revoker keeps: precision_budget.cpp).
  __atomic_store_n(&held, threshold, __ATOMIC_RELAXED);
  const std::int64_t old_headroom =
      headroom.exchange(threshold > 0 ? threshold - 1 : kIdleHeadroom, std::memory_order_seq_cst);
  __atomic_store_n(&span, span_of(threshold), __ATOMIC_RELAXED);
  keep_from = INT64_MAX;
  keep_to = INT64_MIN;
  std::int64_t pending = pending_of(old_threshold, old_headroom);
  std::int64_t left = old_threshold > 0 ? old_threshold - 1 : 0;
  if (holds_revocation(pending - markers_in_flight(pending))) {
    std::uint64_t seen = control.load(std::memory_order_relaxed);
    if (revocation_of(seen) == kRevoking) {
      control.compare_exchange_strong(seen, with_revocation(seen, kTaken), std::memory_order_seq_cst);
    }
    pending -= kRevokedOffset;
    if (revocation_of(control.load(std::memory_order_acquire)) == kAdopted) {
      pending -= adopted.load(std::memory_order_relaxed);
      left = kept.load(std::memory_order_relaxed);
    }
    control.fetch_and(kChangeCountMask, std::memory_order_seq_cst);  // settled
  }
  end_change();
  if (replaced != nullptr) *replaced = old_threshold;
  if (share_left != nullptr) *share_left = left;
  return pending;
}

inline bool Slot::mark_revoking() {
  std::uint64_t seen = control.load(std::memory_order_relaxed);
  do {
    if (revocation_of(seen) != kNotRevoked) return false;
  } while (!control.compare_exchange_weak(seen, with_revocation(seen, kRevoking), std::memory_order_seq_cst));
  return true;
}

inline bool Slot::revocation_erased() const {
  const std::int64_t value = headroom.load(std::memory_order_seq_cst);
  const std::int64_t threshold = __atomic_load_n(&held, __ATOMIC_RELAXED);
  if (revocation_of(control.load(std::memory_order_seq_cst)) != kRevoking || value <= kIdleHeadroom / 2) return false;
  const std::int64_t raw = pending_of(threshold, value);
  return !holds_revocation(raw - markers_in_flight(raw));
}

inline void Slot::unmark_revoking() {
  std::uint64_t seen = control.load(std::memory_order_relaxed);
  // The owner's change count may move meanwhile: only the mark goes.
  while (revocation_of(seen) == kRevoking &&
         !control.compare_exchange_weak(seen, with_revocation(seen, kNotRevoked), std::memory_order_seq_cst)) {
  }
}

inline bool Slot::adopt(std::int64_t* pending, std::int64_t* share) {
  std::uint64_t seen = control.load(std::memory_order_acquire);
  if (revocation_of(seen) != kRevoking || (seen & 1) != 0) return false;
  const std::int64_t threshold = __atomic_load_n(&held, __ATOMIC_RELAXED);
  const std::int64_t raw = pending_of(threshold, headroom.load(std::memory_order_seq_cst));
  const std::int64_t counted = raw - markers_in_flight(raw);
  if (!holds_revocation(counted)) return false;
  // Allocated bytes beyond the share are a call in flight (the owner
  // stopped between its malloc's test and its slow path): only the share's
  // worth is adopted, so that what the revoker publishes never exceeds the
  // share it releases (the exposure cannot rise), and the rest stays
  // pending, for the owner's slow path to publish within the limit. A
  // revocation then never waits for an owner inside a call.
  const std::int64_t share_bytes = threshold > 0 ? threshold - 1 : 0;
  const std::int64_t taken = counted - kRevokedOffset < share_bytes ? counted - kRevokedOffset : share_bytes;
  // Bytes the owner's publish took out of the headroom and has not
  // committed are covered by the share too: as much of it as they need,
  // beside what is adopted, stays in `reserved` until the owner settles.
  // (Read after the barrier: a publish that took its bytes before it is
  // seen; a stale figure only keeps more.)
  const std::int64_t flying = in_flight.load(std::memory_order_relaxed);
  const std::int64_t room_left = share_bytes - (taken > 0 ? taken : 0);
  const std::int64_t keep = flying <= 0 ? 0 : flying < room_left ? flying : room_left;
  adopted.store(taken, std::memory_order_relaxed);
  kept.store(keep, std::memory_order_relaxed);
  // Fails when the owner began a change since `seen` (its threshold may
  // have moved) or took the revocation over.
  if (!control.compare_exchange_strong(seen, with_revocation(seen, kAdopted), std::memory_order_seq_cst)) return false;
  *pending = taken;
  *share = share_bytes - keep;
  return true;
}

inline std::int64_t Slot::settle_revocation() {
  std::uint64_t seen = control.load(std::memory_order_relaxed);
  if (revocation_of(seen) == kRevoking) {
    control.compare_exchange_strong(seen, with_revocation(seen, kTaken), std::memory_order_seq_cst);
  }
  // Taken over (or marked by no one: a fork child's copy), or adopted.
  const bool adopted_by_revoker = revocation_of(control.load(std::memory_order_acquire)) == kAdopted;
  const std::int64_t share =
      adopted_by_revoker ? kept.load(std::memory_order_relaxed) : held <= 0 ? 0 : held - 1;
  // One instruction: a signal handler's bytes (pending after this change)
  // stay pending.
  add_in_place(headroom, kRevokedOffset + (adopted_by_revoker ? adopted.load(std::memory_order_relaxed) : 0));
  set_threshold(1);
  control.fetch_and(kChangeCountMask, std::memory_order_seq_cst);
  return share;
}

inline bool Slot::ask_to_step_down(std::int64_t target) {
  std::uint64_t seen = __atomic_load_n(&span, __ATOMIC_RELAXED);
  // Only a threshold in force (a span) above the target.
  if (seen == 0 || __atomic_load_n(&held, __ATOMIC_RELAXED) <= target) return false;
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
