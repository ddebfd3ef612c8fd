#include <optional>
#include <memory>
#include <iostream>

#include <heapline/output_file.h>

#include "command_line.h"
#include "commands.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/reports/percent_format.h"
#include "heapline_bench/reports/table_export.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/history/point.h"
#include "heapline_bench/history/store.h"
#include "progress.h"
#include "request_builder.h"
#include "heapline_bench/measurement/scratch_directory.h"

namespace heapline::bench {
namespace {

struct SuiteOptions {
  Locations where;
  std::string library;  // empty: libheapline.so next to heapline-bench
  int runs = kDefaultRuns;
  double scale = 1.0;
  std::vector<std::string> only;
  std::string commit;        // empty: the source tree's HEAD, if it is a git checkout
  std::string commit_range;  // "FIRST..LAST" when the point stands for several commits
  bool instructions = true;  // count instructions under callgrind, when valgrind is installed
  AdaptivePrecision precision;
  RenderCommandOptions render;
};

// "FIRST..LAST", checked before anything runs.
std::optional<CommitRange> parse_commit_range(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const auto dots = text.find("..");
  if (dots == std::string::npos || dots == 0 || dots + 2 >= text.size())
    throw Refusal("--commit-range must be FIRST..LAST, got '" + text + "'.");
  return CommitRange{text.substr(0, dots), text.substr(dots + 2)};
}


int run_suite(const SuiteOptions& options) {
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  const std::vector<const Scenario*> selected = selected_scenarios(catalogue, options.only);
  const std::string library = resolved_library(options.library, options.where);
  std::string commit = options.commit;
  const auto commit_range = parse_commit_range(options.commit_range);
  if (commit_range) {
    if (commit.empty()) commit = commit_range->last;
    if (commit != commit_range->last)
      throw Refusal("--commit-range must end at the measured commit (--commit " + commit + ").");
  }
  PosixProcessRunner runner;
  if (commit.empty()) {
    const CommitLookup head = git_head(runner, options.where.source_dir);
    if (!head.problem.empty())
      throw Refusal(head.problem + ". Pass --commit COMMIT to name the commit measured. Nothing was measured.");
    commit = head.commit;
  }
  // A store that cannot take the points would lose every measurement made
  // for it: find out before the first run.
  const Store store = appendable_store(options.render.store, options.where, "Nothing was measured.");
  try {
    store.check_appendable();
  } catch (const std::runtime_error& e) {
    throw Refusal(std::string(e.what()) + ". Nothing was measured.");
  }

  // The page and its plots too, as render checks them: a suite refused at
  // its end would be run again, and measure and append its commit twice.
  RenderCommandOptions render = options.render;
  render.where = options.where;
  render.store = store.directory();
  {
    heapline::OutputFiles outputs;
    try {
      claim_render_command_outputs(render, catalogue, outputs);
    } catch (const heapline::OutputRefused& refused) {
      throw Refusal(std::string(refused.what()) + ". Nothing was measured.");
    }
  }

  const std::string valgrind = options.instructions ? find_valgrind() : std::string();
  if (options.instructions && valgrind.empty()) say("heapline-bench", kNoValgrindNote);

  std::vector<SuiteRow> rows;
  bool any_failed = false;
  double timed_seconds = 0, counting_seconds = 0;
  Stopwatch whole_suite;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const Scenario& scenario = *selected[i];
    SuiteRow row;
    row.scenario = scenario.name;
    row.command = scenario.display_command();
    ProgressLine progress("[" + std::to_string(i + 1) + "/" + std::to_string(selected.size()) + "] ");
    Stopwatch clock;
    double timed = 0, counting = 0;
    try {
      ScratchDirectory scratch;
      auto request = build_request(scenario, options.where, library, options.runs, options.scale, {}, scratch.path());
      apply_precision(request, options.precision);
      auto measurement = measure(runner, request, [&](const ProgressEvent& e) { progress.show(e); });
      progress.clear();
      timed = clock.lap();
      row.command = describe_command(scenario, {}, request.command);
      row.point = point_from_measurement(measurement, library, row.command, options.scale);
      if (auto counted = instruction_request(scenario, options.where, request, options.scale, {}, valgrind)) {
        row.point.instructions = count_instructions(runner, *counted);
        counting = clock.lap();
      }
      if (auto checked = accuracy_request(scenario, options.where, request, options.scale, {},
                                          scratch.path() + "/accuracy.json")) {
        // The timed runs and the counts are measured already: a failed
        // accuracy run costs the point its accuracy figure, not the point.
        try {
          row.point.library_report.accuracy = measure_accuracy(runner, *checked).accuracy;
        } catch (const Refusal& refusal) {
          say_lines(std::cerr, scenario.name + ": no accuracy figure: " + refusal.what());
        }
      }
      row.point.commit = commit;
      row.point.commit_range = commit_range;
      try {
        store.append(row.point);  // at once: an interruption later keeps it
      } catch (const std::runtime_error& e) {
        // A full disk, a file size limit: the measurement is kept beside
        // the store and printed; the next scenario still runs.
        throw Refusal(keep_unstored(store, "the point of " + scenario.name, point_line(row.point) + "\n", e.what(),
                                    "heapline-bench import --store " + store.directory() + " {file}"));
      }
      row.measured = true;
      Say(std::cerr) << scenario.name << ": " << format_overhead(row.point.overhead, row.point.interval)
                     << " (timed runs " << seconds_text(timed)
                     << (row.point.instructions ? ", instruction counts " + seconds_text(counting) : "") << ")\n";
    } catch (const Refusal& refusal) {
      // One failing scenario is reported; the others still run.
      progress.clear();
      any_failed = true;
      row.failure = refusal.what();
      say_lines(std::cerr, scenario.name + ": FAILED\n" + refusal.what());
    }
    timed_seconds += timed;
    counting_seconds += counting;
    rows.push_back(std::move(row));
  }

  say_lines(std::cout, format_suite_table(rows, library, this_machine()));
  Stopwatch render_clock;
  run_render(render);
  const double rendering = render_clock.lap();
  const double elapsed = whole_suite.lap();
  // What the store took, as counted: a full disk keeps a measurement
  // beside the store, and is never said to have appended it.
  const auto stored = std::count_if(rows.begin(), rows.end(), [](const SuiteRow& row) { return row.measured; });
  Say(std::cerr) << "suite: " << rows.size() << " scenario(s) in " << seconds_text(elapsed) << " (timed runs "
                 << seconds_text(timed_seconds) << ", instruction counts " << seconds_text(counting_seconds)
                 << ", render " << seconds_text(rendering) << ")" << (any_failed ? ", some FAILED" : "") << "; "
                 << (stored == 0 ? std::string("no point")
                                 : std::to_string(stored) + (stored == 1 ? " point" : " points"))
                 << " appended to " << terminal_text(store.points_path()) << "\n";
  return any_failed ? kExitRefused : kExitOk;
}

}  // namespace

Subcommand add_suite_command(CLI::App& bench, const Locations& where) {
  return subcommand(
      bench, where, "suite", "Measure every catalogue scenario with the library", run_suite,
      [](CLI::App& app, SuiteOptions& options) {
        app.add_option("--lib", options.library, "Preload library, or A:B (default: libheapline.so in --bin-dir)")
            ->check(check::text & check::libraries);
        add_runs_option(app, options.runs);
        add_scale_option(app, options.scale);
        add_only_option(app, options.only);
        app.add_option("--commit", options.commit, "The commit measured (default: the source tree's HEAD)")
            ->check(check::commit);
        app.add_option("--commit-range", options.commit_range,
                       "FIRST..LAST: the commits this point stands for when pushes were skipped")
            ->check(check::commit_range);
        app.add_flag("!--no-instructions", options.instructions,
                     "Do not count instructions under callgrind (counted by default when valgrind is installed)");
        add_precision_options(app, options.precision);
        add_render_options(app, options.render);
        app.final_callback([&options] { check::relations(options.precision, options.runs); });
      });
}

}  // namespace heapline::bench
