// The history plots: one SVG per scenario, drawn by one gnuplot process.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <heapline/output_file.h>

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

// The plots without writing or running anything: the gnuplot script
// (history.gp), which holds every plotted point (as datablocks) and writes
// each scenario's SVG into the directory it runs in, so that the published
// script alone draws the plots again; and the SVGs' file names.
struct PlotFiles {
  std::string script;
  std::vector<std::string> svgs;  // the file names the script writes, in its directory
};
PlotFiles plot_files(const History& history, const std::vector<std::string>& scenarios, int max_points,
                     const std::vector<HistoryChange>& changes);

// Stages <scenario>.svg and history.gp for plot_dir in `outputs` (committed
// by the caller with the page), the last `max_points`
// points of each scenario: three panels (wall clock, CPU time,
// instructions) on one x axis as plot_layout(), in each one series per
// machine and command (the key names the machine by name and fingerprint),
// each a line through the figures with its confidence interval as a band, a dashed
// line at each change point of the panel's figure, the key below. Without
// gnuplot, returns no plot and a note that says why; when gnuplot fails or
// leaves a picture that is not whole, throws std::runtime_error (one line,
// nothing staged is kept).
PlotOutcome draw_history_plots(const History& history, const std::vector<std::string>& scenarios,
                               const std::string& plot_dir, int max_points,
                               const std::vector<HistoryChange>& changes, heapline::OutputFiles& outputs);

// The files draw_history_plots() writes into its plot_dir.
std::vector<std::string> plot_file_names(const std::vector<std::string>& scenarios);

}  // namespace heapline::bench
