#include "heapline_bench/reports/plot_export.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/measurement/process_runner.h"
#include "heapline_bench/reports/escaping.h"

namespace heapline::bench {
namespace {

// The label of a point's x position: its commit as the table shows it (the
// short SHA), or its date when it has no commit.
std::string x_label(const HistoryEntry& entry) {
  if (!entry.commit.empty()) return entry.commit.substr(0, 7);
  return entry.measured_at.substr(0, 10);
}

std::string shortened(const std::string& text, std::size_t limit) {
  return text.size() <= limit ? text : text.substr(0, limit - 3) + "...";
}

}  // namespace

PlotLayout plot_layout(const std::vector<const HistoryEntry*>& entries) {
  PlotLayout layout;
  std::map<std::string, int> slot_of_key;
  for (const auto* e : entries) {
    // One slot per commit, in the order main moved through them; a point
    // without a commit has a slot of its own.
    const std::string key = e->commit.empty() ? "line " + std::to_string(e->line) : e->commit;
    auto [it, added] = slot_of_key.emplace(key, static_cast<int>(layout.labels.size()) + 1);
    if (added) layout.labels.push_back(x_label(*e));
    layout.x.push_back(it->second);
  }
  return layout;
}

PlotFiles plot_files(const History& history, const std::vector<std::string>& scenarios, const std::string& work,
                     int max_points, const std::vector<HistoryChange>& changes) {
  PlotFiles files;
  std::map<std::string, std::vector<const HistoryEntry*>> by_scenario;
  for (const auto& entry : history.entries) by_scenario[entry.scenario].push_back(&entry);

  // The key goes below the plot, never over a point; every figure is a
  // marker with its 95% interval, joined only to points of the same machine
  // and command. Every text from outside (a commit, a machine, a command)
  // reaches the script as a single-quoted string (gnuplot_string), in which
  // gnuplot runs no command and expands no macro, and the data files as one
  // word (gnuplot_data_word).
  std::ostringstream script;
  script << "set terminal svg size 760,400 dynamic noenhanced font 'sans,11' background rgb 'white'\n"
            "set grid ytics lc rgb '#dddddd'\nset border 3\nset ytics nomirror\nset ylabel 'overhead (%)'\n"
            "set key outside below left Left reverse samplen 2 spacing 1.1 maxrows 4\n"
            "set xlabel 'commit (short SHA, oldest left; the table lists the same commits newest first)'\n"
            "set bars 0.5\n"
            // Room above and below the highest and lowest interval.
            "set offsets 0, 0, graph 0.08, graph 0.08\n";
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf"};
  for (const auto& name : scenarios) {
    auto& all = by_scenario[name];
    const std::size_t first = all.size() > static_cast<std::size_t>(max_points) ? all.size() - max_points : 0;
    const std::vector<const HistoryEntry*> entries(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
    const PlotLayout layout = plot_layout(entries);

    // One data block per machine and command, in the order they first
    // appear: points of another command are another series (history.h,
    // SeriesKey), and a line joining them would draw a step nobody made.
    std::vector<std::pair<int, std::string>> blocks;
    std::set<std::string> commands;
    for (const auto* e : entries) {
      const std::pair<int, std::string> block{e->machine, e->command};
      if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) blocks.push_back(block);
      commands.insert(e->command);
    }
    const std::string data_name = name + ".dat";
    const std::string data = work + "/" + data_name;
    {
      std::ostringstream out;
      out << "# x overhead% low% high% commit: one block per machine and command\n";
      for (const auto& [machine, command] : blocks) {
        for (std::size_t i = 0; i < entries.size(); ++i) {
          const auto& e = *entries[i];
          if (e.machine != machine || e.command != command) continue;
          out << layout.x[i] << ' ' << e.overhead * 100 << ' ' << e.low * 100 << ' ' << e.high * 100 << ' '
              << gnuplot_data_word(layout.labels[static_cast<std::size_t>(layout.x[i] - 1)]) << '\n';
        }
        out << "\n\n";
      }
      files.data.emplace_back(data_name, out.str());
    }
    files.svgs.push_back(name + ".svg");
    script << "set output " << gnuplot_string(work + "/" + name + ".svg") << "\nset title "
           << gnuplot_string(name + ": overhead of heapline (wall clock)") << "\nunset arrow\nunset label\n";
    if (entries.empty()) {
      script << "unset xtics\nunset ytics\nset xrange [0:1]\nset yrange [-1:1]\n"
                "set label 1 'no point yet' at 0.5,0 center\nplot NaN notitle\nunset label 1\n"
                "set autoscale\nset ytics nomirror\n";
      continue;
    }
    // Integer positions only, each labelled with its commit; with many
    // commits, every step-th one, so the labels stay legible.
    const std::size_t slots = layout.labels.size();
    const std::size_t step = (slots + 29) / 30;
    script << "set xrange [0.5:" << slots + 0.5 << "]\nset autoscale y\nset xtics nomirror rotate by -45 (";
    for (std::size_t i = 0; i < slots; i += step)
      script << (i ? ", " : "") << gnuplot_string(layout.labels[i]) << ' ' << i + 1;
    script << ")\n";
    bool any_change = false;
    for (const auto& c : changes) {
      if (c.scenario != name || c.figure != Figure::wall) continue;  // the plot draws the wall figure
      for (std::size_t i = 0; i < entries.size(); ++i)
        if (entries[i] == c.first_after) {
          any_change = true;
          script << "set arrow from " << layout.x[i] - 0.5 << ", graph 0 to " << layout.x[i] - 0.5
                 << ", graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'\n";
        }
    }
    script << "plot ";
    for (std::size_t m = 0; m < blocks.size(); ++m) {
      const auto& [machine, command] = blocks[m];
      const std::string description =
          machine >= 0 && static_cast<std::size_t>(machine) < history.machines.size()
              ? history.machines[static_cast<std::size_t>(machine)]
              : std::string("unknown machine");
      // Keyed by the fingerprint, as the table's Machine column names it.
      std::string fingerprint;
      for (const auto* e : entries)
        if (e->machine == machine) fingerprint = e->fingerprint;
      // The command is named when the plot holds more than one.
      const std::string series = commands.size() > 1 ? ", " + (command.empty() ? "command not recorded" : command) : "";
      script << (m ? ", " : "") << gnuplot_string(data) << " index " << m
             << " using 1:2:3:4 with yerrorlines pt 7 ps 0.6 lw 1.2 lc rgb '" << colours[m % 8] << "' title "
             << gnuplot_string(fingerprint + ": " + shortened(description, 60) + series + " (bars: 95% interval)");
    }
    if (any_change) script << ", NaN with lines dt 2 lw 1.5 lc rgb '#d62728' title 'change point'";
    script << "\n";
  }
  files.script = script.str();
  return files;
}

PlotOutcome draw_history_plots(const History& history, const std::vector<std::string>& scenarios,
                               const std::string& plot_dir, int max_points,
                               const std::vector<HistoryChange>& changes) {
  PlotOutcome outcome;
  std::string gnuplot;
  try {
    gnuplot = resolved_program("gnuplot");
  } catch (const Refusal&) {
    outcome.note = "The plots were not drawn: gnuplot is not installed (Debian: `apt-get install gnuplot-nox`).";
    return outcome;
  }
  std::filesystem::create_directories(plot_dir);
  // gnuplot reads its data and writes its SVGs in a directory of this
  // render's own; the files are renamed into plot_dir once drawn, so
  // concurrent renders into one directory never read or write each other's.
  std::string work = plot_dir + "/.render-XXXXXX";
  if (mkdtemp(work.data()) == nullptr) {
    outcome.note = "The plots were not drawn: cannot create a directory in " + plot_dir + ".";
    return outcome;
  }
  struct RemoveWork {
    std::string path;
    ~RemoveWork() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } remove_work{work};

  const PlotFiles files = plot_files(history, scenarios, work, max_points, changes);
  for (const auto& [name, text] : files.data) std::ofstream(work + "/" + name) << text;
  const std::string script_path = work + "/history.gp";
  std::ofstream(script_path) << files.script;

  PosixProcessRunner runner;
  RunSpec spec;
  spec.argv = {gnuplot, script_path};
  RunResult result = runner.run(spec);
  if (!result.succeeded()) {
    outcome.note = "The plots were not drawn: gnuplot failed (" +
                   (result.started ? "status " + std::to_string(result.exit_status) : result.start_error) +
                   "): " + result.stderr_tail;
    return outcome;
  }
  for (const auto& svg : files.svgs) outcome.plots.push_back(plot_dir + "/" + svg);
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(work, ec))
    std::filesystem::rename(file.path(), plot_dir + "/" + file.path().filename().string(), ec);
  return outcome;
}

}  // namespace heapline::bench
