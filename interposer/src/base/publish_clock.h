// Which clock a publish reads, and what it adds to the reading: pure
// functions of the sampling interval and of the coarse clock's tick, so
// that they are tested apart from the process.
//
// Why not always CLOCK_MONOTONIC. A publish needs the time for two things:
// whether the sampling interval has passed, and its own time, which becomes
// a sample's time when it is the last publish of an interval. Reading
// CLOCK_MONOTONIC costs about 25 ns alone, but on the x86 vDSO it starts
// with an ordered TSC read (lfence, or rdtscp), which waits for every
// instruction before it, the program's cache misses included: inside an
// allocation-heavy loop a publish then costs several times that, about a
// fifth of heapline's whole CPU overhead on churn-4t (docs/design.md, "The
// publish's clock"). CLOCK_MONOTONIC_COARSE is the same time base read from
// the kernel's last update, with no TSC read: a few ns, nothing waited for.
//
// What it costs is resolution, and more than its tick: the kernel advances
// the coarse clock at a tick by whole ticks counted from its own
// clocksource grid, so a reading shows the last grid point before the
// latest tick, up to one tick behind that tick, itself up to one tick
// behind now. It lags CLOCK_MONOTONIC by 0 to 2 ticks (measured here with
// a 4 ms tick: 5.2 ms on average, 7.5 ms at most; microbench/
// coarse_clock_lag.cpp). A publish therefore adds one tick to the coarse
// reading: its time is then within one tick of CLOCK_MONOTONIC's, early or
// late. That is kept below half the sampling interval, where an interval
// ends up to one tick early or late; otherwise publishes read
// CLOCK_MONOTONIC. Peaks and samples themselves always read CLOCK_MONOTONIC.
#pragma once

#include <time.h>

#include <cstdint>

namespace heapline::accounting {

struct PublishClock {
  clockid_t clock;
  std::uint64_t offset_ns;  // added to each reading
};

// `coarse_tick_ns`: clock_getres(CLOCK_MONOTONIC_COARSE), 0 if unknown.
inline PublishClock publish_clock_for(std::uint64_t interval_ns, std::uint64_t coarse_tick_ns) {
  const bool coarse_is_fine_enough = coarse_tick_ns != 0 && coarse_tick_ns <= interval_ns / 2;
  if (coarse_is_fine_enough) return {CLOCK_MONOTONIC_COARSE, coarse_tick_ns};
  return {CLOCK_MONOTONIC, 0};
}

}  // namespace heapline::accounting
