// The release comparison (docs/design.md, "The release comparison"): two or more
// library builds measured on the same scenarios in rounds. Within a round
// each scenario measures every build in turn, and the order of the builds
// rotates from round to round, so no build always runs first (or last) on a
// warming or drifting machine. Two figures per build and scenario, both from
// the same runs: wall time (the headline) and CPU time (user + sys, the `cpu`
// figure of a point: on a machine with fewer cores than threads the wall
// clock mostly measures the scheduler). Each is the median of its rounds.
// A third, counted once per build after the rounds (callgrind counts the
// same whatever the load): instructions, the suite's figure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <functional>

#include "heapline_bench/measurement/instructions.h"
#include "heapline_bench/measurement/machine.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/measurement/run_figures.h"

namespace heapline::bench {

struct Build {
  std::string label;  // the column heading: "0.3.0", "forwarding-only", ...
  std::string path;   // the preload library
  // A peer's own settings (heaptrack's output file), set on both sides of
  // its measurements so that only the preload differs.
  std::map<std::string, std::string> env = {};
  std::string note = {};  // what the docs say under the table about this build
};

// A peer that was asked for and could not be measured here: its column is
// "absent", with the reason under the table.
struct AbsentPeer {
  std::string label;
  std::string reason;
};

struct ComparisonCell {
  std::vector<double> round_overheads;  // wall, one per round, in round order
  std::vector<Measurement> rounds;      // every run of every round
  double overhead = 0;                  // median of round_overheads
  // cpu_figure() of each round's runs, in round order: absent for a round
  // whose runs hold no CPU times.
  std::vector<std::optional<RunFigure>> round_cpu;
  // The median of the rounds' cpu overheads; absent unless every round has one
  // (a median of some rounds would not be the figure the table names).
  std::optional<double> cpu_overhead;
  // The suite's instruction figure of this build (exact: one count per
  // side); absent when it was not counted (no valgrind, no reduced
  // command, --no-instructions).
  std::optional<InstructionFigure> instructions;
  // Why the count was refused (count_instructions' Refusal), when it was:
  // the timed rounds are kept and the table says why this cell is empty.
  std::string instructions_not_counted;
};

struct Comparison {
  std::vector<Build> builds;
  std::vector<std::string> scenarios;
  std::vector<std::vector<ComparisonCell>> cells;  // [scenario][build]
  std::vector<AbsentPeer> absent;                  // set by the caller
  int rounds = 0;
  int runs = 0;
  double scale = 1.0;
  Machine machine;
  std::string measured_at;
};

// The order of the builds (indices) in round r: rotated by r.
std::vector<std::size_t> round_order(std::size_t builds, int round);

// One request per scenario, with its library left empty: compare() fills it
// in for each build.
using RequestForScenario = std::function<MeasurementRequest(const std::string& scenario)>;

// The instruction figure of a scenario's request with one build's library
// and settings; nullopt when it has none.
using InstructionsForRequest =
    std::function<std::optional<InstructionFigure>(const std::string& scenario, const MeasurementRequest& request)>;

Comparison compare_builds(ProcessRunner& runner, const std::vector<Build>& builds,
                          const std::vector<std::string>& scenarios, int rounds, int runs, double scale,
                          const RequestForScenario& request_for, const ProgressCallback& progress = {},
                          const InstructionsForRequest& instructions_for = {});

}  // namespace heapline::bench
