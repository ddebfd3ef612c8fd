// The accuracy build's exact shadow (libheapline_accuracy.so, built with
// HEAPLINE_EXACT_SHADOW=1; docs/design.md, "The accuracy figure"): beside
// the batched figures, an exact counter of every change the hot path
// counts, in the same run, so that the batched peak can be held against
// the exact peak of the very same heap (a second run, even exact, is not
// the same heap: threads interleave differently). One atomic add and a
// peak raise per call: the accuracy build is a measuring instrument, never
// shipped as libheapline.so, where HEAPLINE_EXACT_SHADOW is 0 and none of
// this is compiled.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap_sampler.h"
#include "published.h"

#ifndef HEAPLINE_EXACT_SHADOW
#define HEAPLINE_EXACT_SHADOW 0
#endif

#pragma GCC visibility push(hidden)
namespace heapline::accounting::shadow {

inline constexpr bool kEnabled = HEAPLINE_EXACT_SHADOW != 0;

struct alignas(128) ExactShadow {
  std::atomic<std::int64_t> live{0};  // the exact live heap, as the library counts it
  std::atomic<std::int64_t> peak{0};  // the largest value `live` took (since the fork, in a fork child)
};
extern ExactShadow g_exact_shadow;

// A change of the live heap by `bytes` (negative: freed). The sampler's
// marker (heap_sampler.h), which the hot path takes for a size before the
// marked block's slow path counts its real bytes, is not a change.
inline void count(std::int64_t bytes) {
  if constexpr (kEnabled) {
    if (bytes == sampler::kSampledChunkMarker || bytes == -sampler::kSampledChunkMarker) return;
    raise_to(g_exact_shadow.peak, g_exact_shadow.live.fetch_add(bytes, std::memory_order_relaxed) + bytes);
  }
}

// The library's own bytes (what the unwinder's loading allocates, start_up.cpp)
// come back out, as they do of the figures: taken at `before`, then
// forgotten. The peak is kept from rising over them.
struct Mark {
  std::int64_t live = 0, peak = 0;
};
inline Mark mark() {
  if constexpr (kEnabled) {
    return {g_exact_shadow.live.load(std::memory_order_relaxed), g_exact_shadow.peak.load(std::memory_order_relaxed)};
  }
  return {};
}
inline void forget_since(Mark before) {
  if constexpr (kEnabled) {
    const std::int64_t own = g_exact_shadow.live.load(std::memory_order_relaxed) - before.live;
    const std::int64_t live = g_exact_shadow.live.fetch_sub(own, std::memory_order_relaxed) - own;
    const std::int64_t floor = live > before.peak ? live : before.peak;
    if (g_exact_shadow.peak.load(std::memory_order_relaxed) > floor) g_exact_shadow.peak.store(floor, std::memory_order_relaxed);
  }
}

// The accuracy gate's own test (tests/harness/accuracy_gate_test.sh) runs
// a build that loses every second publish of each thread
// (HEAPLINE_TEST_DROP_HALF_PUBLISHES=1, never built by default): its
// batched figures fall short of the truth, and the gate must say so.
#ifndef HEAPLINE_TEST_DROP_HALF_PUBLISHES
#define HEAPLINE_TEST_DROP_HALF_PUBLISHES 0
#endif
inline bool test_drops_this_publish() {
  if constexpr (HEAPLINE_TEST_DROP_HALF_PUBLISHES != 0) {
    static thread_local bool drop = false;
    drop = !drop;
    return drop;
  }
  return false;
}

// A fork child's peak starts at what it inherited, as its report's does.
inline void restart_at_fork() {
  if constexpr (kEnabled) {
    g_exact_shadow.peak.store(g_exact_shadow.live.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
}

}  // namespace heapline::accounting::shadow
#pragma GCC visibility pop
