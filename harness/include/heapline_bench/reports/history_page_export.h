// The performance page's Markdown: the tables of the last measured commits,
// newest first, a row per commit and machine, with verdict marks; the plots'
// links; the change points; the library's own behaviour.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/verdicts/change_points.h"
#include "heapline_bench/verdicts/verdict.h"

namespace heapline::bench {

struct RenderOptions {
  std::string out_dir;         // docs/_generated
  // How many directories at the end of out_dir the render makes when they
  // are missing: 1 for a directory asked for (--out), in a directory that
  // exists; 2 for the default, docs/_generated, which the program names
  // itself (an installed heapline-bench runs where no docs/ is).
  std::size_t made_directories = 1;
  std::string store_label;     // how the page names its source, e.g. "bench-data/points.jsonl"
  int table_commits = 25;      // rows of the table
  int plot_points = 500;       // the most recent points of each scenario in its plot
  bool draw_plots = true;
  VerdictRule rule;            // for the verdict marks of the table
  std::vector<NoiseCalibration> calibrations;
};

// One row of the table: a measured commit on one machine, and that
// machine's newest point of the commit per scenario.
struct HistoryRow {
  std::string commit;       // may be empty (a local run outside git)
  std::string range_first;  // the oldest commit the row stands for, if several
  std::string measured_at;  // of the newest point of the row
  int machine = -1;         // index into History::machines; -1: a point without one
  std::vector<const HistoryEntry*> cells;  // one per scenario column; nullptr: not measured
};

// The rows of the page for the newest `limit` measured commits, newest
// first: one row per machine that measured the commit (the machine with the
// newest point first), so a step on any machine is in the table. A point
// without a commit is a row of its own.
std::vector<HistoryRow> history_rows(const History& history, const std::vector<std::string>& scenarios, int limit);

// The Markdown of the page (without writing anything).
std::string history_page_markdown(const History& history, const Catalogue& catalogue, const RenderOptions& options,
                                  const std::string& plot_note, const std::vector<HistoryChange>& changes = {});

}  // namespace heapline::bench
