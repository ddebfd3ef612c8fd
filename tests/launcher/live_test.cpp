// The live file from outside: a process killed (SIGKILL, abort, an
// allocation failure under a memory limit) leaves a file that
// `heapline convert` turns into a heapline/1 report whose last sample is
// within one sampling interval of its last allocation; the launcher does it
// on its own; `heapline top --once` reads a running process.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <functional>
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

std::int64_t monotonic_now_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// phase_probe's stamps (see its header comment), CLOCK_MONOTONIC.
struct ProbeStamps {
  std::int64_t origin_before = 0, origin_after = 0, last_before = 0, samples_at_least = 0;
};

ProbeStamps read_stamps(const fs::path& file) {
  std::int64_t raw[4] = {};
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(raw), sizeof raw);
  return {raw[0], raw[1], raw[2], raw[3]};
}

ProbeStamps parse_stamps(const std::string& out) {
  std::smatch m;
  ProbeStamps s;
  if (std::regex_search(out, m, std::regex(R"(origin_before=(\d+) origin_after=(\d+) last_before=(\d+) samples_at_least=(\d+))"))) {
    s = {std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3]), std::stoll(m[4])};
  }
  return s;
}

// The report time of the probe's marker "origin" (-1: none).
std::int64_t origin_time(const nlohmann::json& report) {
  for (const auto& marker : report["markers"]) {
    if (marker[1] == "origin") return marker[0].get<std::int64_t>();
  }
  return -1;
}

class LiveFile : public heapline::test::TempDirTest {
 protected:
  LiveFile() : TempDirTest("live") {}
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
  // The default (batched) precision and sampling interval, as users run it.
  RunOptions batched(const std::string& name, const std::string& interval_ms = "10") {
    RunOptions options = traced(name, interval_ms);
    options.env["HEAPLINE_PRECISION"] = std::nullopt;
    return options;
  }
  RunResult heapline(std::vector<std::string> args) {
    args.insert(args.begin(), kLauncher);
    RunOptions options;
    options.cwd = dir_;
    options.env = {{"LD_PRELOAD", std::nullopt}, {"HEAPLINE_LIB", std::nullopt}};
    return run(args, options);
  }
  // Starts the probe with `argv`, waits for its "ready", runs `heapline top
  // --once` on it, then kills it: what top printed.
  RunResult top_of_running_probe(const std::vector<std::string>& argv, const RunOptions& options) {
    auto running = start(argv, options);
    EXPECT_TRUE(wait_for_output(running, "ready"));
    RunResult top = heapline({"top", std::to_string(running.pid), "--once"});
    EXPECT_EQ(kill(running.pid, SIGKILL), 0);
    finish(running);
    EXPECT_EQ(top.exit_code, 0) << top.err;
    return top;
  }
  // The probe's fork MODE (map-drop-fork, map-keep-fork) run as a process
  // that is not the command, with report names from BASE: its running
  // parent, its child's pid, and the child's report name (BASE.PID.json),
  // once the child has said its pid and its live file is there (or 2 s).
  struct ForkedProbe {
    heapline::test::Started parent;
    std::string child;
    std::string name;
  };
  ForkedProbe start_fork_probe(const std::string& mode, const std::string& base) {
    RunOptions options = batched(base + ".json", "10");
    options.env["HEAPLINE_ROOT_PID"] = "1";
    ForkedProbe probe{start({kProbe, mode, "20"}, options), "", ""};
    EXPECT_TRUE(wait_for_output(probe.parent, "child="));
    std::smatch child;
    const std::string said = probe.parent.out_so_far();
    EXPECT_TRUE(std::regex_search(said, child, std::regex(R"(child=(\d+))"))) << said;
    probe.child = child[1].str();
    probe.name = base + "." + probe.child + ".json";
    for (int waited = 0; waited < 100 && !fs::exists(dir_ / (probe.name + ".live")); ++waited) usleep(20'000);
    return probe;
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
    EXPECT_EQ(r["final_bytes"], r["samples"].back()[1]) << "the final figure is the last sample's";
    return r;
  }
  // The last sample is less than one interval before the probe's last
  // allocation, and not after `ended_ns` (CLOCK_MONOTONIC once the process
  // was gone). All in the interposer's time base, through the marker
  // "origin": its time minus the probe's stamps around it brackets the
  // offset, so neither the scheduler nor a wall-clock step can fail this,
  // and a timeline that stopped early cannot pass it.
  static void expect_last_sample_near(const nlohmann::json& r, const ProbeStamps& stamps, std::int64_t ended_ns) {
    ASSERT_GT(stamps.origin_before, 0) << "the probe printed no stamps";
    const std::int64_t origin_t = origin_time(r);
    ASSERT_GE(origin_t, 0) << r["markers"].dump();
    const std::int64_t last = r["last_sample_ns"].get<std::int64_t>();
    const std::int64_t interval = r["interval_ns"].get<std::int64_t>();
    // probe clock - report clock lies in [origin_before - origin_t, origin_after - origin_t]
    const std::int64_t latest_end = ended_ns - stamps.origin_before + origin_t;
    const std::int64_t earliest_last_allocation = stamps.last_before - stamps.origin_after + origin_t;
    EXPECT_LE(last, latest_end);
    EXPECT_LT(earliest_last_allocation - last, interval)
        << "last sample " << (earliest_last_allocation - last) / 1000 << " us before the last allocation";
  }
};

TEST_F(LiveFile, SigkillMidRunLeavesAFileThatConvertsIntoAReport) {
  const fs::path stamp = dir_ / "stamp";
  auto running = start({kProbe, "churn", "0", stamp.string()}, traced("killed"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  // Well into the run: until the probe's own count says the timeline must
  // hold 10 samples, however slowly a loaded machine runs it.
  for (int waited_ms = 0; read_stamps(stamp).samples_at_least < 10 && waited_ms < 60'000; waited_ms += 5) usleep(5'000);
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  RunResult result = finish(running);
  const std::int64_t ended = monotonic_now_ns();
  const ProbeStamps stamps = read_stamps(stamp);
  EXPECT_GE(stamps.samples_at_least, 10);
  EXPECT_EQ(result.signal, SIGKILL);
  ASSERT_FALSE(fs::exists(dir_ / "killed.json"));
  auto r = convert("killed");
  // (A full timeline halves itself, keeping at least half its capacity.)
  EXPECT_GE(static_cast<std::int64_t>(r["samples"].size()), std::min<std::int64_t>(stamps.samples_at_least, 2048));
  expect_last_sample_near(r, stamps, ended);
  EXPECT_EQ(r["pid"], running.pid);
  EXPECT_GT(r["calls"]["alloc"].get<std::int64_t>(), 1000);
}

TEST_F(LiveFile, AbortLeavesAFileThatConverts) {
  RunResult result = run({kProbe, "abort", "80"}, traced("aborted"));
  const std::int64_t ended = monotonic_now_ns();
  EXPECT_EQ(result.signal, SIGABRT);
  auto r = convert("aborted");
  expect_last_sample_near(r, parse_stamps(result.out), ended);
}

TEST_F(LiveFile, AllocationFailureUnderAMemoryLimitLeavesAFileThatConverts) {
  RunResult result = run({kProbe, "oom", "96"}, traced("oom", "2"));
  const std::int64_t ended = monotonic_now_ns();
  EXPECT_EQ(result.signal, SIGABRT) << result.err;
  auto r = convert("oom");
  expect_last_sample_near(r, parse_stamps(result.out), ended);
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
  // One process, one thread: no sample went back in time, and no line says so.
  EXPECT_EQ(result.err.find("dropped"), std::string::npos) << result.err;
  auto r = read_json(dir_ / "run.json");
  EXPECT_EQ(heapline_format_problem(r), "");
  EXPECT_EQ(r["ended"], "without-exit");
  EXPECT_EQ(r["signal"], SIGABRT);
  EXPECT_FALSE(fs::exists(dir_ / "run.json.live"));
}

// Whatever the signal, the lowest (SIGHUP, 1) included: the line names it.
TEST_F(LiveFile, LauncherNamesTheSignalThatEndedTheCommand) {
  for (const int signal_number : {SIGHUP, SIGTERM}) {
    SCOPED_TRACE(signal_number);
    const std::string report = "signal" + std::to_string(signal_number) + ".json";
    RunResult result =
        heapline({"--out", report, "/bin/sh", "-c", "kill -s " + std::to_string(signal_number) + " $$"});
    EXPECT_EQ(result.exit_code, 128 + signal_number) << result.err;
    EXPECT_NE(result.err.find("heapline: the command ended without exit (signal " + std::to_string(signal_number) +
                              "); report converted from its live file"),
              std::string::npos)
        << result.err;
    auto r = read_json(dir_ / report);
    EXPECT_EQ(r["ended"], "without-exit");
    EXPECT_EQ(r["signal"], signal_number);
  }
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

// top ends when the process ends, not at its next refresh: with the
// longest interval the help allows (an hour), it still says "has ended"
// at once.
TEST_F(LiveFile, TopEndsWhenTheProcessEndsWhateverItsInterval) {
  auto running = start({kProbe, "mark-hold", "20"}, batched("ends"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  const pid_t killer = fork();
  if (killer == 0) {
    usleep(300'000);
    kill(running.pid, SIGKILL);
    _exit(0);
  }
  RunOptions options;
  options.cwd = dir_;
  options.env = {{"LD_PRELOAD", std::nullopt}, {"HEAPLINE_LIB", std::nullopt}};
  RunResult top = run({"/usr/bin/timeout", "30", kLauncher, "top", std::to_string(running.pid), "--interval", "3600"}, options);
  waitpid(killer, nullptr, 0);
  finish(running);
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("has ended"), std::string::npos) << top.out;
}

// `heapline top` on a terminal, as a person runs it: 'q' quits at once,
// without Enter (the terminal is read key by key), and the terminal's mode
// is given back however top ends, by 'q' or by a signal.
class TopOnATerminal {
 public:
  TopOnATerminal(const std::string& launcher, pid_t watched) {
    termios mode{};
    EXPECT_EQ(openpty(&master_, &terminal_, nullptr, nullptr, nullptr), 0);
    EXPECT_EQ(tcgetattr(terminal_, &mode), 0);
    EXPECT_NE(mode.c_lflag & ICANON, 0u);
    EXPECT_NE(mode.c_lflag & ECHO, 0u);
    pid_ = fork();
    if (pid_ == 0) {
      setsid();
      ioctl(terminal_, TIOCSCTTY, 0);
      for (int fd : {0, 1, 2}) dup2(terminal_, fd);
      unsetenv("LD_PRELOAD");
      const std::string pid = std::to_string(watched);
      execl(launcher.c_str(), launcher.c_str(), "top", pid.c_str(), "--interval", "0.2", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~TopOnATerminal() {
    if (pid_ > 0 && !ended_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(master_);
    close(terminal_);
  }
  // What top wrote so far, read until `text` shows (or 20 s).
  bool wait_for(const std::string& text) {
    for (int waited = 0; waited < 200 && screen_.find(text) == std::string::npos; ++waited) read_for_100_ms();
    return screen_.find(text) != std::string::npos;
  }
  void press(char key) { EXPECT_EQ(write(master_, &key, 1), 1); }
  // top's exit status, or -1 when it has not ended within `seconds`.
  int ended_within(int seconds) {
    for (int waited = 0; waited < seconds * 20; ++waited) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        ended_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      read_for_100_ms();  // a terminal nobody reads would block its writer
    }
    return -1;
  }
  tcflag_t local_modes() const {
    termios mode{};
    EXPECT_EQ(tcgetattr(terminal_, &mode), 0);
    return mode.c_lflag;
  }
  pid_t pid() const { return pid_; }

 private:
  void read_for_100_ms() {
    pollfd in{master_, POLLIN, 0};
    if (poll(&in, 1, 100) <= 0) return;
    char buffer[4096];
    const ssize_t got = read(master_, buffer, sizeof buffer);
    if (got > 0) screen_.append(buffer, static_cast<std::size_t>(got));
  }
  int master_ = -1, terminal_ = -1;
  pid_t pid_ = -1;
  bool ended_ = false;
  std::string screen_;
};

TEST_F(LiveFile, TopOnATerminalQuitsOnQWithoutEnterAndGivesTheTerminalBack) {
  {
    int master = -1, terminal = -1;
    if (openpty(&master, &terminal, nullptr, nullptr, nullptr) != 0) GTEST_SKIP() << "no pseudo-terminal here";
    close(master);
    close(terminal);
  }
  auto running = start({kProbe, "hold", "30"}, traced("held"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  {
    TopOnATerminal top(kLauncher, running.pid);
    ASSERT_TRUE(top.wait_for("heapline top: pid " + std::to_string(running.pid)));
    // While it runs, keys come one by one and are not echoed.
    EXPECT_EQ(top.local_modes() & (ICANON | ECHO), 0u);
    top.press('q');
    EXPECT_EQ(top.ended_within(10), 0) << "top did not quit on 'q'";
    EXPECT_EQ(top.local_modes() & (ICANON | ECHO), static_cast<tcflag_t>(ICANON | ECHO));
  }
  {
    TopOnATerminal top(kLauncher, running.pid);
    ASSERT_TRUE(top.wait_for("heapline top: pid " + std::to_string(running.pid)));
    ASSERT_EQ(kill(top.pid(), SIGTERM), 0);
    EXPECT_EQ(top.ended_within(10), 128 + SIGTERM);
    EXPECT_EQ(top.local_modes() & (ICANON | ECHO), static_cast<tcflag_t>(ICANON | ECHO));
  }
  kill(running.pid, SIGKILL);
  finish(running);
}

// The probe's 2 MiB block is the last change before it sleeps: no later
// publish raises the peak to it, so the peak it published must already hold
// it (and no sample may show more live bytes than the peak).
TEST_F(LiveFile, PeakOfAKilledProcessHoldsItsLastAllocation) {
  auto running = start({kProbe, "hold", "20"}, traced("held"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  finish(running);
  {
    // The figures as the process published them, which `heapline top` shows
    // (a converted report also folds in the samples' maxima).
    heapline::launcher::LiveFile file(dir_ / "held.live");
    const auto published = heapline::launcher::take_snapshot(file, false).figures;
    EXPECT_GE(published.peak, std::int64_t{2} << 20);
    EXPECT_GE(published.peak, published.live);
  }
  auto r = convert("held");
  const std::int64_t peak = r["peak_bytes"].get<std::int64_t>();
  EXPECT_GE(peak, 2 << 20);
  EXPECT_GE(peak, r["final_bytes"].get<std::int64_t>());
  for (const auto& sample : r["samples"]) EXPECT_GE(peak, sample[2].get<std::int64_t>()) << sample.dump();
}

// A converted report names its process as the process's own exit report
// would: the program, the allocator, the size basis, the parent, the start,
// the settings and the markers. The reference is the exit report of a run
// of the same probe; the converted report is of a run killed while it held.
TEST_F(LiveFile, AConvertedReportNamesItsProcessAsItsExitReportWould) {
  RunResult exited = run({kProbe, "hold", "0"}, traced("exited.json"));
  ASSERT_EQ(exited.exit_code, 0) << exited.err;
  const nlohmann::json reference = read_json(dir_ / "exited.json");
  EXPECT_EQ(reference["allocator"], "glibc");
  const auto unix_now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
  const std::int64_t before_ns = unix_now_ns();
  auto running = start({kProbe, "hold", "20"}, traced("killed"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  const std::int64_t after_ns = unix_now_ns();
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  finish(running);
  auto r = convert("killed");
  for (const char* key : {"format", "exe", "allocator", "size_basis", "ppid", "interval_ns"}) {
    EXPECT_EQ(r[key], reference[key]) << key;
  }
  for (const char* key : {"mode", "budget_floor_bytes", "budget_divisor"}) {
    EXPECT_EQ(r["precision"][key], reference["precision"][key]) << key;
  }
  EXPECT_EQ(r["mapped"]["mode"], reference["mapped"]["mode"]);
  EXPECT_EQ(r["pid"], running.pid);
  EXPECT_GE(r["final_bytes"].get<std::int64_t>(), std::int64_t{2} << 20) << "the block it held";
  EXPECT_GE(r["start_unix_ns"].get<std::int64_t>(), before_ns);
  EXPECT_LE(r["start_unix_ns"].get<std::int64_t>(), after_ns);
  ASSERT_EQ(r["markers"].size(), 1u) << r["markers"].dump();
  EXPECT_EQ(r["markers"][0][1], reference["markers"][0][1]);
}

// The counts of a killed process are those of its latest sample, taken
// together: under exact precision every counted call publishes once, so
// the converted report's publishes are its calls, neither lost nor from
// another moment.
TEST_F(LiveFile, AConvertedReportCountsThePublishesOfItsCalls) {
  auto running = start({kProbe, "hold", "20"}, traced("killed"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  finish(running);
  auto r = convert("killed");
  const auto& calls = r["calls"];
  const std::int64_t counted =
      calls["alloc"].get<std::int64_t>() + calls["free"].get<std::int64_t>() + calls["realloc"].get<std::int64_t>();
  EXPECT_GT(calls["alloc"].get<std::int64_t>(), 0) << r.dump();
  EXPECT_EQ(r["publishes"].get<std::int64_t>(), counted) << calls.dump();
}

// A publish right after a sample is newer than it, whatever clock the
// publish read: the coarse clock (the default 10 ms interval, where its tick
// is at most 5 ms) lags up to a tick behind the marker's sample, and a
// publish time taken as it was read looked older than the sample, so `top`
// and `convert` showed the marker's empty heap instead of the 2 MiB.
TEST_F(LiveFile, APublishRightAfterASampleIsTheCurrentFigure) {
  RunResult top = top_of_running_probe({kProbe, "mark-hold", "20"}, batched("after-mark"));
  EXPECT_TRUE(std::regex_search(top.out, std::regex(R"(live 2\.\d MiB   peak 2\.\d MiB)"))) << top.out;
  auto r = convert("after-mark");
  EXPECT_GE(r["samples"].back()[1].get<std::int64_t>(), std::int64_t{2} << 20) << r["samples"].dump();
  EXPECT_GE(r["final_bytes"].get<std::int64_t>(), std::int64_t{2} << 20);
}

// A new peak's time is read from CLOCK_MONOTONIC even where publishes read
// the coarse clock (a 1 s interval: no sample is due, so nothing else reads
// the precise clock): a coarse reading is up to a tick before the probe's
// stamp taken just before the malloc.
TEST_F(LiveFile, ANewPeakHasItsExactTimeWhenPublishesReadTheCoarseClock) {
  RunResult result = run({kProbe, "late-peak"}, batched("late-peak.json", "1000"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(origin_before=(\d+) origin_after=(\d+) peak_before=(\d+))")))
      << result.out;
  const std::int64_t origin_after = std::stoll(m[2]), peak_before = std::stoll(m[3]);
  auto r = read_json(dir_ / "late-peak.json");
  const std::int64_t origin_t = origin_time(r);
  ASSERT_GE(origin_t, 0) << r["markers"].dump();
  ASSERT_GE(r["peak_bytes"].get<std::int64_t>(), std::int64_t{4} << 20);
  // The earliest the stamp can be in the report's time base.
  EXPECT_GE(r["peak_time_ns"].get<std::int64_t>(), peak_before - origin_after + origin_t);
}

// The live file is current at every publish, not only at the samples
// (design.md, The interposer). Blocks of 1 MiB come from mmap: a chunk of
// 1 MiB and a page.
constexpr std::int64_t kMiBChunk = (std::int64_t{1} << 20) + 4096;
// What the probe's C runtime holds besides its blocks.
constexpr std::int64_t kSlack = 256 << 10;

// 64 MiB allocated in a burst, well inside one sampling interval, then
// held: no sample follows. `heapline top` showed "live 0 B peak 0 B", and
// the report converted after kill -9 peak 0.
TEST_F(LiveFile, ABurstInsideOneIntervalIsInTheFiguresAndSurvivesAKill) {
  auto running = start({kProbe, "steps", "64", "0", "20"}, batched("burst"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  RunResult top = heapline({"top", std::to_string(running.pid), "--once"});
  heapline::LiveFigures figures{};
  {
    heapline::launcher::LiveFile file(dir_ / "burst.live");
    figures = heapline::launcher::take_snapshot(file, true).figures;
  }
  kill(running.pid, SIGKILL);
  finish(running);
  constexpr std::int64_t kHeld = 64 * kMiBChunk;
  // The stated precision followed the heap (within 1% of 64 MiB), and the
  // figures are within it.
  const std::int64_t bound = static_cast<std::int64_t>(figures.bound_bytes);
  EXPECT_GT(bound, 0);
  EXPECT_LE(bound, std::max<std::int64_t>(figures.peak / 100, 256 << 10));
  EXPECT_NEAR(figures.live, kHeld, bound + kSlack);
  EXPECT_GE(figures.peak, figures.live);
  EXPECT_EQ(top.exit_code, 0) << top.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(top.out, m, std::regex(R"(live ([0-9.]+) MiB   peak ([0-9.]+) MiB)"))) << top.out;
  EXPECT_GE(std::stod(m[1]), 63.0) << top.out;
  EXPECT_GE(std::stod(m[2]), 63.0) << top.out;
  auto r = convert("burst");
  const std::int64_t stated = r["precision"]["bound_bytes"].get<std::int64_t>();
  EXPECT_NEAR(r["final_bytes"].get<std::int64_t>(), kHeld, stated + kSlack);
  EXPECT_GE(r["peak_bytes"].get<std::int64_t>(), kHeld - stated);
  // The budget the converted report states is the library's rule for this
  // peak, 1% of it here (the floor, 256 KiB, is below): what the library
  // would have stated at exit.
  const auto& precision = r["precision"];
  EXPECT_EQ(precision["budget_floor_bytes"], 256 << 10);
  EXPECT_EQ(precision["budget_divisor"], 100);
  EXPECT_EQ(precision["budget_bytes"].get<std::int64_t>(), r["peak_bytes"].get<std::int64_t>() / 100);
  EXPECT_LE(stated, precision["budget_bytes"].get<std::int64_t>());
}

// 40 blocks of 1 MiB a millisecond apart, then 30 ms of quiet before a
// kill: the report ended at the last sample taken (37.1 MiB, with a stated
// precision of 512 KiB). A long interval makes that sample the first.
TEST_F(LiveFile, AKillAfterAQuietSpellKeepsEveryPublish) {
  auto running = start({kProbe, "steps", "40", "1", "20"}, batched("quiet", "100"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  usleep(30'000);
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  finish(running);
  auto r = convert("quiet");
  const std::int64_t stated = r["precision"]["bound_bytes"].get<std::int64_t>();
  constexpr std::int64_t kHeld = 40 * kMiBChunk;
  EXPECT_NEAR(r["final_bytes"].get<std::int64_t>(), kHeld, stated + kSlack);
  EXPECT_NEAR(r["samples"].back()[1].get<std::int64_t>(), kHeld, stated + kSlack);
  EXPECT_GE(r["peak_bytes"].get<std::int64_t>(), kHeld - stated);
}

// A process killed before its second sample (an interval of ten minutes:
// nothing but its start was ever sampled) is converted with the precision
// it ran with, the one the same program states when it exits: the live
// file states the precision from its creation on, not from a later sample.
TEST_F(LiveFile, AProcessKilledBeforeItsSecondSampleStatesThePrecisionItRanWith) {
  RunResult exited = run({kProbe, "steps", "1", "0", "0"}, batched("exited.json", "600000"));
  ASSERT_EQ(exited.exit_code, 0) << exited.err;
  const nlohmann::json expected = read_json(dir_ / "exited.json");
  auto running = start({kProbe, "steps", "1", "0", "60"}, batched("killed", "600000"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  finish(running);
  auto r = convert("killed");
  EXPECT_EQ(r["interval_ns"], 600'000'000'000);
  EXPECT_EQ(r["precision"], expected["precision"]);
  EXPECT_GT(r["precision"]["bound_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(r["precision"]["max_threads"], 1);
}

// 60 blocks of 2 MiB, 40 of them freed, 100 ms of sleep, 30 blocks of
// 1 MiB: the frees published inside one interval, and the timeline showed
// 120 MiB until the first allocation after the sleep. The interval ends
// with its last publish, at that publish's time: the 40 MiB the process
// held through the sleep are a sample from before it woke.
TEST_F(LiveFile, ADropBeforeAQuietSpellIsInTheTimelineAtItsOwnTime) {
  RunResult result = run({kProbe, "dip"}, batched("dip.json"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m,
                                std::regex(R"(origin_before=(\d+) origin_after=(\d+) freed=(\d+) woke=(\d+))")))
      << result.out;
  const std::int64_t origin_after = std::stoll(m[2]), woke = std::stoll(m[4]);
  auto r = read_json(dir_ / "dip.json");
  const std::int64_t origin_t = origin_time(r);
  ASSERT_GE(origin_t, 0) << r["markers"].dump();
  // The earliest the probe's "woke" can be in the report's time base.
  const std::int64_t woke_at_earliest = woke - origin_after + origin_t;
  const std::int64_t stated = r["precision"]["bound_bytes"].get<std::int64_t>();
  constexpr std::int64_t kHeldThroughTheSleep = 20 * (2 * kMiBChunk - 4096);  // 2 MiB chunks: 2 MiB and a page
  bool dip = false;
  for (const auto& sample : r["samples"]) {
    const std::int64_t t = sample[0].get<std::int64_t>(), live = sample[1].get<std::int64_t>();
    if (t < woke_at_earliest && std::llabs(live - kHeldThroughTheSleep) <= stated + kSlack) dip = true;
  }
  EXPECT_TRUE(dip) << "no sample of ~40 MiB before the probe woke: " << r["samples"].dump();
}

// Mapped memory everywhere a figure is shown: phase_probe mapped holds 2 MiB
// of heap, 8 MiB mapped anonymously and privately (counted) and 4 MiB of a
// file mapped privately (never counted).
TEST_F(LiveFile, TopAndConvertShowMappedMemoryBesideTheHeap) {
  RunResult top = top_of_running_probe({kProbe, "mapped", "20"}, traced("mapped"));
  EXPECT_TRUE(std::regex_search(top.out, std::regex(R"(\nmapped 8\.0 MiB   peak 8\.0 MiB at [0-9.]+ s   )"
                                                    R"(heap \+ mapped 10\.\d MiB   peak 10\.\d MiB at [0-9.]+ s\n)")))
      << top.out;
  // The chart is of the sum: its top is above the 8 MiB mapped alone.
  EXPECT_TRUE(std::regex_search(top.out, std::regex(R"(\n1\d\.\d MiB +\|)"))) << top.out;

  auto r = convert("mapped");
  EXPECT_EQ(r["mapped"]["mode"], "on");
  EXPECT_EQ(r["mapped"]["peak_bytes"], 8 << 20);
  EXPECT_EQ(r["mapped"]["final_bytes"], 8 << 20);
  EXPECT_GE(r["total"]["peak_bytes"].get<std::int64_t>(), (8 << 20) + (2 << 20));
  EXPECT_LT(r["total"]["peak_bytes"].get<std::int64_t>(), (8 << 20) + (4 << 20));
  // One mapped sample per heap sample (each pair ends the same interval),
  // each at its own time.
  ASSERT_EQ(r["mapped_samples"].size(), r["samples"].size());
  // The sample at the marker, taken after the mappings: 8 MiB.
  EXPECT_EQ(r["mapped_samples"].back()[1], 8 << 20) << r["mapped_samples"].dump();
}

// A 64 MiB mapping made 300 ms after the last heap publish (a 4 MiB block
// allocated and freed, or allocated and kept), then 300 ms of quiet before
// the next allocation: the mapped series shows the mapping at its own time
// (read from CLOCK_MONOTONIC: within the probe's stamps around the call),
// never before it. It used to carry the time of the heap sample that ended
// the same interval: the publish 300 ms before the mapping.
TEST_F(LiveFile, AMappingIsInTheMappedSeriesAtItsOwnTime) {
  for (const char* free_first : {"1", "0"}) {
    SCOPED_TRACE(std::string("free first: ") + free_first);
    const std::string name = std::string("late-map-") + free_first + ".json";
    RunResult result = run({kProbe, "late-map", "300", "300", free_first}, batched(name));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        result.out, m, std::regex(R"(origin_before=(\d+) origin_after=(\d+) map_before=(\d+) map_after=(\d+))")))
        << result.out;
    auto r = read_json(dir_ / name);
    const std::int64_t origin_t = origin_time(r);
    ASSERT_GE(origin_t, 0) << r["markers"].dump();
    // The mapping's time in the report's time base lies in [earliest, latest].
    const std::int64_t earliest = std::stoll(m[3]) - std::stoll(m[2]) + origin_t;
    const std::int64_t latest = std::stoll(m[4]) - std::stoll(m[1]) + origin_t;
    const std::int64_t mapped_at = r["mapped"]["peak_time_ns"].get<std::int64_t>();
    EXPECT_GE(mapped_at, earliest);
    EXPECT_LE(mapped_at, latest);
    bool shown = false;
    for (const auto& sample : r["mapped_samples"]) {
      const std::int64_t t = sample[0].get<std::int64_t>();
      if (sample[2].get<std::int64_t>() < (64 << 20)) continue;
      EXPECT_GE(t, earliest) << r["mapped_samples"].dump();  // never before it happened
      if (!shown) EXPECT_LE(t, latest) << r["mapped_samples"].dump();  // and first at its own time
      shown = true;
    }
    EXPECT_TRUE(shown) << r["mapped_samples"].dump();
  }
}

// A mapping made before the first allocation, with no call at all after
// it, is in the live file at once: `top` shows it, and after a kill
// `convert` has it (the heap line and the figures), not 0.
TEST_F(LiveFile, AMappingWithNothingAfterItReachesTheLiveFile) {
  // A long interval: the mapping comes inside the first one, whatever the
  // scheduler does, so no sample is due when it is made.
  RunResult top = top_of_running_probe({kProbe, "map-hold", "20"}, batched("map-hold", "10000"));
  EXPECT_TRUE(std::regex_search(top.out, std::regex(R"(\nmapped 64\.0 MiB   peak 64\.0 MiB at )"))) << top.out;
  auto r = convert("map-hold");
  EXPECT_EQ(r["mapped"]["final_bytes"], 64 << 20);
  EXPECT_EQ(r["mapped"]["peak_bytes"], 64 << 20);
  EXPECT_GE(r["total"]["peak_bytes"].get<std::int64_t>(), 64 << 20);
  ASSERT_FALSE(r["mapped_samples"].empty());
  EXPECT_EQ(r["mapped_samples"].back()[1], 64 << 20) << r["mapped_samples"].dump();
}

// A heap peak and a mapping made 300 ms in, a sample after them, then a
// kill: top and the converted report put each peak at its time, not at the
// start (once a sample has taken a peak, its time is the one the sample
// published).
TEST_F(LiveFile, PeaksAreAtTheTimesTheyWereReached) {
  RunResult top = top_of_running_probe({kProbe, "map-late-hold", "20"}, batched("map-late"));
  for (const char* line : {R"(\nlive [0-9.]+ MiB   peak 8\.[0-9] MiB at ([0-9.]+) s)",
                           R"(\nmapped 64\.0 MiB   peak 64\.0 MiB at ([0-9.]+) s)",
                           R"(heap \+ mapped [0-9.]+ MiB   peak 72\.[0-9] MiB at ([0-9.]+) s)"}) {
    std::smatch at;
    ASSERT_TRUE(std::regex_search(top.out, at, std::regex(line))) << line << "\n" << top.out;
    EXPECT_GE(std::stod(at[1]), 0.3) << top.out;
  }
  auto r = convert("map-late");
  EXPECT_GE(r["peak_time_ns"].get<std::int64_t>(), 300'000'000) << r.dump();
  EXPECT_GE(r["total"]["peak_time_ns"].get<std::int64_t>(), 300'000'000) << r["total"].dump();
  EXPECT_GE(r["mapped"]["peak_time_ns"].get<std::int64_t>(), 300'000'000) << r["mapped"].dump();
  EXPECT_LE(r["mapped"]["peak_time_ns"].get<std::int64_t>(), r["last_sample_ns"].get<std::int64_t>())
      << r["mapped"].dump();
}

// A mapping made and removed inside the first interval, then a kill: no
// sample holds it, but the figures the library published do, and the
// converted report keeps its peak (the figures, not only the samples).
TEST_F(LiveFile, AMappedPeakThatNoSampleHoldsSurvivesAKill) {
  auto running = start({kProbe, "map-drop-hold", "20"}, batched("map-drop", "10000"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  finish(running);
  auto r = convert("map-drop");
  EXPECT_EQ(r["mapped"]["peak_bytes"], 64 << 20);
  EXPECT_EQ(r["mapped"]["final_bytes"], 0);
  EXPECT_GE(r["total"]["peak_bytes"].get<std::int64_t>(), 64 << 20);
}

// A writer killed between a sample and the header's figures leaves a file
// whose series are ahead of its peaks. The converted peak of heap + mapped
// is never below what a pair of samples held together (8 MiB of heap beside
// 64 MiB mapped, gone before the kill), whatever the header says: here its
// two total peaks are zeroed, as if never written.
TEST_F(LiveFile, TheTotalPeakIsNeverBelowWhatTheSamplesHeldTogether) {
  auto running = start({kProbe, "map-then-drop-hold", "20"}, batched("map-then-drop"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  finish(running);
  constexpr std::int64_t kHeldTogether = (std::int64_t{8} << 20) + (std::int64_t{64} << 20);
  const auto whole = convert("map-then-drop");
  EXPECT_GE(whole["total"]["peak_bytes"].get<std::int64_t>(), kHeldTogether) << whole["total"].dump();
  EXPECT_LT(whole["total"]["final_bytes"].get<std::int64_t>(), std::int64_t{64} << 20) << whole["total"].dump();
  {
    std::fstream file(dir_ / "map-then-drop.live", std::ios::in | std::ios::out | std::ios::binary);
    const std::int64_t zero = 0;
    for (const std::size_t offset :
         {offsetof(heapline::LiveHeader, total_peak), offsetof(heapline::LiveHeader, total_peak_at_once)}) {
      file.seekp(static_cast<std::streamoff>(offset));
      file.write(reinterpret_cast<const char*>(&zero), sizeof zero);
    }
  }
  const auto lagging = convert("map-then-drop");
  const std::int64_t total_peak = lagging["total"]["peak_bytes"].get<std::int64_t>();
  EXPECT_GE(total_peak, kHeldTogether) << lagging["total"].dump();
  EXPECT_LE(total_peak, whole["total"]["peak_bytes"].get<std::int64_t>()) << lagging["total"].dump();
  // At the time of a sample that held both.
  const std::int64_t at = lagging["total"]["peak_time_ns"].get<std::int64_t>();
  bool held_then = false;
  for (std::size_t i = 0; i < lagging["samples"].size() && i < lagging["mapped_samples"].size(); ++i) {
    const auto& heap = lagging["samples"][i];
    const auto& mapped = lagging["mapped_samples"][i];
    if (std::max(heap[0].get<std::int64_t>(), mapped[0].get<std::int64_t>()) == at &&
        heap[1].get<std::int64_t>() + mapped[1].get<std::int64_t>() == total_peak) {
      held_then = true;
    }
  }
  EXPECT_TRUE(held_then) << lagging.dump();
}

// A fork child's live file holds its own total peak, not its parent's: a
// parent that is not the command (its heap line in static memory until its
// heap matters) raised its total peak to 64 MiB before the fork.
TEST_F(LiveFile, AForkChildsTotalPeakIsItsOwn) {
  const ForkedProbe probe = start_fork_probe("map-drop-fork", "fork-drop");
  ASSERT_FALSE(probe.child.empty());
  ASSERT_EQ(kill(std::stoi(probe.child), SIGKILL), 0);
  finish(probe.parent);
  auto r = convert(probe.name);
  EXPECT_GE(r["total"]["peak_bytes"].get<std::int64_t>(), 2 << 20);
  EXPECT_LT(r["total"]["peak_bytes"].get<std::int64_t>(), 64 << 20) << r["total"].dump();
}

// A fork child holds the mappings it inherited: 64 MiB of its parent's,
// none made by itself. `top` on the running child shows them, and its live
// file, converted after a kill, has them as its mapped figure and in heap +
// mapped (the child has no mapping change of its own: the figure is the one
// its samples publish).
TEST_F(LiveFile, AForkChildsInheritedMappingsAreInItsFigures) {
  const ForkedProbe probe = start_fork_probe("map-keep-fork", "keep-fork");
  ASSERT_FALSE(probe.child.empty());
  RunResult top = heapline({"top", probe.child, "--once"});
  ASSERT_EQ(kill(std::stoi(probe.child), SIGKILL), 0);
  finish(probe.parent);
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_TRUE(std::regex_search(top.out, std::regex(R"(\nmapped 64\.0 MiB   peak 64\.0 MiB)"))) << top.out;
  auto r = convert(probe.name);
  EXPECT_EQ(r["mapped"]["final_bytes"], 64 << 20) << r["mapped"].dump();
  EXPECT_EQ(r["mapped"]["peak_bytes"], 64 << 20) << r["mapped"].dump();
  EXPECT_GE(r["total"]["peak_bytes"].get<std::int64_t>(), (64 << 20) + (2 << 20)) << r["total"].dump();
}

// A file of the layout before mapped memory (shorter, zeros in the mapped
// fields) still converts, with its mapped figures unknown rather than 0.
TEST_F(LiveFile, ALiveFileOfTheOlderLayoutConvertsWithMappedUnknown) {
  auto running = start({kProbe, "mapped", "20"}, traced("older"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  ASSERT_EQ(kill(running.pid, SIGKILL), 0);
  finish(running);
  const fs::path live = dir_ / "older.live";
  fs::resize_file(live, heapline::kLiveRegionV1Bytes);
  {
    std::fstream file(live, std::ios::in | std::ios::out | std::ios::binary);
    const std::uint32_t zero = 0;
    file.seekp(offsetof(heapline::LiveHeader, mapped_mode));
    file.write(reinterpret_cast<const char*>(&zero), sizeof zero);
    const std::int64_t zeros[5] = {};
    file.seekp(offsetof(heapline::LiveHeader, mapped_live));
    file.write(reinterpret_cast<const char*>(zeros), sizeof zeros);
  }
  auto r = convert("older");
  EXPECT_EQ(r["mapped"]["mode"], "unknown");
  EXPECT_EQ(r["mapped_samples"].size(), 0u);
  EXPECT_GE(r["peak_bytes"].get<std::int64_t>(), 2 << 20);
  RunResult top_of_file = heapline({"convert", live.string(), "-o", (dir_ / "again.json").string()});
  EXPECT_EQ(top_of_file.exit_code, 0) << top_of_file.err;
}

// The resident set reaches the live file with each reading: `top` shows
// it, and after a kill `convert` has its series and figures: 32 MiB
// written of a 128 MiB block, read at the marker's sample. A file of the
// layout before the series (shorter, or without its flag) converts without
// it.
TEST_F(LiveFile, TopAndConvertShowTheResidentSet) {
  RunResult top = top_of_running_probe({kProbe, "resident", "128", "32", "20"}, batched("resident"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(top.out, m,
                                std::regex(R"(\nresident (\d+\.\d) MiB   peak (\d+\.\d) MiB at [0-9.]+ s \(as read at samples\)\n)")))
      << top.out;
  EXPECT_GE(std::stod(m[1]), 32.0) << top.out;
  EXPECT_LT(std::stod(m[1]), 64.0) << top.out;
  EXPECT_GE(std::stod(m[2]), 32.0) << top.out;

  auto r = convert("resident");
  ASSERT_TRUE(r.contains("resident")) << r.dump();
  EXPECT_GE(r["resident"]["peak_bytes"].get<std::int64_t>(), std::int64_t{32} << 20);
  EXPECT_LT(r["resident"]["peak_bytes"].get<std::int64_t>(), std::int64_t{64} << 20);
  // Killed while the block was held: the last reading has it.
  EXPECT_GE(r["resident"]["final_bytes"].get<std::int64_t>(), std::int64_t{32} << 20);
  ASSERT_FALSE(r["resident_samples"].empty());
  EXPECT_GE(r["peak_bytes"].get<std::int64_t>(), std::int64_t{128} << 20);

  const fs::path live = dir_ / "resident.live";
  for (const bool shorter : {false, true}) {
    SCOPED_TRACE(shorter ? "shorter file" : "flag cleared");
    if (shorter) {
      fs::resize_file(live, heapline::kLiveRegionWithoutResidentBytes);
    } else {
      std::fstream file(live, std::ios::in | std::ios::out | std::ios::binary);
      const std::uint32_t zero = 0;
      file.seekp(offsetof(heapline::LiveHeader, resident_series));
      file.write(reinterpret_cast<const char*>(&zero), sizeof zero);
    }
    auto older = convert("resident");
    EXPECT_FALSE(older.contains("resident")) << older.dump();
    EXPECT_TRUE(older["resident_samples"].empty()) << older.dump();
    EXPECT_GE(older["peak_bytes"].get<std::int64_t>(), std::int64_t{128} << 20);
  }
}

TEST_F(LiveFile, LauncherSummaryAndPlotShowHeapMappedAndTotal) {
  RunResult result = heapline({"--out", "mapped.json", "--plot", "mapped.svg", kProbe, "mapped", "0"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::regex_search(result.err, std::regex(R"(heapline: peak 2\.\d MiB at [0-9.]+ s, final 2\.\d MiB\n)"
                                                       R"(heapline: mapped peak 8\.0 MiB at [0-9.]+ s, final 8\.0 MiB; )"
                                                       R"(heap \+ mapped peak 10\.\d MiB at [0-9.]+ s, final 10\.\d MiB\n)")))
      << result.err;
  std::string svg = heapline::test::read_file(dir_ / "mapped.svg");
  for (const char* title : {">heap<", ">mapped<", ">heap + mapped<"}) EXPECT_NE(svg.find(title), std::string::npos) << title;
  // Off: no mapped line in the summary, the plot is the heap's alone.
  RunOptions options;
  options.cwd = dir_;
  options.env = {{"LD_PRELOAD", std::nullopt}, {"HEAPLINE_LIB", std::nullopt}, {"HEAPLINE_MAPPED", "off"}};
  RunResult off = run({kLauncher, "--out", "off.json", kProbe, "mapped", "0"}, options);
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_NE(off.err.find("heapline: peak 2."), std::string::npos) << off.err;
  EXPECT_EQ(off.err.find("mapped peak"), std::string::npos) << off.err;
}

TEST_F(LiveFile, TopWithoutAHeaplineFileSaysSo) {
  RunResult top = heapline({"top", std::to_string(getpid()), "--once"});
  EXPECT_EQ(top.exit_code, 1);
  EXPECT_NE(top.err.find("has no heapline live file"), std::string::npos) << top.err;
  // Pids are below pid_max, at most 2^22: no process 4194304.
  RunResult gone = heapline({"top", "4194304", "--once"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("no process 4194304"), std::string::npos) << gone.err;
  // No process has pid 0 or below (kill(0, ...) would mean this process
  // group), nor above 2^22.
  for (const char* pid : {"0", "-1", "4194305", "999999999"}) {
    RunResult refused = heapline({"top", "--once", "--", pid});
    EXPECT_EQ(refused.exit_code, 2) << pid;
    EXPECT_EQ(refused.err, std::string("heapline top: PID: must be a whole number from 1 to 4194304, got '") + pid +
                               "' (heapline top --help: the options)\n");
  }
}

// What top says of a process with no live file depends on the files it
// maps that are deleted: another deleted file (a program's own scratch
// mapping) is not a heapline report. A live file whose name another process
// removed while its process runs (a cleaner's `rm *.live`) is still the
// process's: top reads it through the process's mapping (it said the
// process "has finished its heapline report").
TEST_F(LiveFile, TopTellsARemovedLiveFileFromAProcessThatNeverHadOne) {
  const fs::path scratch = dir_ / "scratch.bin";
  { std::ofstream(scratch) << std::string(4096, 's'); }
  const int fd = open(scratch.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* mapped = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(mapped, MAP_FAILED);
  fs::remove(scratch);
  RunResult never = heapline({"top", std::to_string(getpid()), "--once"});
  munmap(mapped, 4096);
  EXPECT_EQ(never.exit_code, 1);
  EXPECT_EQ(never.err, "heapline top: process " + std::to_string(getpid()) +
                           " has no heapline live file (not run under libheapline.so, or HEAPLINE_OUT=off)\n");

  auto running = start({kProbe, "hold", "20"}, traced("removed.json"));
  ASSERT_TRUE(wait_for_output(running, "ready"));
  ASSERT_TRUE(fs::remove(dir_ / "removed.json.live"));
  RunResult removed = heapline({"top", std::to_string(running.pid), "--once"});
  kill(running.pid, SIGKILL);
  finish(running);
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_NE(removed.out.find("heapline top: pid " + std::to_string(running.pid)), std::string::npos) << removed.out;
  EXPECT_NE(removed.out.find("running"), std::string::npos) << removed.out;
  EXPECT_TRUE(std::regex_search(removed.out, std::regex(R"(live 2\.\d MiB   peak 2\.\d MiB)"))) << removed.out;
}

TEST_F(LiveFile, ConvertRejectsWhatIsNotALiveFile) {
  fs::path junk = dir_ / "junk.live";
  { std::ofstream(junk) << "not a live file"; }
  RunResult r = heapline({"convert", junk.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a heapline live file"), std::string::npos) << r.err;
}

// The reader's bounds, as a property over each of a live file's three series
// (heap, mapped, resident): a count at the capacity is read, one past it is
// refused with one line naming the series; a merge in progress is believed
// up to the capacity and refused one past it, or when it claims more merged
// samples than the half it can have written. The file is a real one (a run
// that aborted), patched in place.
TEST_F(LiveFile, EachSeriesIsReadUpToItsCapacityAndRefusedOnePast) {
  RunResult aborted = run({kProbe, "abort", "40"}, traced("model"));
  ASSERT_EQ(aborted.signal, SIGABRT) << aborted.err;
  const fs::path model = dir_ / "model.live";
  using heapline::kTimelineCapacity;
  using heapline::LiveRegion;
  using Series = heapline::TimelineStorage LiveRegion::*;
  const std::pair<std::string, Series> all_series[] = {{"", &LiveRegion::timeline},
                                                       {"mapped series: ", &LiveRegion::mapped_timeline},
                                                       {"resident series: ", &LiveRegion::resident_timeline}};
  // A copy of the model whose series `which` is changed by `patch`: the
  // snapshot's refusal, "" when it was read.
  int copies = 0;
  const auto refusal = [&](Series which, const std::function<void(heapline::TimelineStorage&)>& patch) {
    const fs::path copy = dir_ / ("patched" + std::to_string(++copies) + ".live");
    fs::copy_file(model, copy);
    const int fd = ::open(copy.c_str(), O_RDWR | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    void* address = ::mmap(nullptr, sizeof(LiveRegion), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    EXPECT_NE(address, MAP_FAILED);
    if (address == MAP_FAILED) return std::string("not mapped");
    patch(static_cast<LiveRegion*>(address)->*which);
    ::munmap(address, sizeof(LiveRegion));
    try {
      heapline::launcher::LiveFile file(copy);
      const heapline::launcher::LiveSnapshot snapshot = heapline::launcher::take_snapshot(file, false);
      EXPECT_LE(snapshot.samples.size(), kTimelineCapacity);
      EXPECT_LE(snapshot.mapped_samples.size(), kTimelineCapacity);
      EXPECT_LE(snapshot.resident_samples.size(), kTimelineCapacity);
      return std::string();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
  };
  {
    heapline::launcher::LiveFile file(model);
    ASSERT_TRUE(file.has_mapped_series() && file.has_resident_series()) << "the model has the three series";
  }
  for (const auto& [name, which] : all_series) {
    SCOPED_TRACE(name.empty() ? "heap series" : name);
    const std::uint64_t held = (heapline::launcher::LiveFile(model).region().*which).count.load();
    ASSERT_GT(held, 0u);
    const auto count = [&](std::uint64_t n) { return [n](heapline::TimelineStorage& t) { t.count.store(n); }; };
    EXPECT_EQ(refusal(which, count(kTimelineCapacity)), "");
    EXPECT_NE(refusal(which, count(kTimelineCapacity + 1))
                  .find("is corrupt: " + name + "sample count " + std::to_string(kTimelineCapacity + 1) +
                        " beyond the capacity"),
              std::string::npos);
    const auto merging = [&](std::uint64_t from, std::uint64_t done) {
      return [held, from, done](heapline::TimelineStorage& t) {
        t.count.store(held);
        t.merge_seq.store(1);
        t.merge_from.store(from);
        t.merge_done.store(done);
      };
    };
    EXPECT_EQ(refusal(which, merging(kTimelineCapacity, kTimelineCapacity / 2)), "");
    EXPECT_NE(refusal(which, merging(kTimelineCapacity + 1, 0)).find("is corrupt: " + name + "impossible merge"),
              std::string::npos);
    EXPECT_NE(refusal(which, merging(kTimelineCapacity, kTimelineCapacity / 2 + 1))
                  .find("is corrupt: " + name + "impossible merge"),
              std::string::npos);
  }
}

TEST(LiveView, DefaultConvertedPath) {
  using heapline::launcher::default_converted_path;
  EXPECT_EQ(default_converted_path("a/heapline.x.1.json.live"), "a/heapline.x.1.json");
  EXPECT_EQ(default_converted_path("dump"), "dump.json");
}

}  // namespace

// top's chart draws each series at its own times: a 6 MiB mapping made at
// 0.5 s, between heap samples at 0 and 1 s, fills the top rows from the
// column of 0.5 s on (not from the next heap sample's), over a 2 MiB heap.
TEST(TopChart, MappedMemoryShowsAtItsOwnTime) {
  heapline::launcher::LiveSnapshot s;
  s.pid = 7;
  s.exe = "/bin/x";
  s.exited = true;
  s.mapped_mode = heapline::kMappedOn;
  s.samples = {{0, 2 << 20, 2 << 20}, {1'000'000'000, 2 << 20, 2 << 20}, {2'000'000'000, 2 << 20, 2 << 20}};
  s.mapped_samples = {{0, 0, 0}, {500'000'000, 6 << 20, 6 << 20}, {2'000'000'000, 6 << 20, 6 << 20}};
  const std::string screen = heapline::launcher::render_top(s, false, 21);
  // 21 columns over 2 s: 0.5 s is column 5. The top row (the whole 8 MiB)
  // from there on, the bottom row (the heap alone) from the start.
  EXPECT_NE(screen.find("8.0 MiB   |     ################\n"), std::string::npos) << screen;
  EXPECT_NE(screen.find("heap+map  |#####################\n"), std::string::npos) << screen;
}

// The calls are counted at the samples the process takes: when the heap
// line's last point is the interval still open (a burst of allocations,
// then nothing), top says when they were counted, not "calls 0" beside a
// heap that grew since.
TEST(TopText, CallsCountedAtAnEarlierSampleSaySo) {
  heapline::launcher::LiveSnapshot s;
  s.pid = 7;
  s.exe = "/bin/x";
  s.interval_ns = 10'000'000;
  s.samples = {{0, 0, 0}, {3'844'486, 6062080, 6062080}};
  s.figures.last_sample_ns = 0;
  const std::string open = heapline::launcher::render_top(s, true);
  EXPECT_NE(open.find("; calls 0 as of its sample at 0.000 s (the heap line goes on to 0.004 s)\n"), std::string::npos)
      << open;
  s.figures.last_sample_ns = 3'844'486;
  s.figures.calls[0] = 20;
  const std::string sampled = heapline::launcher::render_top(s, true);
  EXPECT_NE(sampled.find("; calls 20\n"), std::string::npos) << sampled;
}

namespace {

// A live file cut (truncated) by another process while `heapline top`
// watches it and while the library writes it: top and the watched process
// both carry on or end with a line, never with SIGBUS; cut to nothing, top
// says so.
void check_top_over_a_cut(const fs::path& dir, std::size_t size) {
  const fs::path live = dir / "cut.json.live";
  const fs::path go = dir / "go";
  RunOptions traced;
  traced.cwd = dir;
  traced.env = {{"LD_PRELOAD", kLib}, {"HEAPLINE_OUT", (dir / "cut.json").string()}, {"HEAPLINE_INTERVAL_MS", "5"},
                {"HEAPLINE_ROOT_PID", std::nullopt}};
  auto program = start({LIVE_FILE_CUT, "churn", go.string()}, traced);
  ASSERT_TRUE(wait_for_output(program, "ready")) << program.out_so_far();
  RunOptions plain;
  plain.cwd = dir;
  plain.env = {{"LD_PRELOAD", std::nullopt}, {"HEAPLINE_LIB", std::nullopt}};
  const std::string pid = std::to_string(program.pid);
  auto watching = start({kLauncher, "top", pid, "--interval", "0.05"}, plain);
  ASSERT_TRUE(wait_for_output(watching, "heapline top: pid " + pid)) << watching.out_so_far();
  ASSERT_EQ(::truncate(live.c_str(), static_cast<off_t>(size)), 0);
  usleep(300'000);  // top reads the cut file a few times
  const RunResult once = run({kLauncher, "top", pid, "--once"}, plain);
  std::ofstream(go).put('\n');
  const RunResult watched = finish(program);
  const RunResult top = finish(watching);
  EXPECT_EQ(watched.signal, 0) << watched.err;
  EXPECT_EQ(watched.exit_code, 0) << watched.err;
  EXPECT_EQ(top.signal, 0) << top.err;
  EXPECT_EQ(once.signal, 0) << once.err;
  if (size == 0) {
    EXPECT_EQ(top.exit_code, 1) << top.out << top.err;
    EXPECT_NE(top.err.find("heapline top: " + live.string() + " was cut to 0 bytes by another process while it was read"),
              std::string::npos)
        << top.err;
    EXPECT_EQ(once.exit_code, 1) << once.out << once.err;
    EXPECT_NE(once.err.find("the live file of process " + pid + ", " + live.string() +
                            " was cut to 0 bytes by another process (truncated)"),
              std::string::npos)
        << once.err;
  } else {
    // The header and the heap line's start are still there: shown.
    EXPECT_EQ(once.exit_code, 0) << once.err;
    EXPECT_NE(once.out.find("heapline top: pid " + pid), std::string::npos) << once.out;
  }
}

}  // namespace

TEST_F(LiveFile, TopAndTheProcessSurviveItsLiveFileCutToNothing) { check_top_over_a_cut(dir_, 0); }

TEST_F(LiveFile, TopAndTheProcessSurviveItsLiveFileCutToTheMiddle) {
  check_top_over_a_cut(dir_, heapline::kLiveRegionV1Bytes + 20'000);
}

// The launcher reads a live file as a copy, never through a mapping: a file
// cut after it was read is still read as it was (with a mapping, the read
// raised SIGBUS), and a fresh copy of it is refused with one line.
TEST_F(LiveFile, AFileCutUnderTheReaderIsReadAsCopiedThenRefused) {
  RunResult aborted = run({kProbe, "abort", "40"}, traced("model"));
  ASSERT_EQ(aborted.signal, SIGABRT) << aborted.err;
  const fs::path copy = dir_ / "copy.live";
  fs::copy_file(dir_ / "model.live", copy);
  EXPECT_EXIT(
      {
        heapline::launcher::LiveFile file(copy);
        if (::truncate(copy.c_str(), 0) != 0) std::exit(2);
        const heapline::launcher::LiveSnapshot snapshot = heapline::launcher::take_snapshot(file, false);
        std::exit(snapshot.samples.empty() ? 3 : 0);
      },
      ::testing::ExitedWithCode(0), "");
  fs::copy_file(dir_ / "model.live", copy, fs::copy_options::overwrite_existing);
  heapline::launcher::LiveFile file(copy);
  ASSERT_EQ(::truncate(copy.c_str(), 4096), 0);
  try {
    file.refresh(false);
    ADD_FAILURE() << "a cut file was read";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()), copy.string() +
                                             " was cut to 4096 bytes by another process while it was read "
                                             "(truncated): its heap line is no longer there");
  }
}
