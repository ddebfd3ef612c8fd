#include "heapline_bench/reports/scenarios_export.h"

#include <sstream>

namespace heapline::bench {

std::string scenarios_markdown(const Catalogue& catalogue) {
  std::ostringstream out;
  out << "| Scenario | Command | What it shows |\n|---|---|---|\n";
  for (const auto& s : catalogue.scenarios)
    out << "| `" << s.name << "` | `" << s.display_command() << "` | " << s.shows << " |\n";
  return out.str();
}

}  // namespace heapline::bench
