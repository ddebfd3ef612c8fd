#include "timeline_plot.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "child_process.h"

namespace heapline::launcher {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A gnuplot single-quoted string: a quote inside is doubled.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

}  // namespace

PlotFormat plot_format_for(const fs::path& output) {
  std::string extension = output.extension().string();
  for (auto& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".png") return PlotFormat::kPng;
  if (extension == ".svg") return PlotFormat::kSvg;
  return PlotFormat::kUnknown;
}

PlotFiles write_plot_files(const nlohmann::json& report, const fs::path& output) {
  std::string pattern = (fs::temp_directory_path() / "heapline-plot.XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
  PlotFiles files{pattern, fs::path(pattern) / "timeline.gp", fs::path(pattern) / "timeline.dat"};

  // Mapped memory drawn beside the heap: its own line and heap + mapped,
  // sample by sample (the writer ends both series' intervals at the same
  // moments, the mapped one just after: a process killed in between leaves
  // it one short, and its last value then holds). Each sample is drawn at
  // its own time, the sum at the later of the two: both values held then.
  const json* mapped_samples = nullptr;
  if (report.contains("mapped_samples") && !report.at("mapped_samples").empty() &&
      report.at("mapped_samples").size() + 1 >= report.at("samples").size() &&
      report.at("mapped_samples").size() <= report.at("samples").size()) {
    mapped_samples = &report.at("mapped_samples");
  }
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double peak = static_cast<double>(report.at("peak_bytes").get<std::int64_t>());
  if (mapped_samples != nullptr) peak = std::max(peak, report.at("total").at("peak_bytes").get<double>());
  std::size_t unit = 0;
  double scale = 1;
  while (peak / scale >= 1024 && unit + 1 < std::size(kUnits)) {
    scale *= 1024;
    ++unit;
  }
  {
    std::ofstream data(files.data);
    data << "# t_seconds live_" << kUnits[unit] << " max_" << kUnits[unit];
    if (mapped_samples != nullptr) {
      data << " mapped_" << kUnits[unit] << " total_" << kUnits[unit] << " mapped_t_seconds total_t_seconds";
    }
    data << "\n";
    data.precision(12);
    const auto& samples = report.at("samples");
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const auto& sample = samples[i];
      data << sample[0].get<double>() / 1e9 << ' ' << sample[1].get<double>() / scale << ' '
           << sample[2].get<double>() / scale;
      if (mapped_samples != nullptr) {
        const auto& mapped_sample = (*mapped_samples)[std::min(i, mapped_samples->size() - 1)];
        const double mapped = mapped_sample[1].get<double>();
        const double mapped_t = i < mapped_samples->size() ? mapped_sample[0].get<double>() : sample[0].get<double>();
        data << ' ' << mapped / scale << ' ' << (sample[1].get<double>() + mapped) / scale << ' ' << mapped_t / 1e9
             << ' ' << std::max(mapped_t, sample[0].get<double>()) / 1e9;
      }
      data << '\n';
    }
    if (!data) throw std::runtime_error("cannot write " + files.data.string());
  }

  const bool png = plot_format_for(output) == PlotFormat::kPng;
  std::string exe = fs::path(report.value("exe", std::string("?"))).filename().string();
  std::ofstream script(files.script);
  script << (png ? "set terminal pngcairo size 1200,600 noenhanced font ',10'\n"
                 : "set terminal svg size 1200,600 dynamic noenhanced font 'sans,10'\n")
         << "set output " << quoted(fs::absolute(output).string()) << "\n"
         << "set title "
         << quoted((mapped_samples != nullptr ? "heap and mapped memory of " : "heap of ") + exe + " (pid " +
                   std::to_string(report.value("pid", 0)) + ")")
         << "\nset xlabel 'time (s)'\n"
         << "set ylabel " << quoted(std::string(mapped_samples != nullptr ? "bytes (" : "heap (") + kUnits[unit] + ")")
         << "\n"
         << "set grid\nset key top left\nset yrange [0:*]\n";
  // Phase markers: a dashed vertical line each, labelled along it.
  if (report.contains("markers") && !report.at("markers").empty()) {
    script << "set key bottom right opaque\n";  // the labels run down from the top
    for (const auto& marker : report.at("markers")) {
      const double t = marker[0].get<double>() / 1e9;
      script << "set arrow from " << t << ", graph 0 to " << t
             << ", graph 1 nohead dashtype 2 lw 1 lc rgb '#606060' front\n"
             << "set label " << quoted(marker[1].get<std::string>()) << " at " << t
             << ", graph 0.98 rotate by 90 right offset -0.6,0 font ',9' tc rgb '#404040' front\n";
    }
  }
  if (report.value("ended", std::string("exit")) != "exit") {
    script << "set label " << quoted("ended without exit (last sample)") << " at graph 0.99, graph 0.04 right\n";
  }
  script
         << "plot " << quoted(files.data.string())
         << " using 1:3 with impulses lw 2 lc rgb '#e08040' title 'max since previous sample', \\\n"
         << "     '' using 1:2 with steps lw 2 lc rgb '#2060a0' title "
         << (mapped_samples != nullptr ? "'heap'" : "'live'");
  if (mapped_samples != nullptr) {
    script << ", \\\n     '' using 6:4 with steps lw 2 lc rgb '#30a050' title 'mapped', \\\n"
           << "     '' using 7:5 with steps lw 2 dt 2 lc rgb '#202020' title 'heap + mapped'";
  }
  script << "\n";
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
