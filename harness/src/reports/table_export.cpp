#include "heapline_bench/reports/table_export.h"

#include <algorithm>
#include <sstream>

#include "heapline_bench/reports/escaping.h"
#include "heapline_bench/reports/percent_format.h"

namespace heapline::bench {

std::string format_suite_table(const std::vector<SuiteRow>& rows, const std::string& library,
                               const Machine& machine) {
  std::vector<std::vector<std::string>> cells = {
      {"Scenario", "Wall [" + confidence_level_text() + " CI]", "CPU [" + confidence_level_text() + " CI]", "Instructions", "Publishes / 1000 calls", "Median without",
       "Command"}};
  for (const auto& row : rows) {
    if (!row.measured) {
      cells.push_back({markdown_code(row.scenario), "failed", "-", "-", "-", "-", markdown_code(row.command)});
      continue;
    }
    const Point& p = row.point;
    std::ostringstream baseline, publishes;
    baseline.precision(3);
    baseline << std::fixed << p.median_without_seconds << " s";
    publishes.precision(2);
    if (p.library_report.publishes_per_1000_calls) publishes << std::fixed << *p.library_report.publishes_per_1000_calls;
    else publishes << "-";
    cells.push_back({markdown_code(row.scenario), format_overhead(p.overhead, p.interval),
                     p.cpu ? format_overhead(p.cpu->overhead, p.cpu->interval) : "-",
                     p.instructions ? format_instructions(p.instructions->overhead) : "-", publishes.str(),
                     baseline.str(), markdown_code(row.command)});
  }
  auto right_aligned = [](std::size_t column) { return column >= 1 && column <= 5; };
  std::vector<std::size_t> widths(cells[0].size(), 0);
  for (const auto& line : cells)
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());

  std::ostringstream out;
  auto emit = [&](const std::vector<std::string>& line) {
    out << '|';
    for (std::size_t i = 0; i < line.size(); ++i) {
      const std::string pad(widths[i] - line[i].size(), ' ');
      out << ' ' << (right_aligned(i) ? pad + line[i] : line[i] + pad) << " |";
    }
    out << '\n';
  };
  emit(cells[0]);
  out << '|';
  for (std::size_t i = 0; i < widths.size(); ++i) {
    out << ' ' << std::string(widths[i] - (right_aligned(i) ? 1 : 0), '-') << (right_aligned(i) ? ":" : "") << " |";
  }
  out << '\n';
  for (std::size_t i = 1; i < cells.size(); ++i) emit(cells[i]);
  // Below the table, for the terminal: each on its one line.
  out << "\nLibrary: " << displayable(library) << "\nMachine: " << displayable(machine.describe()) << "\n";
  for (const auto& row : rows)
    if (!row.measured) out << "\n" << row.scenario << " failed: " << row.failure << "\n";
  return out.str();
}

}  // namespace heapline::bench
