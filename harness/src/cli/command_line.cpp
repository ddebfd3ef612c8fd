#include "command_line.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>

#include "commands.h"
#include "heapline/cli_help.h"
#include "heapline/install_layout.h"
#include "heapline/option_checks.h"
#include "heapline_bench/history/point.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/reports/exporter.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {
namespace {

// The checks of every option's value, in one place: a value is refused
// with a line that names the option, the value and what is accepted, before
// anything runs. CLI11 runs them on the text as given, so an empty value is
// seen as empty (never read as 0) and "nan" or "inf" as what they are.
namespace check {

// Numbers are read by the programs' one rule per kind
// (heapline/option_checks.h): decimal only, within the range the help says.
using heapline::option_checks::number;
using heapline::option_checks::shown;
using heapline::option_checks::whole_number;

// Lists (heapline/option_checks.h): a library's A:B, names separated by
// ':', none empty, none twice; --only's and --gate's comma-separated names.
const CLI::Validator libraries = heapline::option_checks::list(':');

// Text that is not empty and holds no control character: a name, a path, a
// commit, something a page or a point will show.
const CLI::Validator text(
    [](std::string& value) -> std::string {
      if (value.empty()) return "must not be empty";
      if (find_control_character(value) != std::string::npos)
        return "must not hold a control character, got " + shown(value);
      return {};
    },
    "TEXT");

// A commit as the point records it: its SHA (point.h's rule, which the
// store's reader applies too: a point naming anything else is refused).
const CLI::Validator commit(
    [](std::string& value) -> std::string {
      if (!is_commit_sha(value)) return std::string("must be a commit's SHA (") + kCommitShaRule + "), got " + shown(value);
      return {};
    },
    "SHA");

// FIRST..LAST, two commits' SHAs.
const CLI::Validator commit_range(
    [](std::string& value) -> std::string {
      const auto dots = value.find("..");
      if (dots == std::string::npos || !is_commit_sha(value.substr(0, dots)) || !is_commit_sha(value.substr(dots + 2)))
        return std::string("must be FIRST..LAST, two commits' SHAs (") + kCommitShaRule + "), got " + shown(value);
      return {};
    },
    "SHA..SHA");

// The rules between two options, checked right after the values: a
// command line that breaks one is refused like a bad value, before anything
// runs, and nothing downstream checks it again.
void relations(const AdaptivePrecision& precision, int runs) {
  if (precision.points > 0 && precision.max_runs < runs)
    throw CLI::ValidationError("--max-runs", "must be at least the runs asked for (" + std::to_string(runs) +
                                                 "), got '" + std::to_string(precision.max_runs) + "'");
}

void relations(const VerdictOptions& rule) {
  if (rule.min_history > rule.window)
    throw CLI::ValidationError("--min-history (" + std::to_string(rule.min_history) + ") must be at most --window (" +
                               std::to_string(rule.window) + ")");
}

}  // namespace check

// The defaults come from heapline-bench's own place (install_layout.h); the
// help describes them rather than printing them, so that it (and the man
// page made from it) holds no path of the machine that built it.
void add_location_options(CLI::App& app, Locations& where) {
  app.add_option("--catalogue", where.catalogue,
                 "Scenario catalogue (default: scenarios/scenarios.json in the source tree, or in <datadir>/heapline "
                 "when installed)")
      ->check(check::text);
  app.add_option("--bin-dir", where.bin_dir,
                 "Directory of malloc_churn and the preload libraries (default: heapline-bench's own in a build "
                 "tree, <libdir>/heapline when installed)")
      ->check(check::text);
  app.add_option("--source-dir", where.source_dir,
                 "For {source} in scenario commands: the source tree heapline-bench was built from, or "
                 "<datadir>/heapline when installed. <work> below is the source tree, or the current directory when "
                 "installed")
      ->check(check::text & CLI::ExistingDirectory);
}

void add_store_option(CLI::App& command, std::string& store) {
  command.add_option("--store", store, "Store directory (default: <work>/bench-data)")->check(check::text);
}

void add_runs_option(CLI::App& command, int& runs, const char* what = "Runs per side") {
  command.add_option("--runs", runs, what)->capture_default_str()->check(check::whole_number(1, 10000));
}

void add_scale_option(CLI::App& command, double& scale, const char* what = "Multiply every operation count") {
  command.add_option("--scale", scale, what)->capture_default_str()->check(check::number(kSmallestScale, kLargestScale));
}

void add_only_option(CLI::App& command, std::vector<std::string>& only) {
  heapline::option_checks::add_list_option(command, "--only", only, ',', "Only these scenarios (comma-separated)",
                                           [](const std::string& name) {
                                             std::string checked = name;
                                             return check::text(checked);
                                           })
      ->type_name("TEXT");
}

void add_render_options(CLI::App& command, RenderCommandOptions& render) {
  add_store_option(command, render.store);
  command.add_option("--out", render.out, "Where the page goes (default: <work>/docs/_generated)")->check(check::text);
  command.add_option("--rows", render.rows, "Measured commits in the table")
      ->capture_default_str()
      ->check(check::whole_number(1, 100000));
  command.add_flag("!--no-plots", render.plots, "Do not draw the plots");
}

void add_verdict_options(CLI::App& command, VerdictOptions& rule) {
  command.add_option("--window", rule.window, "Earlier points a verdict compares with")
      ->capture_default_str()
      ->check(check::whole_number(2, 10000));
  command.add_option("--min-history", rule.min_history, "Fewer earlier points: insufficient history")
      ->capture_default_str()
      ->check(check::whole_number(2, 10000));
  // Below 1e-6 the quantile of the rule is beyond double precision.
  command.add_option("--false-alarm-rate", rule.false_alarm_rate, "Per push, over all scenarios")
      ->capture_default_str()
      ->check(check::number(1e-6, 0.5));
  command.add_option("--min-effect", rule.min_effect_points,
                     "Smallest change of the wall and cpu figures reported, in percentage points")
      ->capture_default_str()
      ->check(check::number(0, 100));
  command.add_option("--min-effect-instructions", rule.min_effect_instructions_points,
                     "Smallest change of the instruction figure reported, in percentage points")
      ->capture_default_str()
      ->check(check::number(0, 100));
  heapline::option_checks::add_list_option(
      command, "--gate", rule.gate, ',',
      "Figures whose regressions fail --fail-on-regression (comma-separated: wall, cpu, instructions)",
      [](const std::string& figure) -> std::string {
        if (figure == "wall" || figure == "cpu" || figure == "instructions") return "";
        return "must name wall, cpu or instructions, got " + check::shown(figure);
      })
      ->type_name("TEXT");
}

// The narrowest interval --until-ci asks for, in points either side: a
// hundredth of a point is far below what a run's timer and noise resolve,
// and a smaller one only runs --max-runs pairs.
constexpr double kSmallestUntilCi = 0.01;

void add_precision_options(CLI::App& command, AdaptivePrecision& precision) {
  command.add_option("--until-ci", precision.points,
                     "Add interleaved pairs until the " + confidence_level_text() +
                         " interval is at most this many points either side")
      ->check(check::number(kSmallestUntilCi, 1000));
  command.add_option("--until-ci-of", precision.figure, "The figure --until-ci narrows: wall or cpu")
      ->capture_default_str()
      ->check(CLI::IsMember({"wall", "cpu"}));
  command.add_option("--max-runs", precision.max_runs, "With --until-ci: at most this many pairs")
      ->capture_default_str()
      ->check(check::whole_number(1, 10000));
}

// Every subcommand's options, kept alive for the subcommand that runs.
struct AllOptions {
  Locations where;
  OverheadOptions overhead;
  SuiteOptions suite;
  CompareOptions compare;
  CheckOptions check;
  InstructionsOptions instructions;
  AccuracyOptions accuracy;
  CalibrateOptions calibrate;
  RenderCommandOptions render;
  ValidateOptions validate;
  ImportOptions import;
  ExportOptions export_;
};

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, std::function<int()>& subcommand) {
  auto all = std::make_shared<AllOptions>();
  auto& [where, overhead, suite, compare, check, instructions, accuracy, calibrate, render, validate, import, export_] =
      *all;
  CLI::App app{"heapline-bench: the overhead-regression service of heapline", "heapline-bench"};
  heapline::option_checks::flags_take_no_value(app);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("heapline-bench ") + install_dirs::kVersion);
  app.set_help_all_flag("--help-all", "Print the help of heapline-bench and of every subcommand and exit");

  const InstallLayout layout = own_layout();
  where.bin_dir = layout.libraries.string();
  where.source_dir = layout.data.string();
  where.catalogue = where.source_dir + "/scenarios/scenarios.json";
  add_location_options(app, where);

  auto* overhead_cmd = app.add_subcommand(
      "overhead", "Measure one scenario: N interleaved runs with and without LD_PRELOAD=LIB");
  overhead_cmd->add_option("SCENARIO", overhead.scenario, "Scenario name from the catalogue")
      ->required()
      ->check(check::text);
  overhead_cmd->add_option("LIB", overhead.library, "Preload library (or A:B, preloaded in that order), or 'none' for an A/A run (noise floor)")
      ->required()
      ->check(check::text & check::libraries);
  overhead_cmd->add_option("RUNS", overhead.runs, "Runs per side")->required()->check(check::whole_number(1, 10000));
  overhead_cmd->add_option("COMMAND", overhead.command, "Command to run (after --); default: the catalogue's");
  add_scale_option(*overhead_cmd, overhead.scale, "Multiply the catalogue command's operation count");
  overhead_cmd->add_flag("--json", overhead.json, "Print the point as JSON instead of the summary");
  overhead_cmd->add_flag("--instructions", overhead.instructions,
                         "Also count instructions under callgrind (the catalogue's reduced command)");
  add_precision_options(*overhead_cmd, overhead.precision);

  auto* suite_cmd = app.add_subcommand("suite", "Measure every catalogue scenario with the library");
  suite_cmd->add_option("--lib", suite.library, "Preload library, or A:B (default: libheapline.so in --bin-dir)")
      ->check(check::text & check::libraries);
  add_runs_option(*suite_cmd, suite.runs);
  add_scale_option(*suite_cmd, suite.scale);
  add_only_option(*suite_cmd, suite.only);
  suite_cmd->add_option("--commit", suite.commit, "The commit measured (default: the source tree's HEAD)")
      ->check(check::commit);
  suite_cmd->add_option("--commit-range", suite.commit_range,
                        "FIRST..LAST: the commits this point stands for when pushes were skipped")
      ->check(check::commit_range);
  suite_cmd->add_flag("!--no-instructions", suite.instructions,
                      "Do not count instructions under callgrind (counted by default when valgrind is installed)");
  add_precision_options(*suite_cmd, suite.precision);
  add_render_options(*suite_cmd, suite.render);

  auto* compare_cmd = app.add_subcommand(
      "compare",
      "Compare library builds on the scenarios, in rounds that alternate them; print the docs' table. Each cell is "
      "the overhead in wall time, then in CPU time (user + sys of the same runs) in brackets: median with / median "
      "without - 1 in each round, then the median of the rounds");
  compare_cmd->add_option("--build,--lib", compare.builds, "A build: LABEL=PATH (twice or more; --lib is its former name)")
      ->check(check::text);
  compare_cmd->add_option("--env", compare.settings,
                          "A setting for one build's runs, LABEL:NAME=VALUE (e.g. wide:HEAPLINE_PRECISION=32768,64): the "
                          "same library under two settings is two builds")
      ->check(check::text);
  compare_cmd->add_flag("--floor", compare.floor, "Add the forwarding-only library (the floor of any interposer)");
  compare_cmd->add_flag("--memusage", compare.memusage, "Add glibc's libmemusage.so (the closest peer)");
  compare_cmd->add_flag("--heaptrack", compare.heaptrack,
                        "Add heaptrack's recording library, its trace discarded (absent, with a note, when heaptrack "
                        "is not installed)");
  compare_cmd->add_option("--heaptrack-library", compare.heaptrack_library,
                          "libheaptrack_preload.so (default: where Debian's heaptrack package installs it)")
      ->check(check::text);
  compare_cmd->add_option("--rounds", compare.rounds, "Rounds; each figure (wall and cpu) is their median")
      ->capture_default_str()
      ->check(check::whole_number(1, 1000));
  add_runs_option(*compare_cmd, compare.runs, "Runs per side in each measurement");
  add_scale_option(*compare_cmd, compare.scale);
  add_only_option(*compare_cmd, compare.only);
  compare_cmd->add_flag("!--no-instructions", compare.instructions,
                        "Do not count instructions under callgrind (counted once per build after the rounds, by "
                        "default when valgrind is installed)");
  auto* json_option =
      compare_cmd->add_option("--json", compare.json, "Raw data (default: OUT/release-comparison.json)")
          ->check(check::text);
  auto* out_option =
      compare_cmd
          ->add_option("--out", compare.out,
                       "Where the table and the raw data go (default: release-comparison in the build directory, or "
                       "in the current directory when installed)")
          ->check(check::text);
  compare_cmd
      ->add_flag("--write-docs", compare.write_docs,
                 "Write into the docs: <work>/docs/release-comparison.json (tracked) and the table they include")
      ->excludes(json_option)
      ->excludes(out_option);

  auto* check_cmd = app.add_subcommand("check", "Verdicts on each figure of the newest point of each scenario, and change points");
  add_store_option(*check_cmd, check.store);
  add_verdict_options(*check_cmd, check.rule);
  check_cmd->add_flag("--fail-on-regression", check.fail_on_regression, "Exit 1 when a scenario regressed");
  check_cmd->add_flag("--github", check.github, "GitHub Actions annotations and run summary");

  auto* instructions_cmd = app.add_subcommand(
      "instructions", "Count each scenario's instructions under callgrind with a build, as the suite does; with "
                      "--base, judge the change against another build");
  instructions_cmd
      ->add_option("--lib", instructions.libraries,
                   "Preload library, or A:B; several for a column each (default: libheapline.so)")
      ->check(check::text & check::libraries);
  instructions_cmd->add_option("--base", instructions.base, "A base build's library to judge --lib against")
      ->check(check::text & check::libraries);
  add_scale_option(*instructions_cmd, instructions.scale, "Multiply the reduced commands' operation counts");
  add_only_option(*instructions_cmd, instructions.only);
  instructions_cmd->add_option("--min-effect-instructions", instructions.rule.min_effect_instructions_points,
                               "Smallest change judged, in percentage points")
      ->capture_default_str()
      ->check(check::number(0, 100));
  instructions_cmd->add_flag("--json", instructions.json, "Print JSON instead of the Markdown table");
  instructions_cmd->add_flag("--fail-on-regression", instructions.fail_on_regression,
                             "With --base: exit 1 when the instruction figure regressed");

  auto* accuracy_cmd = app.add_subcommand(
      "accuracy", "Run a command once under the library's accuracy build: its batched peak against the exact peak "
                  "of the same run, and the stated bound");
  accuracy_cmd->add_option("--lib", accuracy.library,
                           "The library (its libheapline_accuracy.so runs), or an accuracy build itself "
                           "(default: libheapline.so in --bin-dir)")
      ->check(check::text & check::libraries);
  accuracy_cmd->add_flag("--json", accuracy.json, "Print JSON instead of one line");
  accuracy_cmd->add_option("COMMAND", accuracy.command, "Command to run (after --)")->required()->check(check::text);

  auto* calibrate_cmd = app.add_subcommand(
      "calibrate", "Measure how much each figure moves when nothing changed (A/A and repeats); store it");
  add_store_option(*calibrate_cmd, calibrate.store);
  calibrate_cmd->add_option("--lib", calibrate.library, "Preload library (default: libheapline.so)")
      ->check(check::text & check::libraries);
  add_runs_option(*calibrate_cmd, calibrate.runs);
  calibrate_cmd->add_option("--repeats", calibrate.repeats, "Figures of each kind per scenario (a spread needs a few)")
      ->capture_default_str()
      ->check(check::whole_number(3, 1000));
  add_scale_option(*calibrate_cmd, calibrate.scale);
  add_only_option(*calibrate_cmd, calibrate.only);
  calibrate_cmd->add_flag("!--no-instructions", calibrate.instructions,
                          "Do not calibrate the instruction figure (calibrated when valgrind is installed)");
  add_verdict_options(*calibrate_cmd, calibrate.rule);

  auto* render_cmd = app.add_subcommand("render", "Write the performance page and its plots from the store");
  add_render_options(*render_cmd, render);

  auto* validate_cmd = app.add_subcommand("validate", "Check every line of the store; list the bad ones");
  add_store_option(*validate_cmd, validate.store);

  auto* import_cmd = app.add_subcommand("import", "Append the points of an older store, skipping those already in");
  add_store_option(*import_cmd, import.store);
  import_cmd->add_option("FILE", import.files, "points.jsonl files of the older store")
      ->required()
      ->check(check::text & CLI::ExistingFile);

  // The formats as exporter.cpp's table lists them: a new one needs no line here.
  std::vector<std::string> format_names;
  std::string formats_help, names;
  for (const auto& format : export_formats()) {
    format_names.push_back(format.name);
    formats_help += (formats_help.empty() ? "" : "; ") + format.name + ": " + format.description;
    names += (names.empty() ? "" : ", ") + format.name;
  }
  auto* export_cmd =
      app.add_subcommand("export", "Write the history for another program, in one of its formats: " + names);
  add_store_option(*export_cmd, export_.store);
  export_cmd->add_option("--format", export_.format, formats_help)
      ->check(CLI::IsMember(format_names))
      ->capture_default_str();
  export_cmd->add_option("--commit", export_.commit,
                         "github-action-benchmark, bencher: the commit (default: the newest point's)")
      ->check(check::commit);
  export_cmd->add_option("--out", export_.out, "File to write (default: standard output)")->check(check::text);

  if (const std::string refused = heapline::option_checks::empty_flag_value(app, std::vector<std::string>(argv + 1, argv + argc));
      !refused.empty()) {
    say("heapline-bench", refused + " (heapline-bench --help: the options)");
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
    check::relations(overhead.precision, overhead.runs);
    check::relations(suite.precision, suite.runs);
    check::relations(check.rule);
    check::relations(calibrate.rule);
    heapline::option_checks::each_once("--lib", instructions.libraries);
  } catch (const CLI::CallForAllHelp&) {
    say_lines(std::cout, whole_program_help(app));
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // CLI11's help and version go out through the door of printed lines;
    // a refusal (which quotes the words given) is one line, naming the
    // subcommand it is about.
    if (e.get_exit_code() == 0) {
      std::ostringstream out, err;
      app.exit(e, out, err);
      say_lines(std::cout, out.str());
      say_lines(std::cerr, err.str());
      return kExitOk;
    }
    const std::vector<CLI::App*> named = app.get_subcommands();
    const std::string who = "heapline-bench" + (named.empty() ? std::string() : " " + named.front()->get_name());
    say(who, heapline::option_checks::refusal_text(e, app) + " (" + who + " --help: the options)");
    return kExitUsage;
  }
  // A build tree's store and page follow --source-dir; an install's go
  // into the current directory.
  where.work_dir = layout.installed ? "." : where.source_dir;
  where.output_dir = layout.installed ? "." : layout.programs.parent_path().string();
  overhead.where = suite.where = render.where = validate.where = import.where = compare.where = export_.where = where;
  check.where = calibrate.where = instructions.where = accuracy.where = where;
  const std::pair<CLI::App*, std::function<int()>> table[] = {
      {check_cmd, [all] { return run_check(all->check); }},
      {instructions_cmd, [all] { return run_instructions(all->instructions); }},
      {accuracy_cmd, [all] { return run_accuracy(all->accuracy); }},
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
