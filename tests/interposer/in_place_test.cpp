// The hot path's in-place counters (interposer/src/base/arch.h), on the
// processor the tests were built for: the values each operation leaves and
// reports; on aarch64, the instructions chosen at load (LSE atomics exactly
// where the processor has them; ctest runs these tests again on an ARMv8.0
// processor under qemu, which takes the exclusive loops); and on x86-64 the
// rule itself: a signal handler that changes the word after any single
// instruction of an operation loses nothing (the trap flag raises SIGTRAP
// after every instruction; a load/add/store would lose the handler's
// change made between its load and its store).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/auxv.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "arch.h"

#if defined(__aarch64__)
#include <asm/hwcap.h>
#endif

namespace {

namespace in_place = heapline::arch::in_place;

TEST(InPlace, EachOperationLeavesItsValue) {
  std::int64_t word = 10;
  in_place::add(word, 32);
  EXPECT_EQ(word, 42);
  in_place::subtract(word, 50);
  EXPECT_EQ(word, -8);
  in_place::increment(word);
  EXPECT_EQ(word, -7);
  in_place::decrement(word);
  in_place::decrement(word);
  EXPECT_EQ(word, -9);
  in_place::increment_ordered(word);
  EXPECT_EQ(word, -8);

  std::atomic<std::uint64_t> count{UINT64_MAX};
  in_place::increment(count);
  EXPECT_EQ(count.load(), 0u) << "wraps round as unsigned";
  in_place::decrement(count);
  EXPECT_EQ(count.load(), UINT64_MAX);
  std::atomic<std::int64_t> headroom{INT64_MIN / 2};
  in_place::add(headroom, std::int64_t{1} << 60);
  EXPECT_EQ(headroom.load(), INT64_MIN / 2 + (std::int64_t{1} << 60));
  in_place::subtract(headroom, std::int64_t{1} << 60);
  EXPECT_EQ(headroom.load(), INT64_MIN / 2);
}

TEST(InPlace, SubtractTurnsNegativeReportsTheSignOfItsOwnResult) {
  std::atomic<std::int64_t> word{5};
  EXPECT_FALSE(in_place::subtract_turns_negative(word, 5)) << "zero is not negative";
  EXPECT_EQ(word.load(), 0);
  EXPECT_TRUE(in_place::subtract_turns_negative(word, 1));
  EXPECT_EQ(word.load(), -1);
  EXPECT_FALSE(in_place::subtract_turns_negative(word, -1));
  EXPECT_EQ(word.load(), 0);
  // A size_t as the sampler's meter passes it.
  std::int64_t meter = 4096;
  EXPECT_FALSE(in_place::subtract_turns_negative(meter, std::size_t{4095}));
  EXPECT_TRUE(in_place::subtract_turns_negative(meter, std::size_t{2}));
  EXPECT_EQ(meter, -1);
  // At the ends of the range: the sign of the word as stored.
  word.store(INT64_MIN + 1);
  EXPECT_TRUE(in_place::subtract_turns_negative(word, 1));
  EXPECT_FALSE(in_place::subtract_turns_negative(word, 1)) << "INT64_MIN - 1 wraps to INT64_MAX";
  EXPECT_EQ(word.load(), INT64_MAX);
}

#if defined(__aarch64__)
TEST(InPlace, TheLseAtomicsAreChosenExactlyWhereTheProcessorHasThem) {
  const bool has_them = (getauxval(AT_HWCAP) & HWCAP_ATOMICS) != 0;
  EXPECT_EQ(in_place::lse_atomics(), has_them);
  std::printf("this processor %s the LSE atomics: the in-place counters use %s\n", has_them ? "has" : "lacks",
              has_them ? "stadd and ldadd" : "exclusive loops");
}
#endif

#if defined(__x86_64__)
std::int64_t* g_target = nullptr;
volatile sig_atomic_t g_traps = 0;

// What a signal handler that allocates does to the same word: a change of
// its own, through the same operation.
void on_trap(int, siginfo_t*, void*) {
  g_traps = g_traps + 1;
  in_place::add(*g_target, 1);
}

// Runs `operation` with the trap flag set: SIGTRAP after each instruction.
// Returns the number of traps, each of which added 1 to `word`.
template <typename Operation>
std::int64_t single_stepped(std::int64_t& word, Operation operation) {
  struct sigaction action {}, previous{};
  action.sa_sigaction = on_trap;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTRAP, &action, &previous);
  g_target = &word;
  g_traps = 0;
  asm volatile("pushfq\n\torq $0x100, (%%rsp)\n\tpopfq" : : : "memory", "cc");
  operation();
  asm volatile("pushfq\n\tandq $~0x100, (%%rsp)\n\tpopfq" : : : "memory", "cc");
  sigaction(SIGTRAP, &previous, nullptr);
  return g_traps;
}

TEST(InPlace, AHandlerAfterAnyInstructionOfAnOperationLosesNothing) {
  std::int64_t word = 1000;
  std::int64_t traps = single_stepped(word, [&] { in_place::add(word, 7); });
  EXPECT_GT(traps, 0);
  EXPECT_EQ(word, 1000 + 7 + traps) << "add";
  word = 1000;
  traps = single_stepped(word, [&] { in_place::subtract(word, 7); });
  EXPECT_EQ(word, 1000 - 7 + traps) << "subtract";
  word = 1000;
  traps = single_stepped(word, [&] { in_place::increment(word); });
  EXPECT_EQ(word, 1000 + 1 + traps) << "increment";
  word = 1000;
  traps = single_stepped(word, [&] { in_place::decrement(word); });
  EXPECT_EQ(word, 1000 - 1 + traps) << "decrement";
  word = 1000;
  traps = single_stepped(word, [&] { in_place::increment_ordered(word); });
  EXPECT_EQ(word, 1000 + 1 + traps) << "increment_ordered";
  word = 1000;
  volatile bool negative = true;
  traps = single_stepped(word, [&] { negative = in_place::subtract_turns_negative(word, 7); });
  EXPECT_EQ(word, 1000 - 7 + traps) << "subtract_turns_negative";
  EXPECT_FALSE(negative);
}
#endif

// The pair's compare-and-swap: swaps only when both words hold what is
// expected, reports what they held otherwise, and is one atomic step for
// other threads (two threads that each add 1 to both words through it
// never leave the words apart, and lose no step). With the LSE atomics
// and without (arm64's two paths) alike.
TEST(ComparePair, SwapsBothWordsOnlyWhenBothMatchAndNeverTearsThem) {
  alignas(16) std::atomic<std::int64_t> pair[2] = {{5}, {9}};
  std::int64_t e0 = 5, e1 = 8;
  EXPECT_FALSE(heapline::arch::compare_exchange_pair(&pair[0], e0, e1, 1, 2)) << "the second word differs";
  EXPECT_EQ(e0, 5);
  EXPECT_EQ(e1, 9);
  EXPECT_EQ(pair[0].load(), 5);
  EXPECT_EQ(pair[1].load(), 9);
  EXPECT_TRUE(heapline::arch::compare_exchange_pair(&pair[0], e0, e1, -1, 1LL << 62));
  EXPECT_EQ(pair[0].load(), -1);
  EXPECT_EQ(pair[1].load(), 1LL << 62);
  pair[0] = 0;
  pair[1] = 0;
  constexpr int kSteps = 200000;
  std::atomic<bool> apart{false};
  auto climb = [&] {
    for (int i = 0; i < kSteps; ++i) {
      std::int64_t seen0 = pair[0].load(std::memory_order_relaxed), seen1 = pair[1].load(std::memory_order_relaxed);
      while (!heapline::arch::compare_exchange_pair(&pair[0], seen0, seen1, seen0 + 1, seen1 + 1)) {
        if (seen0 != seen1) apart = true;  // a failed step reads the pair whole
      }
    }
  };
  std::thread a(climb), b(climb);
  a.join();
  b.join();
  EXPECT_FALSE(apart.load());
  EXPECT_EQ(pair[0].load(), 2 * kSteps);
  EXPECT_EQ(pair[1].load(), 2 * kSteps);
}

}  // namespace
