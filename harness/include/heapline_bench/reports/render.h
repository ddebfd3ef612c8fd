// The performance page written out: from the history to
// docs/_generated/performance.md (history_page_export.h), the scenario table
// (scenarios_export.h) and one SVG plot per scenario drawn by gnuplot
// (plot_export.h), linked with relative paths.
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/reports/history_page_export.h"

namespace heapline::bench {

struct RenderResult {
  std::string page;                // path of performance.md
  std::vector<std::string> plots;  // paths of the SVG files drawn
  std::string plot_note;           // why plots are missing, when they are
};

// Writes the page, the scenario table and the plots into options.out_dir.
// Each file is written to a temporary name and renamed into place.
RenderResult render_history(const History& history, const Catalogue& catalogue, const RenderOptions& options);

}  // namespace heapline::bench
