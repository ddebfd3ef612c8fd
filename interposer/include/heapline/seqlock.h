// The one seqlock of the library and of the readers of its live file: a
// sequence count that is odd while its writer changes the fields it guards,
// so that a reader that takes no lock (a sample, `heapline top`, another
// process through the shared file) knows when what it copied is whole. The
// kernel's seqcount_t, in the form that the C++ memory model allows: every
// guarded field an atomic accessed relaxed, a release fence after the count
// turns odd and an acquire fence before the reader checks it again (H.-J.
// Boehm, "Can seqlocks get along with programming language memory models?",
// MSPC 2012, figure 6).
//
// Header-only, no allocation, no exception, no system call: the library
// uses it inside the program's malloc and in signal handlers' samples.
#pragma once

#include <atomic>
#include <cstdint>

namespace heapline {

// A change of the fields under `seq`, for the scope of the object: the count
// is odd from construction to destruction, and one more than before each
// time it is even again. One writer at a time (the caller's lock or flag).
// A count left odd (a writer that died, a fork's copy of one mid-write)
// stays odd for this change and is even after it.
class SeqlockWrite {
 public:
  explicit SeqlockWrite(std::atomic<std::uint64_t>& seq) noexcept
      : seq_(seq), odd_(seq.load(std::memory_order_relaxed) | 1) {
    seq_.store(odd_, std::memory_order_relaxed);
    // The guarded stores that follow are not seen before the odd count.
    std::atomic_thread_fence(std::memory_order_release);
  }
  ~SeqlockWrite() { seq_.store(odd_ + 1, std::memory_order_release); }
  SeqlockWrite(const SeqlockWrite&) = delete;
  SeqlockWrite& operator=(const SeqlockWrite&) = delete;

 private:
  std::atomic<std::uint64_t>& seq_;
  const std::uint64_t odd_;
};

// Calls read() (which copies the fields under `seq`, relaxed) until a copy
// was made with no change begun or under way around it: true. After
// `retries` more copies that were not, false, and the last copy stays as it
// is: a writer that died mid-change (a killed process, a signal handler's
// sample interrupted for good) must not hold its reader forever.
template <class Read>
bool read_consistent(const std::atomic<std::uint64_t>& seq, int retries, Read&& read) {
  for (int attempt = 0;; ++attempt) {
    const std::uint64_t before = seq.load(std::memory_order_acquire);
    read();
    // The copy's loads are done before the count is read again.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (before % 2 == 0 && seq.load(std::memory_order_relaxed) == before) return true;
    if (attempt >= retries) return false;
  }
}

}  // namespace heapline
