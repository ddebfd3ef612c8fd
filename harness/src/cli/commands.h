// The subcommands of heapline-bench, in the programs' one pattern
// (heapline/subcommand.h): each add_..._command function adds one
// subcommand's options to heapline-bench's command line and returns what
// runs it; main.cpp lists them. Here too: what several subcommands share
// (where the files are, the exit statuses, the options of the verdict rule,
// of --until-ci and of the page, the store).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "heapline/subcommand.h"

#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/text/text.h"
#include "heapline_bench/verdicts/verdict.h"

namespace heapline {
class OutputFiles;
}

namespace heapline::bench {

struct Catalogue;

// Exit statuses shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRefused = 1;   // invalid measurement or input: nothing recorded
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

// Where heapline-bench's files are (heapline/install_layout.h): a build
// tree's, or an install's.
struct Locations {
  std::string catalogue;   // scenarios.json
  std::string bin_dir;     // malloc_churn and the preload libraries
  std::string source_dir;  // {source} in commands: the source tree, or the installed data directory
  // Where the store (bench-data/), the page (docs/_generated/) and the docs'
  // comparison (docs/release-comparison.json) are by default: the source
  // tree in a build tree; the current directory when installed, whose data
  // directory is the package's, not the user's.
  std::string work_dir;
  // compare's default --out is release-comparison/ in it: the build
  // directory, or the current directory when installed.
  std::string output_dir;
};

// --until-ci: keep adding interleaved pairs until the figure's confidence interval (kConfidenceLevel)
// is at most `points` percentage points on either side of it, or
// `max_runs` pairs have run (the point records how many did).
struct AdaptivePrecision {
  double points = 0;           // 0: off, exactly RUNS pairs
  std::string figure = "wall"; // wall | cpu
  int max_runs = kDefaultMaxRuns;
};

struct RenderCommandOptions {
  Locations where;
  std::string store;  // the store directory; default <work>/bench-data
  std::string out;    // default <work>/docs/_generated
  int rows = 25;
  bool plots = true;
};

// The verdict rule's settings, their defaults the rule's own (verdict.h).
struct VerdictOptions {
  int window = VerdictRule{}.window;
  int min_history = VerdictRule{}.min_history;
  double false_alarm_rate = VerdictRule{}.false_alarm_rate;
  double min_effect_points = 100 * VerdictRule{}.min_effect;  // percentage points, wall and cpu
  double min_effect_instructions_points = 100 * VerdictRule{}.instructions_min_effect;  // instructions
  // The figures whose regressions fail `check --fail-on-regression`
  // (docs/regressions.md says why these two).
  std::vector<std::string> gate = {"instructions", "cpu"};
};

using heapline::Subcommand;

// One subcommand of heapline-bench: `add_options(app, options)` adds its
// options to its CLI11 app, bound to its own Options, kept alive until `run`
// runs it with heapline-bench's locations (`where`, complete once the
// command line is parsed).
template <typename Options, typename AddOptions>
Subcommand subcommand(CLI::App& bench, const Locations& where, const std::string& name, const std::string& description,
                      int (*run)(const Options&), AddOptions add_options) {
  CLI::App* app = bench.add_subcommand(name, description);
  auto options = std::make_shared<Options>();
  add_options(*app, *options);
  return {app, [options, &where, run] {
            options->where = where;
            return run(*options);
          }};
}

// Each subcommand, its options added to `bench`; `where` is heapline-bench's
// own (complete once the command line is parsed), read when the subcommand
// runs.
Subcommand add_overhead_command(CLI::App& bench, const Locations& where);      // overhead_command.cpp
Subcommand add_suite_command(CLI::App& bench, const Locations& where);         // suite_command.cpp
Subcommand add_compare_command(CLI::App& bench, const Locations& where);       // compare_command.cpp
Subcommand add_check_command(CLI::App& bench, const Locations& where);         // verdict_commands.cpp
Subcommand add_instructions_command(CLI::App& bench, const Locations& where);  // instructions_command.cpp
Subcommand add_accuracy_command(CLI::App& bench, const Locations& where);      // accuracy_command.cpp
Subcommand add_calibrate_command(CLI::App& bench, const Locations& where);     // verdict_commands.cpp
Subcommand add_render_command(CLI::App& bench, const Locations& where);        // store_commands.cpp
Subcommand add_validate_command(CLI::App& bench, const Locations& where);      // store_commands.cpp
Subcommand add_import_command(CLI::App& bench, const Locations& where);        // store_commands.cpp
Subcommand add_export_command(CLI::App& bench, const Locations& where);        // store_commands.cpp

// The page from the store (render; suite renders after its points).
int run_render(const RenderCommandOptions& options);

// The files a render writes, claimed in `outputs` (heapline/output_file.h)
// against the files it reads: render claims them before its work, suite
// before its first measurement. Throws heapline::OutputRefused.
void claim_render_command_outputs(const RenderCommandOptions& options, const Catalogue& catalogue,
                                  heapline::OutputFiles& outputs);

// The verdict rule from the command line; refuses impossible values.
VerdictRule verdict_rule(const VerdictOptions& options, int scenarios);

// The docs' release comparison, which render makes the docs' table from:
// <work>/docs/release-comparison.json, written by `compare --write-docs`.
std::string docs_comparison_path(const Locations& where);

// The store directory to use: the option's, else <work>/bench-data.
std::string store_directory(const std::string& option, const Locations& where);

class Store;
// The store that validate, render, check and export read: refused (Refusal,
// one line) when its directory does not exist. A directory without
// points.jsonl is an empty store.
Store existing_store(const std::string& option, const Locations& where);

// The store that import, suite and calibrate append to: one named with
// --store must exist (a mistyped --store sent the points into a new store
// that nothing reads): refused (Refusal, one line ending with
// `nothing_done`, "Nothing was measured."); the default, <work>/bench-data,
// is made when the first point needs it.
Store appendable_store(const std::string& option, const Locations& where, const std::string& nothing_done);

// What to say of lines that could not be appended to the store (`why`): the
// lines in full, and the file beside the store they were written to
// (Store::keep_beside) with the command that adds them later (`later`,
// {file} standing for that file), or why even that failed. A measurement is never lost silently.
std::string keep_unstored(const Store& store, const std::string& what, const std::string& lines, const std::string& why,
                          const std::string& later);

}  // namespace heapline::bench
