#include "heapline_bench/history/history.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "heapline_bench/measurement/statistics.h"
#include "heapline_bench/measurement/utc_time.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {

const char* figure_name(Figure figure) {
  switch (figure) {
    case Figure::wall: return "wall";
    case Figure::cpu: return "cpu";
    case Figure::instructions: return "instructions";
  }
  return "?";
}

std::optional<Figure> figure_from_name(std::string_view name) {
  for (Figure figure : kFigures)
    if (name == figure_name(figure)) return figure;
  return std::nullopt;
}

FigureValue HistoryEntry::figure(Figure which) const {
  switch (which) {
    case Figure::wall: return {true, overhead, low, high, true};
    case Figure::cpu: return cpu;
    case Figure::instructions: return instructions;
  }
  return {};
}

SeriesKey series_key(const HistoryEntry& e, Figure figure) {
  return {e.scenario, e.fingerprint, e.timing, e.scale,
          figure == Figure::instructions ? e.instructions_command : e.command};
}

namespace {

// Schema-1 points kept no cpu figure: the same ratio of medians, from their
// raw runs (cpu_figure), shown without an interval as the point stated none
// (see FigureValue::interval_known).
FigureValue cpu_from_raw(const Point& p) {
  const std::optional<RunFigure> figure = cpu_figure(p.with_runs, p.without_runs);
  if (!figure) return {};
  return {true, figure->overhead, figure->overhead, figure->overhead, false};
}

}  // namespace

HistoryEntry history_entry(const Point& p, int line) {
  HistoryEntry e;
  e.line = line;
  e.scenario = p.scenario;
  e.commit = p.commit;
  if (p.commit_range) e.range_first = p.commit_range->first;
  e.measured_at = p.measured_at;
  e.measured_at_ns = utc_time_nanoseconds(p.measured_at).value_or(0);  // the reader refuses any other time
  e.timing = p.timing;
  e.fingerprint = p.fingerprint;
  e.command = p.command;
  if (p.instructions) e.instructions_command = p.instructions->command;
  e.scale = p.scale;
  e.overhead = p.overhead;
  e.low = p.interval.low;
  e.high = p.interval.high;
  if (p.cpu) e.cpu = {true, p.cpu->overhead, p.cpu->interval.low, p.cpu->interval.high, true};
  else if (p.schema == 1) e.cpu = cpu_from_raw(p);
  // Instruction counts are exact: the interval is the figure itself.
  if (p.instructions) e.instructions = {true, p.instructions->overhead, p.instructions->overhead,
                                        p.instructions->overhead, true};
  e.publishes_per_1000_calls = p.library_report.publishes_per_1000_calls;
  e.extra_peak_rss_kib = p.library_report.extra_peak_rss_kib;
  e.accuracy = p.library_report.accuracy;
  return e;
}

History history_of(const PointsRead& read) {
  History history;
  history.problems = read.problems;
  std::map<std::string, int> machine_index;  // fingerprint -> index in history.machines
  history.entries.reserve(read.points.size());
  for (std::size_t i = 0; i < read.points.size(); ++i) {
    const Point& p = read.points[i];
    HistoryEntry entry = history_entry(p, read.lines[i]);
    if (p.fingerprint != "unknown") {
      auto [known, fresh] = machine_index.emplace(p.fingerprint, static_cast<int>(history.machines.size()));
      if (fresh) history.machines.push_back({p.fingerprint, p.machine});
      entry.machine = known->second;
    }
    history.entries.push_back(std::move(entry));
  }
  // Time is when a point was measured, not where its line sits: an import of
  // older points appends them, and must not make them the newest. Points of
  // the same instant keep their file order.
  std::stable_sort(history.entries.begin(), history.entries.end(),
                   [](const HistoryEntry& a, const HistoryEntry& b) { return a.measured_at_ns < b.measured_at_ns; });
  return history;
}

namespace {

// "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz" -> "Intel Xeon Platinum
// 8370C": the marks and the clock say nothing a reader needs to tell two
// machines apart.
std::string short_cpu_model(const std::string& model) {
  std::string text = model.substr(0, model.find(" @ "));
  for (const char* mark : {"(R)", "(r)", "(TM)", "(tm)"})
    for (auto at = text.find(mark); at != std::string::npos; at = text.find(mark)) text.erase(at, std::string(mark).size());
  std::string out, word;
  std::istringstream words(text);
  while (words >> word)
    if (word != "CPU" && word != "Processor") out += (out.empty() ? "" : " ") + word;
  return out.empty() ? "unknown CPU" : out;
}

}  // namespace

std::vector<std::string> machine_names(const History& history) {
  std::vector<std::string> names;
  std::map<std::string, int> seen;
  for (const auto& [fingerprint, machine] : history.machines) {
    std::string name = short_cpu_model(machine.cpu_model) + ", " + std::to_string(machine.cores) +
                       (machine.cores == 1 ? " core" : " cores");
    const int count = ++seen[name];
    names.push_back(count == 1 ? name : name + " #" + std::to_string(count));
  }
  return names;
}

std::string points_outside(const History& history, const std::vector<std::string>& scenarios) {
  std::map<std::string, int> outside;
  int count = 0;
  for (const HistoryEntry& entry : history.entries) {
    if (std::find(scenarios.begin(), scenarios.end(), entry.scenario) != scenarios.end()) continue;
    ++outside[entry.scenario];
    ++count;
  }
  if (count == 0) return "";
  std::string named;
  for (const auto& [scenario, points] : outside)
    named += (named.empty() ? "" : ", ") + printable(scenario) + ": " + std::to_string(points);
  return std::to_string(count) + " point(s) of scenarios the catalogue does not hold (" + named + ")";
}

std::string machine_name_of(const HistoryEntry& entry, const std::vector<std::string>& names) {
  if (entry.machine < 0 || static_cast<std::size_t>(entry.machine) >= names.size()) return "unknown machine";
  return names[static_cast<std::size_t>(entry.machine)];
}

History read_history(const std::string& path) { return history_of(read_points_file(path, RawTimes::skip)); }

}  // namespace heapline::bench
