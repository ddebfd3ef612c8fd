// Which clock a publish reads: a pure function of the sampling interval and
// of the coarse clock's tick, so that it is tested apart from the process.
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
// the kernel's last tick, with no TSC read: a few ns, nothing waited for.
// What it costs is resolution: a publish's time is up to one tick early
// (4 ms at HZ=250), so an interval ends up to one tick after it has passed
// and a sample may be drawn up to one tick before the publish it shows.
// That is kept below half the sampling interval; otherwise publishes read
// CLOCK_MONOTONIC. Peaks and samples themselves always read CLOCK_MONOTONIC.
#pragma once

#include <time.h>

#include <cstdint>

namespace heapline::accounting {

// `coarse_tick_ns`: clock_getres(CLOCK_MONOTONIC_COARSE), 0 if unknown.
inline clockid_t publish_clock_for(std::uint64_t interval_ns, std::uint64_t coarse_tick_ns) {
  const bool coarse_is_fine_enough = coarse_tick_ns != 0 && coarse_tick_ns <= interval_ns / 2;
  return coarse_is_fine_enough ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC;
}

}  // namespace heapline::accounting
