// The subcommands of heapline-bench. main.cpp parses the command line into
// these option structs; each function runs one subcommand and returns the
// process exit status.
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/text/text.h"
#include "heapline_bench/verdicts/verdict.h"

namespace heapline::bench {

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

struct RenderCommandOptions {
  Locations where;
  std::string store;  // the store directory; default <work>/bench-data
  std::string out;    // default <work>/docs/_generated
  int rows = 25;
  bool plots = true;
};

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

struct ValidateOptions {
  Locations where;
  std::string store;
};

struct ExportOptions {
  Locations where;
  std::string store;
  std::string format = "csv";  // a name of export_formats() (reports/exporter.h)
  std::string commit;          // the one-commit formats: the points of this commit (default: the newest)
  std::string out;             // empty: standard output
};

struct ImportOptions {
  Locations where;
  std::string store;
  std::vector<std::string> files;
};

struct CompareOptions {
  Locations where;
  std::vector<std::string> builds;    // LABEL=PATH (--build, formerly --lib)
  std::vector<std::string> settings;  // LABEL:NAME=VALUE, a variable for one build's runs
  bool floor = false;                 // add the forwarding-only library
  bool memusage = false;              // add glibc's libmemusage.so
  bool heaptrack = false;             // add heaptrack's recording library (absent when not installed)
  std::string heaptrack_library;      // default: where Debian's heaptrack puts it
  int rounds = 3;
  int runs = kDefaultRuns;
  double scale = 1.0;
  std::vector<std::string> only;
  bool instructions = true;  // count instructions under callgrind, when valgrind is installed
  // Where the raw data and the table go. A comparison is written into the
  // docs (the tracked docs/release-comparison.json, and the table the docs
  // include) only with write_docs; otherwise into `out` (default
  // <output>/release-comparison), the JSON to `json` when given.
  std::string json;
  std::string out;
  bool write_docs = false;
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

struct AccuracyOptions {
  Locations where;
  std::string library;  // empty: libheapline.so next to heapline-bench; its accuracy build runs
  std::vector<std::string> command;
  bool json = false;
};

struct CheckOptions {
  Locations where;
  std::string store;
  VerdictOptions rule;
  bool fail_on_regression = false;
  bool github = false;  // annotations and the run summary of GitHub Actions
};

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

int run_overhead(const OverheadOptions& options);
int run_check(const CheckOptions& options);
int run_instructions(const InstructionsOptions& options);
int run_accuracy(const AccuracyOptions& options);

// The verdict rule from the command line; refuses impossible values.
VerdictRule verdict_rule(const VerdictOptions& options, int scenarios);
int run_calibrate(const CalibrateOptions& options);
int run_compare(const CompareOptions& options);
int run_suite(const SuiteOptions& options);
int run_render(const RenderCommandOptions& options);
int run_validate(const ValidateOptions& options);
int run_export(const ExportOptions& options);
int run_import(const ImportOptions& options);

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
