#include "heapline_bench/reports/comparison_export.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "heapline_bench/history/point.h"
#include "heapline_bench/reports/percent_format.h"

namespace heapline::bench {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json runs_json(const std::vector<RunResult>& runs) { return raw_runs_to_json(raw_runs(runs)); }

// A result's cpu figure: absent in files written before compare kept one
// (their cells show the wall figure alone), and null where the runs held no
// CPU times.
std::optional<double> cpu_overhead_of(const json& result) {
  const auto found = result.find("cpu_overhead");
  if (found == result.end() || found->is_null()) return std::nullopt;
  return found->get<double>();
}

std::string cell_text(const json& result) {
  std::string text = format_percent(result.at("overhead").get<double>()) + "%";
  if (const auto cpu = cpu_overhead_of(result)) text += " (" + format_percent(*cpu) + "%)";
  return text;
}

// What the cells hold, true of every cell of the table.
std::string cells_note(const json& scenarios) {
  std::size_t with_cpu = 0, cells = 0;
  for (const auto& row : scenarios)
    for (const auto& result : row.at("results")) {
      ++cells;
      if (cpu_overhead_of(result)) ++with_cpu;
    }
  if (with_cpu == 0) return "Each figure is the overhead in wall time; this comparison kept no CPU-time figure.";
  std::string note =
      "Each cell is the overhead in wall time, then in CPU time (user + sys of the same runs, the same ratio of "
      "medians) in brackets.";
  if (with_cpu < cells) note += " A cell without brackets kept no CPU-time figure.";
  return note;
}

}  // namespace

ordered_json comparison_json(const Comparison& c) {
  ordered_json out;
  out["schema"] = "heapline-comparison/1";
  out["measured_at"] = c.measured_at;
  out["rounds"] = c.rounds;
  out["runs"] = c.runs;
  out["scale"] = c.scale;
  out["machine"] = {{"description", c.machine.describe()}, {"cpu_model", c.machine.cpu_model},
                    {"cores", c.machine.cores},           {"kernel", c.machine.kernel},
                    {"glibc", c.machine.glibc},           {"compiler", c.machine.compiler},
                    {"fingerprint", c.machine.fingerprint()}};
  out["builds"] = ordered_json::array();
  // The library's file name only: the JSON is committed to docs/, where the
  // path of the machine that built each library means nothing to a reader.
  for (const auto& b : c.builds) {
    ordered_json build = {{"label", b.label}, {"library", std::filesystem::path(b.path).filename().string()}};
    if (!b.env.empty()) build["env"] = b.env;
    if (!b.note.empty()) build["note"] = b.note;
    out["builds"].push_back(build);
  }
  // Peers asked for but not installed: named, never silently left out.
  for (const auto& a : c.absent) out["absent"].push_back({{"label", a.label}, {"reason", a.reason}});
  out["scenarios"] = ordered_json::array();
  for (std::size_t s = 0; s < c.scenarios.size(); ++s) {
    ordered_json row = {{"name", c.scenarios[s]}, {"results", ordered_json::array()}};
    for (std::size_t b = 0; b < c.builds.size(); ++b) {
      const auto& cell = c.cells[s][b];
      ordered_json rounds = ordered_json::array();
      for (std::size_t r = 0; r < cell.rounds.size(); ++r) {
        const Measurement& m = cell.rounds[r];
        rounds.push_back({{"overhead", m.overhead},
                          {"interval", {m.interval.low, m.interval.high}},
                          {"median_with_s", m.median_with},
                          {"median_without_s", m.median_without},
                          {"cpu", run_figure_json(r < cell.round_cpu.size() ? cell.round_cpu[r] : std::nullopt)},
                          {"with", runs_json(m.with_runs)},
                          {"without", runs_json(m.without_runs)}});
      }
      const ordered_json cpu = cell.cpu_overhead ? ordered_json(*cell.cpu_overhead) : ordered_json(nullptr);
      row["results"].push_back(
          {{"build", c.builds[b].label}, {"overhead", cell.overhead}, {"cpu_overhead", cpu}, {"rounds", rounds}});
    }
    out["scenarios"].push_back(row);
  }
  return out;
}

std::string comparison_markdown_from_json(const json& j) {
  std::ostringstream out;
  const auto& builds = j.at("builds");
  const json absent = j.value("absent", json::array());
  out << "| Scenario |";
  for (const auto& b : builds) out << ' ' << b.at("label").get<std::string>() << " |";
  for (const auto& a : absent) out << ' ' << a.at("label").get<std::string>() << " |";
  out << "\n|---|";
  for (std::size_t i = 0; i < builds.size() + absent.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& row : j.at("scenarios")) {
    out << "| `" << row.at("name").get<std::string>() << "` |";
    for (const auto& result : row.at("results")) out << ' ' << cell_text(result) << " |";
    for (std::size_t i = 0; i < absent.size(); ++i) out << " absent |";
    out << "\n";
  }
  const int rounds = j.at("rounds").get<int>();
  out << "\nMeasured on " << j.at("machine").at("description").get<std::string>() << ", on "
      << j.at("measured_at").get<std::string>().substr(0, 10) << ", with `heapline-bench compare`: "
      << j.at("runs").get<int>() << " interleaved runs per side and point, each figure the median of " << rounds
      << (rounds == 1 ? " round" : " rounds") << " that alternate the builds";
  const double scale = j.value("scale", 1.0);
  if (scale != 1.0) out << ", operation counts scaled by " << scale;
  out << ". " << cells_note(j.at("scenarios")) << "\n";
  for (const auto& b : builds) {
    if (b.contains("note")) out << "\n" << b.at("label").get<std::string>() << ": " << b.at("note").get<std::string>() << "\n";
  }
  for (const auto& a : absent) {
    out << "\n" << a.at("label").get<std::string>() << ": absent, " << a.at("reason").get<std::string>() << "\n";
  }
  return out.str();
}

std::string comparison_markdown(const Comparison& comparison) {
  return comparison_markdown_from_json(json::parse(comparison_json(comparison).dump()));
}

}  // namespace heapline::bench
