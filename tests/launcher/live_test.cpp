// The live file from outside: a process killed (SIGKILL, abort, an
// allocation failure under a memory limit) leaves a file that
// `heapline convert` turns into a heapline/1 report whose last sample is
// within one sampling interval of the end; the launcher does it on its own;
// `heapline top --once` reads a running process.
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "live_view.h"
#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::finish;
using heapline::test::heapline_format_problem;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;
using heapline::test::start;
using heapline::test::wait_for_output;

namespace {

const std::string kLauncher = HEAPLINE_LAUNCHER;
const std::string kLib = HEAPLINE_LIB;
const std::string kProbe = PHASE_PROBE;

std::int64_t unix_now_ns() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

class LiveFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = heapline::test::make_temp_dir("live"); }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  RunOptions traced(const std::string& name, const std::string& interval_ms = "5") {
    RunOptions options;
    options.cwd = dir_;
    options.env = {{"LD_PRELOAD", kLib},
                   {"HEAPLINE_OUT", (dir_ / name).string()},
                   {"HEAPLINE_INTERVAL_MS", interval_ms},
                   {"HEAPLINE_PRECISION", "exact"},
                   {"HEAPLINE_ROOT_PID", std::nullopt}};
    return options;
  }
  RunResult heapline(std::vector<std::string> args) {
    args.insert(args.begin(), kLauncher);
    RunOptions options;
    options.cwd = dir_;
    options.env = {{"LD_PRELOAD", std::nullopt}, {"HEAPLINE_LIB", std::nullopt}};
    return run(args, options);
  }
  // Converts NAME.live into NAME.json and checks what every converted report
  // must say; returns it.
  nlohmann::json convert(const std::string& name) {
    RunResult converted = heapline({"convert", (dir_ / (name + ".live")).string(), "-o", (dir_ / (name + ".json")).string()});
    EXPECT_EQ(converted.exit_code, 0) << converted.err;
    EXPECT_NE(converted.err.find("heapline: wrote "), std::string::npos) << converted.err;
    nlohmann::json r = read_json(dir_ / (name + ".json"));
    EXPECT_EQ(heapline_format_problem(r), "");
    EXPECT_EQ(r["ended"], "without-exit");
    EXPECT_EQ(r["last_sample_ns"], r["samples"].back()[0]);
    return r;
  }
  // The end (unix ns) is within one sampling interval after the last sample.
  static void expect_last_sample_near(const nlohmann::json& r, std::int64_t end_unix_ns) {
    const std::int64_t last = r["start_unix_ns"].get<std::int64_t>() + r["last_sample_ns"].get<std::int64_t>();
    const std::int64_t interval = r["interval_ns"].get<std::int64_t>();
    EXPECT_LE(last, end_unix_ns);
    EXPECT_LE(end_unix_ns - last, interval) << "last sample " << (end_unix_ns - last) / 1000 << " us before the end";
  }
  fs::path dir_;
};

TEST_F(LiveFile, SigkillMidRunLeavesAFileThatConvertsIntoAReport) {
  const fs::path stamp = dir_ / "stamp";
  auto running = start({kProbe, "churn", "0", stamp.string()}, traced("killed"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  usleep(100'000);  // well into the run: several samples
  // The process churns without pause, so it samples at every interval: the
  // last sample is at most one interval before its last allocation (stored
  // in `stamp`), however long the scheduler held it before the kill landed.
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  RunResult result = finish(running);
  std::int64_t killed_at = 0;
  {
    std::ifstream in(stamp, std::ios::binary);
    in.read(reinterpret_cast<char*>(&killed_at), sizeof killed_at);
  }
  EXPECT_LE(killed_at, unix_now_ns());
  EXPECT_EQ(result.signal, SIGKILL);
  ASSERT_FALSE(fs::exists(dir_ / "killed.json"));
  auto r = convert("killed");
  EXPECT_GE(r["samples"].size(), 10u);
  expect_last_sample_near(r, killed_at);
  EXPECT_EQ(r["pid"], running.pid);
  EXPECT_GT(r["calls"]["alloc"].get<std::int64_t>(), 1000);
}

TEST_F(LiveFile, AbortLeavesAFileThatConverts) {
  RunResult result = run({kProbe, "abort", "80"}, traced("aborted"));
  EXPECT_EQ(result.signal, SIGABRT);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(end_unix_ns=(\d+))"))) << result.out;
  auto r = convert("aborted");
  expect_last_sample_near(r, std::stoll(m[1]));
}

TEST_F(LiveFile, AllocationFailureUnderAMemoryLimitLeavesAFileThatConverts) {
  RunResult result = run({kProbe, "oom", "96"}, traced("oom", "2"));
  EXPECT_EQ(result.signal, SIGABRT) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(end_unix_ns=(\d+))"))) << result.out;
  auto r = convert("oom");
  expect_last_sample_near(r, std::stoll(m[1]));
  // The heap grew to most of the limit before malloc failed.
  EXPECT_GT(r["peak_bytes"].get<std::int64_t>(), 32 << 20);
}

TEST_F(LiveFile, LauncherConvertsTheReportOfAKilledCommand) {
  RunResult result = heapline({"--out", "run.json", kProbe, "abort", "30"});
  EXPECT_EQ(result.exit_code, 128 + SIGABRT);
  EXPECT_NE(result.err.find("heapline: the command ended without exit (signal 6); report converted from its live file"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("heapline: ended without exit (signal 6); last sample at"), std::string::npos) << result.err;
  auto r = read_json(dir_ / "run.json");
  EXPECT_EQ(heapline_format_problem(r), "");
  EXPECT_EQ(r["ended"], "without-exit");
  EXPECT_EQ(r["signal"], SIGABRT);
  EXPECT_FALSE(fs::exists(dir_ / "run.json.live"));
}

TEST_F(LiveFile, LauncherPlotsMarkers) {
  RunResult result = heapline({"--out", "phases.json", "--plot", "phases.svg", kProbe, "phases"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("heapline: 4 markers: start @"), std::string::npos) << result.err;
  std::string svg = heapline::test::read_file(dir_ / "phases.svg");
  for (const char* name : {">start<", ">load<", ">sort<", ">done<"}) EXPECT_NE(svg.find(name), std::string::npos) << name;
}

TEST_F(LiveFile, TopOnceShowsARunningProcess) {
  auto running = start({kProbe, "hold", "20"}, traced("held"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  RunResult top = heapline({"top", std::to_string(running.pid), "--once"});
  kill(running.pid, SIGKILL);
  finish(running);
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("heapline top: pid " + std::to_string(running.pid)), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("running"), std::string::npos) << top.out;
  EXPECT_TRUE(std::regex_search(top.out, std::regex(R"(live 2\.\d MiB   peak 2\.\d MiB)"))) << top.out;
  EXPECT_NE(top.out.find("holding @"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("#"), std::string::npos) << top.out;
}

TEST_F(LiveFile, TopWithoutAHeaplineFileSaysSo) {
  RunResult top = heapline({"top", std::to_string(getpid()), "--once"});
  EXPECT_EQ(top.exit_code, 1);
  EXPECT_NE(top.err.find("has no heapline live file"), std::string::npos) << top.err;
  RunResult gone = heapline({"top", "999999999", "--once"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("no process 999999999"), std::string::npos) << gone.err;
}

TEST_F(LiveFile, ConvertRejectsWhatIsNotALiveFile) {
  fs::path junk = dir_ / "junk.live";
  { std::ofstream(junk) << "not a live file"; }
  RunResult r = heapline({"convert", junk.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a heapline live file"), std::string::npos) << r.err;
}

TEST(LiveView, DefaultConvertedPath) {
  using heapline::launcher::default_converted_path;
  EXPECT_EQ(default_converted_path("a/heapline.x.1.json.live"), "a/heapline.x.1.json");
  EXPECT_EQ(default_converted_path("dump"), "dump.json");
}

}  // namespace
