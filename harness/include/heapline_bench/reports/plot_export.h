// The history plots: one SVG per scenario, drawn by one gnuplot process.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "heapline_bench/history/history.h"
#include "heapline_bench/verdicts/change_points.h"

namespace heapline::bench {

struct PlotOutcome {
  std::vector<std::string> plots;  // the SVG files drawn
  std::string note;                // for the page, when they could not be drawn
};

// Where a scenario's points go on the x axis: one integer slot per commit, in
// the order of the points (oldest first), labelled with the short SHA the
// table shows (or the date of a point without a commit). Points of several
// machines for one commit share its slot.
struct PlotLayout {
  std::vector<int> x;               // 1-based slot of each point
  std::vector<std::string> labels;  // label of each slot
};
PlotLayout plot_layout(const std::vector<const HistoryEntry*>& entries);

// The files of the plots, without writing or running anything: the gnuplot
// script (history.gp), which reads its data from and writes its SVGs into
// `work`, and each data file's name (in `work`) and text.
struct PlotFiles {
  std::string script;
  std::vector<std::pair<std::string, std::string>> data;
  std::vector<std::string> svgs;  // the file names the script writes, in `work`
};
PlotFiles plot_files(const History& history, const std::vector<std::string>& scenarios, const std::string& work,
                     int max_points, const std::vector<HistoryChange>& changes);

// Writes <scenario>.dat and <scenario>.svg into plot_dir for each scenario,
// the last `max_points` points of each: one series per machine (its key
// names the machine), each point a marker with its 95% interval, x as
// plot_layout(), a dashed line with its own key entry at each change point,
// the key below the plot. Without gnuplot, or when it fails,
// returns no plot and a note that says why; never throws for that.
PlotOutcome draw_history_plots(const History& history, const std::vector<std::string>& scenarios,
                               const std::string& plot_dir, int max_points,
                               const std::vector<HistoryChange>& changes);

}  // namespace heapline::bench
