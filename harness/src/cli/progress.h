// The commands' progress on stderr (reports/progress_line.h) and where their
// time goes.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "heapline_bench/reports/progress_line.h"

namespace heapline::bench {

// Where a command's time goes (the suite's phases, calibrate's scenarios,
// render): seconds since the start or since the previous lap.
class Stopwatch {
 public:
  using Clock = std::chrono::steady_clock;
  double lap() {
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  Clock::time_point last_ = Clock::now();
};

// "9.5 s" under ten seconds, "42 s" above.
inline std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, seconds < 10 ? "%.1f s" : "%.0f s", seconds);
  return text;
}

}  // namespace heapline::bench
