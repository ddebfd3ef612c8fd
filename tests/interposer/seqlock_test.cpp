// The one seqlock (heapline/seqlock.h), which guards the live file's
// figures, the latest mapping change, the peak profile and the timeline's
// merges: the count's values, the reader's verdicts and retries, and a
// reader beside a writer never taking a torn copy as whole.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "heapline/seqlock.h"

namespace {

using heapline::read_consistent;
using heapline::SeqlockWrite;

TEST(Seqlock, TheCountIsOddDuringAChangeAndOneEvenStepOnAfterIt) {
  std::atomic<std::uint64_t> seq{4};
  {
    const SeqlockWrite change(seq);
    EXPECT_EQ(seq.load(), 5u);
  }
  EXPECT_EQ(seq.load(), 6u);
  // A count a dead writer left odd stays odd for the next change, and is
  // even after it.
  seq.store(7);
  {
    const SeqlockWrite change(seq);
    EXPECT_EQ(seq.load(), 7u);
  }
  EXPECT_EQ(seq.load(), 8u);
}

TEST(Seqlock, AQuietCountGivesAWholeCopyAtTheFirstRead) {
  std::atomic<std::uint64_t> seq{6};
  int reads = 0;
  EXPECT_TRUE(read_consistent(seq, 1000, [&] { ++reads; }));
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(seq.load(), 6u) << "a reader writes nothing";
}

// A writer that never finishes (killed mid-change): the reader copies
// 1 + retries times, says the copy is not whole, and keeps the last.
TEST(Seqlock, AChangeThatNeverEndsIsRetriedThenGivenUp) {
  std::atomic<std::uint64_t> seq{2};
  const SeqlockWrite change(seq);
  for (const int retries : {0, 1, 50}) {
    int reads = 0;
    EXPECT_FALSE(read_consistent(seq, retries, [&] { ++reads; })) << retries;
    EXPECT_EQ(reads, retries + 1);
  }
}

// A change begun and ended while the reader copied (the count moved by
// two, even again) is caught by the count, not by its parity: the copy is
// taken again.
TEST(Seqlock, ACopyThatAWholeChangeOverlappedIsTakenAgain) {
  std::atomic<std::uint64_t> seq{0};
  int reads = 0;
  EXPECT_TRUE(read_consistent(seq, 1000, [&] {
    if (++reads == 1) {
      const SeqlockWrite change(seq);
    }
  }));
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(seq.load(), 2u);
}

// A writer thread changes two fields that must agree (b == 2a), again and
// again; a reader beside it takes copies. Every copy said whole holds
// b == 2a. (On x86 a torn copy is one where the reader ran between the two
// stores: the test fails on a seqlock that lets one through.)
TEST(Seqlock, AReaderBesideAWriterNeverTakesATornCopyAsWhole) {
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::uint64_t> a{0};
  std::atomic<std::uint64_t> b{0};
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint64_t value = 1; value <= 200'000; ++value) {
      const SeqlockWrite change(seq);
      a.store(value, std::memory_order_relaxed);
      // A change that takes a while, as the live file's figures do: a
      // reader beside it has time to copy half of it.
      for (volatile int spin = 0; spin < 50; spin = spin + 1) {
      }
      b.store(2 * value, std::memory_order_relaxed);
    }
    done.store(true);
  });
  std::uint64_t whole = 0;
  std::uint64_t torn_taken = 0;
  while (!done.load()) {
    std::uint64_t copy_a = 0;
    std::uint64_t copy_b = 0;
    if (read_consistent(seq, 0, [&] {
          copy_a = a.load(std::memory_order_relaxed);
          copy_b = b.load(std::memory_order_relaxed);
        })) {
      ++whole;
      if (copy_b != 2 * copy_a) ++torn_taken;
    }
  }
  writer.join();
  EXPECT_EQ(torn_taken, 0u) << "of " << whole << " copies said whole";
  EXPECT_EQ(seq.load(), 400'000u);
}

}  // namespace
