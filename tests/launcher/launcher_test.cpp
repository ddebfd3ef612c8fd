#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "child_process.h"
#include "output_naming.h"
#include "plot_script_property.h"
#include "process_runner.h"
#include "process_tree.h"
#include "report_summary.h"
#include "timeline_plot.h"
#include <heapline/gnuplot_text.h>

namespace fs = std::filesystem;
using heapline::test::files_matching;
using heapline::test::heapline_format_problem;
using heapline::test::read_file;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;

namespace {

const std::string kLauncher = HEAPLINE_LAUNCHER;
const std::string kPython = "/usr/bin/python3";

// The data file and the script of `report`'s plot into `name` (in the
// temporary directory), the files removed once read.
struct PlotText {
  std::string data, script;
};
PlotText plot_text(const heapline::ParsedReport& report, const std::string& name) {
  const auto files = heapline::launcher::write_plot_files(report, fs::temp_directory_path() / name);
  PlotText text{read_file(files.data), read_file(files.script)};
  fs::remove_all(files.directory);
  return text;
}

// --- pure parts -----------------------------------------------------------

// A helper's stderr (gnuplot's complaint) is kept up to 16 KiB, its first
// bytes, and the helper is waited for whatever it writes past that: a
// helper that floods its stderr neither blocks nor grows the launcher.
TEST(RunHelper, KeepsTheFirst16KiBOfAHelpersStderrAndWaitsForItsEnd) {
  const heapline::launcher::HelperResult result =
      heapline::launcher::run_helper({"/bin/sh", "-c", "printf a >&2; head -c 100000 /dev/zero | tr '\\0' x >&2; exit 3"});
  EXPECT_TRUE(result.exited(3));
  ASSERT_EQ(result.said.size(), 16384u);
  EXPECT_EQ(result.said, "a" + std::string(16383, 'x'));
}

TEST(OutputNaming, DefaultAndTemplates) {
  using heapline::launcher::root_output_path;
  EXPECT_EQ(root_output_path("", "/usr/bin/sort", 42), "heapline.sort.42.json");
  EXPECT_EQ(root_output_path("out/%e-%p.json", "python3", 7), "out/python3-7.json");
  EXPECT_EQ(root_output_path("100%%.json", "x", 1), "100%.json");
  EXPECT_EQ(root_output_path("fixed.json", "x", 1), "fixed.json");
}

TEST(Summary, HumanUnits) {
  using heapline::launcher::human_bytes;
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(3LL << 30), "3.0 GiB");
}

TEST(Summary, HumanBytesChangesUnitAtExactlyOneKibi) {
  using heapline::launcher::human_bytes;
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1024), "1.0 KiB");
  EXPECT_EQ(human_bytes(-1024), "-1.0 KiB");
  EXPECT_EQ(human_bytes(1LL << 20), "1.0 MiB");
}

TEST(Summary, HumanSecondsFromNanoseconds) {
  using heapline::launcher::human_seconds;
  EXPECT_EQ(human_seconds(1'500'000'000), "1.500 s");
  EXPECT_EQ(human_seconds(2'000'000), "0.002 s");
}

// A fixed report: the mapped line appears when mapped memory was counted,
// and not for a report older than it or one converted with it unknown.
TEST(Summary, MappedLineOnlyWhenMappedMemoryWasCounted) {
  std::string text = R"({"format": "heapline/1", "pid": 1, "ppid": 0, "exe": "/bin/x", "start_unix_ns": 0,
    "precision": {"mode": "exact", "bound_bytes": 0, "max_threads": 1, "min_threshold_bytes": 1},
    "peak_bytes": 2097152, "peak_time_ns": 1000000, "final_bytes": 1048576, "duration_ns": 2000000000,
    "calls": {"alloc": 1, "free": 0, "realloc": 0}, "publishes": 1, "interval_ns": 10000000,
    "samples": [[0, 0, 0]],
    "mapped": {"mode": "on", "peak_bytes": 8388608, "peak_time_ns": 500000000, "final_bytes": 0},
    "total": {"peak_bytes": 9437184, "peak_time_ns": 500000000, "final_bytes": 1048576}})";
  auto reading = heapline::parse_report(text, "r.json");
  ASSERT_TRUE(reading) << reading.error;
  const std::string summary = heapline::launcher::summarize(*reading.report, "r.json");
  EXPECT_NE(summary.find("heapline: peak 2.0 MiB at 0.001 s, final 1.0 MiB\n"
                         "heapline: mapped peak 8.0 MiB at 0.500 s, final 0 B; "
                         "heap + mapped peak 9.0 MiB at 0.500 s, final 1.0 MiB\n"),
            std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("resident"), std::string::npos) << summary;  // not recorded: no line
  reading.report->peak_rss_bytes = 3 << 20;
  EXPECT_NE(heapline::launcher::summarize(*reading.report, "r.json")
                .find("heap + mapped peak 9.0 MiB at 0.500 s, final 1.0 MiB\nheapline: peak resident set 3.0 MiB ("),
            std::string::npos);
  // With the resident series: its peak, when, its last reading, and the
  // kernel's high-water mark beside them when the report has it.
  reading.report->resident = heapline::ParsedReport::Resident{5 << 20, 750'000'000, 1 << 20};
  EXPECT_NE(heapline::launcher::summarize(*reading.report, "r.json")
                .find("\nheapline: resident set peak 5.0 MiB at 0.750 s, final 1.0 MiB (read at samples; "
                      "the kernel's high-water mark 3.0 MiB): memory allocated but never written is not resident\n"),
            std::string::npos)
      << heapline::launcher::summarize(*reading.report, "r.json");
  reading.report->peak_rss_bytes.reset();
  EXPECT_NE(heapline::launcher::summarize(*reading.report, "r.json")
                .find("\nheapline: resident set peak 5.0 MiB at 0.750 s, final 1.0 MiB (read at samples): "),
            std::string::npos)
      << heapline::launcher::summarize(*reading.report, "r.json");
  reading.report->resident.reset();
  reading.report->mapped.mode = heapline::ParsedReport::MappedMode::kUnknown;
  EXPECT_EQ(heapline::launcher::summarize(*reading.report, "r.json").find("mapped"), std::string::npos);
  reading.report->mapped.mode = heapline::ParsedReport::MappedMode::kAbsent;
  EXPECT_EQ(heapline::launcher::summarize(*reading.report, "r.json").find("mapped"), std::string::npos);
}

// The precision line in each of its forms: exact; batched under the budget;
// and batched by the per-thread rule of reports written before the budget,
// for one thread and for several.
TEST(Summary, ThePrecisionLineSaysHowTheFiguresWereKept) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.samples = {{0, 0, 0}, {1'000'000'000, 0, 0}};
  report.duration_ns = 1'500'000'000;
  auto precision_line = [&report] {
    const std::string summary = heapline::launcher::summarize(report, "r.json");
    const std::size_t at = summary.find("heapline: precision ");
    return at == std::string::npos ? summary : summary.substr(at, summary.find('\n', at) - at);
  };
  report.precision.exact = true;
  EXPECT_EQ(precision_line(), "heapline: precision exact, 2 samples over 1.500 s");
  report.precision = {};
  report.precision.bound_bytes = 300 << 10;
  report.precision.budget_floor_bytes = 256 << 10;
  report.precision.budget_divisor = 100;
  report.precision.budget_bytes = 300 << 10;
  EXPECT_EQ(precision_line(),
            "heapline: precision +/-300.0 KiB (batched: at most max(256.0 KiB, peak/100) = 300.0 KiB), "
            "2 samples over 1.500 s");
  report.precision = {};
  report.precision.bound_bytes = 64 << 10;
  report.precision.min_threshold_bytes = 4096;
  report.precision.max_threshold_bytes = 64 << 10;
  report.precision.max_threads = 1;
  EXPECT_EQ(precision_line(), "heapline: precision +/-64.0 KiB (batched: 1 thread x 64.0 KiB), 2 samples over 1.500 s");
  report.precision.max_threads = 2;
  report.precision.bound_bytes = 128 << 10;
  EXPECT_EQ(precision_line(),
            "heapline: precision +/-128.0 KiB (batched: 2 threads x 64.0 KiB), 2 samples over 1.500 s");
}

// The markers a report could not hold are counted, and the summary's line
// of markers says so; a report without any says nothing of them.
TEST(Summary, MarkersPastTheCapacityAreCountedAndSaid) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.samples = {{0, 0, 0}};
  report.markers = {{1'000'000, "a"}, {2'000'000, "b"}};
  std::string summary = heapline::launcher::summarize(report, "r.json");
  EXPECT_NE(summary.find("heapline: 2 markers: a @ 0.001 s b @ 0.002 s\n"), std::string::npos) << summary;
  report.markers_dropped = 59;
  summary = heapline::launcher::summarize(report, "r.json");
  EXPECT_NE(summary.find("b @ 0.002 s; 59 more placed after these, not kept (a report holds the first 256)\n"),
            std::string::npos)
      << summary;
  // Read from a report file as written.
  const std::string text = R"({"format":"heapline/1","pid":1,"ppid":0,"exe":"/bin/x","start_unix_ns":0,"duration_ns":1,)"
                           R"("precision":{"mode":"exact","bound_bytes":0,"budget_floor_bytes":0,"budget_divisor":0,"budget_bytes":0,)"
                           R"("max_threshold_bytes":1,"max_threads":1},)"
                           R"("peak_bytes":0,"peak_time_ns":0,"final_bytes":0,"calls":{"alloc":0,"free":0,"realloc":0},)"
                           R"("publishes":0,"interval_ns":10000000,"markers_dropped":7,"markers":[[5,"m"]],)"
                           R"("samples":[[0,0,0]]})";
  const heapline::ReportReading reading = heapline::parse_report(text, "r.json");
  ASSERT_TRUE(reading) << reading.error;
  EXPECT_EQ(reading.report->markers_dropped, 7u);
}

// A report whose live file could not be made says why, on one line of its
// own (the program's text made printable).
TEST(Summary, SaysWhyThereWasNoLiveFile) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.samples = {{0, 0, 0}};
  EXPECT_EQ(heapline::launcher::summarize(report, "r.json").find("live file"), std::string::npos);
  report.live_file_problem = "not made: the file size limit is 1024 bytes\nsystem";
  const std::string summary = heapline::launcher::summarize(report, "r.json");
  EXPECT_NE(summary.find("heapline: live file not made: the file size limit is 1024 bytes"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("\nsystem"), std::string::npos) << summary;
  // A live file cut under its process says so the same way.
  report.live_file_problem = "cut short by another process at 0.500 s: 3 markers lost";
  EXPECT_NE(heapline::launcher::summarize(report, "r.json")
                .find("heapline: live file cut short by another process at 0.500 s: 3 markers lost\n"),
            std::string::npos);
}

// The plot's data: heap, its maxima, mapped and heap + mapped per sample;
// a mapped series one sample short (a kill between the two appends) keeps
// its last value.
TEST(Plot, DataHoldsTheMappedAndTotalColumns) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.peak_bytes = 2048;
  report.total.peak_bytes = 5120;
  report.mapped.mode = heapline::ParsedReport::MappedMode::kOn;
  report.samples = {{0, 1024, 1024}, {1000000000, 2048, 2048}};
  report.mapped_samples = {{0, 3072, 3072}};
  const fs::path out = fs::temp_directory_path() / "heapline-plot-test.svg";
  const auto files = heapline::launcher::write_plot_files(report, out);
  const std::string data = read_file(files.data);
  const std::string script = read_file(files.script);
  fs::remove_all(files.directory);
  EXPECT_NE(data.find("\n0 1 1 3 4\n1 2 2 3 5\n"), std::string::npos) << data;
  EXPECT_NE(script.find("title 'mapped'"), std::string::npos) << script;
  EXPECT_NE(script.find("title 'heap + mapped'"), std::string::npos) << script;
}

// Each series is drawn at its own times: a 2 KiB mapping made at 0.644 s,
// between two heap samples, shows at 0.644 s (not at a heap sample's time),
// and a mapped series longer than the heap's (a mapping after the last heap
// sample, read from a killed process's live file) is drawn, not dropped.
TEST(Plot, MappedMemoryShowsAtItsOwnTime) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.mapped.mode = heapline::ParsedReport::MappedMode::kOn;
  report.peak_bytes = 1024;
  report.total.peak_bytes = 1024 + 3072;
  report.total.peak_time_ns = 1'500'000'000;
  report.samples = {{0, 1024, 1024}, {1'000'000'000, 1024, 1024}};
  report.mapped_samples = {{0, 0, 0}, {644'000'000, 2048, 2048}, {1'500'000'000, 3072, 3072}};
  const fs::path out = fs::temp_directory_path() / "heapline-plot-own-time.svg";
  const auto files = heapline::launcher::write_plot_files(report, out);
  const std::string data = read_file(files.data);
  fs::remove_all(files.directory);
  EXPECT_NE(data.find("\n0 1 1 0 1\n0.644 1 1 2 3\n1 1 1 2 3\n1.5 1 1 3 4\n"), std::string::npos) << data;
  const std::vector<heapline::Sample> whole = heapline::launcher::whole_memory(report);
  ASSERT_EQ(whole.size(), 4u);
  EXPECT_EQ(whole[1].t_ns, 644'000'000u);
  EXPECT_EQ(whole[1].live, 3072);
  EXPECT_EQ(whole[3].live, 4096);
  EXPECT_EQ(whole[3].max_live, 4096);
}

// The interval maximum is a band from the line up to it, interval by
// interval (never impulses from zero); the key is outside the data; the peak
// is marked with its value and time (its label turned left in the last
// third of the run); the peak resident set is a level named in the key, or
// named alone when more than three times the data's peak.
TEST(Plot, TheIntervalMaximumIsABandAndThePeakIsMarked) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.peak_bytes = 4096;
  report.peak_time_ns = 1'500'000'000;
  report.samples = {{0, 1024, 1024}, {1'000'000'000, 2048, 2048}, {2'000'000'000, 1024, 4096}};
  report.peak_rss_bytes = 3072;
  const auto [data, script] = plot_text(report, "heapline-plot-band.svg");
  // Block 1: [t, line, most] at both ends of each interval, in KiB.
  EXPECT_NE(data.find("\n\n\n# t_seconds low_KiB high_KiB\n0 1 2\n1 1 2\n1 2 4\n2 2 4\n"), std::string::npos) << data;
  EXPECT_EQ(script.find("impulses"), std::string::npos) << script;
  EXPECT_NE(script.find("index 1 using 1:2:3 with filledcurves"), std::string::npos) << script;
  EXPECT_NE(script.find("set key below"), std::string::npos) << script;
  EXPECT_NE(script.find("set label 'peak 4.0 KiB at 1.500 s' at 1.5, 4 right boxed point"), std::string::npos) << script;
  EXPECT_NE(script.find("3 with lines dt 3 lw 2 lc rgb '#8040a0' title 'peak resident set 3.0 KiB'"), std::string::npos)
      << script;
  // A resident set far above the heap (a small heap in a large process)
  // would flatten the line: named in the key, off the scale.
  report.peak_rss_bytes = 1 << 20;
  const std::string above = plot_text(report, "heapline-plot-band.svg").script;
  EXPECT_NE(above.find("set yrange [0:4.6"), std::string::npos) << above;
  EXPECT_NE(above.find("title 'peak resident set 1.0 MiB (above the scale)'"), std::string::npos) << above;
  // Drawn while at most three times the data's peak: at 3 x 4 KiB a level
  // on the scale, one byte more off it.
  report.peak_rss_bytes = 3 * 4096;
  const std::string within = plot_text(report, "heapline-plot-band.svg").script;
  EXPECT_NE(within.find("title 'peak resident set 12.0 KiB'"), std::string::npos) << within;
  EXPECT_EQ(within.find("above the scale"), std::string::npos) << within;
  report.peak_rss_bytes = 3 * 4096 + 1;
  EXPECT_NE(plot_text(report, "heapline-plot-band.svg").script.find("(above the scale)'"), std::string::npos);
}

// A day-long run: the peak mark is placed at the peak's time to the
// microsecond and its value to the byte, as the data file's points are
// (six significant digits would put it 23 ms off, on another sample).
TEST(Plot, InADayLongRunThePeakMarkSitsOnItsSample) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.peak_bytes = 1'234'567'891;
  report.peak_time_ns = 86'400'123'456'789;
  report.samples = {{0, 1024, 1024}, {86'400'123'456'789, 1'234'567'891, 1'234'567'891}, {86'400'200'000'000, 0, 0}};
  const std::string script = plot_text(report, "heapline-plot-day.svg").script;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(script, m, std::regex(R"(set label 'peak [^']*' at ([0-9.e+]+), ([0-9.e+]+) )"))) << script;
  EXPECT_NEAR(std::stod(m[1]), 86'400.123456789, 1e-6) << script;
  EXPECT_NEAR(std::stod(m[2]) * 1024 * 1024 * 1024, 1'234'567'891.0, 1.0) << script;  // in GiB
}

// The resident series is drawn as steps beside the heap (the data file's
// block 2, in the plot's unit), with the peak resident set as a level; above
// the scale, neither is drawn and the level is named in the key alone.
TEST(Plot, TheResidentSeriesIsDrawnBesideTheHeap) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.peak_bytes = 4096;
  report.peak_time_ns = 1'000'000'000;
  report.samples = {{0, 1024, 1024}, {1'000'000'000, 4096, 4096}, {2'000'000'000, 0, 4096}};
  report.resident_samples = {{0, 1024, 1024}, {1'000'000'000, 2048, 2048}, {2'000'000'000, 1024, 1024}};
  report.resident = heapline::ParsedReport::Resident{2048, 1'000'000'000, 1024};
  PlotText plot = plot_text(report, "heapline-plot-rss-steps.svg");
  EXPECT_NE(plot.data.find("\n\n\n# t_seconds resident_KiB\n0 1\n1 2\n2 1\n"), std::string::npos) << plot.data;
  EXPECT_NE(plot.script.find("index 2 using 1:2 with steps lw 2 lc rgb '#8040a0' title 'resident set (read at samples)'"),
            std::string::npos)
      << plot.script;
  // Without the kernel's high-water mark (a converted report), the level is
  // the series' largest reading.
  EXPECT_NE(plot.script.find("2 with lines dt 3 lw 2 lc rgb '#8040a0' title 'peak resident set 2.0 KiB'"),
            std::string::npos)
      << plot.script;
  report.resident_samples[1] = {1'000'000'000, 1 << 20, 1 << 20};
  plot = plot_text(report, "heapline-plot-rss-steps.svg");
  EXPECT_EQ(plot.script.find("index 2"), std::string::npos) << plot.script;
  EXPECT_NE(plot.script.find("title 'peak resident set 1.0 MiB (above the scale)'"), std::string::npos) << plot.script;
  // A report without the series draws none.
  report.resident_samples.clear();
  plot = plot_text(report, "heapline-plot-rss-steps.svg");
  EXPECT_EQ(plot.data.find("resident"), std::string::npos) << plot.data;
  EXPECT_EQ(plot.script.find("resident"), std::string::npos) << plot.script;
}

// A short run has one interval (its first sample and its last): one band,
// its two rows, and not the stand-in row that only an empty block needs (a
// row at 0 would pull the band down to the origin).
TEST(Plot, ARunOfOneIntervalHasItsBandAlone) {
  heapline::ParsedReport report;
  report.pid = 1;
  report.exe = "/bin/x";
  report.peak_bytes = 4096;
  report.peak_time_ns = 500'000'000;
  report.samples = {{0, 1024, 1024}, {1'000'000'000, 2048, 4096}};
  const std::string data = plot_text(report, "heapline-plot-one-interval.svg").data;
  EXPECT_NE(data.find("\n\n\n# t_seconds low_KiB high_KiB\n0 1 4\n1 1 4\n"), std::string::npos) << data;
  EXPECT_EQ(data.find("\n0 0 0\n"), std::string::npos) << data;
}

// Class A: nothing the program wrote reaches gnuplot as a command. Every
// control byte, the quote and the backslash, in a marker's name and in the
// program's file name, stays inside its string literal on its line.
TEST(Plot, NoProgramTextOwnsAPartOfTheScript) {
  using heapline::gnuplot_string;
  EXPECT_EQ(gnuplot_string("it's"), "'it'.\"'\".'s'");
  EXPECT_EQ(gnuplot_string("a\nb"), "'a\\x0ab'");
  EXPECT_EQ(gnuplot_string(std::string("\0\x7f", 2)), "'\\x00\\x7f'");
  EXPECT_EQ(gnuplot_string("`id` @m $(id) \\"), "'`id` @m $(id) \\x5c'");
  EXPECT_EQ(gnuplot_string("'lead"), "\"'\".'lead'");
  heapline::ParsedReport report;
  report.pid = 1;
  report.samples = {{0, 1, 1}};
  for (int byte = 0; byte < 0x80; ++byte) {
    const std::string odd = std::string("a") + static_cast<char>(byte) + "'b'\n" + static_cast<char>(byte);
    report.exe = "/bin/" + odd;
    report.markers = {{0, odd}, {5, "x\nsystem \"touch PWNED\"\n"}};
    report.ended = byte % 2 == 0 ? "exit" : "without-exit";
    EXPECT_EQ(heapline::test::plot_script_injection(report), "") << "byte " << byte;
    EXPECT_EQ(heapline::test::tree_plot_script_injection(report), "") << "byte " << byte;
  }
}

TEST(Plot, FormatFromExtension) {
  using heapline::launcher::plot_format_for;
  using heapline::launcher::PlotFormat;
  EXPECT_EQ(plot_format_for("a.png"), PlotFormat::kPng);
  EXPECT_EQ(plot_format_for("a.SVG"), PlotFormat::kSvg);
  EXPECT_EQ(plot_format_for("a.pdf"), PlotFormat::kUnknown);
}

// The refusal of --plot's name states exactly which names are taken
// (heapline/file_extension.h): every extension it lists is taken in the
// letter cases it says, and nothing else. Read from the message itself, so
// a message and a matcher that part ways fail here.
TEST(Plot, TheRefusalSaysExactlyWhichNamesAreTaken) {
  using heapline::launcher::plot_output_problem;
  const std::string refusal = plot_output_problem("heap.pdf");
  const std::string start = "the file name must be a name followed by ";
  ASSERT_EQ(refusal.rfind(start, 0), 0u) << refusal;
  const bool any_case = refusal.find(" (in any letter case)") != std::string::npos;
  std::vector<std::string> listed;
  for (std::size_t at = refusal.find('.'); at != std::string::npos; at = refusal.find('.', at + 1)) {
    std::size_t end = at + 1;
    while (end < refusal.size() && std::isalnum(static_cast<unsigned char>(refusal[end]))) ++end;
    listed.push_back(refusal.substr(at, end - at));
  }
  ASSERT_EQ(listed.size(), 2u) << refusal;
  for (const std::string& extension : listed) {
    std::string upper = extension, mixed = extension;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    mixed[1] = static_cast<char>(std::toupper(static_cast<unsigned char>(mixed[1])));
    EXPECT_EQ(plot_output_problem("dir/heap" + extension), "") << extension;
    for (const std::string& other_case : {upper, mixed})
      EXPECT_EQ(plot_output_problem("heap" + other_case) == "", any_case) << other_case << ": " << refusal;
    for (const std::string& not_it : {extension.substr(1), "heap" + extension + ".txt", "heap" + extension.substr(0, 3),
                                      extension, "dir" + extension + "/heap"})
      EXPECT_EQ(plot_output_problem(not_it), refusal) << not_it;
  }
}

// --- the command line -----------------------------------------------------

class Launcher : public heapline::test::TempDirTest {
 protected:
  Launcher() : TempDirTest("launcher") {}
  RunResult launch(std::vector<std::string> args, std::map<std::string, std::optional<std::string>> env = {}) {
    args.insert(args.begin(), kLauncher);
    RunOptions options;
    options.cwd = dir_;
    options.env = std::move(env);
    options.env.emplace("LD_PRELOAD", std::nullopt);
    options.env.emplace("HEAPLINE_LIB", std::nullopt);
    return run(args, options);
  }
};

const char* kSummary =
    R"(heapline: peak [0-9.]+ \w+ at [0-9.]+ s, final [0-9.]+ \w+\n)"
    R"(heapline: mapped peak [0-9.]+ \w+ at [0-9.]+ s, final [0-9.]+ \w+; )"
    R"(heap \+ mapped peak [0-9.]+ \w+ at [0-9.]+ s, final [0-9.]+ \w+\n)"
    R"(heapline: resident set peak [0-9.]+ \w+ at [0-9.]+ s, final [0-9.]+ \w+ )"
    R"(\(read at samples; the kernel's high-water mark [0-9.]+ \w+\): [^\n]+\n)"
    R"(heapline: precision \+/-[0-9.]+ \w+ \(batched: at most max\(256\.0 KiB, peak/100\) = [0-9.]+ \w+\), \d+ samples over [0-9.]+ s\n)"
    R"(heapline: report heapline\.python3\.(\d+)\.json\n)"
    // The largest sites at the peak (heap sampler), when a sample was live.
    R"((heapline: [^\n]*\n)*)";

TEST_F(Launcher, RunsTheCommandAndSummarisesItsReport) {
  RunResult r = launch({"--", kPython, "-c", "import sys; x = [bytes(1000) for _ in range(20000)]; print('out'); "
                                             "sys.stderr.write('err\\n')"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "out\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.err, m, std::regex(std::string("err\n") + kSummary))) << r.err;
  auto report = read_json(dir_ / ("heapline.python3." + std::string(m[1]) + ".json"));
  EXPECT_EQ(heapline_format_problem(report), "");
  EXPECT_GE(report["peak_bytes"].get<std::int64_t>(), 20000 * 1000);
}

// Where the report cannot go is said before the command runs, and nothing
// runs (status 2): a missing directory, a file where a directory should be,
// a FIFO for the name, and a directory the user cannot write in.
TEST_F(Launcher, AReportThatCannotBeWrittenIsRefusedBeforeTheCommandRuns) {
  const fs::path ran = dir_ / "ran";
  const std::vector<std::string> command = {"/bin/sh", "-c", "touch " + ran.string()};
  auto refused = [&](const std::string& out, const std::string& why, RunResult r) {
    EXPECT_EQ(r.exit_code, 2) << out << ": " << r.err;
    EXPECT_EQ(r.err, "heapline: --out " + out + ": " + why + "; the command was not run\n");
    EXPECT_FALSE(fs::exists(ran)) << out;
  };
  auto with_out = [&](const std::string& out) {
    std::vector<std::string> args = {"--out", out};
    args.insert(args.end(), command.begin(), command.end());
    return launch(args);
  };
  const std::string missing = (dir_ / "missing" / "r.json").string();
  refused(missing, (dir_ / "missing").string() + ": No such file or directory", with_out(missing));
  std::ofstream(dir_ / "file") << "x";
  const std::string under_file = (dir_ / "file" / "r.json").string();
  refused(under_file, (dir_ / "file").string() + " is not a directory", with_out(under_file));
  ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  refused((dir_ / "fifo").string(), (dir_ / "fifo").string() + " is a FIFO, not a regular file",
          with_out((dir_ / "fifo").string()));
  refused("/dev/null", "/dev/null is a character device, not a regular file", with_out("/dev/null"));
  // A path the system takes but the library does not (it takes report
  // names of under 4032 bytes): the command ran with the library's default
  // name, and the launcher said the library wrote none.
  fs::path deep = dir_;
  while (deep.string().size() + 201 < 3900) deep /= std::string(200, 'd');
  deep /= std::string(3900 - deep.string().size() - 1, 'd');
  fs::create_directories(deep);
  const std::string long_out = (deep / (std::string(4040 - deep.string().size() - 6, 'r') + ".json")).string();
  ASSERT_EQ(long_out.size(), 4040u);
  refused(long_out,
          "the library does not take it for its report (off, or a path template whose only % sequences are %p, %e "
          "and %%, expanding to under 4032 bytes, every character one a terminal shows as it is)",
          with_out(long_out));
  EXPECT_TRUE(files_matching(dir_, R"(heapline\..*\.json)").empty());
  // A directory this user cannot write in: as nobody, in root's directory.
  if (geteuid() != 0 || !fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "needs root and setpriv to be another user";
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::create_directory(dir_ / "theirs");
  const std::string theirs = (dir_ / "theirs" / "r.json").string();
  std::vector<std::string> as_nobody = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                        kLauncher, "--out", theirs};
  as_nobody.insert(as_nobody.end(), command.begin(), command.end());
  RunOptions options;
  options.cwd = "/";
  options.env = {{"LD_PRELOAD", std::nullopt}, {"HEAPLINE_LIB", std::nullopt}};
  refused(theirs, "cannot write in " + (dir_ / "theirs").string() + " (Permission denied)", run(as_nobody, options));
}

// When heapline itself cannot start the command (no process left to fork
// under the user's process limit), it says so and exits 125, as env and
// timeout do: never a status the command could have given.
TEST_F(Launcher, AForkThatFailsIs125AndSaysSo) {
  if (geteuid() != 0 || !fs::exists("/usr/bin/setpriv") || !fs::exists("/usr/bin/prlimit"))
    GTEST_SKIP() << "needs root, setpriv and prlimit to run as a user at its process limit";
  const fs::path ran = dir_ / "ran";
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  RunOptions options;
  options.cwd = "/";
  // Under tools/test.sh --sanitize, LeakSanitizer checks at exit from a
  // thread of its own, which the process limit refuses it; it then exits 1.
  const char* asan = std::getenv("ASAN_OPTIONS");
  options.env = {{"LD_PRELOAD", std::nullopt},
                 {"HEAPLINE_LIB", std::nullopt},
                 {"ASAN_OPTIONS", std::string(asan != nullptr ? asan : "") + ":detect_leaks=0"}};
  RunResult r = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/prlimit",
                     "--nproc=1", kLauncher, "--out", "/dev/null/r.json", "/bin/true"},
                    options);
  // (--out is refused first: the check runs before the fork.)
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/prlimit", "--nproc=1",
           kLauncher, "--out", "/tmp/heapline-fork-test-%p.json", "/bin/sh", "-c", "touch " + ran.string()},
          options);
  EXPECT_EQ(r.exit_code, 125) << r.err;
  EXPECT_NE(r.err.find("heapline: cannot start the command (fork): Resource temporarily unavailable"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(ran));
}

TEST_F(Launcher, PassesTheExitStatusThrough) {
  EXPECT_EQ(launch({"-q", kPython, "-c", "import sys; sys.exit(3)"}).exit_code, 3);
  EXPECT_EQ(launch({"-q", "/bin/sh", "-c", "kill -9 $$"}).exit_code, 128 + 9);
  RunResult missing = launch({"/nonexistent/command"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("cannot run /nonexistent/command"), std::string::npos) << missing.err;
}

// -q runs the command and writes its report, and the launcher says
// nothing of it: the command's own output alone.
// A launcher whose output's reader has gone (`2>&1 | head -1`, a log
// collector that restarted) is not ended by its first line: it runs the
// command to its end and passes its status through, where SIGPIPE killed it
// and its keeper then stopped the command's tree (status 141, the command's
// work undone). The command itself runs with SIGPIPE and SIGXFSZ at their
// default, as it would on its own (heapline/write_signals.h).
TEST_F(Launcher, AReaderOfItsOutputThatHasGoneNeverEndsTheRun) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  close(out[0]);  // no reader: every write fails
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    if (chdir(dir_.c_str()) != 0) _exit(90);
    unsetenv("LD_PRELOAD");
    unsetenv("HEAPLINE_LIB");
    // HEAPLINE_OUT: the launcher says at the start that the variable is
    // left to it, while the command runs; the summary comes at the end.
    setenv("HEAPLINE_OUT", "ignored.json", 1);
    execl(kLauncher.c_str(), kLauncher.c_str(), "--", "/bin/sh", "-c",
          "sleep 0.5; grep '^SigIgn:' /proc/self/status > ignored; echo finished > done; exit 5",
          static_cast<char*>(nullptr));
    _exit(91);
  }
  close(out[1]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 5);
  std::ifstream done(dir_ / "done");
  std::string line;
  EXPECT_TRUE(std::getline(done, line)) << "the command did not run to its end";
  EXPECT_EQ(line, "finished");
  std::ifstream ignored_file(dir_ / "ignored");
  std::string ignored;
  ASSERT_TRUE(std::getline(ignored_file, ignored));
  const unsigned long long mask = std::stoull(ignored.substr(ignored.find('\t') + 1), nullptr, 16);
  EXPECT_EQ(mask & (1ULL << (SIGPIPE - 1)), 0u) << ignored;
  EXPECT_EQ(mask & (1ULL << (SIGXFSZ - 1)), 0u) << ignored;
}

TEST_F(Launcher, TheQuietRunPrintsNoSummary) {
  RunResult quiet = launch({"-q", "--out", "q.json", kPython, "-c", "import sys; sys.stderr.write('own\\n')"},
                           {{"HEAPLINE_LIB", HEAPLINE_LIB}});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "own\n");
  EXPECT_TRUE(fs::exists(dir_ / "q.json"));
  RunResult loud = launch({"--out", "l.json", kPython, "-c", "pass"}, {{"HEAPLINE_LIB", HEAPLINE_LIB}});
  EXPECT_NE(loud.err.find("heapline: report l.json"), std::string::npos) << loud.err;
}

TEST_F(Launcher, NamesTheReportAndChildrenInsertTheirPid) {
  RunResult r = launch({"--out", "run.%e.json", kPython, "-c",
                        "import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'])"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "run.python3.json")) << r.err;
  auto children = files_matching(dir_, R"(run\.python3\.\d+\.json)");
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(heapline_format_problem(read_json(children[0])), "");
  EXPECT_NE(r.err.find("heapline: report run.python3.json"), std::string::npos);
}

TEST_F(Launcher, PerProcessSummaries) {
  RunResult r = launch({"--verbose", "-q", kPython, "-c", "pass"});
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(^heapline: pid \d+ \(python3[.\d]*\): peak .* samples, report heapline\.python3\.\d+\.json\n$)")))
      << r.err;
}

// The repro of class A, end to end: a program whose file name holds a
// newline and a gnuplot command; --plot draws it and runs nothing.
TEST_F(Launcher, AProgramsFileNameRunsNothingInGnuplot) {
  const fs::path odd = dir_ / "x\nsystem \"touch PWNED\"\n";
  fs::copy_file(ALLOC_PATTERNS, odd);
  fs::permissions(odd, fs::perms::owner_all);
  RunResult r = launch({"--plot", "p.svg", "--", odd.string(), "single", "chunk", "10", "0"},
                       {{"HEAPLINE_LIB", HEAPLINE_LIB}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "p.svg")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "PWNED")) << r.err;
  // The report's default name takes the program's name as a file name:
  // each character a terminal does not show as itself is '_', in the
  // library's name and in the launcher's, which found it.
  std::vector<std::string> reports;
  for (const auto& entry : fs::directory_iterator(dir_))
    if (entry.path().extension() == ".json") reports.push_back(entry.path().filename().string());
  ASSERT_EQ(reports.size(), 1u) << r.err;
  EXPECT_TRUE(std::regex_match(reports[0], std::regex(R"(heapline\.x_system "touch PWNED"_\.\d+\.json)"))) << reports[0];
  EXPECT_NE(r.err.find("report " + reports[0]), std::string::npos) << r.err;
  // A plot's own name with a newline could not be named in the script as
  // it is: refused before the command runs, by the rule of every output.
  RunResult odd_plot = launch({"--plot", "a\nb.svg", "/bin/true"});
  EXPECT_EQ(odd_plot.exit_code, 2);
  EXPECT_NE(odd_plot.err.find("heapline: --plot a\\x0ab.svg: the name holds a control character (\\x0a)"),
            std::string::npos)
      << odd_plot.err;
  // The same rule for --out and --plot: a right-to-left override and a
  // byte that is not UTF-8 are refused by both, said as what they are.
  for (const std::string option : {"--out", "--plot"}) {
    const std::string extension = option == "--out" ? ".json" : ".svg";
    RunResult bidi = launch({option, "\xe2\x80\xae" + std::string("gvs") + extension, "/bin/true"});
    EXPECT_EQ(bidi.exit_code, 2) << option;
    EXPECT_NE(bidi.err.find("the name holds a character that reorders or breaks the line (\\xe2\\x80\\xae)"),
              std::string::npos)
        << bidi.err;
    RunResult byte = launch({option, "bad\xff" + extension, "/bin/true"});
    EXPECT_EQ(byte.exit_code, 2) << option;
    EXPECT_NE(byte.err.find("the name holds a byte that is not UTF-8 (\\xff)"), std::string::npos) << byte.err;
  }
}

TEST_F(Launcher, PlotsPngAndSvg) {
  std::string program = "import time\nx = []\nfor i in range(20):\n    x.append(bytes(200000)); time.sleep(0.002)\n";
  RunResult png = launch({"--plot", "heap.png", kPython, "-c", program});
  EXPECT_EQ(png.exit_code, 0) << png.err;
  ASSERT_TRUE(fs::exists(dir_ / "heap.png")) << png.err;
  EXPECT_GT(fs::file_size(dir_ / "heap.png"), 1000u);
  EXPECT_EQ(read_file(dir_ / "heap.png").substr(1, 3), "PNG");
  EXPECT_NE(png.err.find("heapline: plot heap.png"), std::string::npos);

  RunResult svg = launch({"--plot", "heap.svg", kPython, "-c", program});
  EXPECT_EQ(svg.exit_code, 0) << svg.err;
  ASSERT_TRUE(fs::exists(dir_ / "heap.svg"));
  EXPECT_NE(read_file(dir_ / "heap.svg").find("<svg"), std::string::npos);
}

TEST_F(Launcher, MissingGnuplotIsReportedAndTheStatusIsTheCommands) {
  RunResult r = launch({"--plot", "heap.png", kPython, "-c", "import sys; sys.exit(4)"}, {{"PATH", "/nonexistent"}});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("heapline: gnuplot not found on PATH; no plot written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "heap.png"));
}

TEST_F(Launcher, UsageErrorsExitWithTwo) {
  for (std::vector<std::string> args : {std::vector<std::string>{}, {"--"}, {"--bogus", "--", "/bin/true"},
                                        {"--plot", "heap.pdf", "/bin/true"}, {"--out"}}) {
    RunResult r = launch(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("heapline:"), std::string::npos);
  }
  // Without a command, the one line says how to give one.
  EXPECT_NE(launch({}).err.find("heapline [OPTIONS] -- COMMAND [ARGS...]"), std::string::npos);
}

TEST_F(Launcher, FindsTheLibraryFromOptionEnvironmentOrItsOwnDirectory) {
  RunResult missing = launch({"--lib", "/nonexistent/libheapline.so", "/bin/true"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("cannot find libheapline.so"), std::string::npos) << missing.err;
  RunResult from_env = launch({"-q", "/bin/true"}, {{"HEAPLINE_LIB", "/nonexistent/lib.so"}});
  EXPECT_EQ(from_env.exit_code, 2);
  RunResult explicit_lib = launch({"-q", "--lib", HEAPLINE_LIB, "--out", "x.json", "/bin/true"});
  EXPECT_EQ(explicit_lib.exit_code, 0) << explicit_lib.err;
  EXPECT_TRUE(fs::exists(dir_ / "x.json"));
}

// A --lib that is no shared library for this machine is one line naming
// what it is, status 2, and the command does not run: a program (an ELF
// file that is not a shared library: it was taken, and the loader refused
// it in every process), a library for another processor, a text file.
TEST_F(Launcher, ALibThatIsNoSharedLibraryIsSaidAsWhatItIs) {
  const fs::path text = dir_ / "text.so";
  std::ofstream(text) << "not a library\n";
  // An ELF header of a shared library for another processor than this one.
  const fs::path other = dir_ / "other.so";
  {
    unsigned char header[64] = {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little-endian */, 1};
    header[16] = 3;  // ET_DYN
#if defined(__aarch64__)
    header[18] = 62;  // EM_X86_64
#else
    header[18] = 183;  // EM_AARCH64
#endif
    std::ofstream(other, std::ios::binary).write(reinterpret_cast<const char*>(header), sizeof header);
  }
  const fs::path ran = dir_ / "ran";
  for (const auto& [lib, what] : {std::pair<std::string, std::string>{STATIC_PROGRAM, "an ELF file but not a shared library"},
                                  {other.string(), "a 64-bit ELF file for another machine"},
                                  {text.string(), "not a 64-bit ELF file"}}) {
    SCOPED_TRACE(lib);
    RunResult r = launch({"--lib", lib, "--", "/bin/sh", "-c", "touch " + ran.string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "heapline: " + lib + " is " + what + ", not libheapline.so\n");
    EXPECT_FALSE(fs::exists(ran));
  }
}

TEST_F(Launcher, TheCommandsOwnFlagsAreNotParsed) {
  RunResult r = launch({"-q", ALLOC_PATTERNS, "single", "chunk", "10", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(r.out, std::regex("spike=\\d+ leak=0\n"))) << r.out;
  RunResult help = launch({"-q", "--", "/bin/echo", "--help", "-x"});
  EXPECT_EQ(help.out, "--help -x\n");
}

// `heapline --help` (or -h) is heapline's own help, naming every
// subcommand; `heapline run --help` is the run's, with its options.
TEST_F(Launcher, HelpIsHeaplinesOwnAndRunHasItsOwn) {
  for (const char* flag : {"--help", "-h"}) {
    RunResult help = launch({flag});
    EXPECT_EQ(help.exit_code, 0) << help.err;
    for (const char* subcommand : {"run", "convert", "top", "clean", "profile"}) {
      EXPECT_TRUE(std::regex_search(help.out, std::regex(std::string("\n  ") + subcommand + " ")))
          << flag << ": " << subcommand << "\n" << help.out;
    }
  }
  RunResult run_help = launch({"run", "--help"});
  EXPECT_EQ(run_help.exit_code, 0) << run_help.err;
  EXPECT_NE(run_help.out.find("--plot"), std::string::npos) << run_help.out;
  EXPECT_EQ(run_help.out.find("\n  convert "), std::string::npos) << run_help.out;
}

// --help-all prints heapline's help with every subcommand's options,
// wherever it is given: after a subcommand too (CLI11 alone printed that
// subcommand's help).
TEST_F(Launcher, HelpAllPrintsEverySubcommandsOptionsFromAnywhere) {
  for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
           {"--help-all"}, {"run", "--help-all"}, {"top", "--help-all"}, {"profile", "--help-all"}}) {
    RunResult help = launch(words);
    EXPECT_EQ(help.exit_code, 0) << words.front() << ": " << help.err;
    // run's --plot and top's --interval: the first subcommand and another.
    EXPECT_NE(help.out.find("--plot"), std::string::npos) << words.front() << "\n" << help.out;
    EXPECT_NE(help.out.find("--interval"), std::string::npos) << words.front() << "\n" << help.out;
    EXPECT_NE(help.out.find("heapline: run a command"), std::string::npos) << words.front() << "\n" << help.out;
  }
}

}  // namespace

// The command found for the checks before it runs is the one that runs: the
// same search as execvp's, PATH's directories in order and, PATH unset,
// glibc's default /bin:/usr/bin (the checks once searched /usr/local/bin
// first, which the run never did).
TEST(CommandSearch, WhatIsCheckedIsWhatRuns) {
  const char* path = std::getenv("PATH");
  const std::string saved = path != nullptr ? path : "";
  ::unsetenv("PATH");
  EXPECT_EQ(heapline::launcher::resolve_on_path("sh"), "/bin/sh");
  EXPECT_EQ(heapline::launcher::resolve_on_path("no-such-program-anywhere"), "");
  ::setenv("PATH", "/usr/bin:/bin", 1);
  EXPECT_EQ(heapline::launcher::resolve_on_path("sh"), "/usr/bin/sh");
  ::setenv("PATH", "/nonexistent::/bin", 1);  // an empty entry is the current directory
  EXPECT_EQ(heapline::launcher::resolve_on_path("sh"), "/bin/sh");
  EXPECT_EQ(heapline::launcher::resolve_on_path("./sh"), "./sh") << "a name with a slash is itself";
  ::setenv("PATH", saved.c_str(), 1);
}
