#include "heapline_bench/reports/scenarios_export.h"

#include <sstream>

#include "heapline_bench/reports/escaping.h"

namespace heapline::bench {

std::string scenarios_markdown(const Catalogue& catalogue) {
  std::ostringstream out;
  out << "| Scenario | Command | What it shows |\n|---|---|---|\n";
  for (const auto& s : catalogue.scenarios)
    out << "| " << markdown_code(s.name) << " | " << markdown_code(s.display_command()) << " | " << markdown_text(s.shows)
        << " |\n";
  return out.str();
}

}  // namespace heapline::bench
