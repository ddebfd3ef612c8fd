// Export formats of heapline-bench, one file each: the readable summary of a
// measurement, the suite's table, and the JSON point (point.h's to_json).
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/measurement.h"
#include "heapline_bench/point.h"

namespace heapline::bench {

// "+3.1% [2.4, 3.9]": the figure and its interval, in percent.
std::string format_overhead(double overhead, const Interval& interval);

// Several lines for people: the figure, the interval, medians and spread.
std::string format_summary(const Measurement& measurement, const Point& point);

struct SuiteRow {
  std::string scenario;
  std::string command;
  bool measured = false;
  std::string failure;  // when !measured
  Point point;
};

// The suite's result as a Markdown table (also readable in a terminal).
std::string format_suite_table(const std::vector<SuiteRow>& rows, const std::string& library,
                               const Machine& machine);

}  // namespace heapline::bench
