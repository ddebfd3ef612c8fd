// Property target: no program file name or marker name, whatever its bytes,
// makes the gnuplot script of `heapline --plot` (of one process or of a
// tree) hold a line (or part of one) that the input did not own (tests/launcher/plot_script_property.h).
//
// Input: length-prefixed pieces (one byte of length, then the bytes): the
// first is the program's path, the others marker names.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "plot_script_property.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  heapline::ParsedReport report;
  report.pid = 42;
  report.samples = {{0, 10, 10}, {1000, 20, 30}};
  report.peak_bytes = 30;
  std::size_t at = 0;
  bool first = true;
  while (at < size) {
    const std::size_t length = std::min<std::size_t>(data[at], size - at - 1);
    std::string piece(reinterpret_cast<const char*>(data + at + 1), length);
    at += 1 + length;
    if (first) {
      report.exe = piece;
      first = false;
    } else {
      report.markers.push_back({static_cast<std::uint64_t>(report.markers.size()) * 100, piece});
    }
  }
  if (report.markers.size() % 2 == 1) report.ended = heapline::kEndedWithoutExit;  // the other label too
  std::string problem = heapline::test::plot_script_injection(report);
  if (problem.empty()) problem = heapline::test::tree_plot_script_injection(report);
  if (!problem.empty()) {
    std::fprintf(stderr, "plot_script: the input owns part of the script: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
