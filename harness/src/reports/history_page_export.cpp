#include "heapline_bench/reports/history_page_export.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <map>
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
                   const History& history, const RenderOptions& options) {
  out << "### CPU time and instructions\n\n"
         "The same measured commits, newest first. In each cell, the overhead in CPU time (user + sys, the same "
         "runs as the wall clock, with its 95% interval) · in instructions (the scenario's reduced command under "
         "callgrind, with and without heapline; exact, so no interval). These are the figures `heapline-bench "
         "check` gates on; ▲ and ▼ mark each figure's own verdict. – : not measured (no valgrind, or a point from "
         "before there were three figures).\n\n";
  out << "| Commit |";
  for (const auto& name : scenarios) out << ' ' << markdown_code(name) << " cpu · instructions |";
  out << "\n|---|";
  for (std::size_t i = 0; i < scenarios.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& row : rows) {
    out << "| " << commit_cell(row) << " |";
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

// How the library behaves on each scenario, from its own reports in the
// newest point that has them: publishes per 1000 calls, and the peak memory
// it costs.
void library_behaviour_table(std::ostream& out, const std::vector<std::string>& scenarios, const History& history) {
  out << "### How the library behaves, measured\n\n"
         "From heapline's own report (`calls` and `publishes`) in the runs with the library of the newest point of "
         "each scenario that has one: how often a thread publishes, and the peak resident memory the process holds "
         "with heapline beyond what it holds without (median of the runs).\n\n"
         "| Scenario | publishes per 1000 calls | extra peak RSS | commit | measured (UTC) |\n"
         "|---|---:|---:|---|---|\n";
  for (const auto& name : scenarios) {
    const HistoryEntry* newest = nullptr;
    for (auto it = history.entries.rbegin(); it != history.entries.rend() && newest == nullptr; ++it)
      if (it->scenario == name && it->publishes_per_1000_calls) newest = &*it;
    out << "| " << markdown_code(name) << " | ";
    if (newest == nullptr) {
      out << "– | – | – | – |\n";
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
    out << " | ";
    out << commit_code(newest->commit) << " | " << date_of(newest->measured_at) << " |\n";
  }
  out << "\n";
}

}  // namespace

std::vector<HistoryRow> history_rows(const History& history, const std::vector<std::string>& scenarios, int limit) {
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < scenarios.size(); ++i) column[scenarios[i]] = i;

  std::vector<HistoryRow> rows;
  std::map<std::string, std::size_t> row_of_commit;
  // Newest first: walk the file backwards, so each cell keeps the newest
  // point of its scenario and commit, and stop once the table is full.
  for (auto it = history.entries.rbegin(); it != history.entries.rend(); ++it) {
    const HistoryEntry& entry = *it;
    auto where = column.find(entry.scenario);
    if (where == column.end()) continue;  // a scenario the catalogue no longer has
    std::size_t row_index;
    auto known = entry.commit.empty() ? row_of_commit.end() : row_of_commit.find(entry.commit);
    if (known != row_of_commit.end()) {
      row_index = known->second;
    } else {
      if (static_cast<int>(rows.size()) >= limit) continue;  // older than the table shows
      row_index = rows.size();
      rows.push_back({entry.commit, entry.range_first, entry.measured_at,
                      std::vector<const HistoryEntry*>(scenarios.size(), nullptr)});
      if (!entry.commit.empty()) row_of_commit[entry.commit] = row_index;
    }
    auto& cell = rows[row_index].cells[where->second];
    if (cell == nullptr) cell = &entry;
  }
  return rows;
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
  std::set<std::string> commits, fingerprints;
  for (const auto& e : history.entries) {
    commits.insert(e.commit.empty() ? e.measured_at : e.commit);
    fingerprints.insert(e.fingerprint);
  }
  out << history.entries.size() << " point(s) from " << commits.size() << " measured commit(s) on "
      << fingerprints.size() << " machine(s)";
  out << ". The table shows the last " << rows.size()
      << " measured commit(s), newest first; each cell is the overhead and its 95% confidence interval.\n\n";

  out << "| Commit | Measured (UTC) |";
  for (const auto& name : scenarios) out << ' ' << markdown_code(name) << " |";
  out << " Machine |\n|---|---|";
  for (std::size_t i = 0; i < scenarios.size(); ++i) out << "---:|";
  out << "---|\n";
  bool any_self_timed = false;
  std::map<std::string, int> machines_in_table;
  for (const auto& row : rows) {
    out << "| " << commit_cell(row) << " | " << date_of(row.measured_at) << " |";
    std::string fingerprint;
    for (const auto* cell : row.cells) {
      out << ' ' << markdown_cell(cell, history, options) << " |";
      if (cell != nullptr) {
        any_self_timed |= cell->timing == "benchmark";
        if (fingerprint.empty()) fingerprint = cell->fingerprint;
        if (cell->machine >= 0) machines_in_table.emplace(cell->fingerprint, cell->machine);
      }
    }
    out << ' ' << (fingerprint.empty() ? std::string("–") : markdown_code(fingerprint)) << " |\n";
  }
  out << "\n";
  if (any_self_timed)
    out << "† Timed by the benchmark itself (points of churn-4t before 0.4.0); the other points time the whole "
           "command, which adds a few milliseconds.\n\n";
  out << "Machines (points are compared only with points of the same machine):\n\n";
  for (const auto& [fingerprint, index] : machines_in_table)
    out << "- " << markdown_code(fingerprint) << ": " << markdown_text(history.machines[static_cast<std::size_t>(index)])
        << "\n";
  out << "\n";

  out << "Marks: ▲ a regression, ▼ an improvement, against the median of up to " << options.rule.window
      << " earlier points of the same scenario, machine and command (`heapline-bench check` explains each verdict).\n\n";

  figures_table(out, rows, scenarios, history, options);
  library_behaviour_table(out, scenarios, history);

  out << "### Change points\n\n";
  if (changes.empty()) {
    out << "No lasting change in any figure of any scenario's history (binary segmentation with a t statistic and "
           "a permutation test, segments of at least 5 points of the same command, scale and machine).\n\n";
  } else {
    out << "Where a figure moved for good (binary segmentation with a t statistic and a permutation test, segments "
           "of at least 5 points of the same command, scale and machine), by figure:\n\n";
    for (const auto& c : changes)
      out << "- " << markdown_code(c.scenario) << ' ' << figure_name(c.figure) << " (machine "
          << markdown_code(c.fingerprint) << "): " << format_figure(c.figure, c.change.before) + "%" << " → "
          << format_figure(c.figure, c.change.after) + "%" << ", between " << commit_code(c.last_before->commit)
          << " and " << commit_code(c.first_after->commit) << "\n";
    out << "\n";
  }

  out << "### Overhead over the history\n\n";
  if (!plot_note.empty()) {
    out << plot_note << "\n";
  } else {
    out << "Each plot shows the last " << options.plot_points
        << " points of one scenario at most, oldest to newest: the figure, its 95% interval as a band, and a "
           "new colour whenever the machine or the command changes.\n\n";
    // Scenario names are file names (the catalogue's rule: letters, digits,
    // '.', '_' and '-'), so the link needs no escaping.
    for (const auto& name : scenarios)
      out << "![" << markdown_text(name) << ": overhead over the history](plots/" << name << ".svg)\n\n";
  }
  return out.str();
}

}  // namespace heapline::bench
