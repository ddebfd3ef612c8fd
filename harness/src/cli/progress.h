// The progress line on stderr: drawn only when stderr is a terminal, so logs
// and CI output stay clean.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {

class ProgressLine {
 public:
  explicit ProgressLine(std::string prefix = {}) : prefix_(std::move(prefix)), enabled_(isatty(STDERR_FILENO) == 1) {}
  ~ProgressLine() { clear(); }

  void show(const ProgressEvent& event) {
    if (!enabled_) return;
    std::string what = event.run.warmup() ? "warm-up" : "run " + std::to_string(event.run.pair + 1) + "/" +
                                                            std::to_string(event.request->runs);
    std::string left = event.seconds_left >= 0 ? ", ~" + std::to_string(static_cast<long>(event.seconds_left + 0.5)) + " s left" : "";
    std::fprintf(stderr, "\r\033[K%s%s: %s %s the library%s", prefix_.c_str(), event.request->scenario.c_str(),
                 what.c_str(), side_name(event.run.side), left.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
  void clear() {
    if (drawn_) std::fputs("\r\033[K", stderr);
    drawn_ = false;
  }

 private:
  std::string prefix_;
  bool enabled_;
  bool drawn_ = false;
};

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
