// The heap line as a picture: a gnuplot script and its data in a temporary
// directory, rendered with pngcairo or svg according to the file's extension.
// Live bytes are drawn as steps, each interval's maximum as an impulse (so a
// spike between two samples shows), in binary units chosen from the peak.
#pragma once

#include <filesystem>
#include <string>

#include <heapline/report_reader.h>

namespace heapline::launcher {

enum class PlotFormat { kPng, kSvg, kUnknown };
PlotFormat plot_format_for(const std::filesystem::path& output);

struct PlotFiles {
  std::filesystem::path directory;
  std::filesystem::path script;
  std::filesystem::path data;
};

// Writes the script and the data; the script writes to `output`.
PlotFiles write_plot_files(const ParsedReport& report, const std::filesystem::path& output);

// Runs gnuplot on the script. Returns "" or a message for stderr; the
// temporary directory is removed when gnuplot succeeded.
std::string render_plot(const PlotFiles& files, const std::filesystem::path& output);

}  // namespace heapline::launcher
