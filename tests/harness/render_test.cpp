#include "heapline_bench/reports/render.h"
#include <heapline/output_file.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "heapline_bench/reports/percent_format.h"
#include "heapline_bench/reports/scenarios_export.h"
#include "heapline_bench/reports/summary_export.h"
#include "heapline_bench/reports/table_export.h"

namespace heapline::bench {
namespace {

HistoryEntry entry(const std::string& scenario, const std::string& commit, double overhead, int minute,
                   const std::string& timing = "command") {
  HistoryEntry e;
  e.scenario = scenario;
  e.commit = commit;
  e.measured_at = "2026-11-30T00:" + std::string(minute < 10 ? "0" : "") + std::to_string(minute) + ":00Z";
  e.overhead = overhead;
  e.low = overhead - 0.007;
  e.high = overhead + 0.008;
  e.timing = timing;
  e.fingerprint = "f00dfeedbeef";
  e.machine = 0;
  return e;
}

HistoryMachine machine(const std::string& cpu_model, int cores = 2, const std::string& fingerprint = "f00dfeedbeef") {
  HistoryMachine m;
  m.fingerprint = fingerprint;
  m.machine.cpu_model = cpu_model;
  m.machine.cores = cores;
  m.machine.kernel = "6.1";
  m.machine.glibc = "2.36";
  m.machine.compiler = "GNU 12";
  return m;
}

// The same point, measured on machine("CPU-B", 4, "0123456789ab"), the
// second machine of a history.
HistoryEntry on_machine_b(HistoryEntry e) {
  e.machine = 1;
  e.fingerprint = "0123456789ab";
  return e;
}

Catalogue two_scenarios() {
  return parse_catalogue(R"({"scenarios": [
      {"name": "churn-1t", "command": ["{bin}/malloc_churn", "1", "10"], "shows": "one"},
      {"name": "python", "command": ["/usr/bin/python3", "{source}/bench/python_churn.py"], "shows": "two"}]})",
                         "test");
}

TEST(FormatOverhead, SignedFigureAndInterval) {
  EXPECT_EQ(format_overhead(0.031, {0.024, 0.039}), "+3.1% [2.4, 3.9]");
  EXPECT_EQ(format_overhead(-0.0123, {-0.02, 0.001}), "-1.2% [-2.0, 0.1]");
  EXPECT_EQ(format_overhead(-0.0001, {-0.0004, 0.0002}), "+0.0% [0.0, 0.0]") << "no '-0.0'";
  EXPECT_EQ(format_overhead(1.68, {1.5, 1.9}), "+168.0% [150.0, 190.0]");
}

TEST(HistoryRows, NewestFirstGroupedByCommitWithTheNewestPointPerCell) {
  History h;
  h.machines = {machine("cpu")};
  h.entries = {entry("churn-1t", "c1", 0.01, 1), entry("python", "c1", 0.02, 2), entry("churn-1t", "c2", 0.03, 3),
               entry("churn-1t", "c1", 0.05, 4)};  // a rerun of c1, newer
  auto rows = history_rows(h, {"churn-1t", "python"}, 25);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].commit, "c1") << "the rerun makes c1 the newest";
  EXPECT_DOUBLE_EQ(rows[0].cells[0]->overhead, 0.05);
  EXPECT_DOUBLE_EQ(rows[0].cells[1]->overhead, 0.02);
  EXPECT_EQ(rows[1].commit, "c2");
  EXPECT_EQ(rows[1].cells[1], nullptr) << "python was not measured at c2";
}

TEST(HistoryRows, AtMostTheLimitNewestCommits) {
  History h;
  h.machines = {machine("cpu")};
  for (int i = 0; i < 40; ++i) h.entries.push_back(entry("churn-1t", "c" + std::to_string(i), 0.01 * i, i));
  auto rows = history_rows(h, {"churn-1t"}, 25);
  ASSERT_EQ(rows.size(), 25u);
  EXPECT_EQ(rows.front().commit, "c39");
  EXPECT_EQ(rows.back().commit, "c15");
}

// Two machines measure one commit: a row for each, side by side, the
// machine with the newer point first; the limit counts commits, not rows.
TEST(HistoryRows, EachMachineThatMeasuredACommitHasItsRow) {
  History h;
  h.machines = {machine("CPU-A"), machine("CPU-B", 4, "0123456789ab")};
  h.entries = {entry("churn-1t", "c1", 0.01, 1), on_machine_b(entry("churn-1t", "c1", 0.40, 2)),
               entry("churn-1t", "c2", 0.02, 3), on_machine_b(entry("churn-1t", "c3", 0.41, 4)),
               entry("churn-1t", "c3", 0.03, 5)};
  auto rows = history_rows(h, {"churn-1t"}, 2);
  ASSERT_EQ(rows.size(), 3u) << "c3 on both machines, c2 on one";
  EXPECT_EQ(rows[0].commit, "c3");
  EXPECT_EQ(rows[0].machine, 0) << "the newer point first";
  EXPECT_DOUBLE_EQ(rows[0].cells[0]->overhead, 0.03);
  EXPECT_EQ(rows[1].commit, "c3");
  EXPECT_EQ(rows[1].machine, 1);
  EXPECT_DOUBLE_EQ(rows[1].cells[0]->overhead, 0.41);
  EXPECT_EQ(rows[2].commit, "c2");
  // Rows of one commit stay together even when another commit was measured
  // between its machines' points.
  rows = history_rows(h, {"churn-1t"}, 25);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[3].commit, "c1");
  EXPECT_EQ(rows[4].commit, "c1");
}

// Machines are named by CPU model (without the vendor's marks and clock)
// and cores; the same name for another fingerprint is numbered.
TEST(MachineNames, CpuModelAndCoresNumberedWhenTheyRepeat) {
  History h;
  h.machines = {machine("Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", 4, "aaaa"),
                machine("AMD EPYC 7763 64-Core Processor", 1, "bbbb"),
                machine("Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", 4, "cccc"), machine("", 2, "dddd")};
  EXPECT_EQ(machine_names(h), (std::vector<std::string>{"Intel Xeon Platinum 8370C, 4 cores",
                                                        "AMD EPYC 7763 64-Core, 1 core",
                                                        "Intel Xeon Platinum 8370C, 4 cores #2", "unknown CPU, 2 cores"}));
  HistoryEntry without;
  EXPECT_EQ(machine_name_of(without, machine_names(h)), "unknown machine");
}

TEST(HistoryRows, PointsWithoutCommitAreRowsOfTheirOwnAndUnknownScenariosAreSkipped) {
  History h;
  h.machines = {machine("cpu")};
  h.entries = {entry("churn-1t", "", 0.01, 1), entry("churn-1t", "", 0.02, 2), entry("retired", "c1", 0.5, 3)};
  auto rows = history_rows(h, {"churn-1t"}, 25);
  ASSERT_EQ(rows.size(), 2u);
}

TEST(HistoryPage, TableCellsCommitRangesAndSelfTimedMarks) {
  History h;
  h.machines = {machine("Test Chip")};
  h.entries = {entry("churn-1t", "aaaaaaaaaa", 4.09, 1, "benchmark"), entry("churn-1t", "bbbbbbbbbb", 0.031, 2)};
  h.entries[1].range_first = "9999999999";
  RenderOptions options;
  options.store_label = "bench-data/points.jsonl";
  auto page = history_page_markdown(h, two_scenarios(), options, "");
  EXPECT_NE(page.find("| `9999999...bbbbbbb` | Test Chip, 2 cores | 2026-11-30 00:02 | +3.1% [2.4, 3.9] | – |"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("+409.0% [408.3, 409.8] †"), std::string::npos) << page;
  EXPECT_NE(page.find("† Timed by the benchmark itself"), std::string::npos);
  EXPECT_NE(page.find("](plots/churn-1t.svg)"), std::string::npos) << "relative image paths";
  EXPECT_NE(page.find("- Test Chip, 2 cores: `f00dfeedbeef`, Test Chip, 2 cores, Linux 6.1, glibc 2.36, GNU 12"),
            std::string::npos)
      << page;
  EXPECT_LT(page.find("bbbbbbb"), page.find("aaaaaaa")) << "newest first";
}

// A step on one of two machines that measured the same commits is in the
// table: both machines' cells of the commit, each named, the step marked.
TEST(HistoryPage, AStepOnOneOfTwoMachinesIsInTheTable) {
  History h;
  h.machines = {machine("CPU-A"), machine("CPU-B", 4, "0123456789ab")};
  for (int i = 0; i < 12; ++i) {
    const std::string commit = "c" + std::to_string(10 + i) + "xxxxxx";
    h.entries.push_back(entry("churn-1t", commit, i == 11 ? 0.30 : 0.05 + 0.001 * (i % 3), 2 * i));
    h.entries.push_back(on_machine_b(entry("churn-1t", commit, 0.10 + 0.001 * (i % 3), 2 * i + 1)));
  }
  RenderOptions options;
  options.store_label = "points.jsonl";
  const auto page = history_page_markdown(h, two_scenarios(), options, "");
  EXPECT_NE(page.find("| `c21xxxx` | CPU-B, 4 cores | 2026-11-30 00:23 | +10.2% [9.5, 11.0] | – |"), std::string::npos)
      << page;
  EXPECT_NE(page.find("| `c21xxxx` | CPU-A, 2 cores | 2026-11-30 00:22 | +30.0% [29.3, 30.8] ▲ **regression** | – |"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("- CPU-B, 4 cores: `0123456789ab`"), std::string::npos) << page;
  EXPECT_NE(page.find("The table shows the last 12 measured commit(s)"), std::string::npos) << page;
}

// The second table: the same rows, CPU time (with its interval) and
// instructions side by side, each with its own verdict mark; the measured
// publish rate and memory cost of the newest point of each scenario.
TEST(HistoryPage, CpuAndInstructionFiguresAndTheLibrarysBehaviour) {
  History h;
  h.machines = {machine("Test Chip")};
  for (int i = 0; i < 12; ++i) {
    auto e = entry("churn-1t", "c" + std::to_string(10 + i) + "xxxxxx", 0.05, i);
    e.cpu = {true, 0.084, 0.057, 0.103, true};
    e.instructions = {true, 0.1414, 0.1414, 0.1414, true};
    h.entries.push_back(e);
  }
  h.entries.back().instructions = {true, 0.1614, 0.1614, 0.1614, true};  // a step in the counts only
  h.entries.back().publishes_per_1000_calls = 5.14;
  h.entries.back().extra_peak_rss_kib = 1540;
  h.entries.back().accuracy = Accuracy{9'994'000, 10'000'000, 19'000};  // -0.06% of a +/-0.19% bound
  auto python = entry("python", "c21xxxxxx", 0.01, 30);  // measured without valgrind
  python.cpu = {true, 0.013, 0.013, 0.013, false};       // an older point's: no interval
  python.publishes_per_1000_calls = 0.76;
  python.extra_peak_rss_kib = 20480;
  h.entries.push_back(python);
  RenderOptions options;
  options.store_label = "bench-data/points.jsonl";
  const auto page = history_page_markdown(h, two_scenarios(), options, "");
  const auto second = page.find("### CPU time and instructions");
  ASSERT_NE(second, std::string::npos) << page;
  EXPECT_LT(page.find("| Commit | Machine | Measured (UTC) |"), second) << "the wall-clock table stays first";
  EXPECT_NE(page.find("| Commit | Machine | `churn-1t` cpu · instructions | `python` cpu · instructions |", second),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("| `c21xxxx` | Test Chip, 2 cores | +8.4% [5.7, 10.3] · +16.14% ▲ | +1.3% · – |", second),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("| `c20xxxx` | Test Chip, 2 cores | +8.4% [5.7, 10.3] · +14.14% | – |", second),
            std::string::npos)
      << page;
  EXPECT_EQ(page.find("▲ **regression**"), std::string::npos) << "the wall clock did not move";
  EXPECT_NE(page.find("| `churn-1t` | 5.1 | 1540 KiB | -0.06% (bound ±0.19%) | `c21xxxx` |"), std::string::npos) << page;
  EXPECT_NE(page.find("| `python` | 0.8 | 20 MiB | – | `c21xxxx` |"), std::string::npos) << page;
}

// An error outside the stated bound is marked where the reader looks.
TEST(HistoryPage, APeakErrorOutsideTheBoundIsMarked) {
  History h;
  h.machines = {machine("Test Chip")};
  auto e = entry("churn-1t", "c10xxxxxx", 0.05, 0);
  e.publishes_per_1000_calls = 5.0;
  e.accuracy = Accuracy{5'000'000, 10'000'000, 19'000};
  h.entries.push_back(e);
  RenderOptions options;
  const auto page = history_page_markdown(h, two_scenarios(), options, "");
  EXPECT_NE(page.find("| -50.00% (bound ±0.19%) **outside the bound** |"), std::string::npos) << page;
}

TEST(HistoryPage, EmptyStoreGivesAClearPage) {
  History h;
  RenderOptions options;
  options.store_label = "bench-data/points.jsonl";
  auto page = history_page_markdown(h, two_scenarios(), options, "");
  EXPECT_NE(page.find("No point has been measured yet"), std::string::npos);
}

TEST(HistoryPage, UnreadableLinesAreAnnounced) {
  History h;
  h.problems.push_back({"points.jsonl", 7, "not valid JSON"});
  RenderOptions options;
  options.store_label = "points.jsonl";
  auto page = history_page_markdown(h, two_scenarios(), options, "");
  EXPECT_NE(page.find("points.jsonl:7: not valid JSON"), std::string::npos) << page;
}

TEST(ScenarioTable, FromTheCatalogue) {
  auto table = scenarios_markdown(two_scenarios());
  EXPECT_NE(table.find("| `churn-1t` | `malloc_churn 1 10` | one |"), std::string::npos) << table;
  EXPECT_NE(table.find("| `python` | `python3 bench/python_churn.py` | two |"), std::string::npos) << table;
}

class RenderFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    out = std::filesystem::temp_directory_path() / ("heapline-render-" + std::to_string(getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(out);
    options.out_dir = out.string();
    options.store_label = "test";
  }
  void TearDown() override { std::filesystem::remove_all(out); }
  std::filesystem::path out;
  RenderOptions options;
};

TEST_F(RenderFiles, WritesThePageTheScenarioTableAndOnePlotPerScenario) {
  History h;
  h.machines = {machine("cpu")};
  h.entries = {entry("churn-1t", "c1", 0.01, 1), entry("python", "c1", 0.02, 2), entry("churn-1t", "c2", 0.03, 3)};
  auto result = render_history(h, two_scenarios(), options);
  EXPECT_TRUE(std::filesystem::exists(out / "performance.md"));
  EXPECT_TRUE(std::filesystem::exists(out / "scenarios.md"));
  // gnuplot is a dependency (tools/setup.sh): missing, this fails.
  EXPECT_EQ(result.plot_note, "");
  ASSERT_EQ(result.plots.size(), 2u);
  for (const auto& plot : result.plots) {
    EXPECT_GT(std::filesystem::file_size(plot), 1000u) << plot;
    std::ifstream svg(plot);
    std::string head(64, '\0');
    svg.read(head.data(), 64);
    EXPECT_NE(head.find("<?xml"), std::string::npos) << plot;
  }
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A reader matches a plotted point to a table row by its commit: the x axis
// is the commits' short SHAs at integer positions, a machine's points form
// one keyed series, a commit measured on two machines has one x position, a
// lone point is drawn with its interval, and a change point has a key entry.
TEST_F(RenderFiles, PlotsAReaderCanMatchToTheTable) {
  History h;
  h.machines = {machine("CPU-A"), machine("CPU-B", 4, "0123456789ab")};
  const double level[] = {0.50, 0.52, 0.49, 0.51, 0.50, 0.53, 0.10, 0.12, 0.09, 0.11, 0.10, 0.12};
  for (int i = 0; i < 12; ++i) {
    const std::string commit = std::string(1, static_cast<char>('a' + i)) + "000000" + std::to_string(i) + "ffff";
    h.entries.push_back(entry("churn-1t", commit, level[i], i + 1));
    h.entries.back().line = i + 1;
  }
  h.entries.push_back(on_machine_b(entry("churn-1t", h.entries[7].commit, 0.3, 30)));
  h.entries.push_back(entry("python", "f0000000", 0.02, 31));
  auto result = render_history(h, two_scenarios(), options);
  ASSERT_EQ(result.plot_note, "");

  const std::string script = file_text(out / "plots" / "history.gp");
  EXPECT_NE(script.find("set xtics nomirror rotate by -45 ('a000000' 1, 'b000000' 2, "), std::string::npos) << script;
  EXPECT_NE(script.find("set xrange [0.5:12.5]"), std::string::npos) << "integer slots, one per commit";
  EXPECT_NE(script.find("set key outside below"), std::string::npos) << "the key is off the data";
  const std::string svg = file_text(out / "plots" / "churn-1t.svg");
  for (const char* text : {"a000000", "h000000", "l000000", "CPU-A, 2 cores (f00dfeedbeef)",
                           "CPU-B, 4 cores (0123456789ab)", "95% interval", "change point"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  // The second machine's point sits at its commit's slot (the 8th), in a
  // block of its own; the points lack the cpu and instruction figures.
  EXPECT_NE(script.find("\n\n\n8 30 29.3 30.8 NaN NaN NaN NaN NaN NaN h000000\n"), std::string::npos) << script;
  // A lone point: its value and its interval, at slot 1 of 1.
  EXPECT_NE(script.find("$scenario2 << EOD\n1 2 1.3 2.8 NaN NaN NaN NaN NaN NaN f000000\n"), std::string::npos);
  EXPECT_NE(script.find("set xrange [0.5:1.5]"), std::string::npos);
}

// The three figures, each in a panel of its own on the same commits, the
// timed ones with their 95% interval as a band (filled between its ends),
// the exact instruction count as a line; a change point of one figure is
// drawn in that figure's panel.
TEST_F(RenderFiles, PlotsShowTheThreeFiguresWithTheirIntervalsAsBands) {
  History h;
  h.machines = {machine("CPU-A")};
  for (int i = 0; i < 12; ++i) {
    auto e = entry("churn-1t", "c0000" + std::to_string(10 + i), 0.05, i + 1);
    e.cpu = {true, i < 6 ? 0.08 : 0.20, i < 6 ? 0.07 : 0.19, i < 6 ? 0.09 : 0.21, true};
    e.instructions = {true, 0.1414, 0.1414, 0.1414, true};
    h.entries.push_back(e);
  }
  // A machine whose points have the wall clock only (older points): its
  // series has no line in the other panels, and gnuplot still draws them.
  h.machines.push_back(machine("CPU-B", 4, "0123456789ab"));
  h.entries.push_back(on_machine_b(entry("churn-1t", "c000021", 0.06, 40)));
  h.entries.push_back(entry("python", "c000022", 0.01, 41));
  auto result = render_history(h, two_scenarios(), options);
  ASSERT_EQ(result.plot_note, "");
  const std::string script = file_text(out / "plots" / "history.gp");
  EXPECT_NE(script.find("\n1 5 4.3 5.8 8 7 9 14.14 14.14 14.14 c000010\n"), std::string::npos) << script;
  // python's points lack both figures: its panels say so.
  EXPECT_NE(script.find("'not measured in these points'"), std::string::npos);
  for (const char* text : {"using 1:3:4 with filledcurves", "using 1:2 with linespoints",
                           "using 1:6:7 with filledcurves", "using 1:5 with linespoints",
                           "using 1:9:10 with filledcurves", "using 1:8 with linespoints"})
    EXPECT_NE(script.find(text), std::string::npos) << text;
  // The CPU time's step at the 7th commit is drawn in its panel (the
  // second), not in the wall clock's.
  const auto cpu_panel = script.find("set ylabel 'CPU time (%)'");
  const auto instructions_panel = script.find("set ylabel 'instructions (%)'");
  const auto arrow = script.find("set arrow from 6.5, graph 0");
  ASSERT_NE(cpu_panel, std::string::npos);
  EXPECT_GT(arrow, cpu_panel);
  EXPECT_LT(arrow, instructions_panel);
  EXPECT_EQ(script.find("set arrow from 6.5, graph 0", arrow + 1), std::string::npos) << "one panel only";
  const std::string svg = file_text(out / "plots" / "churn-1t.svg");
  for (const char* text : {"wall clock (%)", "CPU time (%)", "instructions (%)", "band: 95% interval"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
}

// The published script draws the plots again on its own: it holds its data
// and names no directory, so `gnuplot history.gp` anywhere writes the same
// SVGs, after the render's own directories are gone.
TEST_F(RenderFiles, ThePublishedScriptDrawsThePlotsAgainAlone) {
  History h;
  h.machines = {machine("CPU-A")};
  for (int i = 0; i < 4; ++i) h.entries.push_back(entry("churn-1t", "c00000" + std::to_string(i), 0.05, i + 1));
  ASSERT_EQ(render_history(h, two_scenarios(), options).plot_note, "");
  const std::string script = file_text(out / "plots" / "history.gp");
  const std::string drawn = file_text(out / "plots" / "churn-1t.svg");
  EXPECT_EQ(script.find(out.string()), std::string::npos) << "no path of the render in the script";
  EXPECT_EQ(script.find(".render-"), std::string::npos);

  const auto elsewhere = out.string() + "-elsewhere";
  std::filesystem::create_directories(elsewhere);
  std::filesystem::copy_file(out / "plots" / "history.gp", elsewhere + "/history.gp");
  std::filesystem::remove_all(out);
  ASSERT_EQ(std::system(("cd '" + elsewhere + "' && gnuplot history.gp").c_str()), 0);
  const std::string again = file_text(elsewhere + "/churn-1t.svg");
  std::filesystem::remove_all(elsewhere);
  EXPECT_EQ(again, drawn);
}

// A scenario whose command changed is drawn as two series, each named by its
// command, never one line through a step that only the command made.
TEST_F(RenderFiles, PointsOfAnotherCommandAreAnotherSeries) {
  History h;
  h.machines = {machine("CPU-A")};
  for (int i = 0; i < 6; ++i) {
    h.entries.push_back(entry("churn-1t", "c00000" + std::to_string(i), i < 3 ? 0.05 : 0.02, i + 1));
    h.entries.back().command = i < 3 ? "malloc_churn 1 50" : "malloc_churn 1 10";
  }
  auto result = render_history(h, two_scenarios(), options);
  ASSERT_EQ(result.plot_note, "");
  const std::string script = file_text(out / "plots" / "history.gp");
  EXPECT_NE(script.find("3 5 4.3 5.8 NaN NaN NaN NaN NaN NaN c000002\n\n\n4 2 1.3 2.8 NaN NaN NaN NaN NaN NaN c000003"),
            std::string::npos)
      << script;
  const std::string svg = file_text(out / "plots" / "churn-1t.svg");
  for (const char* text : {"CPU-A, 2 cores (f00dfeedbeef), malloc_churn 1 50", "CPU-A, 2 cores (f00dfeedbeef), malloc_churn 1 10"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  // One command: the key names the machine only, as before.
  EXPECT_EQ(file_text(out / "plots" / "python.svg").find("malloc_churn"), std::string::npos);
}

TEST_F(RenderFiles, WithoutGnuplotThePageSaysSo) {
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  setenv("PATH", "/nonexistent", 1);
  History h;
  h.machines = {machine("cpu")};
  h.entries = {entry("churn-1t", "c1", 0.01, 1)};
  auto result = render_history(h, two_scenarios(), options);
  setenv("PATH", saved.c_str(), 1);
  EXPECT_TRUE(result.plots.empty());
  EXPECT_NE(result.plot_note.find("gnuplot is not installed"), std::string::npos);
  std::ifstream page(out / "performance.md");
  std::string text((std::istreambuf_iterator<char>(page)), {});
  EXPECT_NE(text.find("gnuplot is not installed"), std::string::npos);
}

TEST_F(RenderFiles, SinglePointStoreDrawsToo) {
  History h;
  h.machines = {machine("cpu")};
  h.entries = {entry("python", "c1", 0.02, 2)};
  auto result = render_history(h, two_scenarios(), options);
  EXPECT_EQ(result.plot_note, "");
  ASSERT_EQ(result.plots.size(), 2u);
  for (const auto& plot : result.plots) EXPECT_GT(std::filesystem::file_size(plot), 1000u) << plot;
}

// Renders into one directory at the same time: each write has a temporary
// file of its own, so none renames away another's.
TEST(AtomicFile, ConcurrentWritersOfOneFileAllSucceed) {
  const auto dir = std::filesystem::temp_directory_path() / ("heapline-atomic-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "performance.md").string();
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 50; ++i) {
        try {
          heapline::write_output_file(path, std::string(4096, static_cast<char>('a' + w)), {true, 0});
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::ifstream in(path);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  EXPECT_EQ(text.size(), 4096u);
  EXPECT_EQ(text.find_first_not_of(text[0]), std::string::npos) << "one writer's whole text";
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& f : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u) << "no temporary file left behind";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace heapline::bench
