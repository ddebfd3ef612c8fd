// The text `heapline-bench overhead` prints for one measurement
// (summary_export.h): each figure on its line, in its unit, from the
// measurement and the point made from it.
#include "heapline_bench/reports/summary_export.h"

#include <gtest/gtest.h>

#include <string>

#include "heapline_bench/history/point.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/reports/percent_format.h"

namespace heapline::bench {
namespace {

RunResult run_of(double wall_seconds) {
  RunResult run;
  run.wall_seconds = wall_seconds;
  return run;
}

struct Measured {
  Measurement m;
  Point point;
};

Measured measured() {
  Measured x;
  x.m.request.library = "/lib/libheapline.so";
  x.m.request.runs = 3;
  x.m.with_runs = {run_of(1.25), run_of(1.5), run_of(1.125)};
  x.m.without_runs = {run_of(0.5), run_of(0.25), run_of(0.375)};
  x.m.median_with = 1.25;
  x.m.median_without = 0.375;
  x.m.overhead = 0.25;
  x.m.interval = {0.125, 0.375};
  x.m.bootstrap.confidence = 0.9;
  x.point.scenario = "churn-4t";
  x.point.library = "heapline 0.5.0 (/lib/libheapline.so)";
  x.point.command = "bench/malloc_churn 4";
  x.point.machine.cpu_model = "Test CPU";
  x.point.machine.cores = 2;
  return x;
}

TEST(OverheadSummary, EachFigureOnItsLineInItsUnit) {
  Measured x = measured();
  x.point.cpu = RunFigure{0.0625, {0.03125, 0.125}, 2.5, 0.75};
  x.point.instructions = InstructionFigure{0.05, 1050, 1000};
  x.point.library_report.publishes_per_1000_calls = 12.345;
  x.point.library_report.extra_peak_rss_kib = 256;
  EXPECT_EQ(format_summary(x.m, x.point),
            "churn-4t\n"
            "  overhead  " + format_overhead(0.25, {0.125, 0.375}) +
                "  (90% bootstrap interval, 3 interleaved runs per side)\n"
                "  with      median 1.250 s  (range 1.125 s .. 1.500 s)\n"
                "  without   median 375.0 ms  (range 250.0 ms .. 500.0 ms)\n"
                "  cpu       " + format_overhead(0.0625, {0.03125, 0.125}) +
                "  (user+sys CPU time, median 2.500 s with, 750.0 ms without)\n"
                "  instructions " + format_instructions(0.05) + "  (callgrind, reduced command: 1050 with, 1000 without)\n"
                "  heapline  12.35 publishes per 1000 calls, +256 KiB peak RSS\n"
                "  library   heapline 0.5.0 (/lib/libheapline.so)\n"
                "  command   bench/malloc_churn 4\n"
                "  machine   " + x.point.machine.describe() + "\n");
}

// What was not measured is left out, never printed as a zero; an A/A run
// says so; a peak RSS below the run without the library keeps its sign.
TEST(OverheadSummary, WhatWasNotMeasuredIsLeftOut) {
  Measured x = measured();
  const std::string text = format_summary(x.m, x.point);
  for (const char* absent : {"\n  cpu ", "\n  instructions ", "\n  heapline  ", "A/A"})
    EXPECT_EQ(text.find(absent), std::string::npos) << absent << "\n" << text;

  x.m.request.library.clear();
  x.point.library_report.publishes_per_1000_calls = 0.5;
  x.point.library_report.extra_peak_rss_kib = -12;
  const std::string aa = format_summary(x.m, x.point);
  EXPECT_EQ(aa.substr(0, aa.find('\n')), "churn-4t (A/A: the same command on both sides)");
  EXPECT_NE(aa.find("\n  heapline  0.50 publishes per 1000 calls, -12 KiB peak RSS\n"), std::string::npos) << aa;
  x.point.library_report.extra_peak_rss_kib.reset();
  const std::string no_rss = format_summary(x.m, x.point);
  EXPECT_NE(no_rss.find("\n  heapline  0.50 publishes per 1000 calls\n"), std::string::npos) << no_rss;
}

}  // namespace
}  // namespace heapline::bench
