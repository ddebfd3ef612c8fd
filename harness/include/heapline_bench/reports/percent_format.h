// The one way heapline-bench writes a ratio as percent, so the summary, the
// suite's table, the page, the verdicts and the release comparison agree to
// the digit.
#pragma once

#include <string>

#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/statistics.h"

namespace heapline::bench {

// 0.0312 -> "+3.1" (signed) or "3.1" (unsigned): one decimal (or
// `decimals`), no percent sign. A rounded zero is never written "-0.0": that
// reads as a measurement.
std::string format_percent(double ratio, bool sign = true, int decimals = 1);

// "+3.1% [2.4, 3.9]": the figure and its interval, in percent.
std::string format_overhead(double overhead, const Interval& interval);

// The instruction figure: two decimals, as it repeats to far better than a
// tenth of a point. "+14.14%".
std::string format_instructions(double overhead);

// A figure's ratio without the percent sign: two decimals for instructions,
// one for the timed figures.
std::string format_figure(Figure figure, double ratio, bool sign = true);

}  // namespace heapline::bench
