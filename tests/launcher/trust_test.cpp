// The launcher facing what it finds on disk: report paths that are not
// regular files, live files that are corrupt or crafted, reports left by an
// earlier run.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <signal.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include <heapline/live_format.h>

#include "output_naming.h"
#include "process_runner.h"
#include "live_view.h"
#include "report_summary.h"
#include <heapline/report_reader.h>
#include <heapline/terminal_text.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using heapline::test::read_file;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;

namespace {

const std::string kLauncher = HEAPLINE_LAUNCHER;
const std::string kLib = HEAPLINE_LIB;
const std::string kProbe = PHASE_PROBE;
const std::string kStatic = STATIC_PROGRAM;

class Trust : public heapline::test::TempDirTest {
 protected:
  Trust() : TempDirTest("trust") {}
  // The launcher (or, with `preload`, any command under the library).
  RunResult launch(std::vector<std::string> args, bool preload = false, const std::string& out = "") {
    if (!preload) args.insert(args.begin(), kLauncher);
    RunOptions options;
    options.cwd = dir_;
    options.env = {{"LD_PRELOAD", preload ? std::optional<std::string>(kLib) : std::nullopt},
                   {"HEAPLINE_OUT", out.empty() ? std::nullopt : std::optional<std::string>((dir_ / out).string())},
                   {"HEAPLINE_ROOT_PID", std::nullopt},
                   {"HEAPLINE_LIB", kLib}};
    return run(args, options);
  }
  // A live file left by an aborted process: NAME.live.
  fs::path aborted_live_file(const std::string& name) {
    RunResult aborted = launch({kProbe, "abort", "30"}, true, name);
    EXPECT_EQ(aborted.signal, SIGABRT);
    fs::path live = dir_ / (name + ".live");
    EXPECT_TRUE(fs::exists(live));
    return live;
  }
};

TEST_F(Trust, ConvertNeverReplacesWhatIsNotARegularFile) {
  const fs::path live = aborted_live_file("a.json");
  const fs::path fifo = dir_ / "out.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  RunResult r = launch({"convert", live.string(), "-o", fifo.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(r.err, "heapline convert: -o " + fifo.string() + ": " + fifo.string() + " is a FIFO, not a regular file\n");
}

// convert's default output (the live file's name without .live) that holds
// another process's report, or a file that is no report, is kept: refused,
// status 2 (live files moved or copied between directories replaced a
// report of another program without a word). The process's own report is
// replaced, and -o names a file to replace on purpose.
TEST_F(Trust, ConvertNeverReplacesAnotherProcesssReportByDefault) {
  const fs::path live = aborted_live_file("a.json");
  const fs::path report = dir_ / "a.json";
  ASSERT_EQ(launch({"convert", live.string(), "-o", (dir_ / "own.json").string()}).exit_code, 0);
  const std::string own = read_file(dir_ / "own.json");
  nlohmann::json other = nlohmann::json::parse(own);
  const int pid = other["pid"].get<int>();
  other["pid"] = pid + 1;
  other["exe"] = "/bin/other";
  nlohmann::json earlier = nlohmann::json::parse(own);
  earlier["start_unix_ns"] = earlier["start_unix_ns"].get<std::uint64_t>() - 1000000000;
  for (const auto& [kept, said] :
       std::vector<std::pair<std::string, std::string>>{
           {other.dump(), report.string() + " holds the report of process " + std::to_string(pid + 1) + " (other)"},
           {earlier.dump(), report.string() + " holds the report of an earlier process " + std::to_string(pid)},
           {"hello", report.string() + " exists and is not a report of process " + std::to_string(pid)}}) {
    std::ofstream(report) << kept;
    RunResult r = launch({"convert", live.string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("heapline convert: " + said, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(": give another name with -o\n"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(report), kept);
    EXPECT_TRUE(fs::exists(live));
  }
  std::ofstream(report) << own;
  EXPECT_EQ(launch({"convert", live.string()}).exit_code, 0);
  std::ofstream(report) << "hello";
  EXPECT_EQ(launch({"convert", live.string(), "-o", report.string()}).exit_code, 0);
  EXPECT_NE(read_file(report), "hello");
}

// A live file cut short (a copy that stopped) is refused with what its
// header says it holds: never read as the older, shorter layout, which
// dropped its mapped and resident series without a word, or called "not a
// live file of this version". Every cut from the end of the header to one
// byte short of the profile's end.
TEST_F(Trust, ACutLiveFileIsRefusedNeverReadAsAnOlderLayout) {
  const std::string original = read_file(aborted_live_file("a.json"));
  ASSERT_EQ(original.size(), sizeof(heapline::LiveRegion));
  // (Past the profile, the resident series is read when the file is that
  // long, as live_format.h says: those cuts convert without it.)
  for (const std::size_t size : {sizeof(heapline::LiveHeader), std::size_t{65536}, heapline::kLiveRegionV1Bytes - 1,
                                 heapline::kLiveRegionV1Bytes, heapline::kLiveRegionWithoutProfileBytes,
                                 std::size_t{200000}, heapline::kLiveRegionWithoutResidentBytes - 1}) {
    const fs::path cut = dir_ / ("cut" + std::to_string(size) + ".live");
    std::ofstream(cut, std::ios::binary) << original.substr(0, size);
    RunResult r = launch({"convert", cut.string(), "-o", (dir_ / "cut.json").string()});
    EXPECT_EQ(r.exit_code, 1) << size << ": " << r.err;
    EXPECT_NE(r.err.find(cut.string() + " is cut: " + std::to_string(size) + " of the " +
                         std::to_string(heapline::kLiveRegionWithoutResidentBytes) + " bytes its header says it holds"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "cut.json")) << size;
  }
}

// Random corruption anywhere in a real live file: convert writes a valid
// report or refuses with a message; it never dies of a signal.
TEST_F(Trust, ConvertSurvivesRandomlyCorruptedLiveFiles) {
  const std::string original = read_file(aborted_live_file("a.json"));
  ASSERT_EQ(original.size(), sizeof(heapline::LiveRegion));
  std::mt19937_64 random(12);  // fixed seed: the same files every run
  // Where corruption hurts most: the identity, the figures, the marker
  // count, the timeline's counters; then anywhere. (Samples out of time
  // order are salvaged, not refused: a writer leaves them.)
  const std::size_t hot[] = {offsetof(heapline::LiveHeader, magic), offsetof(heapline::LiveHeader, seq),
                             offsetof(heapline::LiveHeader, markers_claimed), offsetof(heapline::LiveRegion, timeline),
                             offsetof(heapline::LiveHeader, resident_live),
                             offsetof(heapline::LiveRegion, resident_timeline)};
  int refused = 0;
  for (int round = 0; round < 60; ++round) {
    std::string bytes = original;
    const int flips = 1 + static_cast<int>(random() % 8);
    for (int i = 0; i < flips; ++i) {
      std::size_t at = round % 2 == 0 ? hot[random() % std::size(hot)] + random() % 64 : random() % bytes.size();
      bytes[at] = static_cast<char>(random());
    }
    const fs::path file = dir_ / ("corrupt" + std::to_string(round) + ".live");
    std::ofstream(file, std::ios::binary) << bytes;
    const fs::path out = dir_ / ("corrupt" + std::to_string(round) + ".json");
    RunResult r = launch({"convert", file.string(), "-o", out.string()});
    ASSERT_EQ(r.signal, 0) << "round " << round << ": " << r.err;
    if (r.exit_code == 0) {
      EXPECT_EQ(heapline::test::heapline_format_problem(heapline::test::read_json(out)), "") << "round " << round;
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_NE(r.err.find("heapline convert: "), std::string::npos) << r.err;
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);  // some corruptions are detected, not papered over
}

// A file may hold any 64 bits where a byte figure is, and the reader adds
// figures together (heap + mapped): each is taken within ±2^60 bytes, so no
// sum overflows and the converted report holds nothing past that. (The
// heap and mapped figures at INT64_MAX once made `f.live + f.mapped_live`
// overflow, found by libFuzzer under UBSan.)
TEST_F(Trust, ConvertBoundsTheFiguresItAddsTogether) {
  std::string bytes = read_file(aborted_live_file("a.json"));
  auto* region = reinterpret_cast<heapline::LiveRegion*>(bytes.data());
  heapline::LiveHeader& h = region->header;
  ASSERT_EQ(h.mapped_mode, heapline::kMappedOn);
  for (std::atomic<std::int64_t>* figure : {&h.live, &h.peak, &h.mapped_live, &h.mapped_peak, &h.total_peak,
                                            &h.publish_live, &h.open_max, &h.mapped_change_live, &h.mapped_open_max,
                                            &h.resident_live, &h.resident_peak}) {
    figure->store(INT64_MAX);
  }
  h.mapped_change_mono_ns.store(h.start_mono_ns + 1);
  for (heapline::TimelineStorage* series : {&region->timeline, &region->mapped_timeline, &region->resident_timeline}) {
    for (std::uint64_t i = 0; i < series->count.load() && i < heapline::kTimelineCapacity; ++i) {
      series->samples[i].live = series->samples[i].max_live = INT64_MAX;
    }
  }
  const fs::path file = dir_ / "huge.live";
  std::ofstream(file, std::ios::binary) << bytes;
  RunResult r = launch({"convert", file.string(), "-o", (dir_ / "huge.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json report = heapline::test::read_json(dir_ / "huge.json");
  const std::int64_t limit = std::int64_t{1} << 61;  // a sum of two bounded figures
  for (const char* pointer : {"/peak_bytes", "/final_bytes", "/mapped/peak_bytes", "/mapped/final_bytes",
                              "/total/peak_bytes", "/total/final_bytes"}) {
    const std::int64_t value = report[nlohmann::json::json_pointer(pointer)].get<std::int64_t>();
    EXPECT_GT(value, 0) << pointer;
    EXPECT_LE(value, limit) << pointer;
  }
  for (const char* series : {"samples", "mapped_samples", "resident_samples"}) {
    for (const auto& sample : report[series]) EXPECT_LE(sample[2].get<std::int64_t>(), limit) << series;
  }
  EXPECT_EQ(heapline::test::heapline_format_problem(report), "");
}

TEST_F(Trust, ConvertRefusesAnImpossibleMergeInProgress) {
  std::string bytes = read_file(aborted_live_file("a.json"));
  auto* timeline = reinterpret_cast<heapline::TimelineStorage*>(bytes.data() + offsetof(heapline::LiveRegion, timeline));
  timeline->merge_seq.store(1);
  timeline->merge_from.store(~0ull / 2);
  timeline->merge_done.store(~0ull / 2 + 12345);
  const fs::path file = dir_ / "merge.live";
  std::ofstream(file, std::ios::binary) << bytes;
  RunResult r = launch({"convert", file.string(), "-o", (dir_ / "merge.json").string()});
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is corrupt"), std::string::npos) << r.err;
}

// --- class D: nothing in a file is lost for being out of order or half made

// Markers placed concurrently append samples that go back in time: convert
// keeps the rest of the killed process's line (and the dropped samples'
// maxima), and says what it dropped, instead of refusing the whole file.
TEST_F(Trust, ConvertSalvagesSamplesThatGoBackInTime) {
  std::string bytes = read_file(aborted_live_file("a.json"));
  auto* region = reinterpret_cast<heapline::LiveRegion*>(bytes.data());
  // At least three samples in both series, whatever the scheduler let the
  // probe do before its abort: the first one's copies, 1 ms apart.
  for (heapline::TimelineStorage* series : {&region->timeline, &region->mapped_timeline}) {
    ASSERT_GE(series->count.load(), 1u);
    for (std::uint64_t i = series->count.load(); i < 3; ++i) {
      series->samples[i] = series->samples[i - 1];
      series->samples[i].t_ns += 1'000'000;
    }
    series->count.store(std::max<std::uint64_t>(series->count.load(), 3));
  }
  heapline::TimelineStorage* timeline = &region->timeline;
  timeline->samples[2].t_ns = timeline->samples[1].t_ns - 1;
  timeline->samples[2].max_live = 7'777'777;
  const fs::path file = dir_ / "back.live";
  std::ofstream(file, std::ios::binary) << bytes;
  RunResult r = launch({"convert", file.string(), "-o", (dir_ / "back.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(heapline convert: dropped 1 sample of pid \d+ that went back in time)")))
      << r.err;
  const heapline::ReportReading reading = heapline::read_report_file((dir_ / "back.json").string());
  ASSERT_TRUE(reading) << reading.error;
  EXPECT_EQ(reading.report->peak_bytes, 7'777'777);
  for (std::size_t i = 1; i < reading.report->samples.size(); ++i) {
    EXPECT_GE(reading.report->samples[i].t_ns, reading.report->samples[i - 1].t_ns);
  }
}

// A live file with heapline's identity that no reader takes (cut short by
// a copy, damaged): kept, with one line saying what is wrong, never passed
// over in silence. A file whose first bytes are not heapline's is another
// program's: not a word.
TEST_F(Trust, CleanSaysWhyItKeepsADamagedLiveFile) {
  std::uint64_t magic = heapline::kLiveMagic;
  std::string cut(reinterpret_cast<const char*>(&magic), sizeof magic);
  cut.resize(8192, '\0');
  std::ofstream(dir_ / "cut.json.live", std::ios::binary) << cut;
  std::ofstream(dir_ / "other.json.live", std::ios::binary) << "XEAPLIV1" << std::string(8184, '\0');
  const auto old = fs::file_time_type::clock::now() - std::chrono::minutes(5);
  fs::last_write_time(dir_ / "cut.json.live", old);
  fs::last_write_time(dir_ / "other.json.live", old);
  RunResult r = launch({"clean", dir_.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "cut.json.live"));
  EXPECT_TRUE(fs::exists(dir_ / "other.json.live"));
  EXPECT_NE(r.err.find("heapline clean: kept " + (dir_ / "cut.json.live").string() + " is cut inside its header: 8192 of "
                       "its "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("other.json.live"), std::string::npos) << r.err;
}

// A live file whose process was killed while creating it (no identity) no
// longer holds its name for ever: clean removes it once it is old and
// nobody has it open, and leaves a young one alone.
TEST_F(Trust, CleanRemovesAHalfCreatedLiveFileWhoseCreatorIsGone) {
  std::ofstream(dir_ / "empty.json.live").flush();
  std::ofstream(dir_ / "zeros.json.live") << std::string(4096, '\0');
  std::ofstream(dir_ / "young.json.live").flush();
  std::ofstream(dir_ / "twelve.json.live").flush();
  std::ofstream(dir_ / "eight.json.live").flush();
  const auto now = fs::file_time_type::clock::now();
  const auto old = now - std::chrono::minutes(5);
  fs::last_write_time(dir_ / "empty.json.live", old);
  fs::last_write_time(dir_ / "zeros.json.live", old);
  // Either side of the 10 s the docs state.
  fs::last_write_time(dir_ / "twelve.json.live", now - std::chrono::seconds(12));
  fs::last_write_time(dir_ / "eight.json.live", now - std::chrono::seconds(8));
  RunResult r = launch({"clean", dir_.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "empty.json.live")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "zeros.json.live")) << r.err;
  // What was seen, never a cause it cannot know ("its process was killed").
  // (5 minutes old, give or take the second the test takes.)
  const std::regex empty_removed("removed " + (dir_ / "empty.json.live").string() +
                                 R"( \(no identity: empty, last written 30[0-9] s ago, no process has it open or mapped\))");
  EXPECT_TRUE(std::regex_search(r.err, empty_removed)) << r.err;
  const std::regex zeros_removed("removed " + (dir_ / "zeros.json.live").string() +
                                 R"( \(no identity: its header never written, last written 30[0-9] s ago, no process )"
                                 R"(has it open or mapped\))");
  EXPECT_TRUE(std::regex_search(r.err, zeros_removed)) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "young.json.live"));
  EXPECT_NE(r.err.find("kept " + (dir_ / "young.json.live").string() + ": no identity (empty, last written 0 s ago, "
                       "no process has it open or mapped; removed once 10 s old and no process has it open or "
                       "mapped)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "twelve.json.live")) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "eight.json.live")) << r.err;
  // An old one that a process holds open: kept, and that is what is said.
  const std::string held = (dir_ / "held.json.live").string();
  std::ofstream(held).flush();
  fs::last_write_time(held, old);
  {
    std::ifstream open_in_this_process(held);
    RunResult kept = launch({"clean", dir_.string()});
    EXPECT_TRUE(fs::exists(held));
    EXPECT_TRUE(std::regex_search(kept.err, std::regex("kept " + held + R"(: no identity \(empty, last written 30[0-9] s )"
                                                                     R"(ago, open or mapped by a process; removed once)")))
        << kept.err;
    for (const std::string& guess : {"killed", "half-created", "being created"})
      EXPECT_EQ(kept.err.find(guess) == std::string::npos && r.err.find(guess) == std::string::npos, true) << guess;
  }
}

// --- class E: every message true, every bad value refused ------------------

// top's heap + mapped peak is never shown below the heap's peak, nor below
// what heap + mapped hold now, even when the figures of the latest sample lag.
TEST_F(Trust, TheHeapAndMappedPeakIsNeverBelowTheHeapPeakOrTheCurrentTotal) {
  std::string bytes = read_file(aborted_live_file("a.json"));
  auto* header = reinterpret_cast<heapline::LiveHeader*>(bytes.data());
  ASSERT_EQ(header->mapped_mode, heapline::kMappedOn);
  header->total_peak.store(1);
  header->mapped_live.store(5'000'000);
  const fs::path file = dir_ / "lagging.live";
  std::ofstream(file, std::ios::binary) << bytes;
  const heapline::launcher::LiveFile live(file);
  const heapline::launcher::LiveSnapshot snapshot = heapline::launcher::take_snapshot(live, false);
  EXPECT_GE(snapshot.figures.total_peak, snapshot.figures.peak);
  EXPECT_GE(snapshot.figures.total_peak, snapshot.figures.live + 5'000'000);
  const std::string screen = heapline::launcher::render_top(snapshot, false);
  EXPECT_NE(screen.find("heap + mapped " + heapline::launcher::human_bytes(snapshot.figures.live + 5'000'000) +
                        "   peak " + heapline::launcher::human_bytes(snapshot.figures.live + 5'000'000)),
            std::string::npos)
      << screen;
}

TEST_F(Trust, BadValuesAreRefused) {
  for (const char* interval : {"nan", "0", "-1", "inf", "1e9", "x"}) {
    RunResult r = launch({"top", "1", "--interval", interval});
    EXPECT_EQ(r.exit_code, 2) << interval << ": " << r.err;
    EXPECT_NE(r.err.find("--interval: must be a number from 0.05 to 3600, got '" + std::string(interval) + "'"),
              std::string::npos)
        << r.err;
  }
  const fs::path live = aborted_live_file("a.json");
  RunResult signal = launch({"convert", live.string(), "--signal", "999"});
  EXPECT_EQ(signal.exit_code, 2) << signal.err;
  const std::string before = read_file(live);
  RunResult itself = launch({"convert", live.string(), "-o", live.string()});
  EXPECT_EQ(itself.exit_code, 2) << itself.err;
  EXPECT_NE(itself.err.find("is the live file itself"), std::string::npos) << itself.err;
  EXPECT_EQ(read_file(live), before);
}

// Each limit the launcher's options state is taken, and one past it is
// refused with status 2 before anything runs: top's --interval (0.05 to
// 3600 s) and PID (1 to 2^22, the kernel's largest), convert's --signal (1
// to SIGRTMAX, 64), profile's --sites (1 to 100000).
TEST_F(Trust, EveryOptionTakesItsLimitsAndRefusesOnePastThem) {
  auto refused = [&](std::vector<std::string> args) {
    const RunResult r = launch(args);
    EXPECT_EQ(r.exit_code, 2) << args.front() << " " << args.back() << ": " << r.err;
  };
  auto taken = [&](std::vector<std::string> args) {
    const RunResult r = launch(args);
    EXPECT_NE(r.exit_code, 2) << args.front() << " " << args.back() << ": " << r.err;
    return r;
  };
  // No process 4194304 (2^22: pids are below pid_max, which is at most
  // that): top says so (status 1), past the command line.
  const std::string absent = "4194304";
  for (const char* seconds : {"0.05", "3600"}) taken({"top", absent, "--once", "--interval", seconds});
  for (const char* seconds : {"0.0499", "3600.001"}) refused({"top", absent, "--once", "--interval", seconds});
  EXPECT_NE(taken({"top", absent, "--once"}).err.find("no process 4194304"), std::string::npos);
  taken({"top", "1", "--once"});
  refused({"top", "0", "--once"});
  refused({"top", "4194305", "--once"});

  const fs::path live = aborted_live_file("a.json");
  const std::string before = read_file(live);
  for (int signal_number : {1, 64}) {
    const fs::path out = dir_ / ("signal" + std::to_string(signal_number) + ".json");
    const RunResult r = taken({"convert", live.string(), "-o", out.string(), "--signal", std::to_string(signal_number)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(heapline::test::read_json(out)["signal"], signal_number);
  }
  EXPECT_EQ(read_file(live), before) << "convert leaves the live file as it found it";
  for (const char* signal_number : {"0", "65"}) {
    refused({"convert", live.string(), "-o", (dir_ / "refused.json").string(), "--signal", signal_number});
  }
  EXPECT_FALSE(fs::exists(dir_ / "refused.json"));
  refused({"profile", (dir_ / "any.json").string(), "--sites", "0"});
  refused({"profile", (dir_ / "any.json").string(), "--sites", "100001"});
  taken({"profile", (dir_ / "any.json").string(), "--sites", "100000"});
}

TEST_F(Trust, MessagesSayWhatIsWrong) {
  // A live file of this version whose layout fields are wrong: not "version
  // 1 is not supported (this heapline reads 1)".
  std::string bytes = read_file(aborted_live_file("a.json"));
  reinterpret_cast<heapline::LiveHeader*>(bytes.data())->marker_capacity = 7;
  std::ofstream(dir_ / "layout.live", std::ios::binary) << bytes;
  RunResult layout = launch({"convert", (dir_ / "layout.live").string()});
  EXPECT_EQ(layout.exit_code, 1);
  EXPECT_NE(layout.err.find("is corrupt: its layout is not version 2's (header 12288 bytes, 7 markers"),
            std::string::npos)
      << layout.err;
  reinterpret_cast<heapline::LiveHeader*>(bytes.data())->version = 9;
  std::ofstream(dir_ / "v9.live", std::ios::binary) << bytes;
  RunResult version = launch({"convert", (dir_ / "v9.live").string()});
  EXPECT_NE(version.err.find("live file version 9 is not supported (this heapline reads version 2)"),
            std::string::npos)
      << version.err;

  // A script whose #! interpreter does not exist: the interpreter named,
  // status 127 as a shell gives.
  std::ofstream(dir_ / "script") << "#!/nonexistent/interp -x\necho hi\n";
  fs::permissions(dir_ / "script", fs::perms::owner_all);
  RunResult script = launch({(dir_ / "script").string()});
  EXPECT_EQ(script.exit_code, 127);
  EXPECT_NE(script.err.find("its interpreter /nonexistent/interp (named on its #! line) does not exist"),
            std::string::npos)
      << script.err;
  // A chain of #! lines is followed to what is missing: a script whose
  // interpreter is a CRLF script, whose own interpreter is "/bin/sh\r"
  // (the launcher said the CRLF script, which exists, did not exist).
  std::ofstream(dir_ / "crlf.sh") << "#!/bin/sh\r\necho hi\r\n";
  std::ofstream(dir_ / "nested") << "#!" << (dir_ / "crlf.sh").string() << "\n";
  fs::permissions(dir_ / "crlf.sh", fs::perms::owner_all);
  fs::permissions(dir_ / "nested", fs::perms::owner_all);
  RunResult nested = launch({(dir_ / "nested").string()});
  EXPECT_EQ(nested.exit_code, 127);
  EXPECT_NE(nested.err.find("its interpreter " + (dir_ / "crlf.sh").string() +
                            " (named on its #! line), whose interpreter /bin/sh\\x0d does not exist"),
            std::string::npos)
      << nested.err;
  RunResult missing = launch({"no-such-program-anywhere"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("heapline: cannot run no-such-program-anywhere: command not found on PATH"),
            std::string::npos)
      << missing.err;
  // A --lib that is no shared library: said before the command runs, not
  // blamed on the program afterwards.
  RunResult not_elf = launch({"--lib", (dir_ / "script").string(), "/bin/true"});
  EXPECT_EQ(not_elf.exit_code, 2);
  EXPECT_NE(not_elf.err.find("script is not a 64-bit ELF file, not libheapline.so"), std::string::npos) << not_elf.err;
  std::ofstream(dir_ / "not-executable") << "echo hi\n";
  RunResult denied = launch({(dir_ / "not-executable").string()});
  EXPECT_EQ(denied.exit_code, 126);
  EXPECT_NE(denied.err.find("Permission denied"), std::string::npos) << denied.err;
}

// A file the kernel cannot execute (ENOEXEC) is run by /bin/sh only when it
// is a text script without #!, as a shell runs it. A binary (one that starts
// with the ELF magic: built for another machine, or corrupt; one with a NUL
// byte in its first line) is refused as bash refuses it, status 126: its
// bytes are never run as shell commands (dash gave a syntax error and status
// 2, heapline's own usage status, and ran the later lines of a file that
// starts with \x7fELF).
TEST_F(Trust, ABinaryTheKernelCannotExecuteIsRefusedNeverRunByTheShell) {
  std::string elf = read_file("/bin/true");
  ASSERT_GT(elf.size(), 20u);
  // e_machine: EM_IA_64, a machine no kernel here runs and no qemu-user
  // emulates (another common one, such as arm64 on x86-64, may have a
  // binfmt_misc entry that hands it to qemu: tools/test.sh --arch arm64).
  elf[18] = 50;
  elf[19] = 0;
  std::ofstream(dir_ / "other-machine", std::ios::binary) << elf;
  std::ofstream(dir_ / "elf-magic", std::ios::binary) << "\x7f" "ELF\x02\x01\x01\ntouch RAN_BY_SH\nexit 7\n";
  std::ofstream(dir_ / "nul-byte", std::ios::binary) << std::string("ab\0cd\ntouch RAN_BY_SH\nexit 7\n", 26);
  for (const char* name : {"other-machine", "elf-magic", "nul-byte"}) {
    SCOPED_TRACE(name);
    fs::permissions(dir_ / name, fs::perms::owner_all);
    for (const std::string& program : {(dir_ / name).string(), "./" + std::string(name)}) {
      const RunResult r = launch({"-q", "--", program});
      EXPECT_EQ(r.exit_code, 126) << r.err;
      EXPECT_EQ(r.err, "heapline: cannot run " + program + ": cannot execute binary file: Exec format error\n");
      EXPECT_FALSE(fs::exists(dir_ / "RAN_BY_SH"));
    }
    // Found on PATH as well.
    RunOptions options;
    options.cwd = dir_;
    options.env = {{"PATH", dir_.string() + ":/usr/bin:/bin"}, {"HEAPLINE_LIB", kLib}};
    const RunResult on_path = run({kLauncher, "-q", "--", name}, options);
    EXPECT_EQ(on_path.exit_code, 126) << on_path.err;
    EXPECT_NE(on_path.err.find("cannot execute binary file: Exec format error"), std::string::npos) << on_path.err;
    EXPECT_FALSE(fs::exists(dir_ / "RAN_BY_SH"));
  }
  // A text script without #! runs with /bin/sh, its arguments and status
  // passed through, by path and on PATH.
  std::ofstream(dir_ / "no-shebang") << "echo \"ran $1\" > ran.txt\nexit 7\n";
  fs::permissions(dir_ / "no-shebang", fs::perms::owner_all);
  const RunResult script = launch({"-q", "--", "./no-shebang", "it"});
  EXPECT_EQ(script.exit_code, 7) << script.err;
  EXPECT_EQ(read_file(dir_ / "ran.txt"), "ran it\n");
  RunOptions options;
  options.cwd = dir_;
  options.env = {{"PATH", dir_.string() + ":/usr/bin:/bin"}, {"HEAPLINE_LIB", kLib}};
  fs::remove(dir_ / "ran.txt");
  const RunResult script_on_path = run({kLauncher, "-q", "--", "no-shebang", "too"}, options);
  EXPECT_EQ(script_on_path.exit_code, 7) << script_on_path.err;
  EXPECT_EQ(read_file(dir_ / "ran.txt"), "ran too\n");
}

// Every line the launcher says goes through one door (say.h): a path, a
// program's name or a value holding a newline and an escape sequence is
// shown as \x0a\x1b, on the line that names it, whichever subcommand says
// it and whether it reports a success or a refusal. Nothing reaches the
// terminal raw, and no line can be forged.
TEST_F(Trust, EveryLineTheLauncherSaysIsOneLineWhateverItNames) {
  const std::string hostile = "evil\n\x1b[31mheapline: forged";
  const std::string shown = R"(evil\x0a\x1b[31mheapline: forged)";
  const fs::path dir = dir_ / hostile;
  fs::create_directory(dir);
  // A live file of a process that is gone, for clean to remove and name.
  const fs::path live = aborted_live_file("stale.json");
  fs::rename(live, dir / (hostile + ".json.live"));
  const std::vector<std::vector<std::string>> invocations = {
      {"convert", (dir / "missing.live").string()},
      {"convert", (dir / (hostile + ".json.live")).string(), "-o", (dir / "missing-dir" / "x.json").string()},
      {"profile", (dir / "missing.json").string()},
      {"clean", (dir / "missing-dir").string()},
      {"clean", dir.string()},
      {"top", hostile},
      {"--plot", hostile + ".txt", "/bin/true"},
      {"--out", (dir / "missing-dir" / "x.json").string(), "/bin/true"},
      {(dir / "no-such-program").string()},
  };
  for (const std::vector<std::string>& args : invocations) {
    SCOPED_TRACE(args.front() + " " + args.back());
    const RunResult r = launch(args);
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    std::size_t named = 0;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_EQ(line.rfind("heapline: forged", 0), std::string::npos) << r.err;
      if (line.find(shown) != std::string::npos) {
        ++named;
        EXPECT_EQ(line.rfind("heapline", 0), 0u) << line;
      }
    }
    EXPECT_GE(named, 1u) << r.err;
  }
}

// Every line of runs whose program, markers and report carry a hostile name
// (a newline that would forge a heapline: line, an escape sequence that
// clears the screen, a C1 CSI, a right-to-left override, a byte that is not
// UTF-8, a backslash) is shown as written: whichever subcommand prints it,
// on stdout or stderr (the summary, the tree's lines, --summary, the
// profile, the plot's messages, convert, clean, top), no character reaches
// the terminal to act on it, no line is forged, and the name is shown,
// escaped, on the lines that name it.
TEST_F(Trust, EveryLineOfAHostileNamedRunIsShownAsWritten) {
  const std::string hostile =
      "p\x1b[2J\nheapline: FORGED\xc2\x9b"
      "31m\xe2\x80\xae\xff\\x";
  // A report holds the name as JSON: the byte that is not UTF-8 as U+FFFD.
  std::string reported = hostile;
  reported.replace(reported.find('\xff'), 1, "\xEF\xBF\xBD");
  const fs::path program = dir_ / hostile;
  fs::copy_file(kProbe, program);
  fs::permissions(program, fs::perms::owner_all);
  RunOptions options;
  options.cwd = dir_;
  options.env = {{"LD_PRELOAD", std::nullopt}, {"HEAPLINE_OUT", std::nullopt}, {"HEAPLINE_ROOT_PID", std::nullopt},
                 {"HEAPLINE_LIB", kLib},       {"HEAPLINE_SAMPLE", "64k"},     {"HEAPLINE_SAMPLE_SEED", "3"}};
  const bool gnuplot = std::system("command -v gnuplot >/dev/null 2>&1") == 0;
  std::vector<std::pair<std::string, RunResult>> runs;
  auto launcher = [&](std::vector<std::string> args) {
    args.insert(args.begin(), kLauncher);
    runs.emplace_back(args[1], run(args, options));
    return runs.back().second;
  };
  // A tree: a shell runs the program twice; --summary, the profile, a plot.
  // (A name given with --out holds no control character: it is refused,
  // as every output's; the program's own name still names its reports.)
  const RunResult tree =
      launcher({"--summary", "--profile", "--plot", "tree.svg", "--out", "tree.json", "--", "/bin/sh", "-c",
                "\"$0\" mark \"$1\" && \"$0\" mark \"$1\"", program.string(), hostile});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_NE(tree.err.find("heapline: report tree.json\n"), std::string::npos) << tree.err;
  EXPECT_NE(tree.err.find(heapline::terminal_text(reported)), std::string::npos) << "the program, named: " << tree.err;
  if (gnuplot) EXPECT_NE(tree.err.find("heapline: plot tree.svg\n"), std::string::npos) << tree.err;
  // The program alone, with its marker, drawn.
  const RunResult one = launcher({"--out", "one.json", "--plot", "one.svg", program.string(), "mark", hostile});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.err.find("marker: "), std::string::npos) << one.err;
  if (gnuplot) EXPECT_NE(one.err.find("heapline: plot one.svg\n"), std::string::npos) << one.err;
  launcher({"profile", "one.json"});
  launcher({"profile", "one.json", "--format", "folded"});
  launcher({"profile", "tree.json", "--at", "exit"});
  // A live file left under the program's name, converted and cleaned.
  options.env["LD_PRELOAD"] = kLib;
  RunResult aborted = run({program.string(), "abort", "30"}, options);
  EXPECT_EQ(aborted.signal, SIGABRT);
  options.env["LD_PRELOAD"] = std::nullopt;
  std::string live;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.path().extension() == ".live") live = entry.path().filename().string();
  }
  ASSERT_NE(live, "") << "the aborted program left its live file";
  const RunResult converted = launcher({"convert", live, "-o", "converted.json"});
  EXPECT_EQ(converted.exit_code, 0) << converted.err;
  launcher({"--summary", "--", program.string(), "mark", hostile});
  launcher({"clean", dir_.string(), "--reports", "--dry-run"});
  // A running program watched.
  options.env["LD_PRELOAD"] = kLib;
  const heapline::test::Started running = heapline::test::start({program.string(), "mark", hostile, "30"}, options);
  options.env["LD_PRELOAD"] = std::nullopt;
  RunResult top;
  for (int attempt = 0; attempt < 200; ++attempt) {  // until its live file holds the marker
    top = launcher({"top", std::to_string(running.pid), "--once"});
    if (top.out.find("markers: none") == std::string::npos && top.exit_code == 0) break;
    runs.pop_back();
    ::usleep(50'000);
  }
  ::kill(running.pid, SIGKILL);
  heapline::test::finish(running);
  EXPECT_NE(top.out.find(heapline::terminal_text(program.string())), std::string::npos) << top.out << top.err;

  for (const auto& [what, r] : runs) {
    for (const std::string* stream : {&r.out, &r.err}) {
      std::istringstream lines(*stream);
      for (std::string line; std::getline(lines, line);) {
        EXPECT_TRUE(heapline::shows_as_written(line)) << what << ": " << heapline::terminal_text(line);
        EXPECT_NE(line.rfind("heapline: FORGED", 0), 0u) << what << ": " << *stream;
      }
      if (!stream->empty()) EXPECT_EQ(stream->back(), '\n') << what << ": every line ends";
    }
  }
}

TEST_F(Trust, AReportOfAnEarlierRunIsNeverSummarised) {
  RunResult first = launch({"--out", "run.json", kProbe, "api"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(fs::exists(dir_ / "run.json"));
  // The next command leaves no report (LD_PRELOAD cannot reach a static
  // program): the earlier report must not pass for its own.
  RunResult second = launch({"--out", "run.json", kStatic});
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_EQ(second.err.find("heapline: peak"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("is from an earlier run (pid "), std::string::npos) << second.err;
}

// A file at the report's name that was there before the run and is no
// report is not the command's output: the command is never said to have
// written a corrupt report ("not JSON") for it; why no report came is said
// instead, and the file is left as it was.
TEST_F(Trust, AnEarlierFileThatIsNoReportIsNeverBlamedOnTheCommand) {
  for (const std::string earlier : std::vector<std::string>{"GOODREP\n", "{\"format\":\"heapline/1\"}", ""}) {
    SCOPED_TRACE(earlier);
    std::ofstream(dir_ / "keep.json", std::ios::binary) << earlier;
    fs::last_write_time(dir_ / "keep.json", fs::file_time_type::clock::now() - std::chrono::hours(1));
    const RunResult r = launch({"--out", "keep.json", kStatic});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("heapline: no report from the command: " + kStatic + ": statically linked"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("keep.json"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(dir_ / "keep.json"), earlier);
  }
}

// A HEAPLINE_OUT of the environment (a path, or off) is not used by the
// launcher: said in one line when --out is not given, and the report is at
// --out's default; with --out, --out replaces it without a word.
TEST_F(Trust, AHeaplineOutOfTheEnvironmentIsSaidNotToBeUsed) {
  for (const std::string& value : std::vector<std::string>{"off", (dir_ / "envo.json").string()}) {
    SCOPED_TRACE(value);
    RunOptions options;
    options.cwd = dir_;
    options.env = {{"HEAPLINE_OUT", value}, {"HEAPLINE_ROOT_PID", std::nullopt}, {"HEAPLINE_LIB", kLib}};
    const RunResult r = run({kLauncher, "-q", "--", kProbe, "api"}, options);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "heapline: HEAPLINE_OUT=" + value +
                         " in the environment is not used: the launcher writes the report to --out, by default "
                         "heapline.phase_probe.PID.json\n");
    EXPECT_FALSE(fs::exists(dir_ / "envo.json"));
    EXPECT_EQ(heapline::test::files_matching(dir_, R"(heapline\.phase_probe\.[0-9]+\.json)").size(), 1u);
    for (const fs::path& report : heapline::test::files_matching(dir_, R"(heapline\..*\.json)")) fs::remove(report);
    const RunResult given = run({kLauncher, "-q", "--out", "given.json", "--", kProbe, "api"}, options);
    EXPECT_EQ(given.exit_code, 0) << given.err;
    EXPECT_EQ(given.err, "");
    EXPECT_TRUE(fs::exists(dir_ / "given.json"));
    fs::remove(dir_ / "given.json");
  }
}

// A --lib (or HEAPLINE_LIB) that is there but is no library is said as what
// it is, never "cannot find libheapline.so"; only a missing one is not found.
TEST_F(Trust, ALibraryThatIsNoSharedObjectIsSaidAsWhatItIs) {
  ASSERT_EQ(mkfifo((dir_ / "fifo.so").c_str(), 0600), 0);
  fs::create_directory(dir_ / "dir.so");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/dev/zero", "a character device"},
      {(dir_ / "dir.so").string(), "a directory"},
      {(dir_ / "fifo.so").string(), "a FIFO"},
  };
  for (const auto& [lib, kind] : cases) {
    SCOPED_TRACE(lib);
    const RunResult r = launch({"--lib", lib, "--", "/bin/sh", "-c", "echo ran > ran"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "heapline: " + lib + " is " + kind + ", not libheapline.so\n");
    EXPECT_FALSE(fs::exists(dir_ / "ran"));
    RunOptions options;
    options.cwd = dir_;
    options.env = {{"HEAPLINE_OUT", std::nullopt}, {"HEAPLINE_LIB", lib}};
    const RunResult from_env = run({kLauncher, "--", "/bin/true"}, options);
    EXPECT_EQ(from_env.exit_code, 2) << from_env.err;
    EXPECT_EQ(from_env.err, "heapline: " + lib + " is " + kind + ", not libheapline.so\n");
  }
  const RunResult missing = launch({"--lib", (dir_ / "none.so").string(), "--", "/bin/true"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_EQ(missing.err.rfind("heapline: cannot find libheapline.so (looked at " + (dir_ / "none.so").string(), 0), 0u)
      << missing.err;
}

TEST_F(Trust, AStaticProgramIsSaidNotToHaveLoadedTheLibrary) {
  RunResult r = launch({"--out", "static.json", kStatic});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("heapline: no report from the command: " + kStatic + ": statically linked: no loader runs\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("exit handlers"), std::string::npos) << r.err;
}

// The command's shell replaces itself with a program the library cannot
// follow: no signal, an exit status, and the shell's live file left.
TEST_F(Trust, ACommandThatExecsAStaticProgramIsSaidToHaveDoneSo) {
  RunResult r = launch({"--out", "exec.json", "--", "/bin/sh", "-c", "exec " + kStatic});
  EXPECT_EQ(r.exit_code, 0);
  // Which program and why, as the library noted it before the exec: not a
  // list of what it might have been.
  EXPECT_NE(r.err.find("heapline: the command exec'd " + kStatic +
                       ": statically linked: no loader runs, which runs without the library; report converted from "
                       "its live file\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("as the library last saw it"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("signal"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("heapline: report exec.json"), std::string::npos) << r.err;
}

// Class C: where the report cannot go is said before the command runs (a
// build would otherwise run to its end for nothing), and a FIFO is never
// opened (the launcher would wait on it for ever).
TEST_F(Trust, AReportPathThatCannotBeWrittenIsRefusedBeforeTheCommandRuns) {
  RunResult r = launch({"--out", "missing/x.json", "/bin/sh", "-c", "echo ran"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "heapline: --out missing/x.json: " + (dir_ / "missing").string() +
                       ": No such file or directory; the command was not run\n");
  ASSERT_EQ(mkfifo((dir_ / "fifo.json").c_str(), 0600), 0);
  RunResult fifo = launch({"--out", "fifo.json", "/bin/sh", "-c", "echo ran"});
  EXPECT_EQ(fifo.exit_code, 2);
  EXPECT_EQ(fifo.err, "heapline: --out fifo.json: " + (dir_ / "fifo.json").string() +
                          " is a FIFO, not a regular file; the command was not run\n");
  RunResult convert = launch({"convert", (dir_ / "fifo.json").string()});
  EXPECT_EQ(convert.exit_code, 1);
  EXPECT_EQ(convert.err, "heapline convert: " + (dir_ / "fifo.json").string() + " is a FIFO, not a regular file\n");
}

TEST_F(Trust, PercentSignsInOutAreExpandedOnce) {
  RunResult r = launch({"--out", "x%%p.json", kProbe, "api"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "x%p.json"));
  EXPECT_NE(r.err.find("heapline: peak"), std::string::npos) << r.err;
}

// --out takes HEAPLINE_OUT's template rule: a % that is not %p, %e or %%
// is refused (the library refuses r%q.json; --out took it for a literal
// name), and so is - (standard output elsewhere, but a report is a file),
// for convert -o too: one line, status 2, the command not run.
TEST_F(Trust, OutTakesTheLibrarysTemplateRuleAndNeverStandardOutput) {
  for (const char* out : {"r%q.json", "r%", "%", "100%.json", "-"}) {
    const RunResult r = launch({"--out", out, "--", "/bin/sh", "-c", "echo ran > ran"});
    EXPECT_EQ(r.exit_code, 2) << out << ": " << r.err;
    EXPECT_EQ(r.err.rfind(std::string("heapline: --out ") + out + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("; the command was not run"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "ran")) << out;
    EXPECT_FALSE(fs::exists(dir_ / out)) << out;
  }
  const fs::path live = aborted_live_file("a.json");
  const RunResult to_stdout = launch({"convert", live.string(), "-o", "-"});
  EXPECT_EQ(to_stdout.exit_code, 2) << to_stdout.err;
  EXPECT_EQ(to_stdout.err.rfind("heapline convert: -o -: a report is a file", 0), 0u) << to_stdout.err;
  EXPECT_FALSE(fs::exists(dir_ / "-"));
}

// Flags take no value (CLI11 read --profile=0 as "off" and --dry-run=no as
// "remove them", with spellings no setting takes), and a name is never
// empty (--lib '' looked up the default library): each refused in one line
// naming the option, status 2, nothing run or removed.
// No command is a refusal as any other: one line, status 2, the help
// printed only when asked for (it printed run's whole help, 17 to 30 lines).
TEST_F(Trust, NoCommandIsOneLine) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{}, {"-q", "--"}, {"--out", "x.json"}, {"run"}}) {
    const RunResult r = launch(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "heapline: no command given: heapline [OPTIONS] -- COMMAND [ARGS...] (heapline --help: the options)\n");
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(Trust, FlagsTakeNoValueAndNamesAreNeverEmpty) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--profile=0", "--", "/bin/sh", "-c", "echo ran > ran"},
        {"--summary=yes", "--", "/bin/sh", "-c", "echo ran > ran"},
        {"--quiet=1", "--", "/bin/sh", "-c", "echo ran > ran"},
        {"clean", dir_.string(), "--reports", "--dry-run=no"},
        {"top", "1", "--once=0"}}) {
    const RunResult r = launch(args);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << r.err;
    const std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_NE(first.find(": a flag takes no value (give "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "ran"));
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--lib", "", "--", "/bin/sh", "-c", "echo ran > ran"},
        {"convert", ""}, {"profile", ""}, {"clean", ""}}) {
    const RunResult r = launch(args);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << r.err;
    const std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_NE(first.find(": must not be empty: an empty name names nothing"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "ran"));
  }
}

TEST(OutputNaming, TemplatesAndPidInsertionMatchTheLibrary) {
  using heapline::launcher::as_template;
  using heapline::launcher::pid_inserted_path;
  EXPECT_EQ(as_template("x%p.json"), "x%%p.json");
  EXPECT_EQ(as_template("/a/b.json"), "/a/b.json");
  EXPECT_EQ(pid_inserted_path("/d.x/run.json", 7), "/d.x/run.7.json");
  EXPECT_EQ(pid_inserted_path("/d.x/run", 7), "/d.x/run.7");
  EXPECT_EQ(pid_inserted_path(".hidden", 7), ".hidden.7");
  EXPECT_EQ(pid_inserted_path("a.tar.json", 7), "a.tar.7.json");
  // %e as the library writes it (interposer.unit.OutputPath.TheProgramsName...):
  // the launcher finds the report by this name.
  EXPECT_EQ(heapline::launcher::root_output_path("", "/bin/a\nb\xe2\x80\xae", 7), "heapline.a_b___.7.json");
  EXPECT_EQ(heapline::launcher::root_output_path("r.%e", "./caf\xc3\xa9\x1b", 7), "r.caf\xc3\xa9_");
}

TEST(Summary, SaysWhenTheProgramsAllocationsWereNotSeen) {
  heapline::ParsedReport report;
  report.precision.exact = true;
  report.samples = {{0, 0, 0}};
  report.allocations_seen = false;
  const std::string text = heapline::launcher::summarize(report, "r.json");
  EXPECT_NE(text.find("the program's malloc is not libheapline's"), std::string::npos) << text;
  report.allocations_seen = true;
  EXPECT_EQ(heapline::launcher::summarize(report, "r.json").find("not libheapline's"), std::string::npos);
}

}  // namespace
