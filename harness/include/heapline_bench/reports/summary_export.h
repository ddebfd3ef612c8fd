// The readable summary of one measurement (`overhead` without --json).
#pragma once

#include <string>

#include "heapline_bench/history/point.h"
#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {

// Several lines for people: the figure, the interval, medians and spread.
std::string format_summary(const Measurement& measurement, const Point& point);

}  // namespace heapline::bench
