#include "heapline_bench/reports/plot_export.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <heapline/plot_image.h>
#include <heapline/regular_file.h>

#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/measurement/process_runner.h"
#include "heapline_bench/measurement/scratch_directory.h"
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

std::string machine_label(int machine, const std::vector<std::string>& names) {
  return machine >= 0 && static_cast<std::size_t>(machine) < names.size() ? names[static_cast<std::size_t>(machine)]
                                                                         : "unknown machine";
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

namespace {

// The three panels of a scenario's figure, top to bottom.
struct Panel {
  Figure figure;
  const char* ylabel;
  int column;  // of the figure in the data block; its interval in the next two
};
constexpr Panel kPanels[] = {{Figure::wall, "wall clock (%)", 2},
                             {Figure::cpu, "CPU time (%)", 5},
                             {Figure::instructions, "instructions (%)", 8}};

// A figure's three data columns (value, low, high, in percent); NaN where
// the point lacks the figure (gnuplot leaves a gap), and the value itself as
// both ends where it has no interval (instructions are exact).
std::string figure_columns(const HistoryEntry& entry, Figure figure) {
  const FigureValue value = entry.figure(figure);
  if (!value.present) return "NaN NaN NaN";
  std::ostringstream out;
  const double low = value.interval_known ? value.low : value.overhead;
  const double high = value.interval_known ? value.high : value.overhead;
  out << value.overhead * 100 << ' ' << low * 100 << ' ' << high * 100;
  return out.str();
}

// Points of one machine and command: a series of its own (history.h,
// SeriesKey), joined by a line and a band; a line joining two of them would
// draw a step nobody made.
struct SeriesBlock {
  int machine;
  std::string fingerprint;
  std::string command;
  std::string instructions_command;
  bool operator==(const SeriesBlock& other) const {
    return machine == other.machine && fingerprint == other.fingerprint && command == other.command &&
           instructions_command == other.instructions_command;
  }
};

}  // namespace

PlotFiles plot_files(const History& history, const std::vector<std::string>& scenarios, int max_points,
                     const std::vector<HistoryChange>& changes) {
  PlotFiles files;
  std::map<std::string, std::vector<const HistoryEntry*>> by_scenario;
  for (const auto& entry : history.entries) by_scenario[entry.scenario].push_back(&entry);
  const std::vector<std::string> machine_labels = machine_names(history);

  // One script that holds its data (gnuplot datablocks) and writes each SVG
  // into the directory it runs in: `gnuplot history.gp` draws the plots again
  // from the published file alone. Every text from outside (a commit, a
  // machine, a command) reaches the script as a single-quoted string
  // (gnuplot_string), in which gnuplot runs no command and expands no macro,
  // and a data line as numbers and one word (gnuplot_data_word), so no line
  // of a datablock can end it early.
  std::ostringstream script;
  script << "# The history plots of heapline-bench render: running gnuplot history.gp writes one SVG per scenario\n"
            "# into the current directory. Each datablock holds the points of one scenario, one block per machine and\n"
            "# command; columns: slot, wall, low, high, cpu, low, high, instructions, low, high (percent), commit.\n"
            "set grid ytics lc rgb '#dddddd'\nset border 3\nset ytics nomirror\n"
            "set lmargin 11\nset rmargin 3\n"
            // Room above and below the highest and lowest interval.
            "set offsets 0, 0, graph 0.1, graph 0.1\n"
            "set style fill transparent solid 0.18 noborder\n";
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf"};
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    const std::string& name = scenarios[s];
    auto& all = by_scenario[name];
    const std::size_t first = all.size() > static_cast<std::size_t>(max_points) ? all.size() - max_points : 0;
    const std::vector<const HistoryEntry*> entries(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
    const PlotLayout layout = plot_layout(entries);

    std::vector<SeriesBlock> blocks;
    std::set<std::string> commands;
    for (const auto* e : entries) {
      const SeriesBlock block{e->machine, e->fingerprint, e->command, e->instructions_command};
      if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) blocks.push_back(block);
      commands.insert(e->command + '\n' + e->instructions_command);
    }
    files.svgs.push_back(name + ".svg");
    script << "\n# " << gnuplot_data_word(name) << "\n";
    // A scenario without points is a line of text, not an empty frame of three panels.
    script << "set terminal svg size 760," << (entries.empty() ? 120 : 860)
           << " dynamic noenhanced font 'sans,11' background rgb 'white'\nset output " << gnuplot_string(name + ".svg")
           << "\n";
    if (entries.empty()) {
      script << "set title " << gnuplot_string(name + ": overhead of heapline")
             << "\nunset border\nunset xtics\nunset ytics\nset xrange [0:1]\nset yrange [-1:1]\nunset key\n"
                "set label 1 'no point yet' at 0.5,0 center\nplot NaN notitle\nunset label 1\nunset title\n"
                "set autoscale\nset border 3\nset xtics\nset ytics nomirror\n";
      continue;
    }
    const std::string data = "$scenario" + std::to_string(s + 1);
    script << data << " << EOD\n";
    for (const auto& block : blocks) {
      for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& e = *entries[i];
        if (!(SeriesBlock{e.machine, e.fingerprint, e.command, e.instructions_command} == block)) continue;
        script << layout.x[i] << ' ' << figure_columns(e, Figure::wall) << ' ' << figure_columns(e, Figure::cpu)
               << ' ' << figure_columns(e, Figure::instructions) << ' '
               << gnuplot_data_word(layout.labels[static_cast<std::size_t>(layout.x[i] - 1)]) << '\n';
      }
      script << "\n\n";
    }
    script << "EOD\n";

    // Integer positions only, each labelled with its commit on the bottom
    // panel (tics without labels above it); with many commits, every step-th
    // one, so the labels stay legible.
    const std::size_t slots = layout.labels.size();
    const std::size_t step = (slots + 29) / 30;
    std::string labelled, unlabelled;
    for (std::size_t i = 0; i < slots; i += step) {
      labelled += (i ? ", " : "") + gnuplot_string(layout.labels[i]) + ' ' + std::to_string(i + 1);
      unlabelled += (i ? ", " : "") + std::string("'' ") + std::to_string(i + 1);
    }
    // The plot command of one panel: a band and a line per series; for a
    // figure none of the points has (points from before it was measured,
    // or without valgrind), the series' key entries only, over a panel that
    // says so (gnuplot refuses a plot without one defined point).
    auto panel_plot = [&](const Panel& panel, const std::string& end) {
      std::ostringstream plot;
      const bool measured = std::any_of(entries.begin(), entries.end(),
                                        [&](const HistoryEntry* e) { return e->figure(panel.figure).present; });
      for (std::size_t m = 0; m < blocks.size(); ++m) {
        const std::string colour = colours[m % 8];
        const auto& block = blocks[m];
        // The machine as the table names it, and its fingerprint as the list under the table.
        std::string title =
            shortened(machine_label(block.machine, machine_labels), 60) + " (" + block.fingerprint + ")";
        // The command is named when the plot holds more than one.
        if (commands.size() > 1) title += ", " + (block.command.empty() ? "command not recorded" : block.command);
        plot << (m ? ", " : "");
        if (measured)
          plot << data << " index " << m << " using 1:" << panel.column + 1 << ':' << panel.column + 2
               << " with filledcurves lc rgb '" << colour << "' notitle, " << data << " index " << m << " using 1:"
               << panel.column;
        else
          plot << "NaN";
        plot << " with linespoints pt 7 ps 0.5 lw 1.2 lc rgb '" << colour << "' title " << gnuplot_string(title);
      }
      if (!measured)
        return "set yrange [-1:1]\nunset ytics\nset label 1 'not measured in these points' at graph 0.5, graph 0.5 "
               "center\nplot " +
               plot.str() + end + "\nunset label 1\nset autoscale y\nset ytics nomirror\n";
      return "plot " + plot.str() + end + "\n";
    };
    bool any_change = false;  // in any panel: the key, on the last, says what the dashed line is
    script << "set multiplot\nset xrange [0.5:" << slots + 0.5 << "]\n";
    for (std::size_t p = 0; p < std::size(kPanels); ++p) {
      const Panel& panel = kPanels[p];
      const bool bottom = p + 1 == std::size(kPanels);
      // Three panels of equal height, their x axes aligned; below the last,
      // its commit labels and the key.
      const double top = 0.95 - 0.25 * static_cast<double>(p);
      script << "set tmargin at screen " << top << "\nset bmargin at screen " << top - 0.21 << "\n";
      script << "set ylabel " << gnuplot_string(panel.ylabel) << "\nunset arrow\n";
      script << (p == 0 ? "set title " + gnuplot_string(name + ": overhead of heapline") + "\n" : "unset title\n");
      if (bottom)
        script << "set xtics nomirror rotate by -45 (" << labelled << ")\n"
               << "set xlabel 'commit (short SHA, oldest left; the table lists the same commits newest first)'\n"
               << "set key outside below left Left reverse samplen 2 spacing 1.1 maxrows 5 width -8\n";
      else
        script << "set xtics nomirror (" << unlabelled << ")\nunset xlabel\nunset key\n";
      for (const auto& c : changes) {
        if (c.scenario != name || c.figure != panel.figure) continue;
        for (std::size_t i = 0; i < entries.size(); ++i)
          if (entries[i] == c.first_after) {
            any_change = true;
            script << "set arrow from " << layout.x[i] - 0.5 << ", graph 0 to " << layout.x[i] - 0.5
                   << ", graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728'\n";
          }
      }
      // What the last panel's key adds: the band, and the dashed line when
      // any panel has one.
      std::string end;
      if (bottom) {
        end = ", NaN with filledcurves x1 lc rgb '#888888' title 'band: " + confidence_level_text() +
              " interval (instructions are exact)'";
        if (any_change) end += ", NaN with lines dt 2 lw 1.5 lc rgb '#d62728' title 'change point'";
      }
      script << panel_plot(panel, end);
    }
    script << "unset multiplot\nunset arrow\nset autoscale\nset tmargin\nset bmargin\nunset xlabel\nunset ylabel\n";
  }
  files.script = script.str();
  return files;
}

PlotOutcome draw_history_plots(const History& history, const std::vector<std::string>& scenarios,
                               const std::string& plot_dir, int max_points,
                               const std::vector<HistoryChange>& changes, heapline::OutputFiles& outputs) {
  PlotOutcome outcome;
  std::string gnuplot;
  try {
    gnuplot = resolved_program("gnuplot");
  } catch (const Refusal&) {
    outcome.note = "The plots were not drawn: gnuplot is not installed (Debian: `apt-get install gnuplot-nox`).";
    return outcome;
  }
  // gnuplot reads its script and writes its SVGs in a directory of this
  // render's own; each SVG is then installed in plot_dir by the output rule
  // (heapline/output_file.h) with the page, only when it is whole: gnuplot
  // exits 0 after a write cut short by a full disk.
  const ScratchDirectory work;
  const PlotFiles files = plot_files(history, scenarios, max_points, changes);
  heapline::write_output_file(work.path() + "/history.gp", files.script);

  PosixProcessRunner runner;
  RunSpec spec;
  spec.argv = {gnuplot, "history.gp"};
  spec.working_directory = work.path();
  RunResult result = runner.run(spec);
  if (!result.succeeded()) {
    throw std::runtime_error("the plots could not be drawn (nothing was written): gnuplot " +
                             how_it_ended_and_said(result));
  }
  for (const auto& svg : files.svgs) {
    std::string error;
    const std::string bytes = heapline::RegularFile::open(work.path() + "/" + svg).read_all(std::size_t{64} << 20, error);
    if (!error.empty() || !heapline::image_is_whole(bytes, heapline::ImageFormat::kSvg)) {
      throw std::runtime_error("the plots could not be drawn: gnuplot left " + svg + " " +
                               (error.empty() ? std::string("cut short (a full disk?)") : "unreadable: " + error) +
                               "; nothing was written");
    }
    outputs.stage(plot_dir + "/" + svg, bytes);
    outcome.plots.push_back(plot_dir + "/" + svg);
  }
  outputs.stage(plot_dir + "/history.gp", files.script);
  return outcome;
}

std::vector<std::string> plot_file_names(const std::vector<std::string>& scenarios) {
  std::vector<std::string> names;
  for (const auto& name : scenarios) names.push_back(name + ".svg");
  names.push_back("history.gp");
  return names;
}

}  // namespace heapline::bench
