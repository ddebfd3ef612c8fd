// The performance page written out: from the history to
// docs/_generated/performance.md (history_page_export.h), the scenario table
// (scenarios_export.h) and one SVG plot per scenario drawn by gnuplot
// (plot_export.h), linked with relative paths.
#pragma once

#include <string>
#include <vector>

#include <heapline/output_file.h>

#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/reports/history_page_export.h"

namespace heapline::bench {

struct RenderResult {
  std::string page;                // path of performance.md
  std::vector<std::string> plots;  // paths of the SVG files drawn
  std::string plot_note;           // why plots are missing, when they are
};

// Claims (heapline/output_file.h) every file a render writes into
// options.out_dir: the page, the scenario table, the release comparison
// and, with plots, each scenario's SVG and history.gp. Throws
// heapline::OutputRefused, before any work, for one that cannot be written.
void claim_render_outputs(const Catalogue& catalogue, const RenderOptions& options, heapline::OutputFiles& outputs);

// The page, the scenario table and the plots for options.out_dir, by the
// output rule: staged in `outputs` (claimed with claim_render_outputs; the
// caller commits them), or, without, claimed, written and renamed into
// place together. A render that fails (gnuplot, a full disk) replaces none
// of the files an earlier render wrote.
RenderResult render_history(const History& history, const Catalogue& catalogue, const RenderOptions& options,
                            heapline::OutputFiles* outputs = nullptr);

}  // namespace heapline::bench
