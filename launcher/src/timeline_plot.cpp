#include "timeline_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <heapline/figures.h>
#include <heapline/file_extension.h>
#include <heapline/gnuplot_text.h>
#include <heapline/output_file.h>
#include <heapline/plot_image.h>
#include <heapline/regular_file.h>
#include <heapline/temporary_directory.h>

#include "child_process.h"
#include "report_summary.h"

namespace heapline::launcher {

namespace fs = std::filesystem;

namespace {

double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }
double seconds_since(std::uint64_t unix_ns, std::uint64_t origin_unix_ns) {
  return unix_ns > origin_unix_ns ? seconds(unix_ns - origin_unix_ns) : 0.0;
}

// The binary unit the plot is drawn in, chosen from the largest value.
struct Unit {
  const char* name = "B";
  double scale = 1;
};
Unit unit_for(std::int64_t largest_bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  Unit unit;
  std::size_t index = 0;
  while (static_cast<double>(largest_bytes) / unit.scale >= 1024 && index + 1 < std::size(kUnits)) {
    unit.scale *= 1024;
    ++index;
  }
  unit.name = kUnits[index];
  return unit;
}

// The resident set beside the data: its series as read at samples (steps)
// and its peak (the kernel's high-water mark, or the series' largest
// reading without it) as a dotted level, both drawn when they lie within
// the scale of the data (up to 3 times its peak), else the peak named in
// the key alone (a small heap in a large process would be flattened).
struct Resident {
  bool known = false;
  bool drawn = false;
  std::int64_t bytes = 0;
  const std::vector<Sample>* series = nullptr;  // none: not in the report
};
Resident resident_of(const ParsedReport& report, std::int64_t data_peak) {
  Resident resident;
  if (!report.resident_samples.empty()) resident.series = &report.resident_samples;
  if (report.peak_rss_bytes) {
    resident.known = true;
    resident.bytes = *report.peak_rss_bytes;
  }
  for (const Sample& sample : report.resident_samples) {
    resident.known = true;
    resident.bytes = std::max({resident.bytes, sample.live, sample.max_live});
  }
  resident.drawn = resident.known && resident.bytes <= 3 * std::max<std::int64_t>(data_peak, 1);
  return resident;
}

// The terminal, the output and the frame. The key sits below the graph,
// outside the data; the ranges leave room past the end (for a mark on the
// last sample) and over the peak (for its label).
void write_frame(std::ostream& script, const fs::path& output, const std::string& title, const Unit& unit,
                 double t_end, double top) {
  const bool png = plot_format_for(output) == PlotFormat::kPng;
  script << (png ? "set terminal pngcairo size 1200,650 noenhanced font ',10'\n"
                 : "set terminal svg size 1200,650 dynamic noenhanced font 'sans,10'\n")
         << "set output " << gnuplot_string(fs::absolute(output).string()) << "\n"
         << "set title " << gnuplot_string(title) << "\n"
         << "set xlabel 'time (s)'\n"
         << "set ylabel " << gnuplot_string(std::string("bytes (") + unit.name + ")") << "\n"
         << "set grid\nset key below center horizontal samplen 3 spacing 1.1\n"
         << "set xrange [0:" << std::max(t_end, 1e-9) * 1.03 << "]\nset yrange [0:" << std::max(top, 1e-9) * 1.15
         << "]\n"
         << "set style textbox opaque noborder margins 1,1\n";
}

// A mark at the peak: a point and its value and time beside it, turned to
// the left in the last third of the run so it stays inside the graph.
void write_peak_mark(std::ostream& script, const std::string& text, double t, double value, double t_end) {
  const bool late = t_end > 0 && t > 0.66 * t_end;
  script << "set label " << gnuplot_string(text) << " at " << t << ", " << value << (late ? " right" : " left")
         << " boxed point pt 7 ps 1.2 lc rgb '#c02020' offset " << (late ? "-1" : "1") << ",0.9 tc rgb '#801010' front\n";
}

// Phase markers: a dashed vertical line each, the name along it in a box
// that hides the lines behind.
void write_markers(std::ostream& script, const std::vector<ReportMarker>& markers, double offset) {
  for (const ReportMarker& marker : markers) {
    const double t = offset + seconds(marker.t_ns);
    script << "set arrow from " << t << ", graph 0 to " << t
           << ", graph 1 nohead dashtype 2 lw 1 lc rgb '#606060' front\n"
           << "set label " << gnuplot_string(marker.name) << " at " << t
           << ", graph 0.98 rotate by 90 right boxed offset -0.9,0 font ',9' tc rgb '#303030' front\n";
  }
}

// The band of each interval: from the line's value during the interval (the
// previous point's) up to the largest value the interval held, two rows per
// interval so it is drawn as steps.
void write_band(std::ostream& data, const std::vector<Sample>& points, std::uint64_t origin, double scale) {
  for (std::size_t i = 1; i < points.size(); ++i) {
    const double low = static_cast<double>(points[i - 1].live) / scale;
    const double high = static_cast<double>(std::max(points[i].max_live, points[i - 1].live)) / scale;
    data << seconds_since(points[i - 1].t_ns, origin) << ' ' << low << ' ' << high << '\n'
         << seconds_since(points[i].t_ns, origin) << ' ' << low << ' ' << high << '\n';
  }
  if (points.size() < 2) data << "0 0 0\n";  // gnuplot refuses an empty block
}

const char* const kBandStyle = "with filledcurves fs transparent solid 0.35 noborder lc rgb '#e08040'";

// One process's picture: the series drawn, their unit and the peak marked.
struct ProcessPicture {
  const std::vector<Sample>* mapped_samples = nullptr;  // none: the heap alone
  PeakAt peak{};
  Resident resident;
  Unit unit;
};

ProcessPicture picture_of(const ParsedReport& report) {
  ProcessPicture picture;
  // Mapped memory drawn beside the heap: its own line and heap + mapped,
  // each series at its own times (memory_over_time).
  if (has_mapped_series(report)) picture.mapped_samples = &report.mapped_samples;
  picture.peak = picture.mapped_samples != nullptr ? whole_peak(report)
                                                   : PeakAt{report.peak_bytes, report.peak_time_ns};
  picture.resident = resident_of(report, picture.peak.bytes);
  picture.unit = unit_for(std::max(picture.peak.bytes, picture.resident.drawn ? picture.resident.bytes : 0));
  return picture;
}

std::string resident_title(const Resident& resident) {
  return "peak resident set " + human_bytes(resident.bytes) + (resident.drawn ? "" : " (above the scale)");
}

// The tree's picture: the sum over time, the largest processes and the
// command's, each with its own series.
struct TreePicture {
  std::uint64_t origin = 0;
  TreeSum sum;
  std::vector<const TreeReport*> shown;  // the command first, then the largest
  std::vector<std::vector<Sample>> series;
  Unit unit;
};

constexpr std::size_t kTreeLines = 6;

TreePicture tree_picture(const std::vector<TreeReport>& tree) {
  TreePicture picture;
  picture.origin = tree_origin_unix_ns(tree);
  picture.sum = sum_over_time(tree);
  if (!tree.empty()) picture.shown.push_back(&tree.front());
  for (const TreeReport* entry : largest_first(tree)) {
    if (picture.shown.size() == kTreeLines) break;
    if (entry != &tree.front()) picture.shown.push_back(entry);
  }
  for (const TreeReport* entry : picture.shown) picture.series.push_back(whole_memory(entry->report));
  picture.unit = unit_for(picture.sum.peak_bytes);
  return picture;
}

std::string process_title(const TreeReport& entry, bool command) {
  const ParsedReport& report = entry.report;
  std::string title = fs::path(report.exe).filename().string() + " (pid " + std::to_string(report.pid) +
                      (command ? ", the command" : "") + "): peak " + human_bytes(whole_peak(report).bytes);
  if (const std::optional<std::int64_t> resident = peak_resident_bytes(report)) title += ", resident " + human_bytes(*resident);
  return title;
}

}  // namespace

// The plot's formats, by extension (heapline/file_extension.h's rule), in
// PlotFormat's order.
constexpr std::string_view kPlotExtensions[] = {".png", ".svg"};

std::string plot_output_problem(const fs::path& output) {
  if (plot_format_for(output) == PlotFormat::kUnknown) return extension_rule(kPlotExtensions);
  return "";
}

PlotFormat plot_format_for(const fs::path& output) {
  switch (extension_index(output.native(), kPlotExtensions)) {
    case 0: return PlotFormat::kPng;
    case 1: return PlotFormat::kSvg;
    default: return PlotFormat::kUnknown;
  }
}

std::string plot_script(const ParsedReport& report, const fs::path& output, const fs::path& data,
                        const std::string& peak_note) {
  const ProcessPicture picture = picture_of(report);
  const bool mapped = picture.mapped_samples != nullptr;
  const std::string exe = fs::path(report.exe).filename().string();
  const double scale = picture.unit.scale;
  const double peak = static_cast<double>(picture.peak.bytes) / scale;
  const double resident = static_cast<double>(picture.resident.bytes) / scale;
  std::ostringstream script;
  script.precision(12);
  std::uint64_t last_ns = report.duration_ns;
  if (!report.samples.empty()) last_ns = std::max(last_ns, report.samples.back().t_ns);
  if (mapped) last_ns = std::max(last_ns, report.mapped_samples.back().t_ns);
  if (picture.resident.series != nullptr) last_ns = std::max(last_ns, picture.resident.series->back().t_ns);
  const double t_end = seconds(last_ns);
  write_frame(script, output,
              (mapped ? "heap and mapped memory of " : "heap of ") + exe + " (pid " + std::to_string(report.pid) + ")",
              picture.unit, t_end, std::max(peak, picture.resident.drawn ? resident : 0.0));
  write_markers(script, report.markers, 0);
  write_peak_mark(script,
                  "peak " + std::string(mapped ? "of heap + mapped " : "") + human_bytes(picture.peak.bytes) + " at " +
                      human_seconds(static_cast<std::int64_t>(picture.peak.t_ns)) +
                      (peak_note.empty() ? "" : "; most held by " + peak_note),
                  seconds(picture.peak.t_ns), peak, t_end);
  if (!report.ended_by_exit()) {
    script << "set label " << gnuplot_string("ended without exit (last sample)") << " at graph 0.99, graph 0.04 right\n";
  }
  const std::string source = gnuplot_string(data.string());
  script << "plot " << source << " index 1 using 1:2:3 " << kBandStyle << " title "
         << gnuplot_string(std::string("most ") + (mapped ? "heap + mapped" : "heap") + " since the previous sample")
         << ", \\\n     " << source << " index 0 using 1:2 with steps lw 2 lc rgb '#2060a0' title "
         << (mapped ? "'heap'" : "'live heap'");
  if (mapped) {
    script << ", \\\n     " << source << " index 0 using 1:4 with steps lw 2 lc rgb '#30a050' title 'mapped', \\\n"
           << "     " << source << " index 0 using 1:5 with steps lw 2 dt 2 lc rgb '#202020' title 'heap + mapped'";
  }
  if (picture.resident.known) {
    script << ", \\\n     " << resident << " with lines dt 3 lw 2 lc rgb '#8040a0' title "
           << gnuplot_string(resident_title(picture.resident));
  }
  if (picture.resident.series != nullptr && picture.resident.drawn) {
    script << ", \\\n     " << source
           << " index 2 using 1:2 with steps lw 2 lc rgb '#8040a0' title 'resident set (read at samples)'";
  }
  script << "\n";
  return script.str();
}

namespace {

// gnuplot's files in a directory of this run's own: the script, its data
// and the picture it draws, which render_plot() then installs by the
// output rule. gnuplot never writes the user's name itself (it would
// write through a link, into a FIFO or a device, and leave a cut file).
PlotFiles temporary_plot_files(const fs::path& output) {
  const fs::path directory = heapline::make_temporary_directory("heapline-plot.");
  return {directory, directory / "timeline.gp", directory / "timeline.dat",
          directory / (plot_format_for(output) == PlotFormat::kPng ? "heap.png" : "heap.svg")};
}

// A file of the temporary directory, written whole (its own, just made).
void write_temporary(const fs::path& path, const std::string& text) {
  heapline::write_output_file(path.string(), text);
}

}  // namespace

PlotFiles write_plot_files(const ParsedReport& report, const fs::path& output, const std::string& peak_note) {
  PlotFiles files = temporary_plot_files(output);
  const ProcessPicture picture = picture_of(report);
  const double scale = picture.unit.scale;
  {
    // Numbers only: nothing the program wrote. Block 0 the samples, block 1
    // the band of each interval's largest value.
    std::ostringstream data;
    data << "# t_seconds live_" << picture.unit.name << " max_" << picture.unit.name;
    if (picture.mapped_samples != nullptr) data << " mapped_" << picture.unit.name << " total_" << picture.unit.name;
    data << "\n";
    data.precision(12);
    for (const MemoryPoint& point : memory_over_time(report)) {
      data << seconds(point.t_ns) << ' ' << static_cast<double>(point.heap) / scale << ' '
           << static_cast<double>(point.heap_most) / scale;
      if (picture.mapped_samples != nullptr) {
        data << ' ' << static_cast<double>(point.mapped) / scale << ' '
             << static_cast<double>(bounded_sum(point.heap, point.mapped)) / scale;
      }
      data << '\n';
    }
    data << "\n\n# t_seconds low_" << picture.unit.name << " high_" << picture.unit.name << "\n";
    write_band(data, whole_memory(report), report.start_unix_ns, scale);
    if (picture.resident.series != nullptr) {
      // Block 2: the resident set as read at samples.
      data << "\n\n# t_seconds resident_" << picture.unit.name << "\n";
      for (const Sample& sample : *picture.resident.series) {
        data << seconds(sample.t_ns) << ' ' << static_cast<double>(sample.live) / scale << '\n';
      }
    }
    write_temporary(files.data, data.str());
  }
  write_temporary(files.script, plot_script(report, files.image, files.data, peak_note));
  return files;
}

std::string tree_plot_script(const std::vector<TreeReport>& tree, const fs::path& output, const fs::path& data) {
  const TreePicture picture = tree_picture(tree);
  const ParsedReport& command = tree.front().report;
  const double scale = picture.unit.scale;
  std::ostringstream script;
  script.precision(12);
  const double t_end = picture.sum.line.empty() ? 0 : seconds_since(picture.sum.line.back().t_ns, picture.origin);
  write_frame(script, output,
              "heap + mapped memory of " + fs::path(command.exe).filename().string() + " (pid " +
                  std::to_string(command.pid) + ") and the " + std::to_string(tree.size() - 1) +
                  (tree.size() == 2 ? " process" : " processes") + " it started",
              picture.unit, t_end, static_cast<double>(picture.sum.peak_bytes) / scale);
  write_markers(script, command.markers, seconds_since(command.start_unix_ns, picture.origin));
  const double peak_t = seconds_since(picture.sum.peak_unix_ns, picture.origin);
  write_peak_mark(script,
                  "together at most " + human_bytes(picture.sum.peak_bytes) + " at " +
                      human_seconds(static_cast<std::int64_t>(peak_t * 1e9)),
                  peak_t, static_cast<double>(picture.sum.peak_bytes) / scale, t_end);
  static const char* const kColours[] = {"#2060a0", "#30a050", "#c07020", "#8040a0", "#20a0a0", "#a02060"};
  const std::string source = gnuplot_string(data.string());
  script << "plot " << source << " index 1 using 1:2:3 " << kBandStyle << " title "
         << gnuplot_string("the sum's most since the previous sample") << ", \\\n     " << source
         << " index 0 using 1:2 with steps lw 2.5 lc rgb '#202020' title "
         << gnuplot_string("all " + std::to_string(tree.size()) + " processes together");
  for (std::size_t i = 0; i < picture.shown.size(); ++i) {
    script << ", \\\n     " << source << " index " << i + 2 << " using 1:2 with steps lw 1.5 lc rgb '"
           << kColours[i % std::size(kColours)] << "' title " << gnuplot_string(process_title(*picture.shown[i], i == 0));
  }
  script << "\n";
  return script.str();
}

PlotFiles write_tree_plot_files(const std::vector<TreeReport>& tree, const fs::path& output) {
  PlotFiles files = temporary_plot_files(output);
  const TreePicture picture = tree_picture(tree);
  const double scale = picture.unit.scale;
  {
    // Numbers only. Block 0 the sum, block 1 its band, then one block per
    // process shown: heap + mapped, in seconds from the first one's start.
    std::ostringstream data;
    data.precision(12);
    data << "# t_seconds sum_" << picture.unit.name << "\n";
    for (const Sample& point : picture.sum.line) {
      data << seconds_since(point.t_ns, picture.origin) << ' ' << static_cast<double>(point.live) / scale << '\n';
    }
    if (picture.sum.line.empty()) data << "0 0\n";
    data << "\n\n# t_seconds low_" << picture.unit.name << " high_" << picture.unit.name << "\n";
    write_band(data, picture.sum.line, picture.origin, scale);
    for (std::size_t i = 0; i < picture.series.size(); ++i) {
      data << "\n\n# pid " << picture.shown[i]->report.pid << ": t_seconds heap_and_mapped_" << picture.unit.name
           << "\n";
      for (const Sample& point : picture.series[i]) {
        data << seconds_since(point.t_ns, picture.origin) << ' ' << static_cast<double>(point.live) / scale << '\n';
      }
    }
    write_temporary(files.data, data.str());
  }
  write_temporary(files.script, tree_plot_script(tree, files.image, files.data));
  return files;
}

std::string render_plot(const PlotFiles& files, const std::string& output, heapline::OutputFiles& outputs,
                        std::string& gnuplot_said) {
  const HelperResult gnuplot = run_helper({"gnuplot", files.script.string()});
  std::error_code ignored;
  if (gnuplot.exited(127)) {
    fs::remove_all(files.directory, ignored);
    return "gnuplot not found on PATH; no plot written (install gnuplot or gnuplot-nox)";
  }
  std::string bytes, error;
  const bool succeeded = gnuplot.exited(0);
  if (succeeded) bytes = RegularFile::open(files.image.string()).read_all(std::size_t{1} << 30, error);
  const ImageFormat format = plot_format_for(output) == PlotFormat::kPng ? ImageFormat::kPng : ImageFormat::kSvg;
  if (!succeeded || !error.empty() || !image_is_whole(bytes, format)) {
    gnuplot_said = gnuplot.said;
    return "gnuplot failed (" + (!succeeded ? how_it_ended(gnuplot.wait_status) : "the picture it drew is not whole") +
           "); no plot written, script kept in " + files.script.string();
  }
  try {
    outputs.stage(output, bytes);
    outputs.commit();
  } catch (const OutputRefused& refused) {
    fs::remove_all(files.directory, ignored);
    return std::string("no plot written: ") + refused.what();
  }
  fs::remove_all(files.directory, ignored);
  return "";
}

}  // namespace heapline::launcher
