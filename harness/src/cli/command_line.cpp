#include "command_line.h"

#include <CLI/CLI.hpp>
#include <sstream>

#include "heapline/cli_help.h"
#include "heapline/install_layout.h"
#include "heapline_bench/history/point.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {
namespace check {

const CLI::Validator libraries = heapline::option_checks::list(':');

const CLI::Validator text(
    [](std::string& value) -> std::string {
      if (value.empty()) return "must not be empty";
      if (find_control_character(value) != std::string::npos)
        return "must not hold a control character, got " + shown(value);
      return {};
    },
    "TEXT");

const CLI::Validator commit(
    [](std::string& value) -> std::string {
      if (!is_commit_sha(value)) return std::string("must be a commit's SHA (") + kCommitShaRule + "), got " + shown(value);
      return {};
    },
    "SHA");

const CLI::Validator commit_range(
    [](std::string& value) -> std::string {
      const auto dots = value.find("..");
      if (dots == std::string::npos || !is_commit_sha(value.substr(0, dots)) || !is_commit_sha(value.substr(dots + 2)))
        return std::string("must be FIRST..LAST, two commits' SHAs (") + kCommitShaRule + "), got " + shown(value);
      return {};
    },
    "SHA..SHA");

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

namespace {

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

}  // namespace

void add_program_options(CLI::App& bench, Locations& where) {
  heapline::option_checks::flags_take_no_value(bench);
  bench.require_subcommand(1);
  bench.set_version_flag("--version", std::string("heapline-bench ") + install_dirs::kVersion);
  bench.set_help_all_flag("--help-all", "Print the help of heapline-bench and of every subcommand and exit");
  const InstallLayout layout = own_layout();
  where.bin_dir = layout.libraries.string();
  where.source_dir = layout.data.string();
  where.catalogue = where.source_dir + "/scenarios/scenarios.json";
  add_location_options(bench, where);
}

void add_store_option(CLI::App& command, std::string& store) {
  command.add_option("--store", store, "Store directory (default: <work>/bench-data)")->check(check::text);
}

void add_runs_option(CLI::App& command, int& runs, const char* what) {
  command.add_option("--runs", runs, what)->capture_default_str()->transform(check::whole_number(1, 10000));
}

void add_scale_option(CLI::App& command, double& scale, const char* what) {
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
      ->transform(check::whole_number(1, 100000));
  command.add_flag("!--no-plots", render.plots, "Do not draw the plots");
}

void add_verdict_options(CLI::App& command, VerdictOptions& rule) {
  command.add_option("--window", rule.window, "Earlier points a verdict compares with")
      ->capture_default_str()
      ->transform(check::whole_number(2, 10000));
  command.add_option("--min-history", rule.min_history, "Fewer earlier points: insufficient history")
      ->capture_default_str()
      ->transform(check::whole_number(2, 10000));
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
      ->transform(check::whole_number(1, 10000));
}

std::optional<int> parse_command_line(CLI::App& bench, int argc, char** argv, Locations& where) {
  if (const std::string refused = heapline::option_checks::empty_flag_value(bench, std::vector<std::string>(argv + 1, argv + argc));
      !refused.empty()) {
    say("heapline-bench", refused + " (heapline-bench --help: the options)");
    return kExitUsage;
  }
  heapline::option_checks::take_every_word_as_given(bench);
  try {
    bench.parse(argc, argv);
  } catch (const CLI::CallForAllHelp&) {
    say_lines(std::cout, whole_program_help(bench));
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // CLI11's help and version go out through the door of printed lines;
    // a refusal (which quotes the words given) is one line, naming the
    // subcommand it is about.
    if (e.get_exit_code() == 0) {
      std::ostringstream out, err;
      bench.exit(e, out, err);
      say_lines(std::cout, out.str());
      say_lines(std::cerr, err.str());
      return kExitOk;
    }
    const std::vector<CLI::App*> named = bench.get_subcommands();
    const std::string who = "heapline-bench" + (named.empty() ? std::string() : " " + named.front()->get_name());
    say(who, heapline::option_checks::refusal_text(e, bench) + " (" + who + " --help: the options)");
    return kExitUsage;
  }
  // A build tree's store and page follow --source-dir; an install's go
  // into the current directory.
  const InstallLayout layout = own_layout();
  where.work_dir = layout.installed ? "." : where.source_dir;
  where.output_dir = layout.installed ? "." : layout.programs.parent_path().string();
  return std::nullopt;
}

}  // namespace heapline::bench
