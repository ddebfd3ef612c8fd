// aarch64 (arm64): the interface of arch.h.
//
// An add to memory is a load, an add and a store here, which a signal can
// split: the handler's change, made in between, would be lost when the
// interrupted store lands. Each in-place operation is therefore either
//   - one LSE atomic (ARMv8.1: stadd, or ldadd when the result is wanted),
//     relaxed: a single instruction, which a signal cannot split, with no
//     barrier; taken where getauxval(AT_HWCAP) has HWCAP_ATOMICS, read once
//     when the library is loaded (os.cpp); or, without them (ARMv8.0),
//   - a load-exclusive/store-exclusive loop: a signal taken between the two
//     returns through an exception return, which clears the exclusive
//     monitor, so the interrupted store-exclusive fails and the loop starts
//     again from a load that sees the handler's change.
// The choice costs a load of a read-mostly byte and a branch the predictor
// learns at once; until the library's constructor has run (allocations of
// libraries loaded before it) every call takes the loop, which is as
// correct, only longer.
#pragma once

#include <sys/syscall.h>
#include <time.h>

#include <cstddef>
#include <cstdint>

#pragma GCC visibility push(hidden)
namespace heapline::arch {

namespace in_place {

// Whether this processor has the LSE atomics: set once, at load. A plain
// read, which the compiler may share between the operations of one call
// (a thread that some library's constructor started before the library's
// own reads either value, and both are correct).
extern bool g_lse_atomics;
inline bool lse_atomics() { return __builtin_expect(g_lse_atomics, 1); }

template <typename Word>
inline std::uint64_t& word_of(Word& word) {
  static_assert(sizeof(Word) == 8);
  return reinterpret_cast<std::uint64_t&>(word);
}

// word += value in the exclusive loop, returning the word's new value.
inline std::uint64_t add_exclusively(std::uint64_t& word, std::uint64_t value) {
  std::uint64_t sum;
  std::uint32_t failed;
  asm volatile(
      "0:\n\t"
      "ldxr %x0, %2\n\t"
      "add %x0, %x0, %x3\n\t"
      "stxr %w1, %x0, %2\n\t"
      "cbnz %w1, 0b"
      : "=&r"(sum), "=&r"(failed), "+Q"(word)
      : "r"(value));
  return sum;
}

// word += value, returning nothing: stadd, or the exclusive loop.
inline void add_word(std::uint64_t& word, std::uint64_t value) {
  if (lse_atomics()) {
    asm volatile(".arch_extension lse\n\tstadd %x1, %0" : "+Q"(word) : "r"(value));
  } else {
    add_exclusively(word, value);
  }
}

// word += value, returning the word's new value: ldadd (which returns the
// old one), or the exclusive loop.
inline std::uint64_t add_word_and_read(std::uint64_t& word, std::uint64_t value) {
  if (lse_atomics()) {
    std::uint64_t old;
    asm volatile(".arch_extension lse\n\tldadd %x2, %x0, %1" : "=r"(old), "+Q"(word) : "r"(value));
    return old + value;
  }
  return add_exclusively(word, value);
}

template <typename Word, typename Value>
inline void add(Word& word, Value value) {
  add_word(word_of(word), static_cast<std::uint64_t>(value));
}
template <typename Word, typename Value>
inline void subtract(Word& word, Value value) {
  add_word(word_of(word), -static_cast<std::uint64_t>(value));
}
template <typename Word>
inline void increment(Word& word) {
  add_word(word_of(word), 1);
}
template <typename Word>
inline void decrement(Word& word) {
  add_word(word_of(word), ~std::uint64_t{0});
}
// The sign of the value this very change gave the word.
template <typename Word, typename Value>
inline bool subtract_turns_negative(Word& word, Value value) {
  return static_cast<std::int64_t>(add_word_and_read(word_of(word), -static_cast<std::uint64_t>(value))) < 0;
}
// Between two full barriers (dmb ish): ordered after every earlier store
// and before every later one, for any reader.
template <typename Word>
inline void increment_ordered(Word& word) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  add_word(word_of(word), 1);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

}  // namespace in_place

// With the LSE atomics, caspal (compare and swap pair, acquire and
// release): the registers of each pair consecutive and even-numbered, the
// first one the lower address. Without them, an exclusive pair loop: a
// pair read by ldaxp is single-copy atomic only once a store-exclusive
// of it succeeds, so a pair that differs from the expected one is stored
// back as read before it is reported. Both full barriers for the words
// around (acquire-release on the pair, with the fences of
// compare_exchange's seq_cst kept by the clobber and dmb).
template <typename Word>
inline bool compare_exchange_pair(Word* pair, std::int64_t& expected0, std::int64_t& expected1,
                                  std::int64_t desired0, std::int64_t desired1) {
  static_assert(sizeof(Word) == 8);
  const std::int64_t want0 = expected0, want1 = expected1;
  if (in_place::lse_atomics()) {
    register std::int64_t seen0 asm("x0") = want0;
    register std::int64_t seen1 asm("x1") = want1;
    register std::int64_t new0 asm("x2") = desired0;
    register std::int64_t new1 asm("x3") = desired1;
    asm volatile(".arch_extension lse\n\tcaspal x0, x1, x2, x3, [%[pair]]"
                 : "+r"(seen0), "+r"(seen1)
                 : [pair] "r"(pair), "r"(new0), "r"(new1)
                 : "memory");
    expected0 = seen0;
    expected1 = seen1;
  } else {
    std::int64_t seen0, seen1;
    std::uint32_t failed;
    asm volatile(
        "0:\n\t"
        "ldaxp %[seen0], %[seen1], [%[pair]]\n\t"
        "cmp %[seen0], %[want0]\n\t"
        "ccmp %[seen1], %[want1], #0, eq\n\t"
        "b.ne 1f\n\t"
        "stlxp %w[failed], %[new0], %[new1], [%[pair]]\n\t"
        "cbnz %w[failed], 0b\n\t"
        "b 2f\n"
        "1:\n\t"
        "stlxp %w[failed], %[seen0], %[seen1], [%[pair]]\n\t"
        "cbnz %w[failed], 0b\n"
        "2:"
        : [seen0] "=&r"(seen0), [seen1] "=&r"(seen1), [failed] "=&r"(failed)
        : [pair] "r"(pair), [want0] "r"(want0), [want1] "r"(want1), [new0] "r"(desired0), [new1] "r"(desired1)
        : "cc", "memory");
    expected0 = seen0;
    expected1 = seen1;
  }
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  return expected0 == want0 && expected1 == want1;
}

// The system call as glibc makes it without a vDSO: svc with the number in
// x8, the arguments in x0 and x1, the result in x0.
inline int clock_gettime_by_system_call(clockid_t clock, timespec* now) {
  register long number asm("x8") = SYS_clock_gettime;
  register long result asm("x0") = clock;
  register timespec* where asm("x1") = now;
  asm volatile("svc #0" : "+r"(result) : "r"(number), "r"(where) : "memory");
  return result == 0 ? 0 : -1;
}
// The vDSO's name for it.
constexpr const char* kVdsoClockGettime = "__kernel_clock_gettime";

inline double square_root(double x) {
  double root;
  asm("fsqrt %d0, %d1" : "=w"(root) : "w"(x));
  return root;
}

// A return address signed by pointer authentication (code built with
// -mbranch-protection, as Ubuntu's is) carries its signature in the bits
// above the virtual address: xpaclri clears them. It is in the hint space,
// a no-op on a processor without pointer authentication.
inline std::uintptr_t code_address(std::uintptr_t return_address) {
  register std::uintptr_t link asm("x30") = return_address;
  asm("hint #7" : "+r"(link));  // xpaclri
  return link;
}

// The largest page a Linux kernel for this processor uses: what a range
// given to madvise must be aligned to and cover. arm64 kernels are built
// for 4, 16 (Apple's processors, Asahi) or 64 KiB pages (RHEL's, some
// servers'): a 4 KiB-aligned range is refused (EINVAL) by the latter two,
// or, where it starts a page, its advice covers the whole page.
constexpr std::size_t kLargestPageBytes = 65536;

// libunwind's local unwinder, by its names for this processor.
constexpr const char* kUnwinderSetCachingPolicy = "_ULaarch64_set_caching_policy";
constexpr const char* kUnwinderLocalAddressSpace = "_ULaarch64_local_addr_space";

// What a heap sample needs of the stack below the sampler's frame
// (heap_sampler.cpp). Debian's arm64 libunwind is built with .debug_frame
// support: a capture there looks for each object's separate debug file and
// maps the ELF files it reads, with path buffers on the stack. Measured: a
// thread with 20 KiB left takes a sample, one with 19.5 KiB overflows.
constexpr std::size_t kSampleStackBytes = 32 * 1024;

// A thread's slot (accounting.h) is 16-byte aligned only, not a cache line:
// glibc's loader here places a library's initial-exec thread-local storage
// loaded with dlopen in its static TLS block only when it asks for no more
// than that block's alignment, and refuses one aligned to 64 ("cannot
// allocate memory in static TLS block"): a program that dlopens the
// library would get an error rather than the library's word that it sees
// no allocations. The slot's hot 64 bytes may then straddle two lines.
constexpr std::size_t kThreadSlotAlignment = 16;

}  // namespace heapline::arch
#pragma GCC visibility pop
