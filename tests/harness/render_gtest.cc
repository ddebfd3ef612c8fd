#include "heapline_bench/reports/render.h"
#include "heapline_bench/reports/atomic_file.h"

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
  h.machines = {"cpu"};
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
  h.machines = {"cpu"};
  for (int i = 0; i < 40; ++i) h.entries.push_back(entry("churn-1t", "c" + std::to_string(i), 0.01 * i, i));
  auto rows = history_rows(h, {"churn-1t"}, 25);
  ASSERT_EQ(rows.size(), 25u);
  EXPECT_EQ(rows.front().commit, "c39");
  EXPECT_EQ(rows.back().commit, "c15");
}

TEST(HistoryRows, PointsWithoutCommitAreRowsOfTheirOwnAndUnknownScenariosAreSkipped) {
  History h;
  h.machines = {"cpu"};
  h.entries = {entry("churn-1t", "", 0.01, 1), entry("churn-1t", "", 0.02, 2), entry("retired", "c1", 0.5, 3)};
  auto rows = history_rows(h, {"churn-1t"}, 25);
  ASSERT_EQ(rows.size(), 2u);
}

TEST(HistoryPage, TableCellsCommitRangesAndSelfTimedMarks) {
  History h;
  h.machines = {"Some CPU, 2 cores"};
  h.entries = {entry("churn-1t", "aaaaaaaaaa", 4.09, 1, "benchmark"), entry("churn-1t", "bbbbbbbbbb", 0.031, 2)};
  h.entries[1].range_first = "9999999999";
  RenderOptions options;
  options.store_label = "bench-data/points.jsonl";
  auto page = history_page_markdown(h, two_scenarios(), options, "");
  EXPECT_NE(page.find("| `9999999...bbbbbbb` | 2026-11-30 00:02 | +3.1% [2.4, 3.9] | – |"), std::string::npos)
      << page;
  EXPECT_NE(page.find("+409.0% [408.3, 409.8] †"), std::string::npos) << page;
  EXPECT_NE(page.find("† Timed by the benchmark itself"), std::string::npos);
  EXPECT_NE(page.find("](plots/churn-1t.svg)"), std::string::npos) << "relative image paths";
  EXPECT_NE(page.find("`f00dfeedbeef`: Some CPU, 2 cores"), std::string::npos);
  EXPECT_LT(page.find("bbbbbbb"), page.find("aaaaaaa")) << "newest first";
}

// The second table: the same rows, CPU time (with its interval) and
// instructions side by side, each with its own verdict mark; the measured
// publish rate and memory cost of the newest point of each scenario.
TEST(HistoryPage, CpuAndInstructionFiguresAndTheLibrarysBehaviour) {
  History h;
  h.machines = {"Some CPU, 2 cores"};
  for (int i = 0; i < 12; ++i) {
    auto e = entry("churn-1t", "c" + std::to_string(10 + i) + "xxxxxx", 0.05, i);
    e.cpu = {true, 0.084, 0.057, 0.103, true};
    e.instructions = {true, 0.1414, 0.1414, 0.1414, true};
    h.entries.push_back(e);
  }
  h.entries.back().instructions = {true, 0.1614, 0.1614, 0.1614, true};  // a step in the counts only
  h.entries.back().publishes_per_1000_calls = 5.14;
  h.entries.back().extra_peak_rss_kib = 1540;
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
  EXPECT_LT(page.find("| Commit | Measured (UTC) |"), second) << "the wall-clock table stays first";
  EXPECT_NE(page.find("| Commit | `churn-1t` cpu · instructions | `python` cpu · instructions |", second),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("| `c21xxxx` | +8.4% [5.7, 10.3] · +16.14% ▲ | +1.3% · – |", second), std::string::npos)
      << page;
  EXPECT_NE(page.find("| `c20xxxx` | +8.4% [5.7, 10.3] · +14.14% | – |", second), std::string::npos) << page;
  EXPECT_EQ(page.find("▲ **regression**"), std::string::npos) << "the wall clock did not move";
  EXPECT_NE(page.find("| `churn-1t` | 5.1 | 1540 KiB | `c21xxxx` |"), std::string::npos) << page;
  EXPECT_NE(page.find("| `python` | 0.8 | 20 MiB | `c21xxxx` |"), std::string::npos) << page;
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
  h.machines = {"cpu"};
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
  h.machines = {"CPU-A, 2 cores", "CPU-B, 4 cores"};
  const double level[] = {0.50, 0.52, 0.49, 0.51, 0.50, 0.53, 0.10, 0.12, 0.09, 0.11, 0.10, 0.12};
  for (int i = 0; i < 12; ++i) {
    const std::string commit = std::string(1, static_cast<char>('a' + i)) + "000000" + std::to_string(i) + "ffff";
    h.entries.push_back(entry("churn-1t", commit, level[i], i + 1));
    h.entries.back().line = i + 1;
  }
  auto other = entry("churn-1t", h.entries[7].commit, 0.3, 30);
  other.machine = 1;
  other.fingerprint = "0123456789ab";
  h.entries.push_back(other);
  h.entries.push_back(entry("python", "f0000000", 0.02, 31));
  auto result = render_history(h, two_scenarios(), options);
  ASSERT_EQ(result.plot_note, "");

  const std::string script = file_text(out / "plots" / "history.gp");
  EXPECT_NE(script.find("set xtics nomirror rotate by -45 ('a000000' 1, 'b000000' 2, "), std::string::npos) << script;
  EXPECT_NE(script.find("set xrange [0.5:12.5]"), std::string::npos) << "integer slots, one per commit";
  EXPECT_NE(script.find("set key outside below"), std::string::npos) << "the key is off the data";
  const std::string svg = file_text(out / "plots" / "churn-1t.svg");
  for (const char* text : {"a000000", "h000000", "l000000", "f00dfeedbeef: CPU-A, 2 cores", "0123456789ab: CPU-B, 4 cores",
                           "95% interval", "change point"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  // The second machine's point sits at its commit's slot (the 8th).
  const std::string data = file_text(out / "plots" / "churn-1t.dat");
  EXPECT_NE(data.find("\n\n\n8 30 "), std::string::npos) << data;
  // A lone point: its marker with its interval, at slot 1 of 1.
  EXPECT_NE(file_text(out / "plots" / "python.dat").find("1 2 1.3 2.8 f000000"), std::string::npos);
  EXPECT_NE(script.find("set xrange [0.5:1.5]"), std::string::npos);
  EXPECT_NE(script.find("with yerrorlines"), std::string::npos) << "every point drawn with its interval";
}

// A scenario whose command changed is drawn as two series, each named by its
// command, never one line through a step that only the command made.
TEST_F(RenderFiles, PointsOfAnotherCommandAreAnotherSeries) {
  History h;
  h.machines = {"CPU-A, 2 cores"};
  for (int i = 0; i < 6; ++i) {
    h.entries.push_back(entry("churn-1t", "c00000" + std::to_string(i), i < 3 ? 0.05 : 0.02, i + 1));
    h.entries.back().command = i < 3 ? "malloc_churn 1 50" : "malloc_churn 1 10";
  }
  auto result = render_history(h, two_scenarios(), options);
  ASSERT_EQ(result.plot_note, "");
  const std::string data = file_text(out / "plots" / "churn-1t.dat");
  EXPECT_NE(data.find("3 5 4.3 5.8 c000002\n\n\n4 2 1.3 2.8 c000003"), std::string::npos) << data;
  const std::string svg = file_text(out / "plots" / "churn-1t.svg");
  for (const char* text : {"CPU-A, 2 cores, malloc_churn 1 50", "CPU-A, 2 cores, malloc_churn 1 10"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  // One command: the key names the machine only, as before.
  EXPECT_EQ(file_text(out / "plots" / "python.svg").find("malloc_churn"), std::string::npos);
}

TEST_F(RenderFiles, WithoutGnuplotThePageSaysSo) {
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  setenv("PATH", "/nonexistent", 1);
  History h;
  h.machines = {"cpu"};
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
  h.machines = {"cpu"};
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
          write_file_atomically(path, std::string(4096, static_cast<char>('a' + w)));
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
