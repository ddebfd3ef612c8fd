#include <unistd.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_line.h"
#include "commands.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/reports/summary_export.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/history/point.h"
#include "progress.h"
#include "request_builder.h"
#include "heapline_bench/measurement/scratch_directory.h"

namespace heapline::bench {
namespace {

struct OverheadOptions {
  Locations where;
  std::string scenario;
  std::string library;  // path, or "none" for A/A
  int runs = 0;
  std::vector<std::string> command;  // empty: the catalogue's
  double scale = 1.0;
  bool json = false;
  bool instructions = false;  // also count instructions under callgrind
  AdaptivePrecision precision;
};

int run_overhead(const OverheadOptions& options) {
  // Parse and check everything before the first run: a refusal costs nothing.
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  const Scenario* scenario = find_scenario(catalogue, options.scenario);
  const int runs = options.runs;

  ScratchDirectory scratch;
  const std::string library = resolved_library(options.library, options.where);
  MeasurementRequest request =
      build_request(*scenario, options.where, library, runs, options.scale, options.command, scratch.path());
  apply_precision(request, options.precision);

  PosixProcessRunner runner;
  ProgressLine progress;
  const Measurement measurement = measure(runner, request, [&](const ProgressEvent& e) { progress.show(e); });
  progress.clear();

  Point point = point_from_measurement(measurement, library_label(request),
                                       describe_command(*scenario, options.command, request.command), options.scale);
  // The point is printed, not stored: a commit git cannot name is said, and
  // the point names none.
  const CommitLookup head = git_head(runner, options.where.source_dir);
  if (!head.problem.empty()) say("heapline-bench", "note: " + head.problem + "; the point names no commit");
  point.commit = head.commit;
  if (options.instructions) {
    const std::string valgrind = find_valgrind();
    if (valgrind.empty()) say("heapline-bench", kNoValgrindNote);
    if (auto counted = instruction_request(*scenario, options.where, request, options.scale, options.command, valgrind))
      point.instructions = count_instructions(runner, *counted);
  }
  if (options.json) {
    say_lines(std::cout, json_text(to_json(point)));
  } else {
    say_lines(std::cout, format_summary(measurement, point));
  }
  return kExitOk;
}

}  // namespace

Subcommand add_overhead_command(CLI::App& bench, const Locations& where) {
  return subcommand(
      bench, where, "overhead", "Measure one scenario: N interleaved runs with and without LD_PRELOAD=LIB",
      run_overhead, [](CLI::App& app, OverheadOptions& options) {
        app.add_option("SCENARIO", options.scenario, "Scenario name from the catalogue")
            ->required()
            ->check(check::text);
        app.add_option("LIB", options.library,
                       "Preload library (or A:B, preloaded in that order), or 'none' for an A/A run (noise floor)")
            ->required()
            ->check(check::text & check::libraries);
        app.add_option("RUNS", options.runs, "Runs per side")->required()->transform(check::whole_number(1, 10000));
        app.add_option("COMMAND", options.command, "Command to run (after --); default: the catalogue's");
        add_scale_option(app, options.scale, "Multiply the catalogue command's operation count");
        app.add_flag("--json", options.json, "Print the point as JSON instead of the summary");
        app.add_flag("--instructions", options.instructions,
                     "Also count instructions under callgrind (the catalogue's reduced command)");
        add_precision_options(app, options.precision);
        app.final_callback([&options, &app] {
          check::relations(options.precision, options.runs);
          // --scale multiplies the catalogue command's operation count: a
          // command given after -- ran unscaled while the point recorded
          // the scale, and points are compared by scale.
          if (!options.command.empty() && app.count("--scale") > 0)
            throw CLI::ValidationError("--scale", "scales the catalogue's command only; give the command after -- "
                                                  "at the size to measure, without --scale");
        });
      });
}

}  // namespace heapline::bench
