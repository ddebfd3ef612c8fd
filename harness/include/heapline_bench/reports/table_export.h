// The suite's result as a Markdown table (also readable in a terminal).
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/history/point.h"
#include "heapline_bench/measurement/machine.h"

namespace heapline::bench {

struct SuiteRow {
  std::string scenario;
  std::string command;
  bool measured = false;
  std::string failure;  // when !measured
  Point point;
};

std::string format_suite_table(const std::vector<SuiteRow>& rows, const std::string& library,
                               const Machine& machine);

}  // namespace heapline::bench
