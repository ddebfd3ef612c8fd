// x86-64: the interface of arch.h. Each in-place operation is one unlocked
// instruction with a memory operand (add, sub, inc, dec): a signal is taken
// between instructions, never inside one, and an aligned 8-byte access is
// never torn. No lock prefix: only the owner thread writes these words, so
// the read-modify-write needs to be indivisible on its own processor only.
#pragma once

#include <sys/syscall.h>
#include <time.h>

#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(hidden)
namespace heapline::arch {

namespace in_place {

// The word under an 8-byte integer or its atomic.
template <typename Word>
inline auto& word_of(Word& word) {
  static_assert(sizeof(Word) == 8);  // the q suffix: an immediate operand says no size of its own
  return reinterpret_cast<std::uint64_t&>(word);
}
template <typename Word, typename Value>
inline void add(Word& word, Value value) {
  asm volatile("addq %1, %0" : "+m"(word_of(word)) : "er"(static_cast<std::int64_t>(value)));
}
template <typename Word, typename Value>
inline void subtract(Word& word, Value value) {
  asm volatile("subq %1, %0" : "+m"(word_of(word)) : "er"(static_cast<std::int64_t>(value)));
}
template <typename Word>
inline void increment(Word& word) {
  asm volatile("incq %0" : "+m"(word_of(word)));
}
template <typename Word>
inline void decrement(Word& word) {
  asm volatile("decq %0" : "+m"(word_of(word)));
}
// The sign flag of the subtraction itself.
template <typename Word, typename Value>
inline bool subtract_turns_negative(Word& word, Value value) {
  bool negative;
  asm volatile("subq %2, %0" : "+m"(word_of(word)), "=@ccs"(negative) : "er"(static_cast<std::int64_t>(value)));
  return negative;
}
// x86 keeps a processor's stores in order for every reader; the clobber
// keeps the compiler from moving stores across.
template <typename Word>
inline void increment_ordered(Word& word) {
  asm volatile("incq %0" : "+m"(word_of(word)) : : "memory");
}

}  // namespace in_place

// lock cmpxchg16b: a full barrier, like every locked instruction. The
// address in a register and a memory clobber: the 16 bytes are two
// 8-byte atomics, which no 16-byte operand may name.
template <typename Word>
inline bool compare_exchange_pair(Word* pair, std::int64_t& expected0, std::int64_t& expected1,
                                  std::int64_t desired0, std::int64_t desired1) {
  static_assert(sizeof(Word) == 8);
  bool swapped;
  asm volatile("lock cmpxchg16b (%[pair])"
               : "=@ccz"(swapped), "+a"(expected0), "+d"(expected1)
               : [pair] "r"(pair), "b"(desired0), "c"(desired1)
               : "memory");
  return swapped;
}

// The system call as glibc makes it without a vDSO, in a few instructions
// rather than through syscall()'s six-argument shuffle.
inline int clock_gettime_by_system_call(clockid_t clock, timespec* now) {
  long result;
  asm volatile("syscall"
               : "=a"(result)
               : "0"(static_cast<long>(SYS_clock_gettime)), "D"(static_cast<long>(clock)), "S"(now)
               : "rcx", "r11", "memory");
  return result == 0 ? 0 : -1;
}
// The vDSO's name for it.
constexpr const char* kVdsoClockGettime = "__vdso_clock_gettime";

inline double square_root(double x) {
  double root;
  asm("sqrtsd %1, %0" : "=x"(root) : "x"(x));
  return root;
}

// Return addresses carry no tag on x86-64.
inline std::uintptr_t code_address(std::uintptr_t return_address) { return return_address; }

// The largest page a Linux kernel for this processor uses: what a range
// given to madvise must be aligned to and cover (x86-64 has 4 KiB pages;
// huge pages are a mapping's, never the kernel's page size).
constexpr std::size_t kLargestPageBytes = 4096;

// libunwind's local unwinder, by its names for this processor.
constexpr const char* kUnwinderSetCachingPolicy = "_ULx86_64_set_caching_policy";
constexpr const char* kUnwinderLocalAddressSpace = "_ULx86_64_local_addr_space";

// What a heap sample needs of the stack below the sampler's frame
// (heap_sampler.cpp): libunwind's context and cursor (2 KiB) and its
// frames, with room to spare.
constexpr std::size_t kSampleStackBytes = 8 * 1024;

// A thread's slot (accounting.h) starts a cache line of its own: the
// loader gives a library's initial-exec thread-local storage that
// alignment, also when a program loads it with dlopen.
constexpr std::size_t kThreadSlotAlignment = 64;

}  // namespace heapline::arch
#pragma GCC visibility pop
