// The history plots: one SVG per scenario, drawn by one gnuplot process.
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/history/history.h"
#include "heapline_bench/verdicts/change_points.h"

namespace heapline::bench {

struct PlotOutcome {
  std::vector<std::string> plots;  // the SVG files drawn
  std::string note;                // for the page, when they could not be drawn
};

// Writes <scenario>.dat and <scenario>.svg into plot_dir for each scenario,
// the last `max_points` points of each, with a dashed line at each change
// point. Without gnuplot, or when it fails,
// returns no plot and a note that says why; never throws for that.
PlotOutcome draw_history_plots(const History& history, const std::vector<std::string>& scenarios,
                               const std::string& plot_dir, int max_points,
                               const std::vector<HistoryChange>& changes);

}  // namespace heapline::bench
