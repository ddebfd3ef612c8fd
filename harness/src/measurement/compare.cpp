#include "heapline_bench/measurement/compare.h"

#include <stdexcept>

#include "heapline_bench/measurement/utc_time.h"
#include "heapline_bench/measurement/statistics.h"

namespace heapline::bench {

std::vector<std::size_t> round_order(std::size_t builds, int round) {
  std::vector<std::size_t> order(builds);
  for (std::size_t i = 0; i < builds; ++i) order[i] = (i + static_cast<std::size_t>(round)) % builds;
  return order;
}

namespace {

// The median of the rounds' cpu overheads; absent when a round has none.
std::optional<double> median_cpu_overhead(const std::vector<std::optional<RunFigure>>& rounds) {
  std::vector<double> overheads;
  for (const auto& figure : rounds) {
    if (!figure) return std::nullopt;
    overheads.push_back(figure->overhead);
  }
  if (overheads.empty()) return std::nullopt;
  return median(overheads);
}

}  // namespace

Comparison compare_builds(ProcessRunner& runner, const std::vector<Build>& builds,
                          const std::vector<std::string>& scenarios, int rounds, int runs, double scale,
                          const RequestForScenario& request_for, const ProgressCallback& progress,
                          const InstructionsForRequest& instructions_for) {
  expects(builds.size() >= 2, "compare_builds: two builds or more");
  expects(rounds >= 1, "compare_builds: rounds >= 1");
  Comparison comparison;
  comparison.builds = builds;
  comparison.scenarios = scenarios;
  comparison.rounds = rounds;
  comparison.runs = runs;
  comparison.scale = scale;
  comparison.cells.assign(scenarios.size(), std::vector<ComparisonCell>(builds.size()));

  // Every request is built (and so checked) before the first run.
  std::vector<MeasurementRequest> requests;
  for (const auto& scenario : scenarios) requests.push_back(request_for(scenario));

  auto with_build = [&](std::size_t s, std::size_t b) {
    MeasurementRequest request = requests[s];
    request.library = builds[b].path;
    for (const auto& [name, value] : builds[b].env) request.env[name] = value;
    request.runs = runs;
    return request;
  };
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t s = 0; s < scenarios.size(); ++s) {
      for (std::size_t b : round_order(builds.size(), round)) {
        Measurement measurement = measure(runner, with_build(s, b), progress);
        auto& cell = comparison.cells[s][b];
        cell.round_overheads.push_back(measurement.overhead);
        cell.round_cpu.push_back(cpu_figure(measurement));
        cell.rounds.push_back(std::move(measurement));
      }
    }
  }
  for (auto& row : comparison.cells)
    for (auto& cell : row) {
      cell.overhead = median(cell.round_overheads);
      cell.cpu_overhead = median_cpu_overhead(cell.round_cpu);
    }
  // After the timed rounds: a count is exact whenever it is taken, and
  // callgrind's slowness would only stretch the time between rounds. A
  // refused count empties its cell with the reason and keeps the rounds.
  if (instructions_for)
    for (std::size_t s = 0; s < scenarios.size(); ++s)
      for (std::size_t b = 0; b < builds.size(); ++b)
        try {
          comparison.cells[s][b].instructions = instructions_for(scenarios[s], with_build(s, b));
        } catch (const Refusal& refusal) {
          comparison.cells[s][b].instructions_not_counted = refusal.what();
        }
  comparison.machine = this_machine();
  comparison.measured_at = utc_now_rfc3339();
  return comparison;
}

}  // namespace heapline::bench
