#include "heapline_bench/reports/render.h"

#include <filesystem>
#include <stdexcept>

#include "heapline_bench/reports/atomic_file.h"
#include "heapline_bench/reports/scenarios_export.h"
#include "heapline_bench/reports/plot_export.h"

namespace heapline::bench {

RenderResult render_history(const History& history, const Catalogue& catalogue, const RenderOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) throw std::runtime_error("cannot create " + options.out_dir + ": " + ec.message());

  RenderResult result;
  const auto changes = history_change_points(history, catalogue.names(), {}, static_cast<std::size_t>(options.plot_points));
  if (options.draw_plots && !history.entries.empty()) {
    auto outcome =
        draw_history_plots(history, catalogue.names(), options.out_dir + "/plots", options.plot_points, changes);
    result.plots = outcome.plots;
    result.plot_note = outcome.note;
  } else if (!options.draw_plots) {
    result.plot_note = "The plots were not drawn (rendered with --no-plots).";
  }
  result.page = options.out_dir + "/performance.md";
  write_file_atomically(result.page, history_page_markdown(history, catalogue, options, result.plot_note, changes));
  write_file_atomically(options.out_dir + "/scenarios.md", scenarios_markdown(catalogue));
  return result;
}

}  // namespace heapline::bench
