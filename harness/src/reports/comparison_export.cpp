#include "heapline_bench/reports/comparison_export.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "heapline_bench/history/point.h"
#include "heapline_bench/measurement/statistics.h"
#include "heapline_bench/reports/escaping.h"
#include "heapline_bench/reports/percent_format.h"
#include "heapline_bench/verdicts/verdict.h"

namespace heapline::bench {
namespace {

constexpr const char* kComparisonSchema = "heapline-comparison/1";

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

// The times of one side of a round's runs for a figure: the wall clock, or
// user + sys.
std::vector<double> side_times(const json& runs, Figure figure) {
  std::vector<double> times;
  for (const auto& run : runs)
    times.push_back(figure == Figure::wall ? run.at("wall_s").get<double>()
                                           : run.at("user_s").get<double>() + run.at("sys_s").get<double>());
  return times;
}

// One round of two samples: the runs with a build and without (a cell's
// overhead), or with a build and with the first build (the mark).
struct RoundPair {
  std::vector<double> first, second;
};

// The figure of rounds (the median over rounds of each round's ratio of
// medians, as compare takes it) and its confidence interval, the bootstrap that
// resamples each round's own runs (statistics.h, bootstrap_rounds_interval).
struct RoundsFigure {
  double value = 0;
  Interval interval;
};
RoundsFigure rounds_figure(const std::vector<RoundPair>& rounds) {
  std::vector<RoundSample> samples;
  std::vector<double> ratios;
  for (const auto& round : rounds) {
    samples.push_back({round.first, round.second});
    ratios.push_back(overhead_ratio(round.first, round.second));
  }
  return {median(ratios), bootstrap_rounds_interval(samples)};
}

// A result's rounds for one figure: each round's runs with its build and
// without.
std::vector<RoundPair> overhead_rounds(const json& result, Figure figure) {
  std::vector<RoundPair> rounds;
  for (const auto& round : result.at("rounds"))
    rounds.push_back({side_times(round.at("with"), figure), side_times(round.at("without"), figure)});
  return rounds;
}

// The runs with `result`'s build against the runs with the first build's,
// round by round: both ran in the same round, on the same machine.
std::vector<RoundPair> against_first(const json& result, const json& first, Figure figure) {
  std::vector<RoundPair> rounds;
  const auto& mine = result.at("rounds");
  const auto& theirs = first.at("rounds");
  for (std::size_t r = 0; r < mine.size() && r < theirs.size(); ++r)
    rounds.push_back({side_times(mine[r].at("with"), figure), side_times(theirs[r].at("with"), figure)});
  return rounds;
}

// A change smaller than this is "same", however sure: the verdicts'
// minimum effect for the timed figures.
double same_within() { return VerdictRule{}.min_effect_of(Figure::wall); }

// The mark of a cell against the first column, as asv compare marks a
// benchmark: slower or faster when the confidence interval of the time ratio lies
// wholly on one side of no change and the change is at least same_within();
// same otherwise.

std::string mark(const RoundsFigure& change) {
  const double min_effect = same_within();
  if (change.interval.low > 0 && change.value >= min_effect) return " ▲ slower";
  if (change.interval.high < 0 && change.value <= -min_effect) return " ▼ faster";
  return " = same";
}

// A cell: the figure with its interval, and its mark against the first
// build; "–" where the result kept no such figure.
std::string cell_text(const json& result, const json& first, bool is_first, Figure figure) {
  const auto stored = figure == Figure::wall ? std::optional<double>(result.at("overhead").get<double>())
                                             : cpu_overhead_of(result);
  if (!stored) return "–";
  const RoundsFigure overhead = rounds_figure(overhead_rounds(result, figure));
  std::string text = format_overhead(*stored, overhead.interval);
  if (!is_first && (figure == Figure::wall || cpu_overhead_of(first)))
    text += mark(rounds_figure(against_first(result, first, figure)));
  return text;
}

// A result's instruction figure (with / without − 1 of one exact count per
// side): absent where it was not counted, and in files written before
// compare counted it.
std::optional<double> instructions_overhead_of(const json& result) {
  const auto found = result.find("instructions");
  if (found == result.end() || found->is_null()) return std::nullopt;
  return found->at("overhead").get<double>();
}

// An instruction cell: exact counts have no interval, so the mark is the
// change in points against the first column's, slower or faster from the
// verdicts' minimum effect for instructions on.
std::string instructions_cell_text(const json& result, const json& first, bool is_first) {
  const auto overhead = instructions_overhead_of(result);
  if (!overhead) return result.contains("instructions_not_counted") ? "not counted" : "–";
  std::string text = format_instructions(*overhead);
  const auto first_overhead = instructions_overhead_of(first);
  if (is_first || !first_overhead) return text;
  const double change = *overhead - *first_overhead;
  const double min_effect = VerdictRule{}.instructions_min_effect;
  return text + (change >= min_effect ? " ▲ slower" : change <= -min_effect ? " ▼ faster" : " = same");
}

// What the cells hold, true of every cell of the table; `first_label` is
// Markdown already.
std::string cells_note(const json& scenarios, const std::string& first_label) {
  std::size_t with_cpu = 0;
  for (const auto& row : scenarios)
    for (const auto& result : row.at("results"))
      if (cpu_overhead_of(result)) ++with_cpu;
  std::string note =
      "Each cell is the overhead (the median of the rounds' median with / median without − 1) and its " +
      confidence_level_text() +
      " interval (a bootstrap that resamples each round's own runs), " +
      std::string(with_cpu == 0 ? "in wall-clock time; this comparison kept no CPU-time figure."
                                : "in wall-clock time and in CPU time (user + sys of the same runs).") +
      " The marks compare each build with the first column (" +
      first_label +
      "): the time of the runs with it against the time of the runs with the first, round by round, the same "
      "median and interval; slower or faster when that interval lies wholly above or below no change and the "
      "change is at least " +
      format_percent(same_within(), false, 0) + "%, same otherwise.";
  bool any_instructions = false;
  for (const auto& row : scenarios)
    for (const auto& result : row.at("results")) any_instructions |= instructions_overhead_of(result).has_value();
  if (any_instructions)
    note += " Instructions: with / without − 1 of the catalogue's reduced command under callgrind, counted once "
            "per build after the rounds (a count is exact, so it has no interval); marked against the first "
            "column when the overheads differ by at least " +
            format_figure(Figure::instructions, VerdictRule{}.instructions_min_effect, false) + " points.";
  return note;
}

// A count of the file (rounds, runs): a whole number, never a fraction
// truncated on the way.
int whole_count(const json& j, const char* key) {
  const json& value = j.at(key);
  if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > 1'000'000)
    throw std::runtime_error(std::string("\"") + key + "\" must be a whole number from 1 to 1000000, not " +
                             value.dump());
  return value.get<int>();
}

// A file as compare writes it has, in every scenario, one result per build
// in the builds' order, and in each result one entry per round: the marks
// pair a build's rounds with the first build's. A file that breaks this is
// refused, never rendered with columns or rounds that do not line up.
void check_shape(const json& j) {
  const auto counted = [](std::size_t n, const char* thing) {
    return std::to_string(n) + " " + thing + (n == 1 ? "" : "s");
  };
  // A file of another schema is not read as this one.
  const std::string schema = j.value("schema", std::string(kComparisonSchema));
  if (schema != kComparisonSchema)
    throw std::runtime_error("\"schema\" is \"" + schema + "\": this heapline-bench reads \"" + kComparisonSchema + "\"");
  const int rounds = whole_count(j, "rounds");
  const auto& builds = j.at("builds");
  for (const auto& row : j.at("scenarios")) {
    const std::string name = row.at("name").get<std::string>();
    const auto& results = row.at("results");
    if (!results.is_array() || results.size() != builds.size())
      throw std::runtime_error("scenario " + name + " has " + counted(results.size(), "result") + " for " +
                               counted(builds.size(), "build"));
    for (std::size_t b = 0; b < results.size(); ++b) {
      const auto& its_rounds = results[b].at("rounds");
      if (!its_rounds.is_array() || its_rounds.size() != static_cast<std::size_t>(rounds))
        throw std::runtime_error("scenario " + name + ", build " + builds[b].at("label").get<std::string>() + " has " +
                                 counted(its_rounds.size(), "round") + ", the file's \"rounds\" " +
                                 std::to_string(rounds));
    }
  }
}

}  // namespace

ordered_json comparison_json(const Comparison& c) {
  ordered_json out;
  out["schema"] = kComparisonSchema;
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
      ordered_json result = {{"build", c.builds[b].label}, {"overhead", cell.overhead}, {"cpu_overhead", cpu}};
      if (cell.instructions)
        result["instructions"] = {{"without", cell.instructions->without},
                                  {"with", cell.instructions->with},
                                  {"overhead", cell.instructions->overhead},
                                  {"command", cell.instructions->command}};
      if (!cell.instructions_not_counted.empty()) result["instructions_not_counted"] = cell.instructions_not_counted;
      result["rounds"] = rounds;
      row["results"].push_back(result);
    }
    out["scenarios"].push_back(row);
  }
  return out;
}

// Every text of the file reaches the page through markdown_text or
// markdown_code (escaping.h), as the store's texts do: the file is tracked
// and editable, and a label holding '|', '<img ...>' or a newline split the
// table or put live HTML into the published page.
std::string comparison_markdown_from_json(const json& j) {
  check_shape(j);
  std::ostringstream out;
  const auto text = [](const json& value) { return markdown_text(value.get<std::string>()); };
  const auto& builds = j.at("builds");
  const json absent = j.value("absent", json::array());
  bool any_cpu = false, any_instructions = false;
  for (const auto& row : j.at("scenarios"))
    for (const auto& result : row.at("results")) {
      any_cpu |= cpu_overhead_of(result).has_value();
      any_instructions |= instructions_overhead_of(result).has_value() || result.contains("instructions_not_counted");
    }
  out << "| Scenario | Figure |";
  for (const auto& b : builds) out << ' ' << text(b.at("label")) << " |";
  for (const auto& a : absent) out << ' ' << text(a.at("label")) << " |";
  out << "\n|---|---|";
  for (std::size_t i = 0; i < builds.size() + absent.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& row : j.at("scenarios")) {
    const auto& results = row.at("results");
    for (Figure figure : {Figure::wall, Figure::cpu}) {
      if (figure == Figure::cpu && !any_cpu) continue;
      out << "| " << markdown_code(row.at("name").get<std::string>()) << " | " << figure_name(figure) << " |";
      for (std::size_t b = 0; b < results.size(); ++b)
        out << ' ' << cell_text(results[b], results[0], b == 0, figure) << " |";
      for (std::size_t i = 0; i < absent.size(); ++i) out << " absent |";
      out << "\n";
    }
    if (any_instructions) {
      out << "| " << markdown_code(row.at("name").get<std::string>()) << " | " << figure_name(Figure::instructions)
          << " |";
      for (std::size_t b = 0; b < results.size(); ++b)
        out << ' ' << instructions_cell_text(results[b], results[0], b == 0) << " |";
      for (std::size_t i = 0; i < absent.size(); ++i) out << " absent |";
      out << "\n";
    }
  }
  const int rounds = whole_count(j, "rounds");
  out << "\nMeasured on " << text(j.at("machine").at("description")) << ", on "
      << markdown_text(j.at("measured_at").get<std::string>().substr(0, 10)) << ", with `heapline-bench compare`: "
      << whole_count(j, "runs") << " interleaved runs per side and point, each figure the median of " << rounds
      << (rounds == 1 ? " round" : " rounds") << " that alternate the builds";
  const double scale = j.value("scale", 1.0);
  if (scale != 1.0) out << ", operation counts scaled by " << scale;
  out << ". " << cells_note(j.at("scenarios"), text(builds.at(0).at("label"))) << "\n";
  for (const auto& b : builds) {
    if (b.contains("note")) out << "\n" << text(b.at("label")) << ": " << text(b.at("note")) << "\n";
  }
  for (std::size_t b = 0; b < builds.size(); ++b) {
    // Why a build's instructions were not counted: said once, from its first
    // such cell (the reason is the build's, not the scenario's).
    for (const auto& row : j.at("scenarios")) {
      const auto& result = row.at("results").at(b);
      if (!result.contains("instructions_not_counted")) continue;
      out << "\n" << text(builds[b].at("label")) << ": instructions not counted: "
          << text(result.at("instructions_not_counted")) << "\n";
      break;
    }
  }
  for (const auto& a : absent) {
    out << "\n" << text(a.at("label")) << ": absent, " << text(a.at("reason")) << "\n";
  }
  return out.str();
}

std::string comparison_markdown(const Comparison& comparison) {
  return comparison_markdown_from_json(json::parse(comparison_json(comparison).dump()));
}

}  // namespace heapline::bench
