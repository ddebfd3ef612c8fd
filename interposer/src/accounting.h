// The accounting hot path: what every allocation call pays in libheapline.so.
//
// Each thread owns a registry slot (a cache line of static memory) holding
// its pending delta: the bytes it allocated minus the bytes it freed since it
// last published. A call adds its block size to that delta with a plain load
// and store; only when |delta| reaches the threshold does the thread publish
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

// One thread's share of the accounting. Only its owner writes `pending`,
// `calls` and its copy of the threshold (relaxed stores compile to plain movs
// on x86); other threads read them only to sum the exact figures at exit and
// at fork. 128-byte aligned so neighbouring slots never share a line or an
// adjacent-line prefetch pair.
//
// The threshold test |pending| >= threshold is done as one unsigned compare:
// (uint64)(pending + bias) >= span, with bias = threshold - 1 and
// span = 2 × threshold - 1. The owner refreshes its copy from the global
// policy each time it publishes; a stale copy is still a threshold that was
// in force, so the precision bound (built on the largest threshold ever used)
// holds.
struct alignas(128) Slot {
  std::atomic<std::int64_t> pending{0};
  std::atomic<std::int64_t> bias{16 * 1024 - 1};
  std::atomic<std::uint64_t> span{2 * 16 * 1024 - 1};
  std::atomic<std::uint64_t> calls[kCallKinds] = {};
  std::atomic<std::uint64_t> publishes{0};
  std::atomic<std::uint32_t> in_use{0};

  constexpr Slot() = default;
  constexpr Slot(std::int64_t bias_value, std::uint64_t span_value) : bias(bias_value), span(span_value) {}
  // The threshold test's constants for `threshold` (see above).
  void set_threshold(std::int64_t threshold) {
    bias.store(threshold - 1, std::memory_order_relaxed);
    span.store(static_cast<std::uint64_t>(2 * threshold - 1), std::memory_order_relaxed);
  }
};

// The global threshold: computed at publish time, copied into slots.
struct alignas(128) Policy {
  std::atomic<std::int64_t> threshold{16 * 1024};
};

extern Policy g_policy;
// The slot of every thread that has none (not registered yet, registry full,
// exiting): its span of 0 sends every call to the slow path, so the hot path
// needs no null check.
extern Slot g_no_slot;
// __thread rather than thread_local: a plain pointer needs no C++ TLS init
// wrapper, so each access is one %fs-relative load.
extern __thread Slot* t_slot __attribute__((tls_model("initial-exec")));

// Out of line: publishing, and for g_no_slot the first call of a thread
// (registration, lazy process init) or an exact publish.
[[gnu::noinline]] void publish(Slot* slot, std::int64_t delta, CallKind kind);

// Counts a call in the owner's slot. On x86-64 one unlocked `incq`: a single
// aligned 8-byte store, so a reader never sees a torn value, and one
// instruction instead of the load/add/store a relaxed atomic compiles to.
inline void count_call(std::atomic<std::uint64_t>& counter) {
#if defined(__x86_64__)
  asm volatile("incq %0" : "+m"(*reinterpret_cast<std::uint64_t*>(&counter)));
#else
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
#endif
}

inline void record(std::int64_t bytes, CallKind kind) {
  Slot* slot = t_slot;
  count_call(slot->calls[kind]);
  const std::int64_t delta = slot->pending.load(std::memory_order_relaxed) + bytes;
  const std::uint64_t biased =
      static_cast<std::uint64_t>(delta + slot->bias.load(std::memory_order_relaxed));
  if (__builtin_expect(biased >= slot->span.load(std::memory_order_relaxed), 0)) {
    publish(slot, delta, kind);
  } else {
    slot->pending.store(delta, std::memory_order_relaxed);
  }
}

// glibc's chunk size is read inline (one load next to the header glibc itself
// just touched); a foreign allocator's malloc_usable_size is called.
inline std::size_t size_of(const NextAllocator& next, void* p) {
  if (__builtin_expect(next.reads_glibc_chunk_header, 1)) return glibc_chunk_size(p);
  return next.block_size(p);
}

inline void allocated(const NextAllocator& next, void* p) {
  record(static_cast<std::int64_t>(size_of(next, p)), kAllocCall);
}

inline void freed(std::size_t bytes) { record(-static_cast<std::int64_t>(bytes), kFreeCall); }

// The public API (include/heapline.h, exported by public_api.cpp). Out of
// line and off the hot path; each does nothing or returns 0 before the
// process's lazy init.
void api_mark(const char* name);
std::int64_t api_live_bytes();
std::int64_t api_peak_bytes();
void api_reset_peak();

inline void reallocated(std::size_t old_bytes, const NextAllocator& next, void* q) {
  record(static_cast<std::int64_t>(size_of(next, q)) - static_cast<std::int64_t>(old_bytes), kReallocCall);
}

}  // namespace heapline::accounting
