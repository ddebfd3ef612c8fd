#include "heapline_bench/reports/render.h"

#include <filesystem>
#include <stdexcept>

#include "heapline_bench/reports/scenarios_export.h"
#include "heapline_bench/reports/plot_export.h"

namespace heapline::bench {

void claim_render_outputs(const Catalogue& catalogue, const RenderOptions& options, heapline::OutputFiles& outputs) {
  // The page's directory is made when missing (the default's docs/ too);
  // the one it is in must exist.
  const heapline::OutputRules rules{.made_directories = options.made_directories};
  outputs.claim("", options.out_dir + "/performance.md", rules);
  outputs.claim("", options.out_dir + "/scenarios.md", rules);
  outputs.claim("", options.out_dir + "/release-comparison.md", rules);
  if (options.draw_plots) {
    // plots/ is the page's own directory: never a link to another.
    const heapline::OutputRules plot_rules{.made_directories = options.made_directories + 1, .own_directories = 1};
    for (const auto& name : plot_file_names(catalogue.names()))
      outputs.claim("", options.out_dir + "/plots/" + name, plot_rules);
  }
}

RenderResult render_history(const History& history, const Catalogue& catalogue, const RenderOptions& options,
                            heapline::OutputFiles* outputs) {
  heapline::OutputFiles own;
  heapline::OutputFiles& files = outputs != nullptr ? *outputs : own;
  if (outputs == nullptr) claim_render_outputs(catalogue, options, files);

  RenderResult result;
  const auto changes = history_change_points(history, catalogue.names(), {}, static_cast<std::size_t>(options.plot_points));
  if (options.draw_plots && !history.entries.empty()) {
    auto outcome = draw_history_plots(history, catalogue.names(), options.out_dir + "/plots", options.plot_points,
                                      changes, files);
    result.plots = outcome.plots;
    result.plot_note = outcome.note;
  } else if (!options.draw_plots) {
    result.plot_note = "The plots were not drawn (rendered with --no-plots).";
  }
  result.page = options.out_dir + "/performance.md";
  files.stage(result.page, history_page_markdown(history, catalogue, options, result.plot_note, changes));
  files.stage(options.out_dir + "/scenarios.md", scenarios_markdown(catalogue));
  if (outputs == nullptr) files.commit();
  return result;
}

}  // namespace heapline::bench
