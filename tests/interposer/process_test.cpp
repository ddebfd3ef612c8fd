// Process-level tests of libheapline.so: programs with known allocation
// patterns, the API corners compared with and without the library, fork and
// exec, a foreign allocator, long runs, killed writers, bad settings and real
// programs. Each test works in its own temporary directory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <heapline/live_format.h>

#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::files_matching;
using heapline::test::heapline_format_problem;
using heapline::test::parse_keys;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;
using nlohmann::json;

namespace {

const std::string kLib = HEAPLINE_LIB;
const std::string kTestHooksLib = HEAPLINE_TEST_HOOKS_LIB;
const std::string kNullLib = HEAPLINE_NULL_LIB;
const std::string kPatterns = ALLOC_PATTERNS;
const std::string kCorners = API_CORNERS;
const std::string kForkProbe = FORK_PROBE;
const std::string kPhaseProbe = PHASE_PROBE;
const std::string kPhaseProbeNoPie = PHASE_PROBE_NOPIE;

struct Figures {
  std::int64_t first = 0;   // "spike" or "kept"
  std::int64_t second = 0;  // "leak" or "threads"
};

Figures parse_figures(const std::string& out) {
  std::smatch match;
  std::regex line(R"((\w+)=(\d+) (\w+)=(\d+))");
  if (!std::regex_search(out, match, line)) return {};
  return {std::stoll(match[2]), std::stoll(match[4])};
}

class Interposer : public heapline::test::TempDirTest {
 protected:
  Interposer() : TempDirTest("interposer") {}

  // Runs argv with libheapline.so preloaded, writing to dir_/<name>.
  RunResult run_traced(const std::vector<std::string>& argv, const std::string& name,
                       std::map<std::string, std::optional<std::string>> env = {},
                       const std::string& preload = kLib) {
    RunOptions options;
    options.env = std::move(env);
    options.env["LD_PRELOAD"] = preload;
    if (!options.env.count("HEAPLINE_OUT")) options.env["HEAPLINE_OUT"] = (dir_ / name).string();
    options.env.emplace("HEAPLINE_ROOT_PID", std::nullopt);
    options.cwd = dir_;
    return run(argv, options);
  }

  json traced_report(const std::vector<std::string>& argv, const std::string& name,
                     std::map<std::string, std::optional<std::string>> env = {}, Figures* figures = nullptr,
                     const std::string& preload = kLib) {
    RunResult result = run_traced(argv, name, std::move(env), preload);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    if (figures) *figures = parse_figures(result.out);
    fs::path file = dir_ / name;
    if (!fs::exists(file)) {
      ADD_FAILURE() << "no output file " << file;
      return json::object();
    }
    json report = read_json(file);
    EXPECT_EQ(heapline_format_problem(report), "") << file;
    return report;
  }
};

std::int64_t peak(const json& r) { return r.at("peak_bytes").get<std::int64_t>(); }
std::int64_t final_bytes(const json& r) { return r.at("final_bytes").get<std::int64_t>(); }
std::int64_t bound(const json& r) { return r.at("precision").at("bound_bytes").get<std::int64_t>(); }

std::int64_t max_of_samples(const json& r) {
  std::int64_t most = 0;
  for (const auto& sample : r.at("samples")) most = std::max(most, sample[2].get<std::int64_t>());
  return most;
}

// --- known patterns -------------------------------------------------------

// The report states the peak resident set beside the heap: a heap of
// 256 MiB never touched is not resident, 64 MiB of it written are.
TEST_F(Interposer, ThePeakResidentSetStandsBesideTheHeap) {
  Figures f;
  json untouched = traced_report({kPatterns, "untouched", "chunk", "256", "0"}, "untouched.json", {}, &f);
  ASSERT_GE(peak(untouched), std::int64_t{256} << 20);
  ASSERT_TRUE(untouched.contains("peak_rss_bytes")) << untouched.dump();
  const std::int64_t idle_rss = untouched["peak_rss_bytes"].get<std::int64_t>();
  EXPECT_GT(idle_rss, 0);
  EXPECT_LT(idle_rss, std::int64_t{32} << 20);
  json touched = traced_report({kPatterns, "untouched", "chunk", "256", "64"}, "touched.json", {}, &f);
  // The 64 MiB written are resident whatever else the process holds (its
  // code and libraries vary from run to run by some hundred KiB).
  EXPECT_GE(touched["peak_rss_bytes"].get<std::int64_t>(), std::int64_t{64} << 20);
  EXPECT_LT(touched["peak_rss_bytes"].get<std::int64_t>(), peak(touched));
}

// The peak resident set is the image's own: a program started by a
// process that held 300 MiB (by exec alone, or by fork and exec) reports
// its few MiB, not its parent's 300 (getrusage's ru_maxrss keeps the mark
// across exec; the memory's own high-water mark starts again there).
TEST_F(Interposer, ThePeakResidentSetIsTheImagesOwnNotThatOfTheProcessBeforeExec) {
  const std::string small = "[" + json(kPatterns).dump() + ", 'untouched', 'chunk', '1', '1']";
  const std::string hold = "import os\nheld = b'x' * (300 << 20)\n";
  json exec_only = traced_report({"/usr/bin/python3", "-c", hold + "os.execv(" + json(kPatterns).dump() + ", " + small + ")"},
                                 "exec.json");
  EXPECT_NE(exec_only["exe"].get<std::string>().find("alloc_patterns"), std::string::npos);
  ASSERT_TRUE(exec_only.contains("peak_rss_bytes"));
  EXPECT_GT(exec_only["peak_rss_bytes"].get<std::int64_t>(), 0);
  EXPECT_LT(exec_only["peak_rss_bytes"].get<std::int64_t>(), std::int64_t{64} << 20);

  json parent = traced_report({"/usr/bin/python3", "-c",
                               hold + "pid = os.fork()\nif pid == 0:\n  os.execv(" + json(kPatterns).dump() + ", " +
                                   small + ")\nos.waitpid(pid, 0)\n"},
                              "fork.json");
  EXPECT_GE(parent["peak_rss_bytes"].get<std::int64_t>(), std::int64_t{300} << 20);  // the holder itself
  const auto children = heapline::test::files_matching(dir_, R"(fork\.\d+\.json)");
  ASSERT_EQ(children.size(), 1u);
  const json child = read_json(children[0]);
  EXPECT_NE(child["exe"].get<std::string>().find("alloc_patterns"), std::string::npos);
  EXPECT_LT(child["peak_rss_bytes"].get<std::int64_t>(), std::int64_t{64} << 20);
}

// Without /proc (a user and mount namespace of its own, where a tmpfs hides
// it) the kernel's memory figures have nothing to be read from: the report
// has no "peak_rss_bytes" and no "resident", its resident series is empty,
// and the heap's figures are whole. The same program with /proc has them.
TEST_F(Interposer, WithoutProcTheResidentFiguresAreAbsent) {
  if (run({"/usr/bin/unshare", "-Urm", "true"}).exit_code != 0) {
    GTEST_SKIP() << "no user namespaces here (unshare -Urm): /proc cannot be hidden";
  }
  RunOptions options;
  options.env["LD_PRELOAD"] = std::nullopt;
  options.env["HEAPLINE_ROOT_PID"] = std::nullopt;
  options.env["HEAPLINE_OUT"] = std::nullopt;
  options.cwd = dir_;
  const auto in_namespace = [&](const std::string& name, bool hide_proc) {
    const std::string program = "exec env LD_PRELOAD='" + kLib + "' HEAPLINE_OUT='" + (dir_ / name).string() +
                                "' HEAPLINE_INTERVAL_MS=1 '" + kPatterns + "' untouched chunk 64 16";
    RunResult result = run({"/usr/bin/unshare", "-Urm", "/bin/sh", "-c",
                            (hide_proc ? "mount -t tmpfs none /proc && " : "") + program},
                           options);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    const json report = read_json(dir_ / name);
    EXPECT_EQ(heapline_format_problem(report), "");
    EXPECT_GE(peak(report), std::int64_t{64} << 20);
    EXPECT_GE(report["samples"].size(), 2u);
    return report;
  };
  const json with_proc = in_namespace("with.json", false);
  EXPECT_TRUE(with_proc.contains("peak_rss_bytes")) << with_proc.dump();
  EXPECT_TRUE(with_proc.contains("resident")) << with_proc.dump();
  EXPECT_FALSE(with_proc["resident_samples"].empty()) << with_proc.dump();

  const json without_proc = in_namespace("without.json", true);
  EXPECT_FALSE(without_proc.contains("peak_rss_bytes")) << without_proc.dump();
  EXPECT_FALSE(without_proc.contains("resident")) << without_proc.dump();
  ASSERT_TRUE(without_proc.contains("resident_samples")) << without_proc.dump();
  EXPECT_TRUE(without_proc["resident_samples"].empty()) << without_proc.dump();
}

// The resident set is read at the timed samples too, not only at a
// marker's or at the exit: a program that allocates a block every 20 ms,
// with no marker, has a reading at its samples (every 10 ms at most), each
// at the time of a heap sample.
TEST_F(Interposer, TheResidentSetIsReadAtTheTimedSamples) {
  json r = traced_report({kPhaseProbe, "steps", "12", "20", "0"}, "resident-steps.json",
                         {{"HEAPLINE_INTERVAL_MS", "10"}});
  ASSERT_TRUE(r.contains("resident_samples")) << r.dump();
  const json& series = r["resident_samples"];
  EXPECT_GE(series.size(), 10u) << series.dump();
  std::set<std::int64_t> sample_times;
  for (const auto& sample : r["samples"]) sample_times.insert(sample[0].get<std::int64_t>());
  std::set<std::int64_t> reading_times;
  for (const auto& reading : series) {
    const std::int64_t t = reading[0].get<std::int64_t>();
    reading_times.insert(t);
    EXPECT_TRUE(sample_times.count(t) == 1 || t == r["duration_ns"].get<std::int64_t>())
        << "a reading at " << t << " ns, at no heap sample: " << r["samples"].dump();
  }
  EXPECT_GE(reading_times.size(), 10u) << "readings at the times of the samples, not all at one: " << series.dump();
}

// Every figure read from the kernel is in the report's unit: the peak
// resident set is getrusage's ru_maxrss (KiB) in bytes, the resident series
// statm's pages in bytes, the times nanoseconds of the clocks they name, the
// interval HEAPLINE_INTERVAL_MS in ns. The reference: wait4's rusage of the
// same process, and the clocks read around its run.
TEST_F(Interposer, EveryKernelFigureIsInTheReportsUnit) {
  const auto realtime_ns = [] {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  };
  const std::string out = (dir_ / "units.json").string();
  const std::int64_t started = realtime_ns();
  const auto steady_start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    setenv("LD_PRELOAD", kLib.c_str(), 1);
    setenv("HEAPLINE_OUT", out.c_str(), 1);
    setenv("HEAPLINE_INTERVAL_MS", "10", 1);
    unsetenv("HEAPLINE_ROOT_PID");
    execl(kPhaseProbe.c_str(), kPhaseProbe.c_str(), "resident", "64", "64", "0", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  ASSERT_EQ(wait4(child, &status, 0, &usage), child);
  const std::int64_t elapsed_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - steady_start).count();
  const std::int64_t ended = realtime_ns();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const json r = read_json(out);
  const auto number = [&r](const char* pointer) { return r[json::json_pointer(pointer)].get<std::int64_t>(); };
  const std::int64_t kernel_peak = static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
  EXPECT_LE(number("/peak_rss_bytes"), kernel_peak);
  EXPECT_GE(number("/peak_rss_bytes"), kernel_peak - (4 << 20)) << "KiB read as bytes?";
  EXPECT_GE(number("/resident/peak_bytes"), std::int64_t{64} << 20) << "64 MiB written, in pages of 4 KiB";
  // statm's resident count is the kernel's approximate sum of per-CPU
  // counters, and the high-water mark is raised only at some events: a
  // reading may pass ru_maxrss by some pages (seen: 22). A unit error is a
  // factor of 1024 or 4096, far beyond a mebibyte.
  EXPECT_LE(number("/resident/peak_bytes"), kernel_peak + (1 << 20));
  EXPECT_GE(number("/peak_bytes"), std::int64_t{64} << 20);
  EXPECT_LE(number("/peak_bytes"), (std::int64_t{64} << 20) + (1 << 20));
  EXPECT_GE(number("/duration_ns"), 30'000'000) << "the probe sleeps 30 ms";
  EXPECT_LE(number("/duration_ns"), elapsed_ns);
  EXPECT_GE(number("/start_unix_ns"), started);
  EXPECT_LE(number("/start_unix_ns"), ended);
  EXPECT_LE(number("/peak_time_ns"), number("/duration_ns"));
  EXPECT_EQ(number("/interval_ns"), 10'000'000);
}

// The resident set is read at the samples: a block of 128 MiB of which
// 32 MiB are written shows a resident series far below the heap; written
// whole, the series reaches the heap. The marker's sample, after the
// writes, reads them; the series ends with a reading at exit.
TEST_F(Interposer, TheResidentSeriesShowsHowMuchOfTheHeapIsResident) {
  struct Case {
    const char* touched_mib;
    std::int64_t at_least, below;
  };
  for (const Case& c : {Case{"32", std::int64_t{32} << 20, std::int64_t{64} << 20},
                        Case{"128", std::int64_t{128} << 20, std::int64_t{192} << 20}}) {
    SCOPED_TRACE(std::string("touched MiB: ") + c.touched_mib);
    json r = traced_report({kPhaseProbe, "resident", "128", c.touched_mib, "0"},
                           std::string("resident-") + c.touched_mib + ".json");
    ASSERT_GE(peak(r), std::int64_t{128} << 20);
    ASSERT_TRUE(r.contains("resident")) << r.dump();
    const std::int64_t resident_peak = r["resident"]["peak_bytes"].get<std::int64_t>();
    EXPECT_GE(resident_peak, c.at_least);
    EXPECT_LT(resident_peak, c.below);
    std::int64_t marker_t = -1;
    for (const auto& marker : r["markers"]) {
      if (marker[1] == "resident") marker_t = marker[0].get<std::int64_t>();
    }
    ASSERT_GE(marker_t, 0) << r["markers"].dump();
    const json& series = r["resident_samples"];
    ASSERT_GE(series.size(), 2u) << series.dump();
    // The marker's sample read the touched memory. (The peak itself may
    // come a page later: the "ready" line's buffer, read by a sample that
    // a loaded machine places between the marker and the free.)
    std::int64_t most = 0, most_by_marker = 0;
    for (const auto& reading : series) {
      most = std::max(most, reading[2].get<std::int64_t>());
      if (reading[0].get<std::int64_t>() <= marker_t) most_by_marker = std::max(most_by_marker, reading[2].get<std::int64_t>());
    }
    EXPECT_GE(most_by_marker, c.at_least) << series.dump();
    EXPECT_EQ(most, resident_peak) << series.dump();
    EXPECT_EQ(series.back()[0], r["duration_ns"]) << series.dump();
    // At exit the block is freed (unmapped): the last reading is small.
    EXPECT_LT(series.back()[1].get<std::int64_t>(), std::int64_t{32} << 20) << series.dump();
  }
}

TEST_F(Interposer, ExactModeGivesTheExactPeakSingleThreaded) {
  Figures f;
  json r = traced_report({kPatterns, "single", "chunk", "4000", "100"}, "exact.json",
                         {{"HEAPLINE_PRECISION", "exact"}}, &f);
  ASSERT_GT(f.first, 1'000'000);
  EXPECT_EQ(r["precision"]["mode"], "exact");
  EXPECT_EQ(bound(r), 0);
  EXPECT_EQ(peak(r) - final_bytes(r), f.first - f.second);
  EXPECT_EQ(max_of_samples(r), peak(r));
  EXPECT_EQ(r["allocator"], "glibc");
  EXPECT_EQ(r["size_basis"], "glibc-chunk-size");
  // The 4000 blocks, one API in turn of six: malloc, calloc, malloc(16) then
  // realloc, memalign, posix_memalign, realloc(NULL, n) (a realloc call).
  EXPECT_GE(r["calls"]["alloc"].get<std::int64_t>(), 3334);
  EXPECT_GE(r["calls"]["free"].get<std::int64_t>(), 3900);
  EXPECT_GE(r["calls"]["realloc"].get<std::int64_t>(), 1333);
}

TEST_F(Interposer, BatchedFinalIsExactAndPeakWithinBoundSingleThreaded) {
  Figures f;
  json exact = traced_report({kPatterns, "single", "chunk", "4000", "100"}, "exact.json",
                             {{"HEAPLINE_PRECISION", "exact"}}, &f);
  json batched = traced_report({kPatterns, "single", "chunk", "4000", "100"}, "batched.json", {}, &f);
  EXPECT_EQ(batched["precision"]["mode"], "batched");
  EXPECT_GT(bound(batched), 0);
  EXPECT_EQ(final_bytes(batched), final_bytes(exact));
  EXPECT_LE(std::llabs(peak(batched) - final_bytes(batched) - (f.first - f.second)), bound(batched));
  EXPECT_LT(batched["publishes"].get<std::int64_t>(), exact["publishes"].get<std::int64_t>() / 10);
}

TEST_F(Interposer, LeakedBytesShowExactlyInTheFinalFigure) {
  Figures none, some;
  json without_leak = traced_report({kPatterns, "single", "chunk", "3000", "0"}, "a.json", {}, &none);
  json with_leak = traced_report({kPatterns, "single", "chunk", "3000", "777"}, "b.json", {}, &some);
  EXPECT_EQ(none.second, 0);
  EXPECT_GT(some.second, 0);
  EXPECT_EQ(final_bytes(with_leak) - final_bytes(without_leak), some.second);
  // And against a run that allocates nothing: every call of the pattern,
  // each API in turn, counted in exactly what it counts out.
  json nothing = traced_report({kPatterns, "single", "chunk", "0", "0"}, "c.json");
  EXPECT_EQ(final_bytes(with_leak) - final_bytes(nothing), some.second);
}

TEST_F(Interposer, ThreadsThatFreeEachOthersBlocks) {
  Figures f;
  std::vector<std::string> argv{kPatterns, "threads", "chunk", "4", "2000", "50"};
  // The sampler on (it is off by default): the exact finals must not depend
  // on what it allocates for itself (docs/design.md, "The heap sampler").
  json exact = traced_report(argv, "exact.json", {{"HEAPLINE_PRECISION", "exact"}, {"HEAPLINE_SAMPLE", "on"}}, &f);
  EXPECT_EQ(peak(exact) - final_bytes(exact), f.first - f.second);
  json batched = traced_report(argv, "batched.json", {{"HEAPLINE_SAMPLE", "on"}}, &f);
  EXPECT_EQ(final_bytes(batched), final_bytes(exact));
  EXPECT_GE(batched["precision"]["max_threads"].get<int>(), 5);  // main and 4 workers
  EXPECT_LE(std::llabs(peak(batched) - final_bytes(batched) - (f.first - f.second)), bound(batched));
  json coarse = traced_report(argv, "coarse.json", {{"HEAPLINE_PRECISION", "1048576,8"}, {"HEAPLINE_SAMPLE", "on"}}, &f);
  EXPECT_EQ(final_bytes(coarse), final_bytes(exact));
  EXPECT_EQ(coarse["precision"]["budget_floor_bytes"], 1048576);
  EXPECT_EQ(coarse["precision"]["budget_divisor"], 8);
  EXPECT_LE(std::llabs(peak(coarse) - final_bytes(coarse) - (f.first - f.second)), bound(coarse));
}

// The stated bound is a fraction of the heap, not a multiple of the
// thread count: max(1% of the peak, 256 KiB) at 64 and 256 threads (each
// holding ~130 KiB, the process 8 and 33 MiB at its peak), and the batched
// peak within it of the exact one.
TEST_F(Interposer, TheBoundIsOnePercentOfThePeakAtAnyThreadCount) {
  for (const char* thread_count : {"64", "256"}) {
    SCOPED_TRACE(std::string(thread_count) + " threads");
    Figures f;
    std::vector<std::string> argv{kPatterns, "threads", "chunk", thread_count, "128", "16"};
    json exact = traced_report(argv, "exact.json", {{"HEAPLINE_PRECISION", "exact"}}, &f);
    json batched = traced_report(argv, "batched.json", {}, &f);
    ASSERT_GE(batched["precision"]["max_threads"].get<int>(), std::atoi(thread_count));
    EXPECT_EQ(final_bytes(batched), final_bytes(exact));
    const std::int64_t stated = bound(batched);
    EXPECT_GT(stated, 0);
    EXPECT_LE(stated, std::max<std::int64_t>(peak(batched) / 100, 256 << 10));
    EXPECT_LE(stated, batched["precision"]["budget_bytes"].get<std::int64_t>());
    EXPECT_LE(std::llabs(peak(batched) - peak(exact)), stated);
    EXPECT_LE(std::llabs(peak(batched) - final_bytes(batched) - (f.first - f.second)), stated);
  }
}

TEST_F(Interposer, ThousandShortLivedThreadsLeaveNoDrift) {
  Figures kept, none;
  json keep = traced_report({kPatterns, "short", "chunk", "1000", "1"}, "keep.json", {}, &kept);
  json no_keep = traced_report({kPatterns, "short", "chunk", "1000", "0"}, "none.json", {}, &none);
  json keep_exact = traced_report({kPatterns, "short", "chunk", "1000", "1"}, "keep-exact.json",
                                  {{"HEAPLINE_PRECISION", "exact"}});
  ASSERT_EQ(kept.second, 1000);
  // Each thread keeps ~7 KiB, below the threshold: only the exit flush
  // publishes it.
  EXPECT_EQ(final_bytes(keep) - final_bytes(no_keep), kept.first);
  EXPECT_EQ(final_bytes(keep), final_bytes(keep_exact));
  EXPECT_GE(peak(keep), final_bytes(keep));
}

// The exit flush publishes a thread's pending bytes and gives its slot back:
// with one short-lived thread at a time, at most main and that thread ever
// hold a slot, so the bound stays two thresholds however many threads came
// and went (without the flush: 1001 threads, a bound of ~16 MB).
TEST_F(Interposer, ShortLivedThreadsGiveBackTheirSlotAtExit) {
  Figures kept;
  json keep = traced_report({kPatterns, "short", "chunk", "1000", "1"}, "keep.json", {}, &kept);
  ASSERT_EQ(kept.second, 1000);
  EXPECT_GE(keep["precision"]["max_threads"].get<int>(), 1);
  EXPECT_LE(keep["precision"]["max_threads"].get<int>(), 2);
  EXPECT_LE(bound(keep), 2 * keep["precision"]["max_threshold_bytes"].get<std::int64_t>());
}

TEST_F(Interposer, MoreThreadsThanSlotsDegradeToExactPublishing) {
  Figures f;
  // The sampler on: each of 1100 threads that samples allocates libunwind's
  // per-thread state, which must count nothing.
  json batched = traced_report({kPatterns, "crowd", "chunk", "1100"}, "crowd.json", {{"HEAPLINE_SAMPLE", "on"}}, &f);
  json exact = traced_report({kPatterns, "crowd", "chunk", "1100"}, "crowd-exact.json",
                             {{"HEAPLINE_PRECISION", "exact"}, {"HEAPLINE_SAMPLE", "on"}});
  ASSERT_EQ(f.second, 1100);
  EXPECT_EQ(batched["precision"]["max_threads"], 1024);  // the registry's size
  EXPECT_EQ(final_bytes(batched), final_bytes(exact));
  EXPECT_GE(final_bytes(batched), f.first);
}

TEST_F(Interposer, LongRunStaysInTheBufferAndKeepsTheTrueMaximum) {
  Figures f;
  json r = traced_report({kPatterns, "long", "chunk", "150000"}, "long.json",
                         {{"HEAPLINE_PRECISION", "exact"}, {"HEAPLINE_INTERVAL_MS", "0"}}, &f);
  const auto& samples = r["samples"];
  EXPECT_LE(samples.size(), 4096u);
  EXPECT_GE(samples.size(), 1024u);  // merged, not truncated
  EXPECT_GT(r["publishes"].get<std::int64_t>(), 300000);
  EXPECT_GT(r["interval_ns"].get<std::int64_t>(), 0);  // grew as the buffer merged
  EXPECT_EQ(peak(r) - final_bytes(r), f.first);
  EXPECT_EQ(max_of_samples(r), peak(r));
}

// --- the API --------------------------------------------------------------

TEST_F(Interposer, ApiCornersBehaveExactlyAsWithoutTheLibrary) {
  RunOptions plain;
  plain.env["LD_PRELOAD"] = std::nullopt;
  RunResult without = run({kCorners}, plain);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_TRUE(std::regex_search(without.out, std::regex(R"(calloc overflow.* NULL errno=ENOMEM)"))) << without.out;
  EXPECT_NE(without.out.find("returns EINVAL errno=kept out=untouched"), std::string::npos) << without.out;

  RunResult with = run_traced({kCorners}, "corners.json");
  EXPECT_EQ(with.exit_code, 0);
  EXPECT_EQ(with.err, "");
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(heapline_format_problem(read_json(dir_ / "corners.json")), "");

  RunResult with_null = run_traced({kCorners}, "null.json", {}, kNullLib);
  EXPECT_EQ(with_null.out, without.out);
}

// heapline's own memory refused (an address-space limit with room for the
// program's blocks, not for the sampler's arena): the program's calls give
// what they give without heapline, errno included, and the report counts
// the blocks it could not sample, each once.
TEST_F(Interposer, WhenItsOwnMemoryIsRefusedTheProgramsCallsBehaveAsWithoutTheLibrary) {
  RunOptions plain;
  plain.env["LD_PRELOAD"] = std::nullopt;
  RunResult without = run({TIGHT_MEMORY}, plain);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(without.out.find("malloc(100)                ok   errno=kept\n"), std::string::npos) << without.out;
  EXPECT_NE(without.out.find("malloc(64 MiB)             fail errno=ENOMEM\n"), std::string::npos) << without.out;

  RunResult with = run_traced({TIGHT_MEMORY}, "tight.json", {{"HEAPLINE_SAMPLE", "1"}});
  EXPECT_EQ(with.exit_code, 0) << with.err;
  EXPECT_EQ(with.out, without.out);
  const json report = read_json(dir_ / "tight.json");
  EXPECT_EQ(report["sampling"]["samples"].get<std::int64_t>(), 0) << report["sampling"].dump();
  // Each block the sampler could not take counted once: the program's
  // 1000 blocks of its loop, its table's few, and stdio's buffer.
  EXPECT_GE(report["sampling"]["dropped"].get<std::int64_t>(), 1000) << report["sampling"].dump();
  EXPECT_LE(report["sampling"]["dropped"].get<std::int64_t>(), 1010) << report["sampling"].dump();
}

// A FIFO appears at a report name while the program runs, and the live
// file, given up for an exec that then fails, is made again from the names
// as they are then. At the name with the pid (the command's fallback when
// its name is taken): the live file and the report are at the name, the
// FIFO left alone, nothing said. At the name itself: the heap line goes to
// the name with the pid, as at the start, and one line says so (the
// restore said "File name too long" of a name it had made up, and the exit
// that the heap line stayed in the live file it had removed).
TEST_F(Interposer, AFifoAtAReportNameAfterAFailedExecIsToldTruly) {
  const auto fifos = [this] {
    std::size_t count = 0;
    for (const auto& entry : fs::directory_iterator(dir_)) count += fs::is_fifo(entry.status()) ? 1 : 0;
    return count;
  };
  const RunResult fallback =
      run_traced({kPhaseProbe, "fifo-then-failed-exec", dir_.string(), "fallback", "json", "pid"}, "fallback.json");
  EXPECT_EQ(fallback.exit_code, 0) << fallback.err;
  EXPECT_EQ(fallback.err, "");
  EXPECT_EQ(fallback.out, "live file\n");
  const json report = read_json(dir_ / "fallback.json");
  EXPECT_EQ(heapline_format_problem(report), "");
  EXPECT_FALSE(report.contains("live_file_problem")) << report.dump();
  EXPECT_EQ(fifos(), 1u);

  const RunResult taken =
      run_traced({kPhaseProbe, "fifo-then-failed-exec", dir_.string(), "taken", "json", "plain"}, "taken.json");
  EXPECT_EQ(taken.exit_code, 0) << taken.err;
  EXPECT_TRUE(fs::is_fifo(dir_ / "taken.json"));
  EXPECT_EQ(taken.out, "no live file\n");
  EXPECT_EQ(taken.err.find("File name too long"), std::string::npos) << taken.err;
  std::smatch moved;
  ASSERT_TRUE(std::regex_match(taken.err, moved,
                               std::regex("heapline: " + (dir_ / "taken.json").string() +
                                          R"( is not a file of this user's \(a link, a FIFO, a directory or another )"
                                          R"(user's file\): left as it is; the report goes to (.*/taken\.\d+\.json)\n)")))
      << taken.err;
  EXPECT_EQ(heapline_format_problem(read_json(moved[1].str())), "");
  EXPECT_FALSE(fs::exists(dir_ / "taken.json.live"));

  // The name is free but the live file cannot be made again (a file size
  // limit set before the exec): said once, as at the init, and in the report.
  const RunResult limited =
      run_traced({kPhaseProbe, "fifo-then-failed-exec", dir_.string(), "limited", "json", "fsize"}, "limited.json");
  EXPECT_EQ(limited.exit_code, 0) << limited.err;
  EXPECT_EQ(limited.out, "no live file\n");
  EXPECT_EQ(limited.err, "heapline: the file size limit (ulimit -f) is 65536 bytes, below the 394104 bytes " +
                             (dir_ / "limited.json.live").string() +
                             " needs; the heap line is kept in memory only (lost if the process is killed)\n");
  const json limited_report = read_json(dir_ / "limited.json");
  EXPECT_EQ(heapline_format_problem(limited_report), "");
  EXPECT_EQ(limited_report.value("live_file_problem", ""),
            "not made: the file size limit (RLIMIT_FSIZE) is 65536 bytes, below the 394104 bytes it needs; "
            "the heap line was kept in memory only");
}

// The library keeps no descriptor open in its host: with its live file
// made and mapped and its /proc readings taken, the program has the
// descriptors it has without the library (one left open would be the
// program's to exhaust, or to find under a number it expected free). With
// the sampler on, the one addition is libunwind's: the pipe it opens when
// it is set up, for its checks of memory (two close-on-exec descriptors
// that libunwind 1.6 keeps for the life of the process, design.md), and it
// is set up by the first sample, not at start: a process the sampler never
// samples (a mean of 1 TiB) has none of them.
TEST_F(Interposer, TheLibraryLeavesNoDescriptorOpenInItsHost) {
  auto descriptors = [](const std::string& out) {
    std::set<std::string> items;
    std::istringstream words(out.substr(out.find(':') + 1));
    for (std::string word; words >> word;) items.insert(word);
    return items;
  };
  RunOptions plain;
  plain.env["LD_PRELOAD"] = std::nullopt;
  const RunResult without = run({kPhaseProbe, "descriptors"}, plain);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  ASSERT_EQ(without.out.rfind("descriptors: 0:", 0), 0u) << without.out;
  for (const char* sample : {"off", "1024g", "1"}) {
    SCOPED_TRACE(std::string("HEAPLINE_SAMPLE=") + sample);
    const RunResult with = run_traced({kPhaseProbe, "descriptors"}, "fds.json",
                                      {{"HEAPLINE_SAMPLE", sample}, {"HEAPLINE_SAMPLE_SEED", "7"}});
    EXPECT_EQ(with.exit_code, 0) << with.err;
    std::set<std::string> added;
    const std::set<std::string> before = descriptors(without.out), after = descriptors(with.out);
    std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::inserter(added, added.end()));
    for (const std::string& kept : before) EXPECT_EQ(after.count(kept), 1u) << kept << " is gone: " << with.out;
    const json sampled = read_json(dir_ / "fds.json");
    const std::int64_t samples = sampled.contains("sampling") ? sampled["sampling"]["samples"].get<std::int64_t>() : 0;
    if (std::string(sample) == "1024g") ASSERT_EQ(samples, 0) << "a sample taken: the run proves nothing";
    if (std::string(sample) == "1") ASSERT_GT(samples, 0) << "no sample taken: the run proves nothing";
    if (samples == 0) {
      EXPECT_TRUE(added.empty()) << with.out << " vs " << without.out;
    } else {
      ASSERT_EQ(added.size(), 2u) << with.out << " vs " << without.out;
      for (const std::string& item : added) EXPECT_NE(item.find(":pipe,cloexec"), std::string::npos) << with.out;
    }
    const json report = read_json(dir_ / "fds.json");
    EXPECT_FALSE(report.contains("live_file_problem")) << report.dump();
  }
}

// glibc's realloc(p, 0) frees p and returns NULL: the block leaves the
// figures like any freed block, so 1000 of them change nothing.
TEST_F(Interposer, ReallocToZeroTakesTheBlockOutOfTheFigures) {
  for (const char* precision : {"exact", "batched"}) {
    Figures none, many;
    json zero = traced_report({kPatterns, "realloc_zero", "chunk", "0"}, "zero.json",
                              {{"HEAPLINE_PRECISION", precision}}, &none);
    json thousand = traced_report({kPatterns, "realloc_zero", "chunk", "1000"}, "thousand.json",
                                  {{"HEAPLINE_PRECISION", precision}}, &many);
    ASSERT_GT(many.first, 1000) << precision;
    EXPECT_EQ(final_bytes(thousand), final_bytes(zero)) << precision;
    EXPECT_GE(thousand["calls"]["free"].get<std::int64_t>(), 1000) << precision;  // counted as a free
  }
}

// --- fork and exec --------------------------------------------------------

TEST_F(Interposer, ForkWithoutExecWritesTwoFilesAndTheChildStartsFromTheInheritedHeap) {
  RunResult result = run_traced({kForkProbe, "fork", "4194304"}, "fork.%p.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+) held=(\d+))"))) << result.out;
  std::string parent = m[1], child = m[2];
  std::int64_t held = std::stoll(m[3]);
  json parent_report = read_json(dir_ / ("fork." + parent + ".json"));
  json child_report = read_json(dir_ / ("fork." + child + ".json"));
  EXPECT_EQ(heapline_format_problem(parent_report), "");
  EXPECT_EQ(heapline_format_problem(child_report), "");
  EXPECT_EQ(child_report["pid"].get<int>(), std::stoi(child));
  EXPECT_EQ(child_report["ppid"].get<int>(), std::stoi(parent));
  EXPECT_GE(child_report["samples"][0][1].get<std::int64_t>(), held);
  EXPECT_EQ(child_report["samples"][0][0].get<std::int64_t>(), 0);
  EXPECT_GE(final_bytes(child_report), held + 64 * 1000);
  EXPECT_GE(final_bytes(parent_report), held);
  EXPECT_LE(child_report["calls"]["alloc"].get<std::int64_t>(), 100);  // its own calls only
}

TEST_F(Interposer, ForkChildCountsOnlyItsOwnThreadsCallsAndPublishes) {
  // The parent's threads, 4 ended (their calls folded into the process's)
  // and 4 alive at the fork, each called malloc, realloc and free 1000
  // times; exact precision publishes each call. The child has the forking
  // thread and one of its own, which makes 10 calls of each.
  RunResult result = run_traced({kForkProbe, "threads", "4"}, "threads.%p.json", {{"HEAPLINE_PRECISION", "exact"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+))"))) << result.out;
  json parent_report = read_json(dir_ / ("threads." + std::string(m[1]) + ".json"));
  json child_report = read_json(dir_ / ("threads." + std::string(m[2]) + ".json"));
  EXPECT_EQ(heapline_format_problem(child_report), "");
  EXPECT_EQ(parent_report["precision"]["max_threads"].get<std::int64_t>(), 5);  // 4 at a time, and the main thread
  EXPECT_GE(parent_report["calls"]["realloc"].get<std::int64_t>(), 8000);
  EXPECT_EQ(child_report["precision"]["max_threads"].get<std::int64_t>(), 2);
  for (const char* kind : {"alloc", "free", "realloc"}) {
    EXPECT_LE(child_report["calls"][kind].get<std::int64_t>(), 100) << kind;
  }
  EXPECT_LE(child_report["publishes"].get<std::int64_t>(), 300);
}

// A fork child's figures are its own from the fork on: it starts while its
// parent runs and ends before it (the parent waits), its timeline starts at
// 0 with what it inherited, its peak is at one of its own moments, and it
// runs with its parent's settings and program.
TEST_F(Interposer, AForkChildsTimesAndFiguresAreItsOwnFromTheFork) {
  RunResult result = run_traced({kForkProbe, "fork", "4194304"}, "own.%p.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+) held=(\d+))"))) << result.out;
  const json parent = read_json(dir_ / ("own." + std::string(m[1]) + ".json"));
  const json child = read_json(dir_ / ("own." + std::string(m[2]) + ".json"));
  const std::int64_t held = std::stoll(m[3]);
  const auto number = [](const json& report, const char* key) { return report[key].get<std::int64_t>(); };
  EXPECT_GE(number(child, "start_unix_ns"), number(parent, "start_unix_ns"));
  EXPECT_LE(number(child, "start_unix_ns") + number(child, "duration_ns"),
            number(parent, "start_unix_ns") + number(parent, "duration_ns"));
  EXPECT_LE(number(child, "peak_time_ns"), number(child, "duration_ns"));
  EXPECT_GE(number(child, "peak_bytes"), held + 64 * 1000);
  EXPECT_GE(number(child, "peak_bytes"), number(child, "final_bytes"));
  EXPECT_EQ(child["samples"][0][0], 0);
  EXPECT_GE(child["samples"][0][1].get<std::int64_t>(), held);
  EXPECT_EQ(child["exe"], parent["exe"]);
  EXPECT_EQ(child["size_basis"], parent["size_basis"]);
  EXPECT_EQ(child["precision"]["mode"], parent["precision"]["mode"]);
  EXPECT_EQ(child["precision"]["budget_floor_bytes"], parent["precision"]["budget_floor_bytes"]);
  EXPECT_EQ(child["precision"]["budget_divisor"], parent["precision"]["budget_divisor"]);
}

// An exec'd child's report is the new program's alone: its file, its pid
// and parent, its start after the fork, and the heap of its own blocks (the
// 100 blocks alloc_patterns holds at its spike), not what the image before
// it held.
TEST_F(Interposer, AnExecdChildsFiguresAreTheNewProgramsAlone) {
  RunResult result = run_traced({kForkProbe, "exec", kPatterns, "single", "chunk", "100", "0"}, "new.%e.%p.json",
                                {{"HEAPLINE_PRECISION", "exact"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+))"))) << result.out;
  const json parent = read_json(dir_ / ("new.fork_probe." + std::string(m[1]) + ".json"));
  const json child = read_json(dir_ / ("new.alloc_patterns." + std::string(m[2]) + ".json"));
  std::smatch spike;
  ASSERT_TRUE(std::regex_search(result.out, spike, std::regex(R"(spike=(\d+))"))) << result.out;
  EXPECT_EQ(child["pid"].get<int>(), std::stoi(m[2]));
  EXPECT_EQ(child["ppid"].get<int>(), std::stoi(m[1]));
  EXPECT_EQ(child["exe"], fs::canonical(kPatterns).string());
  EXPECT_GE(child["start_unix_ns"].get<std::int64_t>(), parent["start_unix_ns"].get<std::int64_t>());
  EXPECT_EQ(peak(child) - final_bytes(child), std::stoll(spike[1])) << "the spike, exactly: the new image's own blocks";
  const std::int64_t calls = child["calls"]["alloc"].get<std::int64_t>() + child["calls"]["realloc"].get<std::int64_t>();
  EXPECT_GE(calls, 100) << "its 100 blocks";
  EXPECT_LT(calls, 1000) << "the image before it made its calls in its own report";
}

TEST_F(Interposer, ForkChildInsertsItsPidWhenTheTemplateHasNone) {
  RunResult result = run_traced({kForkProbe, "fork", "65536"}, "run.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(child=(\d+))")));
  EXPECT_TRUE(fs::exists(dir_ / "run.json"));
  EXPECT_TRUE(fs::exists(dir_ / ("run." + std::string(m[1]) + ".json")));
}

TEST_F(Interposer, ExecedChildWritesItsOwnFile) {
  RunResult result = run_traced({kForkProbe, "exec", kPatterns, "single", "chunk", "100", "0"}, "exec.%e.%p.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+))")));
  json parent_report = read_json(dir_ / ("exec.fork_probe." + std::string(m[1]) + ".json"));
  json child_report = read_json(dir_ / ("exec.alloc_patterns." + std::string(m[2]) + ".json"));
  EXPECT_EQ(heapline_format_problem(parent_report), "");
  EXPECT_EQ(heapline_format_problem(child_report), "");
  EXPECT_NE(child_report["exe"].get<std::string>().find("alloc_patterns"), std::string::npos);
}

TEST_F(Interposer, ExecedChildOfTheRootInsertsItsPid) {
  // What the launcher sets up: one file name without %p, the root's pid.
  RunOptions options;
  options.env["LD_PRELOAD"] = kLib;
  options.env["HEAPLINE_OUT"] = (dir_ / "tree.json").string();
  options.cwd = dir_;
  // The shell execs fork_probe (same pid: the root), which forks and execs.
  RunResult result = run({"/bin/sh", "-c",
                          "HEAPLINE_ROOT_PID=$$ exec \"$0\" exec \"$1\" single chunk 100 0", kForkProbe, kPatterns},
                         options);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+))")));
  EXPECT_EQ(read_json(dir_ / "tree.json")["pid"].get<int>(), std::stoi(m[1]));
  EXPECT_EQ(read_json(dir_ / ("tree." + std::string(m[2]) + ".json"))["pid"].get<int>(), std::stoi(m[2]));
}

// --- a foreign allocator --------------------------------------------------

TEST_F(Interposer, PreloadedJemallocIsWatchedWithItsUsableSize) {
  ASSERT_STRNE(JEMALLOC_SO, "") << "libjemalloc.so.2 not found: tools/setup.sh --test installs libjemalloc2";
  Figures f;
  json r = traced_report({kPatterns, "single", "usable", "3000", "10"}, "je.json", {{"HEAPLINE_PRECISION", "exact"}},
                         &f, kLib + ":" + JEMALLOC_SO);
  EXPECT_EQ(r["allocator"], "foreign");
  EXPECT_EQ(r["size_basis"], "usable-size");
  EXPECT_EQ(peak(r) - final_bytes(r), f.first - f.second);
  // jemalloc alone crashes on this program (it has no pvalloc, so glibc's
  // block reaches jemalloc's free); both heapline libraries build pvalloc on
  // jemalloc's memalign, and then agree with each other exactly.
  RunResult corners = run_traced({kCorners}, "je-corners.json", {}, kLib + ":" + JEMALLOC_SO);
  EXPECT_EQ(corners.exit_code, 0) << corners.err;
  RunResult null_corners = run_traced({kCorners}, "je-null.json", {}, kNullLib + ":" + JEMALLOC_SO);
  EXPECT_EQ(corners.out, null_corners.out);
  EXPECT_NE(corners.out.find("calloc overflow"), std::string::npos);
}

TEST_F(Interposer, ProgramLinkedWithJemallocIsWatchedWithItsUsableSize) {
  ASSERT_STRNE(ALLOC_PATTERNS_JEMALLOC, "") << "libjemalloc.so.2 not found: tools/setup.sh --test installs libjemalloc2";
  Figures f;
  json r = traced_report({ALLOC_PATTERNS_JEMALLOC, "threads", "usable", "3", "500", "5"}, "linked.json",
                         {{"HEAPLINE_PRECISION", "exact"}}, &f);
  EXPECT_EQ(r["allocator"], "foreign");
  EXPECT_EQ(r["size_basis"], "usable-size");
  EXPECT_EQ(peak(r) - final_bytes(r), f.first - f.second);
}

// --- choosing the allocator -----------------------------------------------

// The library finds the allocator it forwards to with dlsym. A program that
// wraps dlsym and allocates in it (tracing shims and GL dispatch wrappers do)
// has those calls served while the choice is being made: every kind of
// allocation works, its blocks can be freed after the choice, and the final
// figure is what the program holds, with glibc and with a preloaded
// allocator.
TEST_F(Interposer, AProgramWhoseDlsymAllocatesRunsAsWithoutTheLibrary) {
  const std::string program = DLSYM_ALLOCATES;
  RunOptions plain;
  plain.env["LD_PRELOAD"] = std::nullopt;
  RunResult without = run({program}, plain);
  ASSERT_EQ(without.exit_code, 0) << without.out << without.err;
  EXPECT_EQ(without.out.rfind("ok calls=0 ", 0), 0u) << without.out;

  std::vector<std::string> preloads = {kLib};
  if (std::string(JEMALLOC_SO) != "") preloads.push_back(kLib + ":" + JEMALLOC_SO);
  for (std::size_t i = 0; i < preloads.size(); ++i) {
    SCOPED_TRACE(preloads[i]);
    const std::string name = "dlsym" + std::to_string(i) + ".json";
    RunResult with = run_traced({program}, name, {{"HEAPLINE_PRECISION", "exact"}}, preloads[i]);
    ASSERT_EQ(with.exit_code, 0) << with.out << with.err;
    EXPECT_EQ(with.err, "");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(with.out, m, std::regex(R"(^ok calls=(\d+) held=(\d+))"))) << with.out;
    EXPECT_GT(std::stoll(m[1]), 0) << "the library's dlsym calls did not reach the program's";
    json report = read_json(dir_ / name);
    EXPECT_EQ(heapline_format_problem(report), "");
    EXPECT_GE(final_bytes(report), std::stoll(m[2]));
    // The blocks made inside dlsym were all freed: the same figure as when
    // dlsym allocates nothing.
    const std::string quiet_name = "quiet" + std::to_string(i) + ".json";
    RunResult quiet = run_traced({program}, quiet_name,
                                 {{"HEAPLINE_PRECISION", "exact"}, {"DLSYM_ALLOCATES_QUIET", "1"}}, preloads[i]);
    ASSERT_EQ(quiet.exit_code, 0) << quiet.out << quiet.err;
    EXPECT_EQ(final_bytes(report), final_bytes(read_json(dir_ / quiet_name)));
  }
}

// The library reads clocks inside allocation calls. A program (or a
// preloaded library, as libfaketime is) that defines clock_gettime and
// allocates in it is never called by the library: it runs, its report is
// exact, and the report's start is the system's time, not the hour ahead
// that the program's clock answers.
TEST_F(Interposer, AProgramsOwnClockGettimeIsNeverCalledByTheLibrary) {
  for (const char* interval : {"0", "10"}) {
    SCOPED_TRACE(std::string("HEAPLINE_INTERVAL_MS=") + interval);
    const std::string name = std::string("clock") + interval + ".json";
    RunResult result =
        run_traced({CLOCK_ALLOCATES}, name, {{"HEAPLINE_PRECISION", "exact"}, {"HEAPLINE_INTERVAL_MS", interval}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(result.err, "");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(^ok calls=(\d+) held=(\d+))"))) << result.out;
    EXPECT_EQ(m[1], "1") << "the library called the program's clock_gettime";
    json report = read_json(dir_ / name);
    EXPECT_EQ(heapline_format_problem(report), "");
    EXPECT_GE(final_bytes(report), std::stoll(m[2]));
    // The start, a CLOCK_REALTIME reading: the system's, not an hour ahead.
    const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    EXPECT_LT(std::abs(now_ns - report["start_unix_ns"].get<std::int64_t>()), std::int64_t{600} * 1'000'000'000);
  }
}

// --- the output file ------------------------------------------------------

TEST_F(Interposer, WriterKilledMidWriteLeavesNoFileUnderTheFinalName) {
  RunResult result = run_traced({kPatterns, "long", "chunk", "20000"}, "killed.json",
                                {{"HEAPLINE_PRECISION", "exact"},
                                 {"HEAPLINE_INTERVAL_MS", "0"},
                                 {"HEAPLINE_TEST_KILL_WRITER", "mid-write"}},
                                kTestHooksLib);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_FALSE(fs::exists(dir_ / "killed.json"));
  auto temps = files_matching(dir_, R"(killed\.json\.\d+\.tmp)");
  ASSERT_EQ(temps.size(), 1u);
  EXPECT_GT(fs::file_size(temps[0]), 0u);
  EXPECT_THROW(read_json(temps[0]), json::parse_error);  // really cut short
}

TEST_F(Interposer, WriterKilledBeforeRenameLeavesNoFileUnderTheFinalName) {
  RunResult result = run_traced({kPatterns, "single", "chunk", "100", "0"}, "killed.json",
                                {{"HEAPLINE_TEST_KILL_WRITER", "before-rename"}}, kTestHooksLib);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_FALSE(fs::exists(dir_ / "killed.json"));
  EXPECT_EQ(files_matching(dir_, R"(killed\.json\.\d+\.tmp)").size(), 1u);
}

TEST_F(Interposer, ShippedLibraryIgnoresTheTestHooks) {
  RunResult result = run_traced({kPatterns, "single", "chunk", "100", "0"}, "kept.json",
                                {{"HEAPLINE_TEST_KILL_WRITER", "before-rename"}});
  EXPECT_EQ(result.signal, 0);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(fs::exists(dir_ / "kept.json"));
}

TEST_F(Interposer, OutputOffWritesNothingAndSummaryIsOneStderrLine) {
  RunResult result = run_traced({kPatterns, "single", "chunk", "100", "0"}, "unused.json",
                                {{"HEAPLINE_OUT", "off"}, {"HEAPLINE_SUMMARY", "1"}});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(fs::is_empty(dir_));
  EXPECT_TRUE(std::regex_match(result.err, std::regex(R"(heapline: peak [0-9.]+ \w+ at [0-9.]+ s, final [0-9.]+ \w+, )"
                                                      R"(mapped peak [0-9.]+ \w+ at [0-9.]+ s, final [0-9.]+ \w+, )"
                                                      R"(total peak [0-9.]+ \w+ at [0-9.]+ s, )"
                                                      R"(precision \+/-[0-9.]+ \w+, \d+ samples, no output \(HEAPLINE_OUT=off\)\n)")))
      << result.err;
  EXPECT_EQ(result.out.find("heapline"), std::string::npos);
}

TEST_F(Interposer, DefaultNameGoesToTheStartingDirectory) {
  RunResult result = run_traced({kPatterns, "single", "chunk", "10", "0"}, "unused", {{"HEAPLINE_OUT", std::nullopt}});
  EXPECT_EQ(result.exit_code, 0);
  auto files = files_matching(dir_, R"(heapline\.alloc_patterns\.\d+\.json)");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(heapline_format_problem(read_json(files[0])), "");
}

TEST_F(Interposer, UnwritableOutputIsReportedOnceAndTheProgramCarriesOn) {
  RunResult result = run_traced({kPatterns, "single", "chunk", "10", "0"}, "unused",
                                {{"HEAPLINE_OUT", (dir_ / "missing" / "x.json").string()}});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(std::regex_search(result.err, std::regex(R"(heapline: .*/missing/x\.json was not written either)"
                                                          R"(; the heap line is lost \(\d+ samples\), its figures: peak [^\n]*\n$)")))
      << result.err;
}

struct BadValue {
  const char* variable;
  const char* value;
  const char* json_key;
};

TEST_F(Interposer, BadSettingsGiveOneClearLineAndTheDefault) {
  for (BadValue bad : {BadValue{"HEAPLINE_INTERVAL_MS", "ten", "interval_ns"},
                       BadValue{"HEAPLINE_INTERVAL_MS", "-5", "interval_ns"},
                       BadValue{"HEAPLINE_PRECISION", "fast", "precision"},
                       BadValue{"HEAPLINE_PRECISION", "0,64", "precision"},
                       BadValue{"HEAPLINE_PRECISION", "4096,0", "precision"},
                       BadValue{"HEAPLINE_SUMMARY", "yes", "precision"},
                       BadValue{"HEAPLINE_FOLLOW", "children", "precision"},
                       BadValue{"HEAPLINE_ROOT_PID", "12abc", "precision"},
                       BadValue{"HEAPLINE_ROOT_PID", "-1", "precision"},
                       BadValue{"HEAPLINE_ROOT_PID", "99999999999", "precision"}}) {
    SCOPED_TRACE(std::string(bad.variable) + "=" + bad.value);
    std::string name = std::string("bad-") + bad.variable + ".json";
    // fork_probe forks: the child must not repeat the line.
    RunResult result = run_traced({kForkProbe, "fork", "1024"}, name, {{bad.variable, bad.value}});
    EXPECT_EQ(result.exit_code, 0);
    std::string expected = std::string("heapline: ") + bad.variable + "='" + bad.value +
                           "' is not valid \\(expected [^)]*\\); using the default [^\n]*\n";
    EXPECT_TRUE(std::regex_match(result.err, std::regex(expected))) << result.err;
    json r = read_json(dir_ / name);
    EXPECT_EQ(r["interval_ns"], 10'000'000);
    EXPECT_EQ(r["precision"]["mode"], "batched");
    EXPECT_EQ(r["precision"]["budget_floor_bytes"], 262144);
    EXPECT_EQ(r["precision"]["budget_divisor"], 100);
  }
}

// The run the launcher started the process in (HEAPLINE_RUN_ID) is in its
// report as "run_id", by which the launcher tells its run's reports from
// another launch's beside them; none without it, and a value the library
// refuses is one line and no run_id.
TEST_F(Interposer, TheRunIdIsRecordedInTheReport) {
  const std::vector<std::string> program = {kPatterns, "single", "chunk", "100", "0"};
  json given = traced_report(program, "given.json", {{"HEAPLINE_RUN_ID", "4471-0123456789abcdef"}});
  EXPECT_EQ(given.value("run_id", ""), "4471-0123456789abcdef");
  json none = traced_report(program, "none.json", {{"HEAPLINE_RUN_ID", std::nullopt}});
  EXPECT_FALSE(none.contains("run_id")) << none.dump();
  RunResult refused = run_traced(program, "refused.json", {{"HEAPLINE_RUN_ID", "a b"}});
  EXPECT_EQ(refused.err, "heapline: HEAPLINE_RUN_ID='a b' is not valid (expected 1 to 63 letters, digits, '.', '_' "
                         "or '-', which the launcher sets); using the default unset: no run_id in the report\n");
  EXPECT_FALSE(read_json(dir_ / "refused.json").contains("run_id"));
}

// Without the launcher, nothing tells a program that another started it:
// each program started under the library is a root of its own and says a
// bad value again (a fork child never does), unless HEAPLINE_ROOT_PID names
// the first (HEAPLINE_FOLLOW=command sets it, as the launcher does).
TEST_F(Interposer, WithoutTheLauncherABadValueIsSaidByEachProgramUnlessTheRootIsNamed) {
  const std::string line = "heapline: HEAPLINE_MAPPED='yes' is not valid (expected on or 1, off or 0); using the "
                           "default on\n";
  const std::vector<std::string> two_programs = {"/bin/sh", "-c", "/bin/true; /bin/true"};
  RunResult each = run_traced(two_programs, "each.json", {{"HEAPLINE_MAPPED", "yes"}});
  EXPECT_EQ(each.err, line + line + line);
  RunResult named = run_traced(two_programs, "named.json", {{"HEAPLINE_MAPPED", "yes"}, {"HEAPLINE_FOLLOW", "command"}});
  EXPECT_EQ(named.err, line);
}

// --- heapline.h, markers, the live file -----------------------------------

TEST_F(Interposer, ApiDoesNothingWithoutTheLibrary) {
  for (const std::string& program : {kPhaseProbe, kPhaseProbeNoPie}) {
    RunOptions options;
    options.env["LD_PRELOAD"] = std::nullopt;
    options.cwd = dir_;
    RunResult plain = run({program, "api"}, options);
    EXPECT_EQ(plain.exit_code, 0) << program << plain.err;
    EXPECT_EQ(plain.out, "live=0 peak=0 phase=0 mapped=0 total=0 total_peak=0 unmapped=0\n") << program;
    // The forwarding-only library exports no API: the same.
    RunResult null_lib = run_traced({program, "api"}, "null.json", {}, kNullLib);
    EXPECT_EQ(null_lib.exit_code, 0);
    EXPECT_EQ(null_lib.out, "live=0 peak=0 phase=0 mapped=0 total=0 total_peak=0 unmapped=0\n") << program;
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(Interposer, ApiReadsTheExactLiveHeapAndThePhasePeak) {
  for (const std::string& program : {kPhaseProbe, kPhaseProbeNoPie}) {
    json r = traced_report({program, "api"}, "api.json");
    RunResult result = run_traced({program, "api"}, "api.json", {{"HEAPLINE_PRECISION", "exact"}});
    auto values = parse_keys(result.out);
    ASSERT_EQ(values.size(), 7u) << program << ": " << result.out;
    EXPECT_GT(values["live"], 1 << 20) << program;
    // The peak of the phase that began at reset_peak, with the 1 MiB block
    // live all along; freeing it does not lower the peak.
    EXPECT_EQ(values["peak"], values["live"]);
    EXPECT_EQ(values["phase"], values["peak"]);
    // Mapped memory: the 8 MiB anonymous mapping, not the file's 4 MiB; the
    // sum with the heap, and its phase peak kept after the unmap.
    EXPECT_EQ(values["mapped"], 8 << 20) << program;
    EXPECT_EQ(values["total"], values["live"] + values["mapped"]) << program;
    EXPECT_EQ(values["total_peak"], values["total"]) << program;
    EXPECT_EQ(values["unmapped"], 0) << program;
    json exact = read_json(dir_ / "api.json");
    EXPECT_GE(peak(exact), values["peak"]);
    EXPECT_EQ(exact["mapped"]["peak_bytes"], 8 << 20);
    EXPECT_GE(exact["total"]["peak_bytes"], values["total"]);
    // HEAPLINE_MAPPED=off: nothing mapped is counted, the sum is the heap.
    RunResult off = run_traced({program, "api"}, "off.json", {{"HEAPLINE_PRECISION", "exact"}, {"HEAPLINE_MAPPED", "off"}});
    auto off_values = parse_keys(off.out);
    EXPECT_EQ(off_values["mapped"], 0) << program << off.out;
    EXPECT_EQ(off_values["total"], off_values["live"]) << program << off.out;
    ASSERT_EQ(exact["markers"].size(), 1u);
    EXPECT_EQ(exact["markers"][0][1], "api");
  }
}

TEST_F(Interposer, MarkersAreRecordedInOrderAtTheirTimes) {
  RunResult result = run_traced({kPhaseProbe, "phases"}, "phases.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  json r = read_json(dir_ / "phases.json");
  ASSERT_EQ(heapline_format_problem(r), "");
  EXPECT_EQ(r["ended"], "exit");
  const auto& markers = r["markers"];
  ASSERT_EQ(markers.size(), 4u) << markers;
  const std::vector<std::string> names{"start", "load", "sort", "done"};
  std::int64_t previous = -1;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(markers[i][1], names[i]);
    std::int64_t t = markers[i][0].get<std::int64_t>();
    if (previous >= 0) EXPECT_GE(t - previous, 20'000'000) << "20 ms sleep between markers";
    EXPECT_LE(t, r["duration_ns"].get<std::int64_t>());
    // Each marker takes a sample at its own time: the heap at the marker.
    bool sampled = false;
    for (const auto& sample : r["samples"]) sampled = sampled || sample[0].get<std::int64_t>() == t;
    EXPECT_TRUE(sampled) << "no sample at marker " << names[i];
    previous = t;
  }
}

// Of two moments at which the heap reached the same peak, the first is the
// one reported (a later equal value is no new peak): the same 64 KiB block
// held before the marker "first" and again after "second", 50 ms later.
TEST_F(Interposer, OfTwoEqualPeaksTheFirstMomentIsReported) {
  json r = traced_report({kPhaseProbe, "twice"}, "twice.json", {{"HEAPLINE_PRECISION", "exact"}});
  ASSERT_EQ(r["markers"].size(), 2u) << r["markers"];
  const std::int64_t second = r["markers"][1][0].get<std::int64_t>();
  EXPECT_GE(r["peak_bytes"].get<std::int64_t>(), 64 << 10);
  EXPECT_LT(r["peak_time_ns"].get<std::int64_t>(), second) << "the peak's time is the first moment it was reached";
  EXPECT_LT(r["total"]["peak_time_ns"].get<std::int64_t>(), second) << "so is heap + mapped's";
  // The heap was at its peak again after the second marker.
  std::int64_t after = 0;
  for (const auto& sample : r["samples"]) {
    if (sample[0].get<std::int64_t>() >= second) after = std::max(after, sample[2].get<std::int64_t>());
  }
  EXPECT_EQ(after, r["peak_bytes"].get<std::int64_t>()) << r["samples"].dump();
}

// A peak held until the exit is reached at the allocation, not at the exit:
// heap + mapped (nothing mapped) equals the heap's peak and takes its first
// moment too, in a fork child as in its parent (the exit's own reading of
// the sum once stamped it with the exit's time).
TEST_F(Interposer, APeakHeldUntilTheExitIsDatedWhenItWasReached) {
  RunResult result = run_traced({kPhaseProbe, "peak-held-to-exit", "fork"}, "held.%p.json", {{"HEAPLINE_PRECISION", "exact"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto reports = heapline::test::files_matching(dir_, R"(held\.\d+\.json)");
  ASSERT_EQ(reports.size(), 2u) << "the parent's and the fork child's";
  for (const auto& path : reports) {
    const json r = read_json(path);
    const std::int64_t peak_at = r["peak_time_ns"].get<std::int64_t>();
    EXPECT_GE(r["peak_bytes"].get<std::int64_t>(), 4 << 20) << path;
    EXPECT_LE(peak_at + 40'000'000, r["duration_ns"].get<std::int64_t>()) << path << ": 50 ms between peak and exit";
    EXPECT_EQ(r["total"]["peak_bytes"], r["peak_bytes"]) << path;
    EXPECT_EQ(r["total"]["peak_time_ns"].get<std::int64_t>(), peak_at) << path << ": heap + mapped's is the heap's moment";
  }
}

// A report holds the first 256 markers, each name cut to its first 47
// bytes: 300 markers named with 60 bytes. Each marker still takes its
// sample.
TEST_F(Interposer, MarkersPastTheCapacityAndNamesPastTheirLengthAreCut) {
  json r = traced_report({kPhaseProbe, "marks", "300"}, "marks.json", {{"HEAPLINE_INTERVAL_MS", "10"}});
  const auto& markers = r["markers"];
  ASSERT_EQ(markers.size(), 256u);
  for (std::size_t i = 0; i < markers.size(); ++i) {
    std::string name = "marker-" + std::to_string(i) + "-";
    name.resize(60, 'x');
    EXPECT_EQ(markers[i][1], name.substr(0, 47)) << i;
  }
  EXPECT_GE(r["samples"].size(), 300u) << "a sample at every marker, recorded or not";
  EXPECT_EQ(r["markers_dropped"], 44) << "the markers past the capacity are counted";
  // Under the capacity the report has no such field.
  EXPECT_FALSE(traced_report({kPhaseProbe, "marks", "4"}, "few.json").contains("markers_dropped"));
}

// The resident set is read at most once per sampling interval, however
// often markers take samples: 300 markers 100 us apart, a reading at least
// 10 ms after the one before (but the exit's, always taken).
TEST_F(Interposer, TheResidentSetIsReadAtMostOncePerInterval) {
  json r = traced_report({kPhaseProbe, "marks", "300"}, "marks.json", {{"HEAPLINE_INTERVAL_MS", "10"}});
  const json& readings = r["resident_samples"];
  ASSERT_GE(readings.size(), 2u) << readings.dump();
  for (std::size_t i = 1; i + 1 < readings.size(); ++i) {
    EXPECT_GE(readings[i][0].get<std::int64_t>() - readings[i - 1][0].get<std::int64_t>(), 10'000'000)
        << "readings " << i - 1 << " and " << i << ": " << readings.dump();
  }
  EXPECT_LE(readings.size(), static_cast<std::size_t>(r["duration_ns"].get<std::int64_t>() / 10'000'000 + 2))
      << readings.dump();
}

// The heap at a marker holds what its thread had not yet published: the
// marker publishes the thread's pending bytes before its sample. A block of
// 1000 bytes between two markers stays under the batched threshold until
// the second marker, whose sample is 1000 bytes (and the block's overhead)
// above the first's.
TEST_F(Interposer, AMarkersSampleHoldsItsThreadsPendingBytes) {
  RunResult result = run_traced({kPhaseProbe, "mark-pending"}, "mark-pending.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  json r = read_json(dir_ / "mark-pending.json");
  ASSERT_EQ(r["precision"]["mode"], "batched");
  ASSERT_EQ(r["markers"].size(), 2u) << r["markers"].dump();
  auto heap_at = [&](const json& marker) {
    for (const auto& sample : r["samples"]) {
      if (sample[0] == marker[0]) return sample[1].get<std::int64_t>();
    }
    return std::int64_t{-1};
  };
  const std::int64_t before = heap_at(r["markers"][0]);
  const std::int64_t after = heap_at(r["markers"][1]);
  ASSERT_GE(before, 0) << r["samples"].dump();
  EXPECT_GE(after - before, 1000) << r["samples"].dump();
  EXPECT_LE(after - before, 1024) << r["samples"].dump();
}

TEST_F(Interposer, PeakIsNeverBelowTheFinalHeapWhenThreadsHoldPendingBytes) {
  RunResult result = run_traced({kPhaseProbe, "pending", "4"}, "pending.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto values = parse_keys(result.out);
  json r = read_json(dir_ / "pending.json");
  ASSERT_EQ(heapline_format_problem(r), "");  // checks peak >= final
  EXPECT_GE(peak(r), final_bytes(r));
  EXPECT_GE(peak(r), values["live"]);
  EXPECT_GE(values["peak"], values["live"]);
  // 4 threads x 64 blocks of 100 bytes are pending, not published: the
  // exact figures count them.
  EXPECT_GE(values["live"], 4 * 64 * 100);
  EXPECT_GE(final_bytes(r), 4 * 64 * 100);
}

TEST_F(Interposer, LiveFileIsRemovedAfterACleanExitAndLeftByAKill) {
  RunResult clean = run_traced({kPhaseProbe, "phases"}, "clean.json");
  EXPECT_EQ(clean.exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "clean.json"));
  EXPECT_FALSE(fs::exists(dir_ / "clean.json.live"));
  RunResult aborted = run_traced({kPhaseProbe, "abort", "30"}, "aborted.json");
  EXPECT_EQ(aborted.signal, SIGABRT);
  EXPECT_FALSE(fs::exists(dir_ / "aborted.json"));
  ASSERT_TRUE(fs::exists(dir_ / "aborted.json.live"));
  // Its size is fixed: the layout's (interposer/README.md has it, and says
  // its size, which interposer.unit.Defaults holds to the same constant).
  EXPECT_EQ(fs::file_size(dir_ / "aborted.json.live"), sizeof(heapline::LiveRegion));
  // HEAPLINE_OUT=off: no file of any kind.
  fs::path quiet = dir_ / "quiet";
  fs::create_directories(quiet);
  RunOptions options;
  options.env = {{"LD_PRELOAD", kLib}, {"HEAPLINE_OUT", "off"}};
  options.cwd = quiet;
  EXPECT_EQ(run({kPhaseProbe, "abort", "10"}, options).signal, SIGABRT);
  EXPECT_TRUE(fs::is_empty(quiet));
}

TEST_F(Interposer, ForkChildHasItsOwnLiveFile) {
  RunResult result = run_traced({kForkProbe, "fork", "4194304"}, "fork.%p.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(files_matching(dir_, R"(fork\.\d+\.json)").size(), 2u);
  EXPECT_TRUE(files_matching(dir_, R"(.*\.live)").empty());
}

// The line names why the file could not be made: a missing directory, a
// file where a directory should be. The cause is said once: the report's
// line at the exit says only that it was not written either, with the
// figures that nothing else holds.
TEST_F(Interposer, UncreatableLiveFileFallsBackToMemoryWithOneLine) {
  { std::ofstream(dir_ / "file") << "a file, not a directory\n"; }
  for (const auto& [directory, reason] : {std::pair<std::string, std::string>{"missing", "No such file or directory"},
                                         {"file", "Not a directory"}}) {
    RunResult result = run_traced({kPhaseProbe, "phases"}, "unused",
                                  {{"HEAPLINE_OUT", (dir_ / directory / "x.json").string()}});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_TRUE(std::regex_match(
        result.err, std::regex("heapline: cannot create .*/" + directory + "/x\\.json\\.live: " + reason +
                               R"(; the heap line is kept in memory only \(lost if the process is killed\)\n)"
                               "heapline: .*/" + directory + "/x\\.json was not written either" +
                               R"(; the heap line is lost \(\d+ samples\), its figures: peak [^\n]*\n)")))
        << result.err;
    EXPECT_EQ(result.err.find(reason), result.err.rfind(reason)) << "the cause, once: " << result.err;
  }
}

// --- what a user's files and processes can throw at it ---------------------

TEST_F(Interposer, ReportPathThatIsNotARegularFileOfThisUsersIsNeverReplaced) {
  // A FIFO stands for any device (/dev/null as root): rename() would put a
  // regular file in its place. Another user's file (in a shared sticky
  // directory, which root's rename would replace): never this user's report.
  const fs::path fifo = dir_ / "out.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::vector<fs::path> names = {fifo};
  if (geteuid() == 0) {
    const fs::path others = dir_ / "others.json";
    std::ofstream(others) << "another user's data\n";
    ASSERT_EQ(chown(others.c_str(), 65534, 65534), 0);
    names.push_back(others);
  }
  for (const fs::path& name : names) {
    SCOPED_TRACE(name.string());
    const bool was_fifo = fs::is_fifo(name);
    RunResult result = run_traced({kPatterns, "single", "chunk", "100", "0"}, "unused", {{"HEAPLINE_OUT", name.string()}});
    EXPECT_EQ(result.exit_code, 0);
    if (was_fifo) {
      EXPECT_TRUE(fs::is_fifo(name));
    } else {
      struct stat info {};
      ASSERT_EQ(lstat(name.c_str(), &info), 0);
      EXPECT_EQ(info.st_uid, 65534u);
      EXPECT_EQ(heapline::test::read_file(name), "another user's data\n");
    }
    EXPECT_FALSE(fs::exists(name.string() + ".live"));
    // The report goes to the name with the pid, from the start (its live
    // file with it), and one line says so.
    std::smatch moved;
    ASSERT_TRUE(std::regex_match(result.err, moved,
                                 std::regex("heapline: " + name.string() +
                                            R"( is not a file of this user's \(a link, a FIFO, a directory or another )"
                                            R"(user's file\): left as it is; the report goes to (.*)\n)")))
        << result.err;
    EXPECT_EQ(heapline_format_problem(read_json(moved[1].str())), "");
  }
}

// A report replaced keeps the replaced file's mode (a private report stays
// private); a new one gets what open(2) gives, 0666 less the umask.
TEST_F(Interposer, AReplacedReportKeepsItsModeAndANewOneFollowsTheUmask) {
  const fs::path private_report = dir_ / "private.json";
  std::ofstream(private_report) << "{}\n";
  fs::permissions(private_report, fs::perms::owner_read | fs::perms::owner_write);
  RunResult replaced =
      run_traced({kPatterns, "single", "chunk", "100", "0"}, "unused", {{"HEAPLINE_OUT", private_report.string()}});
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_EQ(heapline_format_problem(read_json(private_report)), "");
  EXPECT_EQ(fs::status(private_report).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);

  const mode_t old_mask = umask(002);
  RunResult fresh = run_traced({kPatterns, "single", "chunk", "100", "0"}, "fresh.json");
  umask(old_mask);
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(fs::status(dir_ / "fresh.json").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::group_write |
                fs::perms::others_read);
}

TEST_F(Interposer, RunningProcessesNeverShareAReportName) {
  // Without the launcher every process of a shell's run is a root; the
  // shell, started first, keeps the plain name while its children run.
  const std::string child = kPatterns + " single chunk 100 0";
  RunResult result =
      run_traced({"/bin/bash", "-c", child + "; " + child + "; true"}, "shared.json");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  json shell = read_json(dir_ / "shared.json");
  EXPECT_EQ(fs::path(shell["exe"].get<std::string>()).filename(), "bash");
  auto children = files_matching(dir_, R"(shared\.\d+\.json)");
  ASSERT_EQ(children.size(), 2u);
  for (const auto& file : children) {
    json r = read_json(file);
    EXPECT_EQ(heapline_format_problem(r), "");
    EXPECT_EQ(r["exe"], fs::canonical(kPatterns).string());
    EXPECT_EQ(file.filename(), "shared." + std::to_string(r["pid"].get<int>()) + ".json");
  }
  EXPECT_TRUE(files_matching(dir_, R"(.*\.live)").empty());
}

TEST_F(Interposer, ALiveFileSomeoneElseMadeIsNeverOpened) {
  // Pre-created under the name the process would take: with an absurd
  // sample count, as a hostile user of a shared directory would leave it.
  const fs::path planted = dir_ / "victim.json.live";
  {
    std::string junk(200 * 1024, '\xff');
    std::ofstream(planted, std::ios::binary) << junk;
  }
  RunResult result = run_traced({kPatterns, "single", "chunk", "100", "0"}, "victim.json");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.signal, 0);
  EXPECT_EQ(fs::file_size(planted), 200u * 1024);
  EXPECT_EQ(heapline::test::read_file(planted), std::string(200 * 1024, '\xff'));
  EXPECT_FALSE(fs::exists(dir_ / "victim.json"));
  EXPECT_EQ(files_matching(dir_, R"(victim\.\d+\.json)").size(), 1u);
}

TEST_F(Interposer, AnExecutablePathThatIsNotUtf8StillGivesValidJson) {
  const fs::path odd = dir_ / "bin\xff\xfe";
  fs::create_directory(odd);
  fs::copy_file(kPatterns, odd / "patterns");
  fs::permissions(odd / "patterns", fs::perms::owner_all);
  json r = traced_report({(odd / "patterns").string(), "single", "chunk", "100", "0"}, "odd.json");
  EXPECT_EQ(heapline_format_problem(r), "");
  EXPECT_NE(r["exe"].get<std::string>().find("bin\xef\xbf\xbd\xef\xbf\xbd/patterns"), std::string::npos) << r["exe"];
}

TEST_F(Interposer, LoadedWithDlopenItSaysItSeesNoAllocations) {
  // The program's malloc stays glibc's: without a word, the report would
  // show a heap of almost nothing.
  RunOptions options;
  options.env = {{"LD_PRELOAD", std::nullopt},
                 {"HEAPLINE_OUT", (dir_ / "dlopen.json").string()},
                 {"HEAPLINE_ROOT_PID", std::nullopt}};
  options.cwd = dir_;
  RunResult result =
      run({"/usr/bin/python3", "-c", "import ctypes; ctypes.CDLL('" + kLib + "'); x = [bytes(1000) for _ in range(9000)]"},
          options);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("heapline: the program's malloc is not libheapline's (it comes from "), std::string::npos)
      << result.err;
  json r = read_json(dir_ / "dlopen.json");
  EXPECT_EQ(r["allocations_seen"], false);
}

TEST_F(Interposer, PreloadedFirstItSaysItSeesTheAllocations) {
  json r = traced_report({kPatterns, "single", "chunk", "100", "0"}, "seen.json");
  EXPECT_EQ(r["allocations_seen"], true);
}

// --- real programs --------------------------------------------------------

class RealProgram : public Interposer {
 protected:
  // Same stdout and exit status with and without the library, and every
  // process leaves a valid file.
  void check(const std::vector<std::string>& argv, const fs::path& stdin_file = {}) {
    RunOptions plain;
    plain.env["LD_PRELOAD"] = std::nullopt;
    plain.cwd = dir_;
    plain.stdin_file = stdin_file;
    RunResult without = run(argv, plain);
    RunOptions traced = plain;
    traced.env["LD_PRELOAD"] = kLib;
    traced.env["HEAPLINE_OUT"] = (dir_ / "out" / "real.%e.%p.json").string();
    fs::create_directories(dir_ / "out");
    RunResult with = run(argv, traced);
    EXPECT_EQ(with.exit_code, without.exit_code) << with.err;
    EXPECT_EQ(with.out, without.out);
    EXPECT_EQ(with.err, without.err);
    auto files = files_matching(dir_ / "out", R"(real\..*\.json)");
    EXPECT_FALSE(files.empty());
    for (const auto& file : files) EXPECT_EQ(heapline_format_problem(read_json(file)), "") << file;
  }
};

TEST_F(RealProgram, Python3WithThreads) {
  check({"/usr/bin/python3", "-c",
         "import threading, hashlib\n"
         "def work(i):\n"
         "    data = [bytes(range(i % 200)) * 50 for _ in range(2000)]\n"
         "    return hashlib.sha256(b''.join(data)).hexdigest()\n"
         "results = [None] * 8\n"
         "def run(i): results[i] = work(i)\n"
         "threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]\n"
         "[t.start() for t in threads]; [t.join() for t in threads]\n"
         "print('\\n'.join(results))\n"});
}

TEST_F(RealProgram, GccCompilingASmallFile) {
  std::ofstream(dir_ / "hello.cpp") << "#include <map>\n#include <string>\n#include <cstdio>\n"
                                       "int main() { std::map<std::string, int> m{{\"a\", 1}}; "
                                       "std::printf(\"%d\\n\", m[\"a\"]); }\n";
  check({"/usr/bin/g++", "-O1", "-c", "hello.cpp", "-o", "hello.o"});
  EXPECT_TRUE(fs::exists(dir_ / "hello.o"));
}

TEST_F(RealProgram, Git) { check({"/usr/bin/git", "-C", SOURCE_DIR, "ls-files", "interposer"}); }

TEST_F(RealProgram, SortOnALargeInput) {
  {
    std::ofstream input(dir_ / "input.txt");
    std::uint64_t x = 42;
    for (int i = 0; i < 300000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      input << (x >> 20) << " line " << i << "\n";
    }
  }
  check({"/usr/bin/sort"}, dir_ / "input.txt");
}

TEST_F(RealProgram, CmakeVersion) { check({CMAKE_COMMAND_PATH, "--version"}); }

}  // namespace
