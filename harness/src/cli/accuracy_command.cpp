// heapline-bench accuracy: the library's stated bound against its error, on
// any command, without storing anything: the command runs once under the
// accuracy build beside the library (libheapline_accuracy.so, whose report
// holds the batched peak and the exact peak of the same run), as the suite
// measures a point's accuracy figure (measurement/accuracy.h). Exits 1 when
// the error is outside the stated bound, or the bound outside the budget the
// library states it keeps. tools/accuracy.sh runs it at many thread counts.
#include <filesystem>
#include <memory>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command_line.h"
#include "commands.h"
#include "request_builder.h"
#include "heapline_bench/measurement/accuracy.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/measurement/process_runner.h"
#include "heapline_bench/measurement/scratch_directory.h"

namespace heapline::bench {
namespace {

struct AccuracyOptions {
  Locations where;
  std::string library;  // empty: libheapline.so next to heapline-bench; its accuracy build runs
  std::vector<std::string> command;
  bool json = false;
};

// The accuracy build to run: `library` itself when it is one, else the one
// beside it.
std::string accuracy_build(const std::string& library) {
  if (std::filesystem::path(library).filename() == "libheapline_accuracy.so") return library;
  const std::string beside = accuracy_library_for(library);
  if (!beside.empty()) return beside;
  // What was looked for, and where (accuracy_library_for's rule): the
  // accuracy build is libheapline.so's, found beside a library of that name.
  const std::filesystem::path path(library);
  const std::string directory = path.parent_path().empty() ? "." : path.parent_path().string();
  if (library.find(':') != std::string::npos || path.filename() != "libheapline.so")
    throw Refusal("no accuracy build for " + library + ": libheapline_accuracy.so is looked for beside a library "
                  "named libheapline.so, the build it is made with; give --lib the accuracy build itself (such as " +
                  directory + "/libheapline_accuracy.so).");
  throw Refusal("no accuracy build beside " + library + ": no libheapline_accuracy.so in " + directory +
                " (it is built with libheapline.so: target heapline_preload_accuracy).");
}

std::string percent_of(std::int64_t part, std::int64_t whole) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(2);
  text << (whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole)) << '%';
  return text.str();
}


int run_accuracy(const AccuracyOptions& options) {
  const std::string library =
      checked_preload_libraries(options.library.empty() ? default_library(options.where) : options.library);
  ScratchDirectory scratch;
  AccuracyRequest request;
  request.command = options.command;
  // Resolved as overhead resolves its command: the program is named alike.
  request.command[0] = resolved_program(options.command[0]);
  request.library = accuracy_build(library);
  request.report_path = scratch.path() + "/accuracy.json";
  PosixProcessRunner runner;
  const AccuracyRun run = measure_accuracy(runner, request);
  const Accuracy& figure = run.accuracy;
  const bool kept = figure.within_bound() && run.bound_within_budget();
  if (options.json) {
    nlohmann::ordered_json out = {{"library", request.library},
                                  {"batched_peak_bytes", figure.batched_peak_bytes},
                                  {"exact_peak_bytes", figure.exact_peak_bytes},
                                  {"error_bytes", figure.error_bytes()},
                                  {"bound_bytes", figure.bound_bytes},
                                  {"budget_bytes", run.budget_bytes},
                                  {"publishes", run.publishes},
                                  {"calls", run.calls},
                                  {"publishes_per_1000_calls", run.publishes_per_1000_calls()},
                                  {"within_bound", figure.within_bound()},
                                  {"bound_within_budget", run.bound_within_budget()}};
    Say(std::cout) << json_text(out);
  } else {
    {
      Say line(std::cout);
      line << "batched peak " << figure.batched_peak_bytes << " B, exact peak " << figure.exact_peak_bytes
           << " B: error " << std::showpos << figure.error_bytes() << " B ("
           << percent_of(figure.error_bytes(), figure.exact_peak_bytes) << std::noshowpos << "), stated bound "
           << figure.bound_bytes << " B (" << percent_of(figure.bound_bytes, figure.batched_peak_bytes)
           << " of the peak)";
      if (run.budget_bytes != 0) line << ", budget " << run.budget_bytes << " B";
      std::ostringstream rate;
      rate.setf(std::ios::fixed);
      rate.precision(2);
      rate << run.publishes_per_1000_calls();
      line << "; " << rate.str() << " publishes per 1000 calls\n";
    }
    if (!figure.within_bound()) say("accuracy", "the error is outside the stated bound");
    if (!run.bound_within_budget()) say("accuracy", "the stated bound is over the library's budget");
  }
  return kept ? kExitOk : kExitRefused;
}

}  // namespace

Subcommand add_accuracy_command(CLI::App& bench, const Locations& where) {
  return subcommand(
      bench, where, "accuracy",
      "Run a command once under the library's accuracy build: its batched peak against the exact peak "
      "of the same run, and the stated bound",
      run_accuracy, [](CLI::App& app, AccuracyOptions& options) {
        app.add_option("--lib", options.library,
                       "The library (its libheapline_accuracy.so runs), or an accuracy build itself "
                       "(default: libheapline.so in --bin-dir)")
            ->check(check::text & check::libraries);
        app.add_flag("--json", options.json, "Print JSON instead of one line");
        app.add_option("COMMAND", options.command, "Command to run (after --)")->required()->check(check::text);
      });
}

}  // namespace heapline::bench
