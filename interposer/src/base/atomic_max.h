// The one way the library raises a shared maximum without a lock: the
// peaks, the open interval's maximum, the precision's high-water marks, the
// counts of threads and the latest marker's time. Many threads raise the
// same value at once, so a plain load-compare-store would lose the larger of
// two raises; a compare-and-swap loop keeps it.
//
// Header-only, no allocation, no system call: it runs in the program's
// malloc (a publish) and in signal handlers (a marker).
#pragma once

#include <atomic>
#include <type_traits>

namespace heapline {

// Raises `target` to `value` when it holds less. Returns what `target` held
// when this call ended its look: below `value` exactly when this call raised
// it, otherwise a value at least `value` that was there (another thread's
// raise or an earlier one). So the target is at least max(result, value)
// afterwards, whichever thread wins. `on_raise` orders the raising store for
// a reader that acquires the target (the registry's count of used entries).
template <class T>
inline T raise_to(std::atomic<T>& target, std::type_identity_t<T> value,
                  std::memory_order on_raise = std::memory_order_relaxed) {
  T seen = target.load(std::memory_order_relaxed);
  while (seen < value && !target.compare_exchange_weak(seen, value, on_raise, std::memory_order_relaxed)) {
  }
  return seen;
}

}  // namespace heapline
