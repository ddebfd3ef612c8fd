#include "plot_export.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/measurement/process_runner.h"

namespace heapline::bench {
namespace {

std::string gnuplot_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

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

  std::map<std::string, std::vector<const HistoryEntry*>> by_scenario;
  for (const auto& entry : history.entries) by_scenario[entry.scenario].push_back(&entry);

  std::ostringstream script;
  script << "set terminal svg size 760,320 dynamic enhanced font 'sans,11' background rgb 'white'\n"
            "set grid ytics lc rgb '#dddddd'\nset key top left opaque\nset border 3\nset xtics nomirror\n"
            "set ytics nomirror\nset ylabel 'overhead (%)'\nset xlabel 'points, oldest to newest'\n"
            "set style fill transparent solid 0.35 noborder\n";
  for (const auto& name : scenarios) {
    auto& entries = by_scenario[name];
    const std::size_t first = entries.size() > static_cast<std::size_t>(max_points) ? entries.size() - max_points : 0;
    const std::string data = work + "/" + name + ".dat";
    {
      std::ofstream out(data);
      out << "# index overhead% low% high% machine timing\n";
      std::map<std::string, int> machine_colour;
      for (std::size_t i = first; i < entries.size(); ++i) {
        const auto& e = *entries[i];
        auto colour = machine_colour.emplace(e.fingerprint, static_cast<int>(machine_colour.size()) % 8 + 1).first;
        out << (i - first + 1) << ' ' << e.overhead * 100 << ' ' << e.low * 100 << ' ' << e.high * 100 << ' '
            << colour->second << ' ' << (e.timing == "benchmark" ? 1 : 0) << '\n';
      }
    }
    const std::string svg = work + "/" + name + ".svg";
    script << "set output " << gnuplot_quoted(svg) << "\nset title " << gnuplot_quoted(name + ": overhead of heapline")
           << "\n";
    const std::size_t shown = entries.size() - first;
    if (shown == 0) {
      script << "unset xtics\nset xrange [0:1]\nset yrange [-1:1]\n"
                "set label 1 'no point yet' at 0.5,0 center\nplot NaN notitle\nunset label 1\nset xtics\n"
                "set autoscale\n";
    } else {
      // A lone point still gets a visible x range.
      if (shown == 1) script << "set xrange [0:2]\n";
      else script << "set autoscale x\n";
      // A dashed line before the first point after each change point.
      script << "unset arrow\n";
      for (const auto& c : changes) {
        if (c.scenario != name) continue;
        for (std::size_t i = first; i < entries.size(); ++i)
          if (entries[i] == c.first_after)
            script << "set arrow from " << (i - first + 0.5) << ", graph 0 to " << (i - first + 0.5)
                   << ", graph 1 nohead dt 2 lc rgb '#d62728'\n";
      }
      script << "plot " << gnuplot_quoted(data)
             << " using 1:3:4 with filledcurves lc rgb '#6baed6' title '95% interval', '' using 1:2:5 with "
                "linespoints lc variable pt 7 ps 0.5 title 'overhead (colour: machine)'\n";
    }
    outcome.plots.push_back(plot_dir + "/" + name + ".svg");
  }
  const std::string script_path = work + "/history.gp";
  std::ofstream(script_path) << script.str();

  PosixProcessRunner runner;
  RunSpec spec;
  spec.argv = {gnuplot, script_path};
  RunResult result = runner.run(spec);
  if (!result.succeeded()) {
    outcome.plots.clear();
    outcome.note = "The plots were not drawn: gnuplot failed (" +
                   (result.started ? "status " + std::to_string(result.exit_status) : result.start_error) +
                   "): " + result.stderr_tail;
    return outcome;
  }
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(work, ec))
    std::filesystem::rename(file.path(), plot_dir + "/" + file.path().filename().string(), ec);
  return outcome;
}

}  // namespace heapline::bench
