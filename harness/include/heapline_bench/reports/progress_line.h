// What a long measurement tells the person waiting for it, on stderr: the
// scenario, the run and its side, the time elapsed and an estimate of what is
// left. On a terminal one line redrawn in place, at each run and every
// `every_seconds` between them (a run of a large scenario can take a
// minute); anywhere else (a CI log, a pipe) a plain line at the first run and
// then at most every `every_seconds`, so a log shows progress without
// filling up.
#pragma once

#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {

// "9.5 s" under ten seconds, "42 s" under a minute, "3 min 05 s", "1 h 02 min".
std::string duration_text(double seconds);

// One progress line (no newline): "[2/5] churn-4t: run 3/10 with the library,
// 1 min 05 s elapsed, ~2 min 10 s left".
std::string progress_text(const std::string& prefix, const std::string& scenario, const PlannedRun& run,
                          int runs, double elapsed_seconds, double seconds_left);

class ProgressLine {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  // On stderr, drawn in place when it is a terminal, a ticker thread
  // between runs.
  explicit ProgressLine(std::string prefix = {});
  // For tests: where, how, how often, which clock; no ticker thread (tick()
  // is called by hand).
  ProgressLine(std::string prefix, std::FILE* out, bool terminal, double every_seconds, Clock clock);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void show(const ProgressEvent& event);
  // Between events: the last run's line with the time now.
  void tick();
  // Erases a drawn line (a terminal): the caller prints its result next.
  void clear();

 private:
  struct Last {
    std::string scenario;
    PlannedRun run;
    int runs;
    double at;            // the clock when the event came
    double seconds_left;  // then; < 0 unknown
  };
  void print_locked(double now);

  std::string prefix_;
  std::FILE* out_;
  bool terminal_;
  double every_seconds_;
  Clock clock_;
  std::optional<double> started_;
  std::optional<double> printed_;  // the clock at the last plain line
  std::optional<Last> last_;
  bool drawn_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread ticker_;
};

}  // namespace heapline::bench
