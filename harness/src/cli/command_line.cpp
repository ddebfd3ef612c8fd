#include "command_line.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>

#include "commands.h"

namespace heapline::bench {
namespace {

std::string own_directory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

void add_location_options(CLI::App& app, Locations& where) {
  app.add_option("--catalogue", where.catalogue, "Scenario catalogue (scenarios.json)")->capture_default_str();
  app.add_option("--bin-dir", where.bin_dir, "Directory of malloc_churn and the preload libraries")
      ->capture_default_str();
  app.add_option("--source-dir", where.source_dir, "Source tree, for {source} in scenario commands")
      ->capture_default_str();
}

void add_render_options(CLI::App& command, RenderCommandOptions& render) {
  command.add_option("--store", render.store, "Store directory (default: <source>/bench-data)");
  command.add_option("--out", render.out, "Where the page goes (default: <source>/docs/_generated)");
  command.add_option("--rows", render.rows, "Measured commits in the table")->capture_default_str()->check(CLI::PositiveNumber);
  command.add_flag("!--no-plots", render.plots, "Do not draw the plots");
}

void add_verdict_options(CLI::App& command, VerdictOptions& rule) {
  command.add_option("--window", rule.window, "Earlier points a verdict compares with")->capture_default_str();
  command.add_option("--min-history", rule.min_history, "Fewer earlier points: insufficient history")
      ->capture_default_str();
  command.add_option("--false-alarm-rate", rule.false_alarm_rate, "Per push, over all scenarios")
      ->capture_default_str();
  command.add_option("--min-effect", rule.min_effect_points,
                     "Smallest change of the wall and cpu figures reported, in percentage points")
      ->capture_default_str();
  command.add_option("--min-effect-instructions", rule.min_effect_instructions_points,
                     "Smallest change of the instruction figure reported, in percentage points")
      ->capture_default_str();
  command.add_option("--gate", rule.gate,
                     "Figures whose regressions fail --fail-on-regression (comma-separated: wall, cpu, instructions)")
      ->delimiter(',')
      ->capture_default_str();
}

void add_precision_options(CLI::App& command, AdaptivePrecision& precision) {
  command.add_option("--until-ci", precision.points,
                     "Add interleaved pairs until the 95% interval is at most this many points either side");
  command.add_option("--until-ci-of", precision.figure, "The figure --until-ci narrows: wall or cpu")
      ->capture_default_str();
  command.add_option("--max-runs", precision.max_runs, "With --until-ci: at most this many pairs")->capture_default_str();
}

// Every subcommand's options, kept alive for the subcommand that runs.
struct AllOptions {
  Locations where;
  OverheadOptions overhead;
  SuiteOptions suite;
  CompareOptions compare;
  CheckOptions check;
  CalibrateOptions calibrate;
  RenderCommandOptions render;
  ValidateOptions validate;
  ImportOptions import;
  ExportOptions export_;
};

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, std::function<int()>& subcommand) {
  auto all = std::make_shared<AllOptions>();
  auto& [where, overhead, suite, compare, check, calibrate, render, validate, import, export_] = *all;
  CLI::App app{"heapline-bench: the overhead-regression service of heapline"};
  app.require_subcommand(1);
  app.set_version_flag("--version", HEAPLINE_VERSION);

  where.bin_dir = own_directory();
  where.source_dir = HEAPLINE_SOURCE_DIR;
  where.catalogue = where.source_dir + "/scenarios/scenarios.json";
  add_location_options(app, where);

  auto* overhead_cmd = app.add_subcommand(
      "overhead", "Measure one scenario: N interleaved runs with and without LD_PRELOAD=LIB");
  overhead_cmd->add_option("SCENARIO", overhead.scenario, "Scenario name from the catalogue")->required();
  overhead_cmd->add_option("LIB", overhead.library, "Preload library (or A:B, preloaded in that order), or 'none' for an A/A run (noise floor)")
      ->required();
  overhead_cmd->add_option("RUNS", overhead.runs, "Runs per side (a positive integer)")->required();
  overhead_cmd->add_option("COMMAND", overhead.command, "Command to run (after --); default: the catalogue's");
  overhead_cmd->add_option("--scale", overhead.scale, "Multiply the catalogue command's operation count");
  overhead_cmd->add_flag("--json", overhead.json, "Print the point as JSON instead of the summary");
  overhead_cmd->add_flag("--instructions", overhead.instructions,
                         "Also count instructions under callgrind (the catalogue's reduced command)");
  add_precision_options(*overhead_cmd, overhead.precision);

  auto* suite_cmd = app.add_subcommand("suite", "Measure every catalogue scenario with the library");
  suite_cmd->add_option("--lib", suite.library, "Preload library, or A:B (default: libheapline.so next to heapline-bench)");
  suite_cmd->add_option("--runs", suite.runs, "Runs per side")->capture_default_str();
  suite_cmd->add_option("--scale", suite.scale, "Multiply every operation count")->capture_default_str();
  suite_cmd->add_option("--only", suite.only, "Only these scenarios (comma-separated)")->delimiter(',');
  suite_cmd->add_option("--commit", suite.commit, "The commit measured (default: the source tree's HEAD)");
  suite_cmd->add_option("--commit-range", suite.commit_range,
                        "FIRST..LAST: the commits this point stands for when pushes were skipped");
  suite_cmd->add_flag("!--no-instructions", suite.instructions,
                      "Do not count instructions under callgrind (counted by default when valgrind is installed)");
  add_precision_options(*suite_cmd, suite.precision);
  add_render_options(*suite_cmd, suite.render);

  auto* compare_cmd = app.add_subcommand(
      "compare",
      "Compare library builds on the scenarios, in rounds that alternate them; print the docs' table. Each cell is "
      "the overhead in wall time, then in CPU time (user + sys of the same runs) in brackets: median with / median "
      "without - 1 in each round, then the median of the rounds");
  compare_cmd->add_option("--lib", compare.libs, "A build: LABEL=PATH (twice or more)");
  compare_cmd->add_option("--env", compare.settings,
                          "A setting for one build's runs, LABEL:NAME=VALUE (e.g. wide:HEAPLINE_PRECISION=32768,64): the "
                          "same library under two settings is two builds");
  compare_cmd->add_flag("--floor", compare.floor, "Add the forwarding-only library (the floor of any interposer)");
  compare_cmd->add_flag("--memusage", compare.memusage, "Add glibc's libmemusage.so (the closest peer)");
  compare_cmd->add_flag("--heaptrack", compare.heaptrack,
                        "Add heaptrack's recording library, its trace discarded (absent, with a note, when heaptrack "
                        "is not installed)");
  compare_cmd->add_option("--heaptrack-library", compare.heaptrack_library,
                          "libheaptrack_preload.so (default: where Debian's heaptrack package installs it)");
  compare_cmd->add_option("--rounds", compare.rounds, "Rounds; each figure (wall and cpu) is their median")->capture_default_str();
  compare_cmd->add_option("--runs", compare.runs, "Runs per side in each measurement")->capture_default_str();
  compare_cmd->add_option("--scale", compare.scale, "Multiply every operation count")->capture_default_str();
  compare_cmd->add_option("--only", compare.only, "Only these scenarios (comma-separated)")->delimiter(',');
  compare_cmd->add_option("--json", compare.json, "Raw data (default: <source>/docs/release-comparison.json)");
  compare_cmd->add_option("--out", compare.out, "Where the table goes (default: <source>/docs/_generated)");

  auto* check_cmd = app.add_subcommand("check", "Verdicts on each figure of the newest point of each scenario, and change points");
  check_cmd->add_option("--store", check.store, "Store directory (default: <source>/bench-data)");
  add_verdict_options(*check_cmd, check.rule);
  check_cmd->add_flag("--fail-on-regression", check.fail_on_regression, "Exit 1 when a scenario regressed");
  check_cmd->add_flag("--github", check.github, "GitHub Actions annotations and run summary");

  auto* calibrate_cmd = app.add_subcommand(
      "calibrate", "Measure how much each figure moves when nothing changed (A/A and repeats); store it");
  calibrate_cmd->add_option("--store", calibrate.store, "Store directory (default: <source>/bench-data)");
  calibrate_cmd->add_option("--lib", calibrate.library, "Preload library (default: libheapline.so)");
  calibrate_cmd->add_option("--runs", calibrate.runs, "Runs per side")->capture_default_str();
  calibrate_cmd->add_option("--repeats", calibrate.repeats, "Figures of each kind per scenario")->capture_default_str();
  calibrate_cmd->add_option("--scale", calibrate.scale, "Multiply every operation count")->capture_default_str();
  calibrate_cmd->add_option("--only", calibrate.only, "Only these scenarios (comma-separated)")->delimiter(',');
  calibrate_cmd->add_flag("!--no-instructions", calibrate.instructions,
                          "Do not calibrate the instruction figure (calibrated when valgrind is installed)");
  add_verdict_options(*calibrate_cmd, calibrate.rule);

  auto* render_cmd = app.add_subcommand("render", "Write the performance page and its plots from the store");
  add_render_options(*render_cmd, render);

  auto* validate_cmd = app.add_subcommand("validate", "Check every line of the store; list the bad ones");
  validate_cmd->add_option("--store", validate.store, "Store directory (default: <source>/bench-data)");

  auto* import_cmd = app.add_subcommand("import", "Append the points of an older store, skipping those already in");
  import_cmd->add_option("--store", import.store, "Store directory (default: <source>/bench-data)");
  import_cmd->add_option("FILE", import.files, "points.jsonl files of the older store")->required()->check(CLI::ExistingFile);

  auto* export_cmd = app.add_subcommand("export", "Write the history as CSV or as github-action-benchmark's JSON");
  export_cmd->add_option("--store", export_.store, "Store directory (default: <source>/bench-data)");
  export_cmd->add_option("--format", export_.format, "csv (every point) or github-action-benchmark (one commit)")
      ->check(CLI::IsMember({"csv", "github-action-benchmark"}))
      ->capture_default_str();
  export_cmd->add_option("--commit", export_.commit, "github-action-benchmark: the commit (default: the newest point's)");
  export_cmd->add_option("--out", export_.out, "File to write (default: standard output)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? kExitOk : kExitUsage;
  }
  overhead.where = suite.where = render.where = validate.where = import.where = compare.where = export_.where = where;
  check.where = calibrate.where = where;
  const std::pair<CLI::App*, std::function<int()>> table[] = {
      {check_cmd, [all] { return run_check(all->check); }},
      {calibrate_cmd, [all] { return run_calibrate(all->calibrate); }},
      {compare_cmd, [all] { return run_compare(all->compare); }},
      {overhead_cmd, [all] { return run_overhead(all->overhead); }},
      {suite_cmd, [all] { return run_suite(all->suite); }},
      {render_cmd, [all] { return run_render(all->render); }},
      {validate_cmd, [all] { return run_validate(all->validate); }},
      {import_cmd, [all] { return run_import(all->import); }},
      {export_cmd, [all] { return run_export(all->export_); }},
  };
  for (const auto& [command, run] : table) {
    if (command->parsed()) {
      subcommand = run;
      return std::nullopt;
    }
  }
  return kExitUsage;
}

}  // namespace heapline::bench
