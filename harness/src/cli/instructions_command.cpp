// heapline-bench instructions: the instruction figure of each scenario for
// one or more builds, without storing anything: what
// tools/count_instructions.sh prints and what the pull-request workflow
// gates on. The figure is counted by the suite's own steps (build_request,
// instruction_request, count_instructions), so it is the figure a point of
// the same build records. With --base, the figure is also counted for the
// base build and the change judged (verdicts/build_verdict.h);
// --fail-on-regression then exits 1 when a gated figure regressed.
#include <algorithm>
#include <memory>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "command_line.h"
#include "commands.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/measurement/instructions.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/reports/escaping.h"
#include "heapline_bench/reports/percent_format.h"
#include "heapline_bench/verdicts/build_verdict.h"
#include "request_builder.h"

namespace heapline::bench {
namespace {

// `instructions`: each scenario's instruction figure of a build, counted
// exactly as the suite counts a point's (cli/instructions_command.cpp); with
// a base build, the verdict on the change.
struct InstructionsOptions {
  Locations where;
  std::vector<std::string> libraries;  // empty: libheapline.so next to heapline-bench
  std::string base;     // a build to judge the library against; empty: none
  double scale = 1.0;
  std::vector<std::string> only;
  bool json = false;
  bool fail_on_regression = false;
  VerdictOptions rule;
};

struct ScenarioCounts {
  const Scenario* scenario = nullptr;
  std::vector<InstructionFigure> figures;  // one per library, in the order given
  std::optional<InstructionFigure> base;
  std::optional<BuildVerdict> verdict;  // of the one library against the base
};

// The suite's instruction figure of `scenario` with `library`: the same
// request the suite builds for a point (suite_command.cpp), counted.
InstructionFigure suite_figure(ProcessRunner& runner, const Scenario& scenario, const Locations& where,
                               const std::string& library, double scale, const std::string& valgrind) {
  const MeasurementRequest measured = build_request(scenario, where, library, 1, scale, {}, "");
  const auto request = instruction_request(scenario, where, measured, scale, {}, valgrind);
  return count_instructions(runner, *request);
}

nlohmann::ordered_json counts_json(const InstructionFigure& figure) {
  return {{"without", figure.without}, {"with", figure.with}, {"overhead", figure.overhead}};
}

std::string pts(double ratio, bool sign = true) { return format_figure(Figure::instructions, ratio, sign) + " pts"; }

// A library's name in the table: its file name, or its whole path when
// another library of the command line has the same file name (two builds).
std::string library_name(const std::string& library, const std::vector<std::string>& libraries) {
  const auto name = std::filesystem::path(library).filename();
  for (const auto& other : libraries)
    if (other != library && std::filesystem::path(other).filename() == name) return library;
  return name.string();
}


int run_instructions(const InstructionsOptions& options) {
  // Everything is checked before the first count.
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  std::vector<const Scenario*> selected;
  for (const Scenario* scenario : selected_scenarios(catalogue, options.only)) {
    if (!scenario->instructions_command.empty()) selected.push_back(scenario);
    else if (!options.only.empty())
      throw Refusal("scenario " + scenario->name + " has no instructions_command in " + options.where.catalogue +
                    ": it has no instruction figure.");
  }
  if (selected.empty()) throw Refusal("no scenario of " + options.where.catalogue + " has an instructions_command.");
  std::vector<std::string> libraries;
  for (const auto& library : options.libraries) libraries.push_back(checked_preload_libraries(library));
  if (libraries.empty()) libraries.push_back(checked_preload_libraries(default_library(options.where)));
  const std::string base = options.base.empty() ? std::string() : checked_preload_libraries(options.base);
  if (!base.empty() && libraries.size() != 1)
    throw Refusal("--base judges one library: give one --lib with it, got " + std::to_string(libraries.size()) + ".");
  const VerdictRule rule = verdict_rule(options.rule, static_cast<int>(selected.size()));
  const bool gated =
      std::find(options.rule.gate.begin(), options.rule.gate.end(), "instructions") != options.rule.gate.end();
  const std::string valgrind = find_valgrind();
  if (valgrind.empty()) throw Refusal(std::string(kNoValgrindNote) + ". Nothing was counted.");

  PosixProcessRunner runner;
  std::vector<ScenarioCounts> rows;
  for (const Scenario* scenario : selected) {
    ScenarioCounts row;
    row.scenario = scenario;
    if (!base.empty()) {
      row.base = suite_figure(runner, *scenario, options.where, base, options.scale, valgrind);
      say(scenario->name, format_instructions(row.base->overhead) + " with the base");
    }
    for (const auto& library : libraries) {
      row.figures.push_back(suite_figure(runner, *scenario, options.where, library, options.scale, valgrind));
      Say(std::cerr) << scenario->name << ": " << format_instructions(row.figures.back().overhead) << " with "
                     << library_name(library, libraries) << " (" << row.figures.back().with << " instructions, "
                     << row.figures.back().without << " without)\n";
    }
    if (row.base)
      row.verdict = judge_builds(row.base->overhead, row.figures.front().overhead, Figure::instructions, rule,
                                 scenario->spread_goal_points);
    rows.push_back(std::move(row));
  }

  int regressions = 0;
  std::ostringstream why;  // one line per regression: which scenario, by how much
  for (const auto& row : rows) {
    if (!row.verdict || row.verdict->verdict != Verdict::regression) continue;
    if (gated) ++regressions;
    why << "Regression" << (gated ? "" : " (not gated)") << ": " << markdown_code(row.scenario->name) << " costs "
        << format_instructions(row.figures.front().overhead) << " instructions against the base's "
        << format_instructions(row.base->overhead) << ": " << pts(row.verdict->change) << ", above the threshold of "
        << pts(row.verdict->threshold, false) << ".\n";
  }

  if (options.json) {
    nlohmann::ordered_json out = {{"schema", "heapline-instructions/1"}, {"scale", options.scale}};
    if (!base.empty()) out["base"] = base;
    out["scenarios"] = nlohmann::ordered_json::array();
    for (const auto& row : rows) {
      nlohmann::ordered_json entry = {{"name", row.scenario->name}, {"command", row.figures.front().command}};
      entry["figures"] = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < libraries.size(); ++i) {
        nlohmann::ordered_json figure = {{"library", libraries[i]}};
        figure.update(counts_json(row.figures[i]));
        entry["figures"].push_back(std::move(figure));
      }
      if (row.base) {
        entry["base"] = counts_json(*row.base);
        entry["change"] = row.verdict->change;
        entry["threshold"] = row.verdict->threshold;
        entry["verdict"] = verdict_name(row.verdict->verdict);
      }
      out["scenarios"].push_back(std::move(entry));
    }
    out["regressions"] = regressions;
    Say(std::cout) << json_text(out);
  } else if (base.empty()) {
    Say table(std::cout);
    table << "| Scenario | Reduced command | Without |";
    for (const auto& library : libraries) table << ' ' << markdown_code(library_name(library, libraries)) << " |";
    table << "\n|---|---|---:|";
    for (std::size_t i = 0; i < libraries.size(); ++i) table << "---:|";
    table << "\n";
    for (const auto& row : rows) {
      table << "| " << markdown_code(row.scenario->name) << " | " << markdown_code(row.figures.front().command) << " | "
            << row.figures.front().without << " |";
      for (const auto& figure : row.figures) table << ' ' << format_instructions(figure.overhead) << " |";
      table << "\n";
    }
    table << "\nInstructions under callgrind: each library against the same command without it, as the suite "
             "counts a point's (scale "
          << options.scale << ").\n";
  } else {
    Say table(std::cout);
    table << "| Scenario | Reduced command | Base | This build | Change | Threshold | Verdict |\n"
             "|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& row : rows)
      table << "| " << markdown_code(row.scenario->name) << " | " << markdown_code(row.figures.front().command) << " | "
            << format_instructions(row.base->overhead) << " | " << format_instructions(row.figures.front().overhead)
            << " | " << pts(row.verdict->change) << " | ±" << pts(row.verdict->threshold, false) << " | **"
            << verdict_name(row.verdict->verdict) << "** |\n";
    table << "\nInstructions under callgrind: each build against the same command without it, as the suite "
             "counts a point's (scale "
          << options.scale << "). Threshold: max(" << pts(rule.instructions_min_effect, false)
          << ", the scenario's spread goal). Gated: " << (gated ? "yes" : "no") << ".\n";
    if (!why.str().empty()) table << "\n" << why.str();
  }
  say_lines(std::cerr, why.str());
  if (regressions > 0) say("instructions", std::to_string(regressions) + " regression(s) of a gated figure");
  return regressions > 0 && options.fail_on_regression ? kExitRefused : kExitOk;
}

}  // namespace

Subcommand add_instructions_command(CLI::App& bench, const Locations& where) {
  return subcommand(
      bench, where, "instructions",
      "Count each scenario's instructions under callgrind with a build, as the suite does; with "
      "--base, judge the change against another build",
      run_instructions, [](CLI::App& app, InstructionsOptions& options) {
        app.add_option("--lib", options.libraries,
                       "Preload library, or A:B; several for a column each (default: libheapline.so)")
            ->check(check::text & check::libraries);
        app.add_option("--base", options.base, "A base build's library to judge --lib against")
            ->check(check::text & check::libraries);
        add_scale_option(app, options.scale, "Multiply the reduced commands' operation counts");
        add_only_option(app, options.only);
        app.add_option("--min-effect-instructions", options.rule.min_effect_instructions_points,
                       "Smallest change judged, in percentage points")
            ->capture_default_str()
            ->check(check::number(0, 100));
        app.add_flag("--json", options.json, "Print JSON instead of the Markdown table");
        app.add_flag("--fail-on-regression", options.fail_on_regression,
                     "With --base: exit 1 when the instruction figure regressed");
        app.final_callback([&options] { heapline::option_checks::each_once("--lib", options.libraries); });
      });
}

}  // namespace heapline::bench
