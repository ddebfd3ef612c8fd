#include "heapline_bench/reports/table_export.h"

#include <algorithm>
#include <sstream>

#include "heapline_bench/reports/percent_format.h"

namespace heapline::bench {

std::string format_suite_table(const std::vector<SuiteRow>& rows, const std::string& library,
                               const Machine& machine) {
  std::vector<std::vector<std::string>> cells = {{"Scenario", "Overhead [95% CI]", "Median without", "Command"}};
  for (const auto& row : rows) {
    std::string figure = row.measured ? format_overhead(row.point.overhead, row.point.interval) : "failed";
    std::string baseline = "-";
    if (row.measured) {
      std::ostringstream s;
      s.precision(3);
      s << std::fixed << row.point.median_without_seconds << " s";
      baseline = s.str();
    }
    cells.push_back({"`" + row.scenario + "`", figure, baseline, "`" + row.command + "`"});
  }
  std::vector<std::size_t> widths(cells[0].size(), 0);
  for (const auto& line : cells)
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());

  std::ostringstream out;
  auto emit = [&](const std::vector<std::string>& line) {
    out << '|';
    for (std::size_t i = 0; i < line.size(); ++i) {
      const std::string pad(widths[i] - line[i].size(), ' ');
      out << ' ' << (i == 1 || i == 2 ? pad + line[i] : line[i] + pad) << " |";
    }
    out << '\n';
  };
  emit(cells[0]);
  out << '|';
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const bool right_aligned = i == 1 || i == 2;
    out << ' ' << std::string(widths[i] - (right_aligned ? 1 : 0), '-') << (right_aligned ? ":" : "") << " |";
  }
  out << '\n';
  for (std::size_t i = 1; i < cells.size(); ++i) emit(cells[i]);
  out << "\nLibrary: " << library << "\nMachine: " << machine.describe() << "\n";
  for (const auto& row : rows)
    if (!row.measured) out << "\n" << row.scenario << " failed: " << row.failure << "\n";
  return out.str();
}

}  // namespace heapline::bench
