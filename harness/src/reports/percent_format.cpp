#include "heapline_bench/reports/percent_format.h"

#include <cstdio>

namespace heapline::bench {

std::string format_percent(double ratio, bool sign) {
  char text[32];
  std::snprintf(text, sizeof text, sign ? "%+.1f" : "%.1f", ratio * 100);
  std::string out = text;
  if (out == "-0.0" || out == "+-0.0") out = sign ? "+0.0" : "0.0";
  return out;
}

std::string format_overhead(double overhead, const Interval& interval) {
  return format_percent(overhead) + "% [" + format_percent(interval.low, false) + ", " +
         format_percent(interval.high, false) + "]";
}

std::string format_instructions(double overhead) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.2f%%", overhead * 100);
  std::string out = text;
  return out == "-0.00%" ? "+0.00%" : out;
}

}  // namespace heapline::bench
