// check and calibrate: the regression verdicts and the noise they rest on.
#include <algorithm>
#include <memory>
#include <cmath>
#include <cstdio>
#include <map>
#include <cstdlib>
#include <heapline/output_file.h>
#include <iostream>
#include <sstream>

#include "command_line.h"
#include "commands.h"
#include "heapline_bench/verdicts/calibration.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/reports/escaping.h"
#include "heapline_bench/reports/percent_format.h"
#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/machine.h"
#include "heapline_bench/history/point.h"
#include "heapline_bench/history/store.h"
#include "heapline_bench/verdicts/change_points.h"
#include "heapline_bench/verdicts/verdict.h"
#include "heapline_bench/measurement/instructions.h"
#include "progress.h"
#include "request_builder.h"
#include "heapline_bench/measurement/scratch_directory.h"

namespace heapline::bench {
namespace {

// GitHub's workflow commands take their message after "::"; newlines and
// percent signs must be escaped or the runner cuts the message.
std::string github_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string short_commit(const std::string& commit) { return commit.empty() ? "(no commit)" : commit.substr(0, 7); }

// A commit as code in the Markdown table, or a word that says there is none.
std::string commit_code(const std::string& commit) {
  return commit.empty() ? "(no commit)" : markdown_code(commit.substr(0, 7));
}

}  // namespace

// The gated figures of --gate, each checked.
std::vector<Figure> gated_figures(const VerdictOptions& options) {
  std::vector<Figure> gated;
  for (const auto& name : options.gate) {
    const auto figure = figure_from_name(name);
    if (!figure) throw Refusal("--gate takes wall, cpu or instructions (comma-separated), got '" + name + "'.");
    if (std::find(gated.begin(), gated.end(), *figure) == gated.end()) gated.push_back(*figure);
  }
  return gated;
}

VerdictRule verdict_rule(const VerdictOptions& options, int scenarios) {
  VerdictRule rule;
  rule.window = options.window;
  rule.min_history = options.min_history;
  rule.false_alarm_rate = options.false_alarm_rate;
  rule.min_effect = options.min_effect_points / 100;
  rule.instructions_min_effect = options.min_effect_instructions_points / 100;
  rule.scenarios = scenarios;
  rule.figures = std::max<int>(1, static_cast<int>(gated_figures(options).size()));
  // Every value, and the rule between these two, is checked on the command
  // line (command_line.cpp).
  expects(rule.min_history <= rule.window, "verdict_rule: min_history <= window");
  return rule;
}

namespace {

std::string figure_cell(const PointVerdict& v) {
  const FigureValue value = v.point->figure(v.figure);
  if (v.figure == Figure::instructions || !value.interval_known) return format_figure(v.figure, value.overhead) + "%";
  return format_overhead(value.overhead, {value.low, value.high});
}


// Why the check could judge none of the figures it gates, which fails
// --fail-on-regression as a regression does (a gate that judged nothing
// passed every push: an empty store, a gate of a figure never measured);
// "" when a gated figure was judged, or could be but for the history: a
// new series (a new machine, a new scenario) starts with too few points,
// which the table and one line say, and the gate waits for them.
std::string unjudged_gate(const History& history, const std::vector<PointVerdict>& verdicts,
                          const std::vector<Figure>& gated, const VerdictRule& rule) {
  std::string names;
  for (Figure f : gated) names += (names.empty() ? "" : ", ") + std::string(figure_name(f));
  const std::string nothing = "no gated figure (" + names + ") was judged: ";
  if (history.entries.empty()) return nothing + "the store holds no point";
  if (verdicts.empty()) return nothing + "no newest point of a scenario of the catalogue";
  bool has_gated = false;
  for (const PointVerdict& v : verdicts) {
    if (std::find(gated.begin(), gated.end(), v.figure) == gated.end()) continue;
    if (v.verdict != Verdict::insufficient_history) return "";
    has_gated = true;
  }
  if (!has_gated) return nothing + "no newest point of a scenario of the catalogue has one";
  say("check", "no gated figure was judged yet: each newest point has insufficient history (fewer than " +
                   std::to_string(rule.min_history) + " earlier points)");
  return "";
}

struct CheckOptions {
  Locations where;
  std::string store;
  VerdictOptions rule;
  bool fail_on_regression = false;
  bool github = false;  // annotations and the run summary of GitHub Actions
};

int run_check(const CheckOptions& options) {
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  const Store store = existing_store(options.store, options.where);
  const std::string points = store.points_to_read(), calibration = store.calibrations_to_read();
  const History history = read_history(points);
  for (const auto& problem : history.problems) say("heapline-bench", "warning: " + problem.describe());
  std::vector<std::string> calibration_problems;
  const auto calibrations = read_calibrations(calibration, calibration_problems);
  for (const auto& problem : calibration_problems) say("heapline-bench", "warning: " + problem);
  if (const auto unrecorded = std::count_if(calibrations.begin(), calibrations.end(),
                                            [](const NoiseCalibration& c) { return c.command.empty(); }))
    say("heapline-bench", "note: " + std::to_string(unrecorded) + " calibration(s) in " + store.calibration_path() +
                              " do not say which command they measured and apply to no point that does; run "
                              "calibrate again");

  const VerdictRule rule = verdict_rule(options.rule, static_cast<int>(catalogue.scenarios.size()));
  const std::vector<Figure> gated = gated_figures(options.rule);
  auto is_gated = [&](Figure f) { return std::find(gated.begin(), gated.end(), f) != gated.end(); };
  const auto verdicts = judge_newest(history, catalogue.names(), rule, calibrations);
  if (const std::string outside = points_outside(history, catalogue.names()); !outside.empty())
    say("heapline-bench", "warning: " + outside + " are judged by no verdict");
  // A gated figure that no newest point has (instructions counted without
  // valgrind on the machine) judged nothing: said; and a check that judged
  // no gated figure at all fails --fail-on-regression, never passes in
  // silence (unjudged_gate below).
  for (Figure f : gated) {
    if (!history.entries.empty() &&
        std::none_of(verdicts.begin(), verdicts.end(), [&](const PointVerdict& v) { return v.figure == f; })) {
      say("check", std::string("--gate ") + figure_name(f) + ": no newest point of a scenario of the catalogue has " +
                       (f == Figure::instructions ? "an instruction figure (measured without valgrind?)"
                                                  : std::string("a ") + figure_name(f) + " figure") +
                       ": nothing was judged for it");
    }
  }
  const std::string judged_nothing = unjudged_gate(history, verdicts, gated, rule);
  const auto changes = history_change_points(history, catalogue.names());
  const auto machines = machine_names(history);

  // One row per figure of each machine's newest point (verdict.h,
  // newest_points): a step on any machine that measured the commit is seen.
  std::ostringstream table;
  table << "| Scenario | Figure | Commit | Overhead | Baseline (median of n) | Change | Threshold | Verdict | Machine |\n"
           "|---|---|---|---:|---:|---:|---:|---|---|\n";
  int regressions = 0;
  for (const auto& v : verdicts) {
    const auto& p = *v.point;
    const std::string machine = machine_name_of(p, machines);
    const std::string machine_cell = markdown_text(machine) + " (" + markdown_code(p.fingerprint) + ")";
    const std::string figure = std::string(figure_name(v.figure)) + (is_gated(v.figure) ? " (gated)" : "");
    table << "| " << markdown_code(v.scenario) << " | " << figure << " | " << commit_code(p.commit) << " | "
          << figure_cell(v) << " | ";
    if (v.verdict == Verdict::insufficient_history) {
      table << "– (" << v.history << " earlier points) | – | – | insufficient history | " << machine_cell << " |\n";
      continue;
    }
    table << format_figure(v.figure, v.baseline) << "% (" << v.baseline_points;
    if (v.segment_start != nullptr) table << " since " << commit_code(v.segment_start->commit);
    table << ") | " << format_figure(v.figure, v.change) << " pts | ±" << format_figure(v.figure, v.threshold, false)
          << " pts | **" << verdict_name(v.verdict) << "** | " << machine_cell << " |\n";
    const bool fails = v.verdict == Verdict::regression && is_gated(v.figure);
    if (fails) ++regressions;
    if (options.github && v.verdict != Verdict::unchanged) {
      const std::string message = v.scenario + " (" + figure_name(v.figure) + ") at " + short_commit(p.commit) + " on " +
                                  machine + ": " +
                                  format_figure(v.figure, v.value) + "% against a baseline of " +
                                  format_figure(v.figure, v.baseline) + "% over " + std::to_string(v.baseline_points) +
                                  " points (threshold " + format_figure(v.figure, v.threshold, false) + " pts)";
      const char* kind = fails                                  ? "::error title=Overhead regression::"
                         : v.verdict == Verdict::regression     ? "::warning title=Overhead regression (not gated)::"
                                                                : "::notice title=Overhead improvement::";
      Say(std::cout) << kind << github_escape(message) << "\n";
    }
  }
  std::ostringstream change_text;
  for (const auto& c : changes)
    change_text << "- " << markdown_code(c.scenario) << ' ' << figure_name(c.figure) << " on "
                << markdown_code(c.fingerprint) << ": " << format_figure(c.figure, c.change.before) << "% → "
                << format_figure(c.figure, c.change.after) << "% between " << commit_code(c.last_before->commit)
                << " and " << commit_code(c.first_after->commit) << " (p = " << c.change.p_value << ")\n";

  // The accuracy verdict: a newest point whose batched peak is farther from
  // the exact one than the bound it states is a correctness regression,
  // which fails the gate whatever --gate names.
  std::ostringstream accuracy_text;
  int outside_bound = 0;
  for (const auto& name : catalogue.names()) {
    const auto newest = std::find_if(history.entries.rbegin(), history.entries.rend(),
                                     [&](const HistoryEntry& e) { return e.scenario == name; });
    if (newest == history.entries.rend() || !newest->accuracy) continue;
    const Accuracy& a = *newest->accuracy;
    const bool within = a.within_bound();
    if (!within) ++outside_bound;
    accuracy_text << "| " << markdown_code(name) << " | " << commit_code(newest->commit) << " | " << a.error_bytes() << " B | "
                  << a.bound_bytes << " B | **" << (within ? "within the bound" : "outside the bound") << "** |\n";
    if (!within && options.github) {
      Say(std::cout) << "::error title=Accuracy regression::"
                     << github_escape(name + " at " + short_commit(newest->commit) + ": batched peak " +
                                      std::to_string(a.batched_peak_bytes) + " B against the exact " +
                                      std::to_string(a.exact_peak_bytes) + " B, outside the stated bound of " +
                                      std::to_string(a.bound_bytes) + " B")
                     << "\n";
    }
  }

  std::string gate_names;
  for (Figure f : gated) gate_names += (gate_names.empty() ? "" : ", ") + std::string(figure_name(f));
  std::ostringstream report;
  report << "### Overhead verdicts\n\n" << table.str() << "\nRule: each figure of each machine's newest point of the "
            "newest measured commit against the median of up to "
         << rule.window << " earlier points of the same scenario, machine, timing method, scale and command, after "
            "the last established step; threshold = max(" << format_percent(rule.min_effect, false) << " pts ("
         << format_percent(rule.instructions_min_effect, false, 2) << " for instructions), t × noise); false-alarm rate "
         << rule.false_alarm_rate << " per push over " << rule.scenarios << " scenarios × " << rule.figures
         << " gated figure(s). Gated: " << (gate_names.empty() ? "none" : gate_names) << ".\n";
  if (!accuracy_text.str().empty())
    report << "\n### Accuracy (batched peak − exact peak against the stated bound)\n\n"
              "| Scenario | Commit | Error | Bound | Verdict |\n|---|---|---:|---:|---|\n"
           << accuracy_text.str();
  if (!changes.empty()) report << "\n### Change points\n\n" << change_text.str();
  say_lines(std::cout, report.str());

  if (options.github) {
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary != nullptr && *summary != '\0') {
      try {
        // The job summary is an output too: never a file of the store.
        heapline::OutputFiles guard;
        store.protect_from(guard);
        guard.claim("GITHUB_STEP_SUMMARY " + std::string(summary), summary);
        heapline::append_to_output_file(summary, report.str() + "\n");
      } catch (const heapline::OutputRefused& refused) {
        say("check", std::string("the job summary (GITHUB_STEP_SUMMARY) was not written: ") + refused.what());
      }
    }
  }
  if (regressions > 0) say("check", std::to_string(regressions) + " regression(s) of a gated figure");
  if (outside_bound > 0)
    say("check", std::to_string(outside_bound) + " scenario(s) with an error outside the stated bound");
  if (!judged_nothing.empty() && options.fail_on_regression)
    say("check", "--fail-on-regression: " + judged_nothing);
  return (regressions > 0 || outside_bound > 0 || !judged_nothing.empty()) && options.fail_on_regression
             ? kExitRefused
             : kExitOk;
}

}  // namespace

Subcommand add_check_command(CLI::App& bench, const Locations& where) {
  return subcommand(
      bench, where, "check", "Verdicts on each figure of the newest point of each scenario, and change points",
      run_check, [](CLI::App& app, CheckOptions& options) {
        add_store_option(app, options.store);
        add_verdict_options(app, options.rule);
        app.add_flag("--fail-on-regression", options.fail_on_regression,
                     "Exit 1 when a gated figure regressed, or when no gated figure could be judged at all; "
                     "verdicts of insufficient history only fail nothing");
        app.add_flag("--github", options.github, "GitHub Actions annotations and run summary");
        app.final_callback([&options] { check::relations(options.rule); });
      });
}

namespace {

struct CalibrateOptions {
  Locations where;
  std::string store;
  std::string library;  // default: libheapline.so next to heapline-bench
  int runs = kDefaultRuns;
  int repeats = 5;
  double scale = 1.0;
  std::vector<std::string> only;
  bool instructions = true;  // calibrate the instruction figure too, when valgrind is installed
  VerdictOptions rule;
};

int run_calibrate(const CalibrateOptions& options) {
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  const std::vector<const Scenario*> selected = selected_scenarios(catalogue, options.only);
  const VerdictRule rule = verdict_rule(options.rule, static_cast<int>(catalogue.scenarios.size()));
  const std::string library = resolved_library(options.library, options.where);
  const Store store = appendable_store(options.store, options.where, "Nothing was measured.");
  try {
    store.check_appendable();
  } catch (const std::runtime_error& e) {
    throw Refusal(std::string(e.what()) + ". Nothing was measured.");
  }
  const Machine machine = this_machine();
  const std::string valgrind = options.instructions ? find_valgrind() : std::string();
  if (options.instructions && valgrind.empty()) say("heapline-bench", kNoValgrindNote);

  PosixProcessRunner runner;
  bool unstored = false;
  int goals = 0, goals_met = 0;
  Say(std::cout) << "| Scenario | Figure | A/A spread | A/A largest | Repeat spread | Noise (sigma) | Threshold | "
                    "Detectable (80%) | Spread goal |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const Scenario* scenario : selected) {
    Stopwatch stopwatch;
    ScratchDirectory scratch;
    ProgressLine progress("calibrate ");
    auto show = [&](const ProgressEvent& e) { progress.show(e); };
    std::map<Figure, std::vector<double>> aa, repeated;
    std::vector<InstructionFigure> counts;
    auto add_timed = [&](std::map<Figure, std::vector<double>>& into, const Measurement& m) {
      into[Figure::wall].push_back(m.overhead);
      if (const auto cpu = cpu_figure(m)) into[Figure::cpu].push_back(cpu->overhead);
    };
    for (int r = 0; r < options.repeats; ++r) {
      // A/A: the library on both sides; the figure should be 0.
      auto same = build_request(*scenario, options.where, {}, options.runs, options.scale, {}, scratch.path());
      set_preload(same.env, {library});
      add_timed(aa, measure(runner, same, show));
      auto real = build_request(*scenario, options.where, library, options.runs, options.scale, {}, scratch.path());
      add_timed(repeated, measure(runner, real, show));
      if (auto counted = instruction_request(*scenario, options.where, real, options.scale, {}, valgrind)) {
        counts.push_back(count_instructions(runner, *counted));
        repeated[Figure::instructions].push_back(counts.back().overhead);
      }
    }
    // The instruction A/A: each count with the library against the first
    // one, the same build on both sides of the ratio.
    for (std::size_t i = 1; i < counts.size(); ++i)
      aa[Figure::instructions].push_back(static_cast<double>(counts[i].with) / static_cast<double>(counts[0].with) - 1);
    progress.clear();
    std::string lines;
    for (Figure figure : kFigures) {
      if (repeated[figure].empty() || aa[figure].empty()) continue;
      auto c = summarise_calibration(scenario->name, figure, aa[figure], repeated[figure], rule);
      // The command of the series this noise belongs to (history.h, SeriesKey).
      c.command = figure == Figure::instructions
                      ? counts.front().command
                      : describe_command(*scenario, {}, expand_command(*scenario, {}, options.scale));
      std::string goal_text = "–";
      if (const auto goal = scenario->spread_goal_points.find(figure_name(figure));
          goal != scenario->spread_goal_points.end()) {
        const bool met = spread_goal_met(c, goal->second / 100);
        ++goals;
        goals_met += met;
        goal_text = (met ? "met" : "**not met**") + std::string(" (±") +
                    format_figure(figure, goal->second / 100, false) + " pts)";
      }
      double largest = 0;
      for (double x : c.aa_overheads) largest = std::max(largest, std::fabs(x));
      Say(std::cout) << "| " << markdown_code(c.scenario) << " | " << figure_name(figure) << " | ±"
                     << format_figure(figure, robust_sigma(c.aa_overheads), false) << " | "
                     << format_figure(figure, largest, false) << " | ±"
                     << format_figure(figure, robust_sigma(c.repeated_overheads), false) << " | "
                     << format_figure(figure, c.sigma, false) << " pts | " << format_figure(figure, c.threshold, false)
                     << " pts | " << format_figure(figure, c.detectable, false) << " pts | " << goal_text << " |\n";
      lines += calibration_to_json(c, machine.fingerprint(), machine.describe(), options.runs, options.scale,
                                   utc_now_rfc3339())
                   .dump() +
               "\n";
    }
    std::cout.flush();
    // Scenario by scenario: an interruption keeps what was calibrated.
    try {
      store.append_lines(store.calibration_path(), lines);
    } catch (const std::runtime_error& e) {
      unstored = true;
      say_lines(std::cerr, "heapline-bench: " + keep_unstored(store, "the calibration of " + scenario->name, lines,
                                                              e.what(), "cat {file} >> " + store.calibration_path()));
    }
    const double seconds = stopwatch.lap();
    Say(std::cerr) << "calibrate: " << scenario->name << " in " << std::lround(seconds) << " s\n";
  }
  Say(std::cout) << "\nSpread goals (the catalogue's spread_goal_points: every A/A figure and the noise within the "
                    "goal): "
                 << goals_met << " of " << goals << " met.\n";
  Say(std::cerr) << "calibrate: appended to " << terminal_text(store.calibration_path()) << " (machine "
                 << machine.fingerprint() << ")" << (unstored ? "; some calibrations could not be stored (above)" : "")
                 << "\n";
  return unstored ? kExitRefused : kExitOk;
}

}  // namespace

Subcommand add_calibrate_command(CLI::App& bench, const Locations& where) {
  return subcommand(
      bench, where, "calibrate", "Measure how much each figure moves when nothing changed (A/A and repeats); store it",
      run_calibrate, [](CLI::App& app, CalibrateOptions& options) {
        add_store_option(app, options.store);
        app.add_option("--lib", options.library, "Preload library (default: libheapline.so)")
            ->check(check::text & check::libraries);
        add_runs_option(app, options.runs);
        app.add_option("--repeats", options.repeats, "Figures of each kind per scenario (a spread needs a few)")
            ->capture_default_str()
            ->transform(check::whole_number(3, 1000));
        add_scale_option(app, options.scale);
        add_only_option(app, options.only);
        app.add_flag("!--no-instructions", options.instructions,
                     "Do not calibrate the instruction figure (calibrated when valgrind is installed)");
        add_verdict_options(app, options.rule);
        app.final_callback([&options] { check::relations(options.rule); });
      });
}

}  // namespace heapline::bench
