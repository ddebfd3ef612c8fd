// heapline: run a command with libheapline.so preloaded.
//
//   heapline [--out F] [--plot F.png|F.svg] [--summary] [--quiet] [--lib PATH] -- CMD ARGS...
//
// The command's exit status is passed through (128+N when signal N killed
// it). After it ends, a summary of the root process's report goes to stderr
// and, with --plot, the heap line is drawn with gnuplot. The launcher's own
// problems after the command ran (no report, no gnuplot) are reported but
// never change the exit status.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "child_process.h"
#include "library_locator.h"
#include "output_naming.h"
#include "report_summary.h"
#include "timeline_plot.h"

namespace fs = std::filesystem;
using namespace heapline::launcher;

namespace {

constexpr int kUsageError = 2;

struct Options {
  std::string out;
  std::string plot;
  std::string lib;
  bool per_process_summary = false;
  bool quiet = false;
  std::vector<std::string> command;
};

void prepend_preload(const fs::path& library) {
  std::string value = library.string();
  if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing != 0) {
    value += ":";
    value += existing;
  }
  setenv("LD_PRELOAD", value.c_str(), 1);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"heapline: run a command and record its live heap over time, with its peak.",
               "heapline"};
  app.footer(
      "usage: heapline [OPTIONS] [--] CMD [ARGS...]\n\n"
      "The report (heapline/1 JSON) is written by the command's process itself at exit;\n"
      "processes it starts write their own, with their pid inserted before the extension.\n"
      "Settings for the library: HEAPLINE_PRECISION (exact | MIN_BYTES[,DIVISOR]),\n"
      "HEAPLINE_INTERVAL_MS (sampling interval, default 10).");
  app.add_option("--out", options.out,
                 "report file for the command's process (%p pid, %e command name; "
                 "default heapline.<command>.<pid>.json)");
  app.add_option("--plot", options.plot, "draw the heap line into this .png or .svg file (needs gnuplot)");
  app.add_flag("--summary", options.per_process_summary,
               "also let every traced process print its own one-line summary");
  app.add_flag("-q,--quiet", options.quiet, "no summary from the launcher");
  app.add_option("--lib", options.lib, "libheapline.so to preload (default: $HEAPLINE_LIB, else next to heapline)");

  // Everything from the command on belongs to it: split there before CLI11
  // sees the arguments, so an unknown heapline flag is an error rather than
  // the start of the command, and the command's own flags are never parsed.
  std::vector<std::string> own_args;
  int command_start = argc;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      command_start = i + 1;
      break;
    }
    if (arg.empty() || arg[0] != '-') {
      command_start = i;
      break;
    }
    own_args.push_back(arg);
    if ((arg == "--out" || arg == "--plot" || arg == "--lib") && i + 1 < argc) own_args.push_back(argv[++i]);
  }
  for (int i = command_start; i < argc; ++i) options.command.push_back(argv[i]);

  try {
    std::reverse(own_args.begin(), own_args.end());  // CLI11 takes them last-first
    app.parse(own_args);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& error) {
    std::cerr << "heapline: " << error.what() << "\n" << app.help();
    return kUsageError;
  }
  if (options.command.empty()) {
    std::cerr << "heapline: no command given\n" << app.help();
    return kUsageError;
  }
  if (!options.plot.empty() && plot_format_for(options.plot) == PlotFormat::kUnknown) {
    std::cerr << "heapline: --plot " << options.plot << ": the file name must end in .png or .svg\n";
    return kUsageError;
  }

  LibraryChoice choice;
  auto library = locate_library(options.lib, choice);
  if (!library) {
    std::cerr << "heapline: cannot find libheapline.so (looked at " << choice.tried
              << "); give its path with --lib or HEAPLINE_LIB\n";
    return kUsageError;
  }

  std::fflush(stdout);
  ChildResult child = run_command(options.command, [&](pid_t pid) {
    // Runs in the child before exec: its own pid names the root report.
    prepend_preload(*library);
    setenv("HEAPLINE_OUT", root_output_path(options.out, options.command.front(), pid).c_str(), 1);
    setenv("HEAPLINE_ROOT_PID", std::to_string(pid).c_str(), 1);
    if (options.per_process_summary) setenv("HEAPLINE_SUMMARY", "1", 1);
  });
  if (!child.started) return child.exit_status;

  const std::string report_path = root_output_path(options.out, options.command.front(), child.pid);
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(std::ifstream(report_path));
  } catch (const std::exception&) {
    std::cerr << "heapline: no report at " << report_path
              << " (the command ended without running its exit handlers: killed, or _exit)\n";
    return child.exit_status;
  }
  if (!options.quiet) std::cerr << summarize(report, report_path);

  if (!options.plot.empty()) {
    try {
      PlotFiles files = write_plot_files(report, options.plot);
      std::string problem = render_plot(files, options.plot);
      if (!problem.empty()) {
        std::cerr << problem << "\n";
      } else if (!options.quiet) {
        std::cerr << "heapline: plot " << options.plot << "\n";
      }
    } catch (const std::exception& error) {
      std::cerr << "heapline: cannot plot: " << error.what() << "\n";
    }
  }
  return child.exit_status;
}
