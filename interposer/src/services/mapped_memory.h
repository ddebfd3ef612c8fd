// Mapped memory: anonymous private mappings a program makes itself, outside
// malloc (Python's object arenas, a custom pool, a JIT's buffers), counted as
// their own series beside the heap.
//
// What is counted: the page-rounded length of each successful mmap/mmap64
// that is MAP_ANONYMOUS, MAP_PRIVATE and not PROT_NONE, minus what munmap
// and mremap later take away from it (a partial unmap, a shrink, a move, a
// MAP_FIXED mapping placed over it), tracked range by range in a RegionSet.
// Not counted, each for a reason:
//  - file-backed and shared mappings: they are not heap;
//  - PROT_NONE mappings: an address-space reservation holds no memory (a
//    later mprotect that opens it is not followed);
//  - glibc malloc's own large blocks: glibc maps them through its internal
//    __mmap, which never reaches the exported mmap; they are heap already;
//  - mappings made from the code of a foreign allocator that heapline
//    forwards to (jemalloc, tcmalloc, mimalloc): its arenas hold the blocks
//    the heap series already counts. The caller's return address tells its
//    code apart, so the allocation path pays nothing for this.
//
// The system calls go straight to the kernel (os.h), as glibc's
// wrappers do (no dlsym, so no bootstrap recursion); errno is the kernel's on
// failure and untouched on success. A mapping call is a system call that
// takes the kernel's mmap lock: the region set's mutex held around it costs
// nothing in comparison, and keeps an unmap and a new mapping of the same
// addresses in two threads in their true order. HEAPLINE_MAPPED=off turns
// all of it into plain forwarding.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "os.h"

namespace heapline::mapped {

// The exported entry points' work (mmap_override.cpp). `caller` is the
// return address of the program's call.
void* map(void* address, std::size_t length, int prot, int flags, int fd, off_t offset, const void* caller);
int unmap(void* address, std::size_t length);
void* remap(void* old_address, std::size_t old_length, std::size_t new_length, int flags, void* new_address);

// Off: every call is forwarded, nothing is tracked (HEAPLINE_MAPPED=off).
// Until the process's init calls configure(), mappings are tracked.
void configure(bool enabled);
bool enabled();

// The object (shared library or executable) that holds `code`: mappings made
// from its code are a foreign allocator's and are not counted.
void set_allocator_object(const void* code);
struct Figures {
  std::int64_t live;        // bytes counted now
  std::int64_t peak;        // largest live value of this process
  std::uint64_t peak_time_ns;  // CLOCK_MONOTONIC of the peak
  std::uint64_t changes;    // calls that changed the figure
  std::uint64_t untracked;  // counted mappings the region set had no room for
};
Figures figures();

namespace detail {
// The counted bytes now; own cache line, written only by mapping calls.
struct alignas(128) Live {
  std::atomic<std::int64_t> bytes{0};
  // `bytes` plus the growth that mapping calls in flight have claimed
  // before their system call (GrowthClaim in mapped_memory.cpp), never
  // below what is mapped: what the precision budget counts as mapped,
  // since the lent headroom must be taken back before heap + mapped can
  // grow into it (precision_budget.h, "Heap and mapped").
  std::atomic<std::int64_t> for_budget{0};
};
// Hidden, as in accounting.h: every heap publish reads it, and a hidden
// declaration reaches it rip-relative instead of through the GOT.
extern Live g_live __attribute__((visibility("hidden")));
}  // namespace detail
// Inline: every heap publish reads it (sampling.cpp).
inline std::int64_t live_bytes() { return detail::g_live.bytes.load(std::memory_order_relaxed); }
// Inline: every heap publish of allocated bytes reads it, before and after
// the step it checks against the budget's limit (sampling.cpp).
inline std::int64_t bytes_for_budget() { return detail::g_live.for_budget.load(std::memory_order_relaxed); }

// For a sample of the mapped series, which ends its open interval: the
// latest change since the previous sample (its CLOCK_MONOTONIC time, the
// bytes after it) and the largest value since that sample; or, with no
// change since, the bytes as they stood (changed false, time 0).
struct Interval {
  bool changed;
  std::uint64_t change_mono_ns;
  std::int64_t live;
  std::int64_t max;
};
Interval take_interval();

// In a fork child: the mappings were copied, the peak starts again at them.
void after_fork_in_child();

// The hook: called after each change of the counted bytes (now `live`, at
// CLOCK_MONOTONIC `now`; `open_max` the largest since the mapped series'
// latest sample), one change at a time, g_lock held. Declared here, where
// mapping lives, and defined by the layer that shows the figures (the
// accounting, sampling.cpp: the live file's latest mapping change, the peak
// of heap + mapped, a sample when one is due), which this layer never
// includes. Hidden: a direct call.
__attribute__((visibility("hidden"))) void on_change(std::int64_t live, std::uint64_t now, std::int64_t open_max);

// The other hook, before a mapping call that may add counted bytes makes
// its system call, once the growth it may make is in bytes_for_budget(),
// g_lock not held: the accounting takes back the headroom it lent below the
// peak of heap + mapped that the growth would use (precision_budget.h).
// Defined by the accounting (sampling.cpp).
__attribute__((visibility("hidden"))) void before_growth();

}  // namespace heapline::mapped
