// coarse_clock_lag: how far CLOCK_MONOTONIC_COARSE is behind CLOCK_MONOTONIC
// on this machine, and how far a publish's time (the coarse reading plus one
// tick, interposer/src/base/publish_clock.h) is from CLOCK_MONOTONIC's.
//
//   coarse_clock_lag [READINGS]     (default 2000, after pauses of 0 to 5 ms)
//
// Each reading pairs a coarse reading with the precise ones just before and
// after it; the pauses land the readings at every phase of the tick. A
// reading whose precise pair is more than 20 us apart (the thread was held
// off the CPU in between) is left out and counted.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace {

std::int64_t read_ns(clockid_t clock) {
  timespec now;
  clock_gettime(clock, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  const long readings = argc > 1 ? std::atol(argv[1]) : 2000;
  timespec resolution{};
  clock_getres(CLOCK_MONOTONIC_COARSE, &resolution);
  const std::int64_t tick = resolution.tv_sec * 1'000'000'000 + resolution.tv_nsec;
  std::mt19937 random(1);
  double lag_sum = 0;
  long kept = 0, left_out = 0;
  std::int64_t lag_max = 0, lag_min = INT64_MAX, error_min = INT64_MAX, error_max = INT64_MIN;
  for (long i = 0; i < readings; ++i) {
    timespec pause{0, static_cast<long>(random() % 5'000'000)};
    nanosleep(&pause, nullptr);
    const std::int64_t before = read_ns(CLOCK_MONOTONIC);
    const std::int64_t coarse = read_ns(CLOCK_MONOTONIC_COARSE);
    const std::int64_t after = read_ns(CLOCK_MONOTONIC);
    if (after - before > 20'000) {
      ++left_out;
      continue;
    }
    ++kept;
    // The coarse reading was taken in [before, after]: its lag and the
    // error of coarse + tick, each at its worst over that span.
    const std::int64_t lag = after - coarse;
    lag_sum += static_cast<double>(before - coarse);
    lag_max = std::max(lag_max, lag);
    lag_min = std::min(lag_min, before - coarse);
    error_min = std::min(error_min, coarse + tick - after);
    error_max = std::max(error_max, coarse + tick - before);
  }
  if (kept == 0) return 1;
  std::printf("tick %.3f ms, %ld readings (%ld left out: held off the CPU)\n", tick / 1e6, kept, left_out);
  std::printf("CLOCK_MONOTONIC_COARSE behind CLOCK_MONOTONIC: mean %.3f ms, min %.3f ms, max %.3f ms\n",
              lag_sum / static_cast<double>(kept) / 1e6, lag_min / 1e6, lag_max / 1e6);
  std::printf("coarse + tick - CLOCK_MONOTONIC: from %+.3f ms to %+.3f ms\n", error_min / 1e6, error_max / 1e6);
  return 0;
}
