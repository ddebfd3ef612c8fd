#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include <heapline/output_file.h>

#include "command_line.h"
#include "commands.h"
#include "heapline_bench/history/store.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/measurement/compare.h"
#include "heapline_bench/measurement/instructions.h"
#include "heapline_bench/measurement/process_runner.h"
#include "heapline_bench/reports/comparison_export.h"
#include "progress.h"
#include "request_builder.h"
#include "heapline_bench/measurement/scratch_directory.h"

namespace heapline::bench {
namespace {

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

// glibc's, in Debian's multiarch directory of this build's processor.
constexpr const char* kMemusage = "/usr/lib/" HEAPLINE_MULTIARCH "/libmemusage.so";
// Debian's heaptrack (1.4 in bookworm) installs its recording library here.
constexpr const char* kHeaptrack = "/usr/lib/heaptrack/libheaptrack_preload.so";

// heaptrack records without its GUI or its interpreter when its preload
// library runs alone: it writes its trace to DUMP_HEAPTRACK_OUTPUT (what
// `heaptrack --raw` does, through a compressor). The trace goes to /dev/null:
// a full trace of a scenario is gigabytes, and the figure is what recording
// costs the program.
Build heaptrack_build(const std::string& library) {
  return {"heaptrack", library, {{"DUMP_HEAPTRACK_OUTPUT", "/dev/null"}},
          "its recording library alone (libheaptrack_preload.so, what `heaptrack --raw` preloads: a backtrace per "
          "allocation), the trace written to /dev/null; `heaptrack` itself also runs a compressor or its "
          "interpreter beside the program, which this figure does not count."};
}

// --env LABEL:NAME=VALUE: NAME=VALUE in the environment of that build's
// runs (both sides, like a peer's own settings), and said under the table.
void apply_setting(std::vector<Build>& builds, const std::string& setting) {
  const auto colon = setting.find(':');
  const auto equals = colon == std::string::npos ? std::string::npos : setting.find('=', colon);
  if (colon == std::string::npos || colon == 0 || equals == std::string::npos || equals == colon + 1)
    throw Refusal("--env takes LABEL:NAME=VALUE, got '" + setting + "'.");
  const std::string label = setting.substr(0, colon);
  const std::string name = setting.substr(colon + 1, equals - colon - 1);
  const std::string value = setting.substr(equals + 1);
  if (const std::string use = set_by_the_harness(name); !use.empty())
    throw Refusal("--env may not set " + name + " ('" + setting + "'): " + use + ". Nothing was measured.");
  if (const std::string refused = refused_by_the_library(name, value); !refused.empty())
    throw Refusal("--env '" + setting + "': " + refused + ". Nothing was measured.");
  for (Build& build : builds) {
    if (build.label != label) continue;
    if (build.env.count(name) != 0)
      throw Refusal("--env sets " + name + " for build '" + label + "' twice ('" + setting + "').");
    build.env[name] = value;
    build.note += std::string(build.note.empty() ? "" : " ") + "Run with " + name + "=" + value + ".";
    return;
  }
  throw Refusal("--env names build '" + label + "', which is not one of the builds.");
}

std::vector<Build> builds_from(const CompareOptions& options, std::vector<AbsentPeer>& absent) {
  std::vector<Build> builds;
  for (const auto& spec : options.builds) {
    const auto equals = spec.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == spec.size())
      throw Refusal("--build takes LABEL=PATH, got '" + spec + "'.");
    builds.push_back({spec.substr(0, equals), checked_preload_library(spec.substr(equals + 1))});
  }
  if (options.floor)
    builds.push_back({"forwarding only", checked_preload_library(options.where.bin_dir + "/libheapline_null.so")});
  if (options.memusage) builds.push_back({"libmemusage.so", checked_preload_library(kMemusage)});
  if (options.heaptrack) {
    const std::string library = options.heaptrack_library.empty() ? kHeaptrack : options.heaptrack_library;
    if (access(library.c_str(), R_OK) == 0) {
      builds.push_back(heaptrack_build(checked_preload_library(library)));
    } else {
      absent.push_back({"heaptrack", "not installed here (no " + library + "; Debian package heaptrack)."});
      say("compare", "heaptrack is absent (no " + library + "); its column says so");
    }
  }
  for (std::size_t i = 0; i < builds.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (builds[i].label == builds[j].label) throw Refusal("two builds are labelled '" + builds[i].label + "'.");
  for (const auto& setting : options.settings) apply_setting(builds, setting);
  if (builds.size() < 2) throw Refusal("compare needs at least two builds: --build LABEL=PATH, --floor, --memusage, --heaptrack.");
  return builds;
}

}  // namespace

std::string docs_comparison_path(const Locations& where) { return where.work_dir + "/docs/release-comparison.json"; }

namespace {

int run_compare(const CompareOptions& options) {
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  std::vector<std::string> scenarios;
  for (const Scenario* scenario : selected_scenarios(catalogue, options.only)) scenarios.push_back(scenario->name);
  std::vector<AbsentPeer> absent;
  const auto builds = builds_from(options, absent);
  // A quick look never replaces the docs' comparison: only --write-docs
  // (which the command line takes without --json and --out) writes there.
  // Both files are checked before the measurement, which takes minutes.
  const std::string out_dir =
      options.write_docs   ? options.where.work_dir + "/docs/_generated"
      : options.out.empty() ? options.where.output_dir + "/release-comparison"
                            : options.out;
  const std::string json_path = options.write_docs     ? docs_comparison_path(options.where)
                                : options.json.empty() ? out_dir + "/release-comparison.json"
                                                       : options.json;
  const std::string markdown_path = out_dir + "/release-comparison.md";
  heapline::OutputFiles outputs;
  // What heapline-bench reads is never an output: the catalogue, and the
  // default store's files (--json bench-data/points.jsonl replaced the
  // history with a comparison).
  outputs.reads("", options.where.catalogue);
  Store(store_directory("", options.where)).protect_from(outputs);
  // The output directory (--out, or the default) is made when missing, in
  // a directory that exists; a file named by --json is made in one.
  const heapline::OutputRules in_out_dir{.made_directories = 1};
  const bool json_in_out_dir = !options.write_docs && options.json.empty();
  outputs.claim(options.json.empty() ? json_path : "--json " + options.json, json_path,
                json_in_out_dir ? in_out_dir : heapline::OutputRules{});
  outputs.claim(options.out.empty() ? markdown_path : "--out " + options.out, markdown_path, in_out_dir);

  ScratchDirectory scratch;
  auto request_for = [&](const std::string& name) {
    return build_request(*catalogue.find(name), options.where, {}, options.runs, options.scale, {},
                         scratch.path());
  };
  PosixProcessRunner runner;
  const std::string valgrind = options.instructions ? find_valgrind() : std::string();
  if (options.instructions && valgrind.empty()) say("compare", kNoValgrindNote);
  // The suite's own instruction figure (request_builder.h), of each build
  // with its settings.
  auto instructions_for = [&](const std::string& name, const MeasurementRequest& request) {
    const auto counted = instruction_request(*catalogue.find(name), options.where, request, options.scale, {}, valgrind);
    if (!counted) return std::optional<InstructionFigure>();
    say("compare", name + ": counting instructions with " + request.library);
    try {
      return std::optional<InstructionFigure>(count_instructions(runner, *counted));
    } catch (const Refusal& refusal) {
      say("compare", name + ": not counted: " + refusal.what());
      throw;
    }
  };
  ProgressLine progress;
  Comparison comparison =
      compare_builds(runner, builds, scenarios, options.rounds, options.runs, options.scale, request_for,
                     [&](const ProgressEvent& e) { progress.show(e); },
                     valgrind.empty() ? InstructionsForRequest() : InstructionsForRequest(instructions_for));
  progress.clear();
  comparison.absent = absent;

  outputs.stage(json_path, comparison_json(comparison).dump(1) + "\n");
  const std::string markdown = comparison_markdown(comparison);
  outputs.stage(markdown_path, markdown);
  outputs.commit();
  say_lines(std::cout, markdown);
  say("compare", "raw data in " + json_path + "; table in " + out_dir + "/release-comparison.md");
  return kExitOk;
}

}  // namespace

Subcommand add_compare_command(CLI::App& bench, const Locations& where) {
  return subcommand(
      bench, where, "compare",
      "Compare library builds on the scenarios, in rounds that alternate them; print the docs' table. Each cell is "
      "the overhead in wall time, then in CPU time (user + sys of the same runs) in brackets: median with / median "
      "without - 1 in each round, then the median of the rounds",
      run_compare, [](CLI::App& app, CompareOptions& options) {
        app.add_option("--build,--lib", options.builds, "A build: LABEL=PATH (twice or more; --lib is its former name)")
            ->check(check::text);
        app.add_option("--env", options.settings,
                       "A setting for one build's runs, LABEL:NAME=VALUE (e.g. wide:HEAPLINE_PRECISION=32768,64): the "
                       "same library under two settings is two builds")
            ->check(check::text);
        app.add_flag("--floor", options.floor, "Add the forwarding-only library (the floor of any interposer)");
        app.add_flag("--memusage", options.memusage, "Add glibc's libmemusage.so (the closest peer)");
        app.add_flag("--heaptrack", options.heaptrack,
                     "Add heaptrack's recording library, its trace discarded (absent, with a note, when heaptrack "
                     "is not installed)");
        app.add_option("--heaptrack-library", options.heaptrack_library,
                       "libheaptrack_preload.so (default: where Debian's heaptrack package installs it)")
            ->check(check::text);
        app.add_option("--rounds", options.rounds, "Rounds; each figure (wall and cpu) is their median")
            ->capture_default_str()
            ->transform(check::whole_number(1, 1000));
        add_runs_option(app, options.runs, "Runs per side in each measurement");
        add_scale_option(app, options.scale);
        add_only_option(app, options.only);
        app.add_flag("!--no-instructions", options.instructions,
                     "Do not count instructions under callgrind (counted once per build after the rounds, by "
                     "default when valgrind is installed)");
        auto* json_option = app.add_option("--json", options.json, "Raw data (default: OUT/release-comparison.json)")
                                ->check(check::text);
        auto* out_option =
            app.add_option("--out", options.out,
                           "Where the table and the raw data go (default: release-comparison in the build "
                           "directory, or in the current directory when installed)")
                ->check(check::text);
        app.add_flag("--write-docs", options.write_docs,
                     "Write into the docs: <work>/docs/release-comparison.json (tracked) and the table they include")
            ->excludes(json_option)
            ->excludes(out_option);
      });
}

}  // namespace heapline::bench
