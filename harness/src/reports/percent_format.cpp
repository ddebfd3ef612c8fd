#include "heapline_bench/reports/percent_format.h"

#include <cstdio>

namespace heapline::bench {

std::string format_percent(double ratio, bool sign, int decimals) {
  char text[48];
  std::snprintf(text, sizeof text, sign ? "%+.*f" : "%.*f", decimals, ratio * 100);
  std::string out = text;
  // A rounded zero: every digit 0, whatever sign printf gave it.
  if (out.find_first_of("123456789") == std::string::npos) {
    out = sign ? "+0" : "0";
    if (decimals > 0) out.append(1, '.').append(static_cast<std::size_t>(decimals), '0');
  }
  return out;
}

std::string format_overhead(double overhead, const Interval& interval) {
  return format_percent(overhead) + "% [" + format_percent(interval.low, false) + ", " +
         format_percent(interval.high, false) + "]";
}

std::string format_instructions(double overhead) { return format_percent(overhead, true, 2) + "%"; }

std::string format_figure(Figure figure, double ratio, bool sign) {
  return format_percent(ratio, sign, figure == Figure::instructions ? 2 : 1);
}

}  // namespace heapline::bench
