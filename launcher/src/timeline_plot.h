// The heap line as a picture: a gnuplot script and its data in a temporary
// directory, rendered with pngcairo or svg according to the file's extension.
// Live bytes are drawn as steps, and each sampling interval's maximum as a
// band above the line (so a spike between two samples shows), in binary
// units chosen from the peak; the peak is marked with its value and time,
// the peak resident set is a dotted level (or named in the key when it is
// far above the data), and the key sits below the graph, outside the data.
// A run of several processes is drawn as a tree: heap + mapped of the
// command and of the largest processes, and their sum over time with its
// band (process_tree.h).
//
// Text from the program (its file name, its marker names) reaches the script
// only through heapline::gnuplot_string() (heapline/gnuplot_text.h, shared
// with heapline-bench): one string expression on one line, whatever the
// bytes. The data file holds numbers only. gnuplot runs with an argument
// vector, never through a shell.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <heapline/output_file.h>
#include <heapline/report_reader.h>

#include "process_tree.h"

namespace heapline::launcher {

enum class PlotFormat { kPng, kSvg, kUnknown };
PlotFormat plot_format_for(const std::filesystem::path& output);

// Why `output` cannot be the plot's file ("" when it can): an unknown
// extension, or a control character in the name (the script could not name
// it as it is).
std::string plot_output_problem(const std::filesystem::path& output);

struct PlotFiles {
  std::filesystem::path directory;  // of this run's own
  std::filesystem::path script;
  std::filesystem::path data;
  std::filesystem::path image;  // where gnuplot draws, in `directory`
};

// The script that draws `report` from `data` into `output`; the peak is
// marked with `peak_note` (what held most of it) when there is one.
std::string plot_script(const ParsedReport& report, const std::filesystem::path& output,
                        const std::filesystem::path& data, const std::string& peak_note = "");

// Writes the script and the data into a temporary directory; the script
// draws files.image there, in `output`'s format.
PlotFiles write_plot_files(const ParsedReport& report, const std::filesystem::path& output,
                           const std::string& peak_note = "");

// The script that draws the tree `tree` (the command's report first) from
// `data` into `output`, and the files for it.
std::string tree_plot_script(const std::vector<TreeReport>& tree, const std::filesystem::path& output,
                             const std::filesystem::path& data);
PlotFiles write_tree_plot_files(const std::vector<TreeReport>& tree, const std::filesystem::path& output);

// Runs gnuplot on the script and installs the picture at `output` (claimed
// in `outputs` before the command ran) by the output rule, when it is whole
// (heapline/plot_image.h). Returns "" or a message for stderr; the
// temporary directory is removed, except the script when gnuplot failed.
// What a failed gnuplot wrote on stderr goes to `gnuplot_said`, never to
// the terminal as it is.
std::string render_plot(const PlotFiles& files, const std::string& output, heapline::OutputFiles& outputs,
                        std::string& gnuplot_said);

}  // namespace heapline::launcher
