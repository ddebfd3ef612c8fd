#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/measurement/compare.h"
#include "heapline_bench/reports/atomic_file.h"
#include "heapline_bench/reports/comparison_export.h"
#include "progress.h"
#include "request_builder.h"
#include "scratch_directory.h"

namespace heapline::bench {
namespace {

constexpr const char* kMemusage = "/usr/lib/x86_64-linux-gnu/libmemusage.so";

std::vector<Build> builds_from(const CompareOptions& options) {
  std::vector<Build> builds;
  for (const auto& spec : options.libs) {
    const auto equals = spec.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == spec.size())
      throw Refusal("--lib takes LABEL=PATH, got '" + spec + "'.");
    builds.push_back({spec.substr(0, equals), checked_preload_library(spec.substr(equals + 1))});
  }
  if (options.floor)
    builds.push_back({"forwarding only", checked_preload_library(options.where.bin_dir + "/libheapline_null.so")});
  if (options.memusage) builds.push_back({"libmemusage.so", checked_preload_library(kMemusage)});
  for (std::size_t i = 0; i < builds.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (builds[i].label == builds[j].label) throw Refusal("two builds are labelled '" + builds[i].label + "'.");
  if (builds.size() < 2) throw Refusal("compare needs at least two builds: --lib LABEL=PATH, --floor, --memusage.");
  return builds;
}

}  // namespace

std::string comparison_json_path(const std::string& option, const Locations& where) {
  return option.empty() ? where.source_dir + "/docs/release-comparison.json" : option;
}

int run_compare(const CompareOptions& options) {
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  std::vector<std::string> scenarios;
  for (const Scenario* scenario : selected_scenarios(catalogue, options.only)) scenarios.push_back(scenario->name);
  if (options.runs < 1) throw Refusal("--runs must be a positive integer.");
  const auto builds = builds_from(options);

  ScratchDirectory scratch;
  auto request_for = [&](const std::string& name) {
    return build_request(*catalogue.find(name), options.where, "none", options.runs, options.scale, {},
                         scratch.path());
  };
  PosixProcessRunner runner;
  ProgressLine progress;
  const Comparison comparison = compare_builds(runner, builds, scenarios, options.rounds, options.runs,
                                               options.scale, request_for,
                                               [&](const ProgressEvent& e) { progress.show(e); });
  progress.clear();

  const std::string json_path = comparison_json_path(options.json, options.where);
  write_file_atomically(json_path, comparison_json(comparison).dump(1) + "\n");
  const std::string markdown = comparison_markdown(comparison);
  const std::string out_dir = options.out.empty() ? options.where.source_dir + "/docs/_generated" : options.out;
  write_file_atomically(out_dir + "/release-comparison.md", markdown);
  std::cout << markdown;
  std::cerr << "compare: raw data in " << json_path << "; table in " << out_dir << "/release-comparison.md\n";
  return kExitOk;
}

}  // namespace heapline::bench
