#include "timeline_plot.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "child_process.h"

namespace heapline::launcher {

namespace fs = std::filesystem;

std::string gnuplot_string(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", byte);
      out += code;
      continue;
    }
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

namespace {

bool has_control_byte(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// The series drawn and the unit they are drawn in.
struct PlotLayout {
  const std::vector<Sample>* mapped_samples = nullptr;  // none: the heap alone
  const char* unit = "B";
  double scale = 1;
};

PlotLayout layout_of(const ParsedReport& report) {
  PlotLayout layout;
  // Mapped memory drawn beside the heap: its own line and heap + mapped,
  // sample by sample (the writer takes both series' samples at the same
  // moments, the mapped one just after: a process killed in between leaves
  // it one short, and its last value then holds).
  if (!report.mapped_samples.empty() && report.mapped_samples.size() + 1 >= report.samples.size() &&
      report.mapped_samples.size() <= report.samples.size()) {
    layout.mapped_samples = &report.mapped_samples;
  }
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double peak = static_cast<double>(report.peak_bytes);
  if (layout.mapped_samples != nullptr) peak = std::max(peak, static_cast<double>(report.total.peak_bytes));
  std::size_t unit = 0;
  while (peak / layout.scale >= 1024 && unit + 1 < std::size(kUnits)) {
    layout.scale *= 1024;
    ++unit;
  }
  layout.unit = kUnits[unit];
  return layout;
}

}  // namespace

std::string plot_output_problem(const fs::path& output) {
  if (plot_format_for(output) == PlotFormat::kUnknown) return "the file name must end in .png or .svg";
  if (has_control_byte(output.string())) return "the file name must not hold control characters";
  return "";
}

PlotFormat plot_format_for(const fs::path& output) {
  std::string extension = output.extension().string();
  for (auto& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".png") return PlotFormat::kPng;
  if (extension == ".svg") return PlotFormat::kSvg;
  return PlotFormat::kUnknown;
}

std::string plot_script(const ParsedReport& report, const fs::path& output, const fs::path& data) {
  const PlotLayout layout = layout_of(report);
  const bool mapped = layout.mapped_samples != nullptr;
  const bool png = plot_format_for(output) == PlotFormat::kPng;
  const std::string exe = fs::path(report.exe).filename().string();
  std::ostringstream script;
  script << (png ? "set terminal pngcairo size 1200,600 noenhanced font ',10'\n"
                 : "set terminal svg size 1200,600 dynamic noenhanced font 'sans,10'\n")
         << "set output " << gnuplot_string(fs::absolute(output).string()) << "\n"
         << "set title "
         << gnuplot_string((mapped ? "heap and mapped memory of " : "heap of ") + exe + " (pid " +
                           std::to_string(report.pid) + ")")
         << "\nset xlabel 'time (s)'\n"
         << "set ylabel " << gnuplot_string(std::string(mapped ? "bytes (" : "heap (") + layout.unit + ")") << "\n"
         << "set grid\nset key top left\nset yrange [0:*]\n";
  // Phase markers: a dashed vertical line each, labelled along it.
  if (!report.markers.empty()) {
    script << "set key bottom right opaque\n";  // the labels run down from the top
    for (const ReportMarker& marker : report.markers) {
      const double t = static_cast<double>(marker.t_ns) / 1e9;
      script << "set arrow from " << t << ", graph 0 to " << t
             << ", graph 1 nohead dashtype 2 lw 1 lc rgb '#606060' front\n"
             << "set label " << gnuplot_string(marker.name) << " at " << t
             << ", graph 0.98 rotate by 90 right offset -0.6,0 font ',9' tc rgb '#404040' front\n";
    }
  }
  if (!report.ended_by_exit()) {
    script << "set label " << gnuplot_string("ended without exit (last sample)") << " at graph 0.99, graph 0.04 right\n";
  }
  script << "plot " << gnuplot_string(data.string())
         << " using 1:3 with impulses lw 2 lc rgb '#e08040' title 'max since previous sample', \\\n"
         << "     '' using 1:2 with steps lw 2 lc rgb '#2060a0' title " << (mapped ? "'heap'" : "'live'");
  if (mapped) {
    script << ", \\\n     '' using 1:4 with steps lw 2 lc rgb '#30a050' title 'mapped', \\\n"
           << "     '' using 1:5 with steps lw 2 dt 2 lc rgb '#202020' title 'heap + mapped'";
  }
  script << "\n";
  return script.str();
}

PlotFiles write_plot_files(const ParsedReport& report, const fs::path& output) {
  std::string pattern = (fs::temp_directory_path() / "heapline-plot.XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
  PlotFiles files{pattern, fs::path(pattern) / "timeline.gp", fs::path(pattern) / "timeline.dat"};
  const PlotLayout layout = layout_of(report);
  {
    // Numbers only: nothing the program wrote.
    std::ofstream data(files.data);
    data << "# t_seconds live_" << layout.unit << " max_" << layout.unit;
    if (layout.mapped_samples != nullptr) data << " mapped_" << layout.unit << " total_" << layout.unit;
    data << "\n";
    data.precision(12);
    const std::vector<Sample>& samples = report.samples;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const Sample& sample = samples[i];
      data << static_cast<double>(sample.t_ns) / 1e9 << ' ' << static_cast<double>(sample.live) / layout.scale << ' '
           << static_cast<double>(sample.max_live) / layout.scale;
      if (layout.mapped_samples != nullptr) {
        const std::vector<Sample>& mapped_samples = *layout.mapped_samples;
        const double mapped = static_cast<double>(mapped_samples[std::min(i, mapped_samples.size() - 1)].live);
        data << ' ' << mapped / layout.scale << ' ' << (static_cast<double>(sample.live) + mapped) / layout.scale;
      }
      data << '\n';
    }
    if (!data) throw std::runtime_error("cannot write " + files.data.string());
  }
  std::ofstream script(files.script);
  script << plot_script(report, output, files.data);
  if (!script) throw std::runtime_error("cannot write " + files.script.string());
  return files;
}

std::string render_plot(const PlotFiles& files, const fs::path& output) {
  int status = run_helper({"gnuplot", files.script.string()});
  if (status == 127) {
    fs::remove_all(files.directory);
    return "heapline: gnuplot not found on PATH; no plot written (install gnuplot or gnuplot-nox)";
  }
  if (status != 0 || !fs::exists(output) || fs::file_size(output) == 0) {
    return "heapline: gnuplot failed (exit status " + std::to_string(status) + "); script kept in " +
           files.script.string();
  }
  fs::remove_all(files.directory);
  return "";
}

}  // namespace heapline::launcher
