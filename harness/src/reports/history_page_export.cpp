#include "heapline_bench/reports/history_page_export.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "heapline_bench/reports/escaping.h"
#include "heapline_bench/reports/percent_format.h"

namespace heapline::bench {
namespace {

std::string short_commit(const std::string& commit) { return commit.substr(0, 7); }

// A commit as code, or a word that says there is none.
std::string commit_code(const std::string& commit) {
  return commit.empty() ? "(no commit)" : markdown_code(short_commit(commit));
}

std::string commit_cell(const HistoryRow& row) {
  if (row.commit.empty()) return "(no commit)";
  if (!row.range_first.empty() && row.range_first != row.commit)
    return markdown_code(short_commit(row.range_first) + "..." + short_commit(row.commit));
  return markdown_code(short_commit(row.commit));
}

// The machine of a row by its name (history.h, machine_names); the list
// under the table gives its fingerprint and description.
std::string machine_cell(const HistoryRow& row, const std::vector<std::string>& machines) {
  if (row.machine < 0 || static_cast<std::size_t>(row.machine) >= machines.size()) return "unknown machine";
  return markdown_text(machines[static_cast<std::size_t>(row.machine)]);
}

std::string date_of(const std::string& iso) {
  // "2026-11-30T01:02:03Z" -> "2026-11-30 01:02"
  if (iso.size() >= 16) return markdown_text(iso.substr(0, 10) + " " + iso.substr(11, 5));
  return markdown_text(iso);
}

std::string markdown_cell(const HistoryEntry* entry, const History& history, const RenderOptions& options) {
  if (entry == nullptr) return "–";
  std::string out = format_overhead(entry->overhead, {entry->low, entry->high});
  if (entry->timing == "benchmark") out += " †";
  const auto index = static_cast<std::size_t>(entry - history.entries.data());
  switch (judge_point(history, index, options.rule, options.calibrations).verdict) {
    case Verdict::regression: out += " ▲ **regression**"; break;
    case Verdict::improvement: out += " ▼ improvement"; break;
    default: break;
  }
  return out;
}

// One figure of the second table: the value (with its interval when it has
// one) and a mark for its own verdict; "–" when the point lacks the figure.
std::string figure_text(const HistoryEntry& entry, Figure figure, const History& history, const RenderOptions& options) {
  const FigureValue value = entry.figure(figure);
  if (!value.present) return "–";
  std::string out = figure == Figure::instructions ? format_instructions(value.overhead)
                    : value.interval_known         ? format_overhead(value.overhead, {value.low, value.high})
                                                   : format_percent(value.overhead) + "%";
  const auto index = static_cast<std::size_t>(&entry - history.entries.data());
  switch (judge_point(history, index, figure, options.rule, options.calibrations).verdict) {
    case Verdict::regression: out += " ▲"; break;
    case Verdict::improvement: out += " ▼"; break;
    default: break;
  }
  return out;
}

// The second table: the same rows, CPU time and instructions side by side.
void figures_table(std::ostream& out, const std::vector<HistoryRow>& rows, const std::vector<std::string>& scenarios,
                   const History& history, const RenderOptions& options, const std::vector<std::string>& machines) {
  out << "### CPU time and instructions\n\n"
         "The same measured commits and machines, newest first. In each cell, the overhead in CPU time (user + sys, the same "
         "runs as the wall clock, with its "
      << confidence_level_text()
      << " interval) · in instructions (the scenario's reduced command under "
         "callgrind, with and without heapline; exact, so no interval). These are the figures `heapline-bench "
         "check` gates on; ▲ and ▼ mark each figure's own verdict. – : not measured (no valgrind, or a point from "
         "before there were three figures).\n\n";
  out << "| Commit | Machine |";
  for (const auto& name : scenarios) out << ' ' << markdown_code(name) << " cpu · instructions |";
  out << "\n|---|---|";
  for (std::size_t i = 0; i < scenarios.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& row : rows) {
    out << "| " << commit_cell(row) << " | " << machine_cell(row, machines) << " |";
    for (const auto* cell : row.cells) {
      if (cell == nullptr) {
        out << " – |";
        continue;
      }
      out << ' ' << figure_text(*cell, Figure::cpu, history, options) << " · "
          << figure_text(*cell, Figure::instructions, history, options) << " |";
    }
    out << "\n";
  }
  out << "\n";
}

// A point's accuracy figure: its peak's error against the exact peak of the
// same run, and the bound the library stated, both as a percentage of that
// peak.
std::string accuracy_text(const Accuracy& accuracy) {
  if (accuracy.exact_peak_bytes <= 0) return "–";
  const double peak = static_cast<double>(accuracy.exact_peak_bytes);
  char text[96];
  std::snprintf(text, sizeof text, "%+.2f%% (bound ±%.2f%%)", 100.0 * static_cast<double>(accuracy.error_bytes()) / peak,
                100.0 * static_cast<double>(accuracy.bound_bytes) / peak);
  return std::string(text) + (accuracy.within_bound() ? "" : " **outside the bound**");
}

// How the library behaves on each scenario, from its own reports in the
// newest point that has them: publishes per 1000 calls, the peak memory it
// costs, and its peak's error against the stated bound.
void library_behaviour_table(std::ostream& out, const std::vector<std::string>& scenarios, const History& history) {
  out << "### How the library behaves, measured\n\n"
         "From heapline's own report (`calls` and `publishes`) in the runs with the library of the newest point of "
         "each scenario that has one: how often a thread publishes, and the peak resident memory the process holds "
         "with heapline beyond what it holds without (median of the runs). Peak error: the batched peak of the "
         "scenario's reduced command against the exact peak of the same run (counted beside it by the accuracy "
         "build, `libheapline_accuracy.so`), with the bound the library stated, both in percent of that peak; "
         "`heapline-bench check` fails a point outside its bound.\n\n"
         "| Scenario | publishes per 1000 calls | extra peak RSS | peak error | commit | measured (UTC) |\n"
         "|---|---:|---:|---:|---|---|\n";
  for (const auto& name : scenarios) {
    const HistoryEntry* newest = nullptr;
    for (auto it = history.entries.rbegin(); it != history.entries.rend() && newest == nullptr; ++it)
      if (it->scenario == name && it->publishes_per_1000_calls) newest = &*it;
    out << "| " << markdown_code(name) << " | ";
    if (newest == nullptr) {
      out << "– | – | – | – | – |\n";
      continue;
    }
    char rate[32];
    const double r = *newest->publishes_per_1000_calls;
    std::snprintf(rate, sizeof rate, r >= 10 ? "%.0f" : r >= 0.1 ? "%.1f" : "%.3f", r);
    out << rate << " | ";
    if (newest->extra_peak_rss_kib) {
      const long kib = *newest->extra_peak_rss_kib;
      if (std::labs(kib) >= 10 * 1024) out << kib / 1024 << " MiB";
      else out << kib << " KiB";
    } else {
      out << "–";
    }
    out << " | " << (newest->accuracy ? accuracy_text(*newest->accuracy) : "–") << " | ";
    out << commit_code(newest->commit) << " | " << date_of(newest->measured_at) << " |\n";
  }
  out << "\n";
}

}  // namespace

std::vector<HistoryRow> history_rows(const History& history, const std::vector<std::string>& scenarios, int limit) {
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < scenarios.size(); ++i) column[scenarios[i]] = i;

  std::vector<HistoryRow> rows;
  std::vector<std::size_t> rank_of_row;  // the rank of the row's commit: 0 for the newest
  std::map<std::string, std::size_t> rank_of_commit;
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;  // (commit, fingerprint) -> row
  std::size_t commits = 0;
  // Newest first: walk the history backwards, so each cell keeps the newest
  // point of its scenario, commit and machine, and stop taking commits once
  // the table has `limit` of them.
  for (auto it = history.entries.rbegin(); it != history.entries.rend(); ++it) {
    const HistoryEntry& entry = *it;
    auto where = column.find(entry.scenario);
    if (where == column.end()) continue;  // a scenario the catalogue no longer has
    std::optional<std::size_t> row_index;
    std::size_t rank = commits;
    if (!entry.commit.empty()) {
      if (auto known = rank_of_commit.find(entry.commit); known != rank_of_commit.end()) rank = known->second;
      if (auto known = row_of.find({entry.commit, entry.fingerprint}); known != row_of.end()) row_index = known->second;
    }
    if (!row_index) {
      if (rank == commits) {
        if (static_cast<int>(commits) >= limit) continue;  // older than the table shows
        ++commits;
        if (!entry.commit.empty()) rank_of_commit[entry.commit] = rank;
      }
      row_index = rows.size();
      rows.push_back({entry.commit, entry.range_first, entry.measured_at, entry.machine,
                      std::vector<const HistoryEntry*>(scenarios.size(), nullptr)});
      rank_of_row.push_back(rank);
      if (!entry.commit.empty()) row_of[{entry.commit, entry.fingerprint}] = *row_index;
    }
    auto& cell = rows[*row_index].cells[where->second];
    if (cell == nullptr) cell = &entry;
  }
  // The rows of one commit together, in the order their commits were met.
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank_of_row[a] < rank_of_row[b]; });
  std::vector<HistoryRow> sorted;
  for (std::size_t i : order) sorted.push_back(std::move(rows[i]));
  return sorted;
}

std::string history_page_markdown(const History& history, const Catalogue& catalogue, const RenderOptions& options,
                                  const std::string& plot_note, const std::vector<HistoryChange>& changes) {
  const auto scenarios = catalogue.names();
  std::ostringstream out;
  out << "<!-- Generated by `heapline-bench render` from " << markdown_text(options.store_label)
      << ". Do not edit: run it again. -->\n\n";
  if (!history.problems.empty()) {
    out << "```{warning}\n" << history.problems.size() << " line(s) of " << markdown_text(options.store_label)
        << " could not be read and are not shown; `heapline-bench validate` lists them. The first: "
        << markdown_text(history.problems.front().describe()) << "\n```\n\n";
  }
  if (history.entries.empty()) {
    out << "No point has been measured yet. `tools/bench.sh` measures the five scenarios and adds the first "
           "points to the store.\n";
    return out.str();
  }

  const auto rows = history_rows(history, scenarios, options.table_commits);
  const auto machines = machine_names(history);
  std::set<std::string> commits, fingerprints, row_commits;
  for (const auto& e : history.entries) {
    commits.insert(e.commit.empty() ? e.measured_at : e.commit);
    fingerprints.insert(e.fingerprint);
  }
  for (const auto& row : rows) row_commits.insert(row.commit.empty() ? row.measured_at : row.commit);
  out << history.entries.size() << " point(s) from " << commits.size() << " measured commit(s) on "
      << fingerprints.size() << " machine(s)";
  out << ". The table shows the last " << row_commits.size()
      << " measured commit(s), newest first, a row for each machine that measured one; each cell is the "
         "overhead in wall-clock time and its "
      << confidence_level_text() << " confidence interval. The machines are named below the table.\n\n";

  out << "| Commit | Machine | Measured (UTC) |";
  for (const auto& name : scenarios) out << ' ' << markdown_code(name) << " |";
  out << "\n|---|---|---|";
  for (std::size_t i = 0; i < scenarios.size(); ++i) out << "---:|";
  out << "\n";
  bool any_self_timed = false;
  std::set<int> machines_in_table;
  for (const auto& row : rows) {
    out << "| " << commit_cell(row) << " | " << machine_cell(row, machines) << " | " << date_of(row.measured_at)
        << " |";
    for (const auto* cell : row.cells) {
      out << ' ' << markdown_cell(cell, history, options) << " |";
      if (cell != nullptr) any_self_timed |= cell->timing == "benchmark";
    }
    out << "\n";
    machines_in_table.insert(row.machine);
  }
  out << "\n";
  if (any_self_timed)
    out << "† Timed by the benchmark itself (points of churn-4t before 0.4.0); the other points time the whole "
           "command, which adds a few milliseconds.\n\n";
  out << "Machines (points are compared only with points of the same machine, told by its fingerprint):\n\n";
  for (int index : machines_in_table) {
    if (index < 0) {
      out << "- unknown machine: points recorded without their machine\n";
      continue;
    }
    const auto& [fingerprint, machine] = history.machines[static_cast<std::size_t>(index)];
    out << "- " << markdown_text(machines[static_cast<std::size_t>(index)]) << ": " << markdown_code(fingerprint)
        << ", " << markdown_text(machine.describe()) << ", "
        << markdown_text(machine.compiler) << "\n";
  }
  out << "\n";

  out << "Marks: ▲ a regression, ▼ an improvement, against the median of up to " << options.rule.window
      << " earlier points of the same scenario, machine and command (`heapline-bench check` explains each verdict).\n\n";

  figures_table(out, rows, scenarios, history, options, machines);

  out << "### Overhead over the history\n\n";
  if (!plot_note.empty()) {
    out << plot_note << "\n\n";
  } else {
    out << "One figure per scenario, its last " << options.plot_points
        << " points at most, oldest to newest, on the commits of the table: the overhead in wall-clock time, in CPU "
           "time and in instructions, one panel each. Each machine (and command) is a line of its own colour "
           "with its " << confidence_level_text() << " interval as a band around it (the instruction count is exact: no band); a dashed line "
           "marks a change point. Their gnuplot script holds their data: {download}`history.gp "
           "</_generated/plots/history.gp>` draws them again (`gnuplot history.gp`, in any directory).\n\n";
    // Scenario names are file names (the catalogue's rule: letters, digits,
    // '.', '_' and '-'), so the link needs no escaping.
    for (const auto& name : scenarios)
      out << "![" << markdown_text(name) << ": overhead over the history](plots/" << name << ".svg)\n\n";
  }

  out << "### Change points\n\n";
  if (changes.empty()) {
    out << "No lasting change in any figure of any scenario's history (binary segmentation with a t statistic and "
           "a permutation test, segments of at least 5 points of the same command, scale and machine).\n\n";
  } else {
    out << "Where a figure moved for good (binary segmentation with a t statistic and a permutation test, segments "
           "of at least 5 points of the same command, scale and machine), by figure:\n\n";
    for (const auto& c : changes)
      out << "- " << markdown_code(c.scenario) << ' ' << figure_name(c.figure) << " on "
          << markdown_text(machine_name_of(*c.first_after, machines)) << " (" << markdown_code(c.fingerprint)
          << "): " << format_figure(c.figure, c.change.before) + "%" << " → "
          << format_figure(c.figure, c.change.after) + "%" << ", between " << commit_code(c.last_before->commit)
          << " and " << commit_code(c.first_after->commit) << "\n";
    out << "\n";
  }

  library_behaviour_table(out, scenarios, history);
  return out.str();
}

}  // namespace heapline::bench
