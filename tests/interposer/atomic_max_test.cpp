// The one lock-free raise of a shared maximum (atomic_max.h), under the
// peaks, the interval's maximum, the counts of threads and the markers'
// times: what it stores, what it returns (whether this call raised, and the
// larger value that stopped it), and no raise lost among threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "atomic_max.h"

namespace {

using heapline::raise_to;

TEST(AtomicMax, ALargerValueIsStoredAndTheCallReturnsWhatWasThere) {
  std::atomic<std::int64_t> peak{10};
  const std::int64_t before = raise_to(peak, 25);
  EXPECT_EQ(before, 10) << "below the value: this call raised it";
  EXPECT_EQ(peak.load(), 25);
}

TEST(AtomicMax, ASmallerOrEqualValueChangesNothingAndTheCallReturnsTheLargerOne) {
  // A marker whose clock reading is before the latest marker's takes the
  // latest's time from the result, and leaves the latest as it was.
  std::atomic<std::uint64_t> latest{700};
  EXPECT_EQ(raise_to(latest, 500), 700u);
  EXPECT_EQ(latest.load(), 700u);
  EXPECT_EQ(raise_to(latest, 700), 700u) << "an equal value is no raise";
  EXPECT_EQ(latest.load(), 700u);
}

TEST(AtomicMax, NegativeAndMinimalValuesCompareAsSignedNumbers) {
  std::atomic<std::int64_t> interval_max{INT64_MIN};  // no publish yet
  EXPECT_EQ(raise_to(interval_max, -5), INT64_MIN);
  EXPECT_EQ(interval_max.load(), -5);
  EXPECT_EQ(raise_to(interval_max, -9), -5);
  EXPECT_EQ(interval_max.load(), -5);
}

TEST(AtomicMax, ANarrowerValueRaisesAWiderCounter) {
  std::atomic<std::uint64_t> max_threads{3};
  const std::uint32_t registered = 4;
  EXPECT_EQ(raise_to(max_threads, registered), 3u);
  EXPECT_EQ(max_threads.load(), 4u);
}

TEST(AtomicMax, ThreadsRaisingTogetherLoseNoRaiseAndEachSeesTheTruth) {
  // Four threads raise one maximum through interleaved values. The end is
  // the largest value any of them offered, the maximum is never below a
  // value once offered, and every call's verdict is true: it raised (and
  // returned less than its value) or it returned a value at least its own.
  constexpr int kThreads = 4;
  constexpr std::int64_t kSteps = 20000;
  std::atomic<std::int64_t> maximum{-1};
  std::atomic<std::int64_t> raises{0};
  std::atomic<int> untrue{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::int64_t step = 0; step < kSteps; ++step) {
        const std::int64_t value = step * kThreads + t;
        if (raise_to(maximum, value) < value) raises.fetch_add(1);
        if (maximum.load() < value) untrue.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(maximum.load(), kSteps * kThreads - 1);
  EXPECT_EQ(untrue.load(), 0) << "the maximum fell below a value offered";
  // The thread that offered the largest value raised to it, at least.
  EXPECT_GE(raises.load(), 1);
}

}  // namespace
