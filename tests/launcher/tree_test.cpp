// The launcher and the process tree it runs: the summary of every process
// (and their sum over time), --follow, and `heapline clean`.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <heapline/figures.h>
#include <heapline/live_format.h>

#include "output_naming.h"
#include "process_runner.h"
#include "process_tree.h"
#include "profile_summary.h"
#include "timeline_plot.h"

namespace fs = std::filesystem;
using heapline::launcher::TreeReport;
using heapline::test::files_matching;
using heapline::test::finish;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;
using heapline::test::start;
using heapline::test::wait_for_output;

namespace {

const std::string kLauncher = HEAPLINE_LAUNCHER;
const std::string kLib = HEAPLINE_LIB;
const std::string kPatterns = ALLOC_PATTERNS;
const std::string kProbe = PHASE_PROBE;
const std::string kOlderKernel = OLDER_KERNEL;

class Tree : public heapline::test::TempDirTest {
 protected:
  Tree() : TempDirTest("tree") {}
  RunOptions options(bool preload = false, const std::string& out = "") {
    RunOptions o;
    o.cwd = dir_;
    o.env = {{"LD_PRELOAD", preload ? std::optional<std::string>(kLib) : std::nullopt},
             {"HEAPLINE_OUT", out.empty() ? std::nullopt : std::optional<std::string>((dir_ / out).string())},
             {"HEAPLINE_ROOT_PID", std::nullopt},
             {"HEAPLINE_FOLLOW", std::nullopt},
             {"HEAPLINE_LIB", kLib}};
    return o;
  }
  RunResult launch(std::vector<std::string> args) {
    args.insert(args.begin(), kLauncher);
    return run(args, options());
  }
};

// The state of process `pid` ("R", "S", "T", "Z"... of /proc/PID/stat),
// 0 when there is no such process.
char process_state(pid_t pid) {
  const std::string stat = heapline::test::read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t after_name = stat.rfind(") ");
  return after_name == std::string::npos || after_name + 2 >= stat.size() ? 0 : stat[after_name + 2];
}

// The parent of process `pid` (the fourth field of /proc/PID/stat), 0 when
// there is no such process.
pid_t parent_of(pid_t pid) {
  const std::string text = heapline::test::read_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t after_name = text.rfind(") ");
  if (after_name == std::string::npos) return 0;
  std::istringstream fields(text.substr(after_name + 2));
  char state = 0;
  pid_t parent = 0;
  fields >> state >> parent;
  return parent;
}

// Polls `done` every 20 ms until it holds or `seconds` have passed.
template <typename Condition>
bool within(double seconds, Condition done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    usleep(20000);
  }
  return true;
}

// alloc_patterns "single chunk 2000 0": 2000 blocks held, about 2 MiB.
std::string two_children() {
  const std::string child = kPatterns + " single chunk 2000 0";
  return child + " & " + child + "; wait";
}

TEST_F(Tree, TheSummaryShowsEveryProcessOfTheTreeAndTheirSum) {
  RunResult r = launch({"--out", "run.json", "--", "/bin/sh", "-c", two_children()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("heapline: report run.json\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("heapline: 3 processes (peak of heap + mapped and when"), std::string::npos) << r.err;
  const std::regex child_line(
      R"(heapline:\s+\d\.\d MiB at\s+[\d.]+ s\s+heap\s+\d\.\d MiB\s+mapped\s+[\d.]+ \w+\s+resident\s+[\d.]+ \w+\s+)"
      R"(pid \d+\s+parent \d+\s+)"
      R"(alloc_patterns\n)");
  const auto children = std::distance(std::sregex_iterator(r.err.begin(), r.err.end(), child_line), std::sregex_iterator());
  EXPECT_EQ(children, 2) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(pid \d+\s+parent \d+\s+(da|ba)?sh \(the command\)\n)"))) << r.err;
  EXPECT_EQ(files_matching(dir_, R"(run\.\d+\.json)").size(), 2u);
  EXPECT_TRUE(files_matching(dir_, R"(.*\.live)").empty());
}

// A process that changes directory before exec (a make recipe's
// `cd sub && cc ...`) writes its report beside the command's, and is in the
// summary: the launcher gives every process the report's name as a full
// path (a relative one was resolved in sub/, and the summary lost its
// largest process). With the default name and with a relative --out.
TEST_F(Tree, AProcessThatChangesDirectoryBeforeExecIsInTheSummary) {
  for (const std::vector<std::string>& out : {std::vector<std::string>{}, std::vector<std::string>{"--out", "run.json"}}) {
    fs::remove_all(dir_ / "sub");
    fs::create_directories(dir_ / "sub");
    std::vector<std::string> args = out;
    for (const std::string& word : {std::string("--"), std::string("/bin/sh"), std::string("-c"),
                                    "cd sub && " + kPatterns + " single chunk 2000 0; true"})
      args.push_back(word);
    RunResult r = launch(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("heapline: 2 processes (peak of heap + mapped and when"), std::string::npos) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(\d\.\d MiB at .*pid \d+\s+parent \d+\s+alloc_patterns\n)")))
        << r.err;
    EXPECT_TRUE(files_matching(dir_ / "sub", R"(.*\.json)").empty()) << r.err;
    const std::string child_report = out.empty() ? R"(heapline\.sh\.\d+\.\d+\.json)" : R"(run\.\d+\.json)";
    EXPECT_EQ(files_matching(dir_, child_report).size(), 1u) << r.err;
    for (const fs::path& report : files_matching(dir_, R"(.*\.json)")) fs::remove(report);
  }
}

// A command that puts a link, a FIFO or a directory at its own report's
// name and dies: the launcher never reads through it (it read the link's
// target as the report and lost the summary), converts the live file into
// the name with the pid inserted, says so, and summarises the run.
TEST_F(Tree, WhatTheCommandPutAtItsReportsNameIsNeverReadAsItsReport) {
  for (const std::string& make : {std::string("ln -s victim.txt r.json; kill -9 $$"),
                                  std::string("mkfifo r.json; kill -9 $$"), std::string("mkdir r.json; kill -9 $$"),
                                  std::string("mkdir r.json")}) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "victim.txt") << "precious";
    RunResult r = launch({"--out", "r.json", "--", "/bin/sh", "-c", make});
    const std::string kind = make.rfind("ln", 0) == 0 ? "a symbolic link" : make.rfind("mkfifo", 0) == 0 ? "a FIFO" : "a directory";
    EXPECT_TRUE(std::regex_search(r.err, std::regex("heapline: " + (dir_ / "r.json").string() + " is " + kind +
                                                    R"(, not the command's report: its live file is converted into )" +
                                                    (dir_ / "r").string() + R"(\.\d+\.json\n)")) ||
                std::regex_search(r.err, std::regex("heapline: r.json is " + kind +
                                                    R"(, not the command's report: its live file is converted into r\.\d+\.json\n)")))
        << make << "\n" << r.err;
    EXPECT_NE(r.err.find("heapline: report r."), std::string::npos) << make << "\n" << r.err;
    EXPECT_EQ(r.err.find("no report from the command"), std::string::npos) << make << "\n" << r.err;
    // The conversion is said once, with what took the name (a kill, a
    // cause of its own, is said apart).
    EXPECT_EQ(r.err.find("could not be written at its exit"), std::string::npos) << make << "\n" << r.err;
    EXPECT_EQ(heapline::test::read_file(dir_ / "victim.txt"), "precious") << make;
    EXPECT_TRUE(files_matching(dir_, R"(.*\.live)").empty()) << make << "\n" << r.err;
  }
}

// Files at names of the run's pattern that the run did not write (an
// earlier run's junk, a link to something else): never read, never said
// to be a broken report of this run ("r.66667.json: an array at the top
// level" was the link's target, read through it).
TEST_F(Tree, FilesOfThePatternThatTheRunDidNotWriteAreNeverRead) {
  std::ofstream(dir_ / "r.66666.json") << "junk\n";
  fs::last_write_time(dir_ / "r.66666.json", fs::file_time_type::clock::now() - std::chrono::hours(1));
  std::ofstream(dir_ / "array.txt") << "[1,2]\n";
  fs::create_symlink(dir_ / "array.txt", dir_ / "r.66667.json");
  RunResult r = launch({"--out", "r.json", "--", "/bin/sh", "-c", two_children()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("r.66666.json"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("r.66667.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("heapline: report r.json"), std::string::npos) << r.err;
}

// A bad setting in the launcher's environment is one line, said by the
// command (the root of the tree), whether the tree is followed or the
// command alone: the processes it starts inherit the same value and say
// nothing (under --follow command, not even a line).
TEST_F(Tree, ABadSettingIsOneLineForTheWholeTree) {
  for (const std::string follow : {"tree", "command"}) {
    SCOPED_TRACE(follow);
    RunOptions o = options();
    o.env["HEAPLINE_INTERVAL_MS"] = "bad";
    RunResult r = run({kLauncher, "-q", "--follow", follow, "--out", "run.json", "--", "/bin/sh", "-c", two_children()}, o);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string line = "heapline: HEAPLINE_INTERVAL_MS='bad' is not valid";
    EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(line), r.err.rfind(line)) << r.err;
    for (const fs::path& file : files_matching(dir_, R"(.*\.json)")) fs::remove(file);
  }
}

// --plot of a tree draws the tree: the sum and each process, not the
// command's line alone (a flat line for a shell or a make).
TEST_F(Tree, ThePlotOfATreeDrawsEveryProcessAndTheSum) {
  RunResult r = launch({"--out", "run.json", "--plot", "tree.svg", "--", "/bin/sh", "-c", two_children()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.err.find("heapline: plot tree.svg"), std::string::npos) << r.err;
  const std::string svg = heapline::test::read_file(dir_ / "tree.svg");
  EXPECT_NE(svg.find("all 3 processes together"), std::string::npos);
  const std::regex child_title(R"(alloc_patterns \(pid \d+\): peak \d\.\d MiB, resident [\d.]+ \w+)");
  EXPECT_EQ(std::distance(std::sregex_iterator(svg.begin(), svg.end(), child_title), std::sregex_iterator()), 2);
  EXPECT_NE(svg.find("together at most "), std::string::npos);
}

TEST_F(Tree, FollowingOnlyTheCommandLeavesOneReportAndNoTree) {
  RunResult r = launch({"--follow", "command", "--out", "run.json", "--", "/bin/sh", "-c", two_children()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("heapline: report run.json\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("processes"), std::string::npos) << r.err;
  EXPECT_EQ(files_matching(dir_, R"(run.*)").size(), 1u);
  RunResult bad = launch({"--follow", "children", "--", "/bin/true"});
  EXPECT_EQ(bad.exit_code, 2);
}

// A child killed by a signal (after its heap passed the floor of its live
// file) left its live file: the launcher converts it into the child's report
// and removes it.
TEST_F(Tree, AKilledChildsLiveFileBecomesItsReport) {
  RunResult r = launch({"--out", "run.json", "--", "/bin/sh", "-c", kProbe + " hold-abort; true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(1 process the command started ended without exit \(a signal\?\): \d+ \(phase_probe\))")))
      << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(pid \d+\s+parent \d+\s+phase_probe \(ended without exit\)\n)"))) << r.err;
  EXPECT_TRUE(files_matching(dir_, R"(.*\.live)").empty());
}

// A process whose parent ended before it started is the launcher's (it
// adopts the run's orphans): when it is killed, its live file (which names
// no run) is the run's by that parent alone, and becomes its report. The
// command ends first: the launcher waits for the process it left running.
TEST_F(Tree, AnOrphanAdoptedByTheLauncherIsOfTheRunEvenWhenKilled) {
  RunResult r = launch({"--out", "run.json", "--", "/bin/sh", "-c", "(sleep 0.2; exec " + kProbe + " hold-abort) & exit 0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("heapline: the command ended; waiting for the processes it left running (Ctrl-C: the summary "
                       "without them)\n"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(pid \d+\s+parent \d+\s+phase_probe \(ended without exit\)\n)")))
      << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(1 process the command started ended without exit \(a signal\?\): \d+ \(phase_probe\))")))
      << r.err;
  EXPECT_TRUE(files_matching(dir_, R"(.*\.live)").empty());
}

// A process the command left running that ends normally later is in the
// summary with the command (three processes: the shell, its subshell that
// becomes alloc_patterns, and the sleep before); --follow command does not
// wait for it.
TEST_F(Tree, WhatTheCommandLeftRunningIsWaitedForAndSummarised) {
  const std::string command = "(sleep 0.2; exec " + kPatterns + " single chunk 2000 0) & exit 0";
  RunResult r = launch({"--out", "run.json", "--", "/bin/sh", "-c", command});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("heapline: 3 processes (peak of heap + mapped and when"), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(heapline:\s+2\.\d MiB at .* pid \d+\s+parent \d+\s+alloc_patterns\n)")))
      << r.err;

  // With --follow command the launcher ends with the command, and what the
  // command left running runs on: the keeper, released, stopped nothing
  // (the launcher waited for the keeper to end before it did).
  const auto before = std::chrono::steady_clock::now();
  RunResult only =
      launch({"--follow", "command", "--out", "only.json", "--", "/bin/sh", "-c", "sleep 30 & echo $!; exit 0"});
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - before;
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_EQ(only.err.find("waiting for"), std::string::npos) << only.err;
  EXPECT_LT(took.count(), 20) << "waited for what --follow command does not follow";
  const pid_t left = std::stoi(only.out);
  const char state = process_state(left);
  EXPECT_TRUE(state != 0 && state != 'Z') << "the process the command left running was not left to run";
  kill(left, SIGKILL);
}

// Every process of a run records the launcher's run id (HEAPLINE_RUN_ID)
// in its report: the command and what it starts, one id for the run.
TEST_F(Tree, EveryReportOfTheRunCarriesItsRunId) {
  RunResult r = launch({"--out", "run.json", "--", "/bin/sh", "-c", kPatterns + " single chunk 2000 0; exit 0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto reports = heapline::test::files_matching(dir_, R"(run(\.\d+)?\.json)");
  ASSERT_EQ(reports.size(), 2u) << r.err;
  const std::string id = heapline::test::read_json(reports[0]).value("run_id", "");
  EXPECT_TRUE(std::regex_match(id, std::regex(R"(\d+-[0-9a-f]{16})"))) << id;
  EXPECT_EQ(heapline::test::read_json(reports[1]).value("run_id", ""), id);
}

// A kernel that refuses PR_SET_CHILD_SUBREAPER (before 3.4, qemu-user;
// here a seccomp filter, older_kernel no-subreaper) cannot give the run
// its orphans: one line says so, and the run goes on with the command
// (it said nothing, and what the command left running was silently
// neither waited for nor summarised).
TEST_F(Tree, AKernelThatCannotKeepTheTreeIsSaid) {
  const std::string command = "(sleep 0.2; exec " + kPatterns + " single chunk 2000 0) & exit 0";
  RunResult r = run({kOlderKernel, "no-subreaper", kLauncher, "--out", "run.json", "--", "/bin/sh", "-c", command},
                    options());
  if (r.exit_code == 3 && r.err.starts_with("older_kernel: seccomp")) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.rfind("heapline: cannot keep the command's processes as its tree (PR_SET_CHILD_SUBREAPER: Invalid "
                        "argument): one whose parent ends before it is neither waited for nor summarised\n",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("heapline: peak "), std::string::npos) << "the command's summary: " << r.err;
}

// A stop signal while the launcher waits for what the command left running
// ends the wait: the summary comes at once, with the command's status.
TEST_F(Tree, AStopSignalEndsTheWaitForWhatTheCommandLeftRunning) {
  auto running = start({kLauncher, "--out", "run.json", "--", "/bin/sh", "-c", "sleep 30 & echo $!; exit 3"}, options());
  ASSERT_TRUE(wait_for_output(running, "\n"));
  const pid_t left = std::stoi(running.out_so_far());
  bool waiting = false;
  for (int waited_ms = 0; !waiting && waited_ms < 20000; waited_ms += 10) {
    waiting = heapline::test::read_file(running.capture / "stderr").find("waiting for the processes") != std::string::npos;
    if (!waiting) usleep(10000);
  }
  ASSERT_TRUE(waiting);
  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(running.pid, SIGTERM), 0);
  RunResult r = finish(running);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - signalled;
  EXPECT_LT(took.count(), 20) << "the wait went on after the stop signal (the process left sleeps 30 s)";
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("heapline: report run.json\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("heapline: 1 process the command started still running: not in the summary\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(kill(left, 0), 0) << "the process left running is left to run";
  kill(left, SIGKILL);
}

// The launcher killed (SIGKILL, nothing it can handle): the whole tree it
// started stops, not only the command. A grandchild its shell waits for, a
// daemon that left the tree's session (setsid, a double fork: adopted by
// the keeper) and a process that ignores SIGTERM (killed once the grace
// has passed): all gone within a bounded time.
TEST_F(Tree, WhenTheLauncherIsKilledEveryProcessOfTheTreeStops) {
  const std::string script =
      "echo $$; sleep 40 & echo $!; (setsid sleep 41 & echo $!); (trap '' TERM; exec sleep 42) & echo $!; "
      "echo ready; wait";
  auto launched = start({kLauncher, "--out", "run.json", "--", "/bin/bash", "-c", script}, options());
  ASSERT_TRUE(wait_for_output(launched, "ready\n"));
  std::vector<pid_t> tree;
  std::istringstream lines(launched.out_so_far());
  for (std::string line; std::getline(lines, line) && line != "ready";) tree.push_back(std::stoi(line));
  ASSERT_EQ(tree.size(), 4u) << launched.out_so_far();
  for (const pid_t pid : tree) ASSERT_EQ(kill(pid, 0), 0) << pid;
  // Its SIGTERM is ignored once it runs sleep (bash sets the trap first).
  const pid_t ignores_sigterm = tree[3];
  ASSERT_TRUE(within(20, [&] {
    return heapline::test::read_file("/proc/" + std::to_string(ignores_sigterm) + "/comm") == "sleep\n";
  }));
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(launched.pid, SIGKILL), 0);
  EXPECT_EQ(finish(launched).signal, SIGKILL);
  // The grace before SIGKILL is 2 s; the bound leaves room for a loaded machine.
  const auto deadline = killed + std::chrono::seconds(30);
  auto running = [&] {
    std::vector<pid_t> left;
    for (const pid_t pid : tree) {
      if (kill(pid, 0) == 0) left.push_back(pid);
    }
    return left;
  };
  std::chrono::duration<double> sigkilled_after{0};
  while (!running().empty() && std::chrono::steady_clock::now() < deadline) {
    if (sigkilled_after.count() == 0 && kill(ignores_sigterm, 0) != 0) {
      sigkilled_after = std::chrono::steady_clock::now() - killed;
    }
    usleep(20000);
  }
  if (sigkilled_after.count() == 0) sigkilled_after = std::chrono::steady_clock::now() - killed;
  const std::vector<pid_t> left = running();
  for (const pid_t pid : left) kill(pid, SIGKILL);
  EXPECT_TRUE(left.empty()) << left.size() << " of the tree's 4 processes still ran 30 s after the launcher was killed";
  // Not before the grace: a bound that only a longer wait than stated can
  // break, whatever the load.
  EXPECT_GE(sigkilled_after.count(), 2.0) << "the process that ignores SIGTERM was killed before the 2 s of grace";
}

// A process of the tree stopped (SIGSTOP, a Ctrl-Z of its own) when the
// launcher is killed is continued with its SIGTERM: its handler runs (a
// stopped process that handles SIGTERM would only take the SIGKILL of 2 s
// later, its handler never run).
TEST_F(Tree, AStoppedProcessOfTheTreeIsContinuedToHearItsSigterm) {
  const fs::path told = dir_ / "told";
  const std::string script = "(trap 'echo TERM > " + told.string() +
                             "; exit 0' TERM; kill -STOP $BASHPID; sleep 40) & echo $!; wait";
  auto launched = start({kLauncher, "--out", "run.json", "--", "/bin/bash", "-c", script}, options());
  ASSERT_TRUE(wait_for_output(launched, "\n"));
  const pid_t stopped = std::stoi(launched.out_so_far());
  ASSERT_TRUE(within(20, [&] { return process_state(stopped) == 'T'; })) << "never stopped";
  ASSERT_EQ(kill(launched.pid, SIGKILL), 0);
  EXPECT_EQ(finish(launched).signal, SIGKILL);
  const bool gone = within(30, [&] { return kill(stopped, 0) != 0; });
  if (!gone) kill(stopped, SIGKILL);
  ASSERT_TRUE(gone) << "the stopped process still ran 30 s after the launcher was killed";
  EXPECT_EQ(heapline::test::read_file(told), "TERM\n") << "the stopped process was not continued: its handler never ran";
}

// The keeper killed: the launcher, a subreaper too, adopts the command and
// follows it itself, to its exit status and its summary.
TEST_F(Tree, WhenTheKeeperIsKilledTheLauncherFollowsTheCommand) {
  const std::string script = "echo $$ $PPID; while [ ! -e go ]; do sleep 0.05; done; exit 5";
  auto launched = start({kLauncher, "--out", "run.json", "--", "/bin/sh", "-c", script}, options());
  ASSERT_TRUE(wait_for_output(launched, "\n"));
  std::istringstream pids(launched.out_so_far());
  pid_t command = 0, keeper = 0;
  pids >> command >> keeper;
  ASSERT_EQ(heapline::test::read_file("/proc/" + std::to_string(keeper) + "/comm"), "heapline-keeper\n");
  ASSERT_EQ(parent_of(keeper), launched.pid);
  ASSERT_EQ(kill(keeper, SIGKILL), 0);
  const bool adopted = within(20, [&] { return parent_of(command) == launched.pid; });
  std::ofstream(dir_ / "go").close();
  EXPECT_TRUE(adopted) << "the command's parent is " << parent_of(command) << ", not the launcher " << launched.pid;
  RunResult r = finish(launched);
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.err.find("heapline: the keeper of the run (pid " + std::to_string(keeper) +
                       ") ended before the command: the launcher follows the command itself\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("heapline: report run.json\n"), std::string::npos) << r.err;
}

TEST_F(Tree, AnEarlierRunsChildReportsAreNotThisRuns) {
  ASSERT_EQ(launch({"--out", "run.json", "--", "/bin/sh", "-c", two_children()}).exit_code, 0);
  // Renamed so that this run's root cannot take the old pids' names.
  RunResult again = launch({"--out", "run.json", "--", kPatterns, "single", "chunk", "10", "0"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err.find("processes"), std::string::npos) << again.err;
}

// --- class C: the launcher never aborts, hangs or mixes runs ---------------

// Two launches writing beside each other (one --out): each lists its own
// processes only, never the other's.
TEST_F(Tree, TwoConcurrentLaunchesWithOneOutListOnlyTheirOwnProcesses) {
  const std::string command = kPatterns + " single chunk 2000 0 & sleep 1; wait";
  auto first = start({kLauncher, "--out", "run.json", "--", "/bin/sh", "-c", command}, options());
  auto second = start({kLauncher, "--out", "run.json", "--", "/bin/sh", "-c", command}, options());
  for (const RunResult& r : {finish(first), finish(second)}) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // Its own processes only: the command, and those whose parent is the
    // command (alloc_patterns, sleep); none of the other launch's.
    const std::regex row(R"(pid (\d+)\s+parent (\d+)\s+(\S+)( \(the command\))?)");
    std::string command_pid;
    std::vector<std::string> parents;
    for (std::sregex_iterator it(r.err.begin(), r.err.end(), row), end; it != end; ++it) {
      if ((*it)[4].matched) command_pid = (*it)[1];
      else parents.push_back((*it)[2]);
    }
    ASSERT_FALSE(command_pid.empty()) << r.err;
    EXPECT_FALSE(parents.empty()) << r.err;
    for (const std::string& parent : parents) EXPECT_EQ(parent, command_pid) << r.err;
  }
}

// A process that reuses an earlier one's pid replaces its report's file; the
// launcher read the first as it landed and lists both.
TEST_F(Tree, APidReusedWithinTheRunKeepsBothReports) {
  // Two seconds each and a few MiB: not short-lived helpers, and larger
  // than the shell's date and sleep (which fold into the helpers' line), so
  // each keeps its row among the five largest.
  auto report = [](const std::string& start, const std::string& peak) {
    return "{\"format\":\"heapline/1\",\"pid\":555,\"ppid\":'$$',\"exe\":\"/bin/reused\",\"start_unix_ns\":'" + start +
           "',\"duration_ns\":2000000000,\"precision\":{\"mode\":\"exact\",\"bound_bytes\":0,\"min_threshold_bytes\":1,"
           "\"max_threads\":1},\"peak_bytes\":" +
           peak + ",\"peak_time_ns\":0,\"final_bytes\":0,\"calls\":{\"alloc\":1,\"free\":0,\"realloc\":0},"
           "\"publishes\":1,\"interval_ns\":1,\"samples\":[[0," +
           peak + "," + peak + "]]}";
  };
  const std::string script = "echo '" + report("$(date +%s%N)", "1048576") + "' > run.555.json; sleep 0.5; echo '" +
                             report("$(date +%s%N)", "3145728") + "' > run.555.json; sleep 0.5";
  RunResult r = launch({"--out", "run.json", "--", "/bin/sh", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(" 1.0 MiB at "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" 3.0 MiB at "), std::string::npos) << r.err;
  std::size_t reused = 0;
  for (std::size_t at = r.err.find("pid 555 "); at != std::string::npos; at = r.err.find("pid 555 ", at + 1)) ++reused;
  EXPECT_EQ(reused, 2u) << r.err;
}

// SIGTERM, SIGHUP, SIGINT or SIGQUIT sent to the launcher alone reach the
// command, whose own exit status then passes through; the launcher still
// summarises.
TEST_F(Tree, AStopSignalToTheLauncherIsForwardedToTheCommand) {
  for (int signal_number : {SIGTERM, SIGHUP, SIGINT, SIGQUIT}) {
    const std::string script = "trap 'echo got it; exit 3' " + std::to_string(signal_number) +
                               "; echo ready; while :; do sleep 0.05; done";
    auto launched = start({kLauncher, "--out", "run.json", "--", "/bin/sh", "-c", script}, options());
    ASSERT_TRUE(wait_for_output(launched, "ready"));
    kill(launched.pid, signal_number);
    RunResult r = finish(launched);
    EXPECT_EQ(r.exit_code, 3) << "signal " << signal_number << ": " << r.err;
    EXPECT_NE(r.out.find("got it"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("heapline: report run.json"), std::string::npos) << r.err;
  }
}

// The terminal's Ctrl-C goes to the whole foreground process group, the
// command included: the launcher, which gets it too, does not send it
// again. The command counts the SIGINTs it receives for two seconds after
// the Ctrl-C and exits with that count. In the terminal's group it has one;
// moved to a group of its own (which the terminal does not signal) it has
// none, which it would have if the launcher passed the terminal's on.
TEST_F(Tree, TheTerminalsCtrlCReachesTheCommandOnce) {
  {
    int master = -1, terminal = -1;
    if (openpty(&master, &terminal, nullptr, nullptr, nullptr) != 0) GTEST_SKIP() << "no pseudo-terminal here";
    close(master);
    close(terminal);
  }
  const fs::path go = dir_ / "go";
  auto sigints_after_ctrl_c = [&](bool own_group) {
    fs::remove(go);
    const std::string program = std::string("import os, signal, sys, time\n") +
                                (own_group ? "os.setpgid(0, 0)\n" : "") +
                                "count = 0\n"
                                "def got(*_):\n"
                                "    global count\n"
                                "    count += 1\n"
                                "signal.signal(signal.SIGINT, got)\n"
                                "print('ready', flush=True)\n"
                                "for _ in range(3000):\n"
                                "    if os.path.exists('" + go.string() + "'): break\n"
                                "    time.sleep(0.01)\n"
                                "time.sleep(2)\n"
                                "sys.exit(count)\n";
    int master = -1, terminal = -1;
    EXPECT_EQ(openpty(&master, &terminal, nullptr, nullptr, nullptr), 0);
    const std::string out = (dir_ / "run.json").string();
    const pid_t launcher = fork();
    if (launcher == 0) {
      setsid();
      ioctl(terminal, TIOCSCTTY, 0);
      for (int fd : {0, 1, 2}) dup2(terminal, fd);
      setenv("HEAPLINE_LIB", kLib.c_str(), 1);
      unsetenv("LD_PRELOAD");
      execl(kLauncher.c_str(), kLauncher.c_str(), "--out", out.c_str(), "--", "/usr/bin/python3", "-c",
            program.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(terminal);
    std::string screen;
    auto read_some = [&] {
      pollfd in{master, POLLIN, 0};
      if (poll(&in, 1, 100) <= 0) return;
      char buffer[4096];
      const ssize_t got = read(master, buffer, sizeof buffer);
      if (got > 0) screen.append(buffer, static_cast<std::size_t>(got));
      else usleep(100'000);  // the terminal hung up: every process left it, the launcher is ending
    };
    for (int waited = 0; waited < 300 && screen.find("ready") == std::string::npos; ++waited) read_some();
    EXPECT_NE(screen.find("ready"), std::string::npos) << screen;
    const char ctrl_c = '\x03';
    EXPECT_EQ(write(master, &ctrl_c, 1), 1);
    std::ofstream(go).flush();
    int status = 0;
    pid_t ended = 0;
    for (int waited = 0; waited < 300 && (ended = waitpid(launcher, &status, WNOHANG)) == 0; ++waited) read_some();
    if (ended == 0) kill(launcher, SIGKILL), waitpid(launcher, &status, 0);
    close(master);
    EXPECT_EQ(ended, launcher) << screen;
    EXPECT_TRUE(WIFEXITED(status)) << screen;
    EXPECT_NE(screen.find("heapline: report "), std::string::npos) << "the summary still comes\n" << screen;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(sigints_after_ctrl_c(false), 1) << "the terminal's Ctrl-C reaches the command by itself";
  EXPECT_EQ(sigints_after_ctrl_c(true), 0) << "the launcher sent the terminal's Ctrl-C on";
}

// Should the launcher be killed outright (SIGKILL: nothing of it runs), the
// command gets SIGTERM rather than running on orphaned.
TEST_F(Tree, ACommandWhoseLauncherIsKilledGetsSigterm) {
  const fs::path told = dir_ / "told";
  const std::string script = "trap 'echo TERM > " + told.string() + "; exit 0' TERM; echo ready; "
                             "i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done";
  auto launched = start({kLauncher, "--out", "run.json", "--", "/bin/sh", "-c", script}, options());
  ASSERT_TRUE(wait_for_output(launched, "ready"));
  ASSERT_EQ(kill(launched.pid, SIGKILL), 0);
  finish(launched);
  for (int waited = 0; waited < 400 && !fs::exists(told); ++waited) usleep(50'000);
  EXPECT_TRUE(fs::exists(told)) << "the command did not get SIGTERM when its launcher was killed";
}

// Under a shim (many processes), the processes never print their own
// summary lines, even with HEAPLINE_SUMMARY=1 in the environment: the
// launcher prints the one summary, and with --verbose one line per process.
TEST_F(Tree, OnlyTheLauncherPrintsSummaries) {
  RunOptions o = options();
  o.env["HEAPLINE_SUMMARY"] = "1";
  RunResult r = run({kLauncher, "--verbose", "--out", "run.json", "--", "/bin/sh", "-c", two_children()}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find(", output "), std::string::npos) << r.err;  // the library's own line
  std::size_t per_process = 0;
  for (std::size_t at = r.err.find("heapline: pid "); at != std::string::npos; at = r.err.find("heapline: pid ", at + 1)) {
    ++per_process;
  }
  EXPECT_EQ(per_process, 3u) << r.err;
}

TreeReport fake(int pid, std::uint64_t start, std::vector<std::array<std::int64_t, 3>> samples) {
  heapline::ParsedReport report;
  report.pid = pid;
  report.start_unix_ns = start;
  for (const auto& s : samples) {
    report.samples.push_back({static_cast<std::uint64_t>(s[0]), s[1], s[2]});
    if (s[2] > report.peak_bytes) report.peak_bytes = s[2], report.peak_time_ns = static_cast<std::uint64_t>(s[0]);
  }
  return {"r" + std::to_string(pid), report};
}

// The same with mapped memory: its series one for one with the heap's, and
// the report's own peak of heap + mapped, as the writer states it.
TreeReport fake_mapped(int pid, std::uint64_t start, std::vector<std::array<std::int64_t, 3>> heap,
                       std::vector<std::array<std::int64_t, 3>> mapped, std::int64_t total_peak,
                       std::uint64_t total_peak_time) {
  TreeReport entry = fake(pid, start, heap);
  heapline::ParsedReport& report = entry.report;
  report.mapped.mode = heapline::ParsedReport::MappedMode::kOn;
  for (const auto& s : mapped) {
    report.mapped_samples.push_back({static_cast<std::uint64_t>(s[0]), s[1], s[2]});
    report.mapped.peak_bytes = std::max(report.mapped.peak_bytes, s[2]);
  }
  report.total.peak_bytes = total_peak;
  report.total.peak_time_ns = total_peak_time;
  return entry;
}

// A compiler's memory is mostly mapped (GCC's garbage-collected arenas):
// the tree is ranked and summed by heap + mapped, with both beside. The
// driver holds a little heap; cc1plus 10 KiB of heap and 390 KiB mapped.
TEST(TreeSummary, RanksAndSumsHeapPlusMapped) {
  std::vector<TreeReport> tree = {
      fake_mapped(1, 0, {{0, 20000, 20000}, {5000, 20000, 20000}}, {{0, 0, 0}, {5000, 0, 0}}, 20000, 0),
      fake_mapped(2, 1000, {{0, 1000, 1000}, {1000, 10240, 10240}, {2000, 1000, 10240}},
                  {{0, 0, 0}, {1000, 399360, 399360}, {2000, 0, 399360}}, 409600, 1000)};
  tree[1].report.peak_rss_bytes = 3 << 20;
  const std::string text = heapline::launcher::summarize_tree(tree);
  EXPECT_LT(text.find("pid 2 "), text.find("pid 1 ")) << text;
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(400\.0 KiB at\s+0\.000 s\s+heap\s+10\.0 KiB\s+mapped\s+390\.0 KiB\s+resident\s+3\.0 MiB\s+pid 2 )")))
      << text;
  // Not recorded (a report converted from an older live file): "-".
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(resident\s+-\s+pid 1 )"))) << text;
  // A report converted from a live file with the resident series: its
  // largest reading.
  tree[0].report.resident = heapline::ParsedReport::Resident{5 << 20, 1000, 4 << 20};
  const std::string converted = heapline::launcher::summarize_tree(tree);
  EXPECT_TRUE(std::regex_search(converted, std::regex(R"(resident\s+5\.0 MiB\s+pid 1 )"))) << converted;
  EXPECT_NE(text.find("together at most 419.5 KiB of heap + mapped"), std::string::npos) << text;
  auto sum = heapline::launcher::sum_over_time(tree);
  EXPECT_EQ(sum.peak_bytes, 20000 + 409600);
  EXPECT_EQ(sum.peak_unix_ns, 2000u);
}

// Each row's mapped column tells a process that counted no mappings
// (HEAPLINE_MAPPED=off: "off") from one whose report has no mapped figure
// (a file older than the series: "-"), and both from one that held none.
TEST(TreeSummary, TheMappedColumnTellsOffFromUnknownFromNothingMapped) {
  std::vector<TreeReport> tree = {fake_mapped(1, 0, {{0, 3000, 3000}}, {{0, 0, 0}}, 3000, 0),
                                  fake(2, 0, {{0, 2000, 2000}}), fake(3, 0, {{0, 1000, 1000}})};
  tree[1].report.mapped.mode = heapline::ParsedReport::MappedMode::kOff;
  tree[2].report.mapped.mode = heapline::ParsedReport::MappedMode::kUnknown;
  const std::string text = heapline::launcher::summarize_tree(tree);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(mapped\s+0 B\s+resident\s+-\s+pid 1 )"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(mapped\s+off\s+resident\s+-\s+pid 2 )"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(mapped\s+-\s+resident\s+-\s+pid 3 )"))) << text;
}

// An interval's bound adds the heap's maximum and the mapped maximum, which
// may not have been held at once: never above the process's own peak of the
// sum. The interval that holds that peak reaches it.
TEST(TreeSum, WholeMemoryIsBoundedByTheProcesssOwnPeak) {
  const TreeReport entry = fake_mapped(1, 100, {{0, 10, 10}, {10, 50, 500}, {20, 40, 60}},
                                       {{0, 0, 0}, {10, 300, 600}, {20, 100, 300}}, 700, 5);
  const std::vector<heapline::Sample> points = heapline::launcher::whole_memory(entry.report);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].t_ns, 100u);
  EXPECT_EQ(points[1].live, 350);
  EXPECT_EQ(points[1].max_live, 700);  // 500 + 600 capped at the own peak
  EXPECT_EQ(points[2].live, 140);
  EXPECT_EQ(points[2].max_live, 360);
  // Without mapped memory: the heap series, at absolute times.
  const std::vector<heapline::Sample> heap_only = heapline::launcher::whole_memory(fake(2, 7, {{0, 5, 9}}).report);
  ASSERT_EQ(heap_only.size(), 1u);
  EXPECT_EQ(heap_only[0].t_ns, 7u);
  EXPECT_EQ(heap_only[0].max_live, 9);
}

// The tree's largest moment is named in the sum's own terms, heap +
// mapped: a compiler holding 10 KiB of heap and 390 KiB mapped is the one
// whose sites are shown, not a process with more heap but less memory; the
// line says how much of the moment was heap (the only part with sites).
TEST(TreeProfile, TheLargestMomentsProcessIsChosenByHeapPlusMapped) {
  std::vector<TreeReport> tree = {
      fake_mapped(1, 0, {{0, 1000, 1000}, {5000, 1000, 1000}}, {{0, 0, 0}, {5000, 0, 0}}, 1000, 0),
      fake_mapped(2, 1000, {{0, 10240, 10240}, {3000, 10240, 10240}}, {{0, 399360, 399360}, {3000, 0, 399360}},
                  409600, 0),
      fake_mapped(3, 1000, {{0, 51200, 51200}, {3000, 0, 51200}}, {{0, 0, 0}, {3000, 0, 0}}, 51200, 0)};
  tree[0].report.exe = "/usr/bin/make";
  tree[1].report.exe = "/usr/lib/gcc/cc1plus";
  tree[2].report.exe = "/usr/bin/as";
  heapline::launcher::Symbolizer symbolizer;
  const std::string text = heapline::launcher::summarize_tree_profile(tree, symbolizer, 10);
  EXPECT_NE(text.find("process 2 (cc1plus) held up to 400.0 KiB of it (heap up to 10.0 KiB, mapped up to 390.0 KiB"),
            std::string::npos)
      << text;
}

// The parts of the moment are each part's most over the interval that holds
// it, never the values at its end: a process that held 2 MiB of heap for a
// moment and freed it before the interval ended held "heap up to 2.0 MiB"
// (the line said "heap 0 B, mapped 0 B then" of a 2.0 MiB share).
TEST(TreeProfile, TheLargestMomentsPartsAreTheIntervalsMost) {
  std::vector<TreeReport> tree = {
      fake_mapped(1, 0, {{0, 100, 100}, {5000, 100, 100}}, {{0, 0, 0}, {5000, 0, 0}}, 100, 0),
      fake_mapped(2, 1000, {{0, 0, 0}, {3000, 0, 2 << 20}}, {{0, 0, 0}, {3000, 0, 0}}, 2 << 20, 1000)};
  tree[0].report.exe = "/bin/sh";
  tree[1].report.exe = "/tmp/c2";
  heapline::launcher::Symbolizer symbolizer;
  const std::string text = heapline::launcher::summarize_tree_profile(tree, symbolizer, 10);
  EXPECT_NE(text.find("process 2 (c2) held up to 2.0 MiB of it (heap up to 2.0 MiB, mapped up to 0 B)"),
            std::string::npos)
      << text;
}

// When the command itself held the tree's largest moment, its sites were
// printed just above and the line points to them; without a peak profile
// (sampling off) there is nothing above to point to.
TEST(TreeProfile, TheCommandsOwnSitesArePointedToOnlyWhenItHasAProfile) {
  std::vector<TreeReport> tree = {
      fake_mapped(1, 0, {{0, 51200, 51200}, {5000, 51200, 51200}}, {{0, 0, 0}, {5000, 0, 0}}, 51200, 0),
      fake_mapped(2, 1000, {{0, 1000, 1000}, {3000, 0, 1000}}, {{0, 0, 0}, {3000, 0, 0}}, 1000, 0)};
  heapline::launcher::Symbolizer symbolizer;
  const std::string without = heapline::launcher::summarize_tree_profile(tree, symbolizer, 10);
  EXPECT_NE(without.find("process 1 ("), std::string::npos) << without;
  EXPECT_EQ(without.find("sites are above"), std::string::npos) << without;

  heapline::SamplingData sampling;
  sampling.mean_bytes = 4 << 20;
  heapline::ProfileData peak;
  heapline::ProfileSiteData site;
  site.bytes = 4 << 20;
  site.samples = 1;
  peak.sites.push_back(site);
  sampling.peak_profile = peak;
  tree[0].report.sampling = sampling;
  const std::string with = heapline::launcher::summarize_tree_profile(tree, symbolizer, 10);
  EXPECT_NE(with.find("; its sites are above\n"), std::string::npos) << with;
}

// The launcher's summary of a report whose peak profile has `sites` sites
// without frames, the Nth from the last holding N MiB in N samples.
std::string summary_of_sites(int sites, const std::string& unwinder) {
  heapline::ParsedReport report;
  report.pid = 7;
  report.exe = "/bin/sites";
  heapline::SamplingData sampling;
  sampling.mean_bytes = 4 << 20;
  sampling.unwinder = unwinder;
  heapline::ProfileData peak;
  for (int site = sites; site >= 1; --site) {
    heapline::ProfileSiteData data;
    data.bytes = site << 20;
    data.samples = static_cast<std::uint64_t>(site);
    peak.sites.push_back(data);
  }
  sampling.peak_profile = peak;
  report.sampling = sampling;
  heapline::launcher::Symbolizer symbolizer;
  return heapline::launcher::summarize_peak_profile(report, heapline::launcher::kSummarySites, symbolizer);
}

// The launcher's summary shows the ten largest sites at the peak and counts
// the rest: a profile of 12 sites (no frames: "no stack") lists 10, then
// the other 2 with their bytes.
TEST(TreeProfile, TheSummaryShowsTheTenLargestSites) {
  const std::string text = summary_of_sites(12, "libunwind");
  std::size_t listed = 0;
  for (std::size_t at = text.find(" samples  "); at != std::string::npos; at = text.find(" samples  ", at + 1)) ++listed;
  EXPECT_EQ(listed, 10u) << text;
  EXPECT_NE(text.find("   3 samples  "), std::string::npos) << text;
  EXPECT_EQ(text.find("   2 samples  "), std::string::npos) << text;
  EXPECT_NE(text.find("heapline:   3.0 MiB in 2 other sites\n"), std::string::npos) << text;
}

// A profile taken without an unwinder ("unwinder": "none") has sites
// without stacks, and the summary says why.
TEST(TreeProfile, AProfileWithoutStacksSaysWhy) {
  const std::string text = summary_of_sites(1, "none");
  EXPECT_NE(text.find("(no stack: allocated before libunwind was loaded, or without it)"), std::string::npos) << text;
  EXPECT_NE(text.find("heapline: (no stacks: no unwinder was available to the process)\n"), std::string::npos) << text;
  EXPECT_EQ(summary_of_sites(1, "libunwind").find("no unwinder"), std::string::npos);
}

// The tree's plot: the sum with its band (block 0 and 1 of the data), then
// the command and the largest processes, each its own block and title; the
// rest are in the sum only.
TEST(TreePlot, DrawsTheSumTheCommandAndTheLargest) {
  // The command holds 1 KiB for 4 s; processes 2 to 9 start at 1 s holding
  // pid KiB, reach twice that between their two samples and end at 2 s.
  std::vector<TreeReport> tree = {fake(1, 0, {{0, 1024, 1024}, {4'000'000'000, 1024, 1024}})};
  for (int pid = 2; pid <= 9; ++pid) {
    tree.push_back(fake(pid, 1'000'000'000, {{0, 1024 * pid, 1024 * pid}, {1'000'000'000, 0, 2048 * pid}}));
  }
  for (TreeReport& entry : tree) entry.report.exe = "/bin/alloc_patterns";
  tree[8].report.peak_rss_bytes = 20 << 10;
  const fs::path out = fs::temp_directory_path() / "heapline-tree-plot-test.svg";
  const auto files = heapline::launcher::write_tree_plot_files(tree, out);
  const std::string data = heapline::test::read_file(files.data);
  const std::string script = heapline::test::read_file(files.script);
  fs::remove_all(files.directory);
  // Every process alive together at 1 s: 1 + 2 + ... + 9 KiB.
  EXPECT_NE(data.find("\n1 45\n"), std::string::npos) << data;
  // The band of the interval to 2 s: from the sum held (45 KiB) to the most
  // it may have reached (process 2 at its 4 KiB: 47 KiB).
  EXPECT_NE(data.find("\n1 45 47\n2 45 47\n"), std::string::npos) << data;
  EXPECT_NE(script.find("\nset title 'heap + mapped memory of alloc_patterns (pid 1) and the 8 processes it started'\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("title 'all 9 processes together'"), std::string::npos) << script;
  EXPECT_NE(script.find("index 1 using 1:2:3 with filledcurves"), std::string::npos) << script;
  EXPECT_NE(script.find("'alloc_patterns (pid 1, the command): peak 1.0 KiB'"), std::string::npos) << script;
  EXPECT_NE(script.find("'alloc_patterns (pid 9): peak 18.0 KiB, resident 20.0 KiB'"), std::string::npos) << script;
  // The command and the five largest: pids 9 to 5; 4, 3 and 2 in the sum only.
  EXPECT_NE(script.find("index 7 using 1:2 with steps"), std::string::npos) << script;
  EXPECT_EQ(script.find("index 8 "), std::string::npos) << script;
  EXPECT_EQ(script.find("(pid 4)"), std::string::npos) << script;
  EXPECT_NE(script.find("set label 'together at most 47.0 KiB at 2.000 s' at 2, 47 left boxed point"), std::string::npos)
      << script;
}

// A command and one child: the title counts it in the singular.
TEST(TreePlot, TheTitleCountsTheProcessesTheCommandStarted) {
  std::vector<TreeReport> tree = {fake(1, 0, {{0, 1024, 1024}, {4'000'000'000, 1024, 1024}}),
                                  fake(2, 1'000'000'000, {{0, 2048, 2048}, {1'000'000'000, 0, 2048}})};
  tree[0].report.exe = "/usr/bin/make";
  tree[1].report.exe = "/usr/bin/cc";
  const fs::path out = fs::temp_directory_path() / "heapline-tree-title-test.svg";
  const auto files = heapline::launcher::write_tree_plot_files(tree, out);
  const std::string script = heapline::test::read_file(files.script);
  fs::remove_all(files.directory);
  EXPECT_NE(script.find("\nset title 'heap + mapped memory of make (pid 1) and the 1 process it started'\n"),
            std::string::npos)
      << script;
}

// Where heap + mapped peaks at the heap's own peak (nothing mapped then),
// its time is the heap's: the library stamps the sum's peak only at its next
// sample, up to an interval later. Equal peaks take the earlier of the two
// moments (the sum held the value at both), and a larger sum its own.
TEST(TreeSum, AWholePeakEqualToTheHeapsTakesTheEarlierTime) {
  TreeReport entry = fake_mapped(1, 0, {{0, 0, 0}, {88, 100, 100}, {109, 100, 100}}, {{0, 0, 0}, {88, 0, 0}, {109, 0, 0}},
                                 100, 109);
  EXPECT_EQ(heapline::launcher::whole_peak(entry.report).t_ns, 88u);
  entry.report.total.peak_time_ns = 40;  // the sum reached 100 first, with something mapped
  EXPECT_EQ(heapline::launcher::whole_peak(entry.report).t_ns, 40u);
  entry.report.total.peak_bytes = 101;  // above the heap's: the sum's own time
  entry.report.total.peak_time_ns = 109;
  EXPECT_EQ(heapline::launcher::whole_peak(entry.report).t_ns, 109u);
  EXPECT_EQ(heapline::launcher::whole_peak(entry.report).bytes, 101);
}

// Two samples of one time (the exit's sample at the coarse clock's time of
// the one before): the interval they close is bounded by the maxima of
// both, not the later one's alone ("held up to 2.9 MiB of it (heap up to
// 4.0 KiB, ...)" was said of a process that had mapped nothing).
TEST(TreeSum, SamplesThatShareATimeAllBoundTheirInterval) {
  const TreeReport entry = fake_mapped(1, 0, {{0, 0, 0}, {2000, 4112, 3002368}, {2000, 4112, 4112}},
                                       {{0, 0, 0}, {2000, 0, 0}, {2000, 0, 0}}, 3002368, 2000);
  const std::vector<heapline::launcher::MemoryPoint> points = heapline::launcher::memory_over_time(entry.report);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].heap, 4112);
  EXPECT_EQ(points[1].heap_most, 3002368);
  EXPECT_EQ(points[1].mapped_most, 0);
  EXPECT_EQ(points[1].most, 3002368);
}

TEST(TreeSum, AddsOverlappingProcessesAndNeverFallsBelowOnesPeak) {
  // A driver holding 100 while a compiler (started at t=1000) reaches 900
  // between its samples: the sum counts the compiler at its interval's
  // maximum, the driver at its current value.
  std::vector<TreeReport> tree = {fake(1, 0, {{0, 100, 100}, {5000, 100, 100}}),
                                  fake(2, 1000, {{0, 10, 10}, {1000, 300, 900}, {2000, 50, 300}})};
  auto sum = heapline::launcher::sum_over_time(tree);
  EXPECT_EQ(sum.peak_bytes, 1000);
  EXPECT_EQ(sum.peak_unix_ns, 2000u);
  EXPECT_EQ(sum.overlapping, 2u);
  // One after the other: nothing adds up, the sum is the larger one.
  tree = {fake(1, 0, {{0, 100, 100}, {1000, 400, 400}}), fake(2, 2000, {{0, 300, 300}, {1000, 0, 350}})};
  sum = heapline::launcher::sum_over_time(tree);
  EXPECT_EQ(sum.peak_bytes, 400);
  EXPECT_EQ(sum.overlapping, 1u);
}

// Of two moments at which the processes together held the same largest
// total, the first is the one reported: 500 bytes at 0 and again at 2 us.
TEST(TreeSum, OfTwoEqualTotalsTheFirstMomentIsReported) {
  const std::vector<TreeReport> tree = {fake(1, 0, {{0, 500, 500}, {1000, 0, 500}}),
                                        fake(2, 2000, {{0, 500, 500}, {1000, 0, 500}})};
  const auto sum = heapline::launcher::sum_over_time(tree);
  EXPECT_EQ(sum.peak_bytes, 500);
  EXPECT_EQ(sum.peak_unix_ns, 0u);
}

// Processes of equal peaks are listed in the order they started (the
// command first), after any larger one.
TEST(TreeSummary, ProcessesOfEqualPeaksAreListedInTheOrderTheyStarted) {
  const std::vector<TreeReport> tree = {fake(1, 0, {{0, 700, 700}, {9000, 700, 700}}),
                                        fake(2, 10, {{0, 700, 700}, {10, 0, 700}}),
                                        fake(3, 20, {{0, 900, 900}, {10, 0, 900}}),
                                        fake(4, 30, {{0, 700, 700}, {10, 0, 700}})};
  const std::string text = heapline::launcher::summarize_tree(tree);
  const std::regex row(R"(pid (\d+)\s+parent)");
  std::vector<int> listed;
  for (std::sregex_iterator it(text.begin(), text.end(), row), end; it != end; ++it) listed.push_back(std::stoi((*it)[1]));
  EXPECT_EQ(listed, (std::vector<int>{3, 1, 2, 4})) << text;
}

// The figures a reader accepts are at most 2^60 bytes and 2^62 ns
// (heapline/figures.h): a tree of many processes at those limits, heap and
// mapped, sums to the limit and no further (no overflow, which the
// sanitizer build would report), and exactly again once they have ended.
TEST(TreeSum, ProcessesAtTheFiguresLimitsSumWithoutOverflow) {
  constexpr std::int64_t kMost = heapline::kBytesLimit;
  const std::uint64_t late = heapline::kTimeLimitNs - 100;
  std::vector<TreeReport> tree;
  for (int pid = 1; pid <= 20; ++pid) {
    tree.push_back(fake_mapped(pid, late, {{0, kMost, kMost}, {10, 0, kMost}}, {{0, kMost, kMost}, {10, 0, kMost}},
                               kMost, 0));
  }
  tree.push_back(fake(21, late, {{0, 5, 5}, {50, 7, 7}, {100, 3, 7}}));
  for (const TreeReport& entry : tree) {
    for (const heapline::Sample& point : heapline::launcher::whole_memory(entry.report)) {
      EXPECT_LE(point.live, kMost);
      EXPECT_LE(point.max_live, kMost);
    }
  }
  const auto sum = heapline::launcher::sum_over_time(tree);
  EXPECT_EQ(sum.peak_bytes, kMost);
  EXPECT_EQ(sum.overlapping, 21u);
  // Twenty processes at the limit added and taken away again: process 21's
  // own figure, to the byte.
  ASSERT_GE(sum.line.size(), 2u);
  EXPECT_EQ(sum.line[sum.line.size() - 2].live, 7);
  const std::string text = heapline::launcher::summarize_tree(tree);
  EXPECT_NE(text.find("together at most 1024.0 PiB"), std::string::npos) << text;
}

TEST(TreeSummary, ListsTheLargestFirstAndCountsTheRest) {
  std::vector<TreeReport> tree = {fake(1, 0, {{0, 100, 100}, {9000, 100, 100}})};
  for (int pid = 2; pid < 6; ++pid) tree.push_back(fake(pid, 10, {{0, pid * 1000, pid * 1000}, {10, 0, 0}}));
  const std::string text = heapline::launcher::summarize_tree(tree, 2);
  EXPECT_NE(text.find("heapline: 5 processes"), std::string::npos) << text;
  EXPECT_LT(text.find("pid 5 "), text.find("pid 4 ")) << text;
  EXPECT_EQ(text.find("pid 3 "), std::string::npos) << text;
  EXPECT_NE(text.find("... and 3 more, each at most 2.9 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("together at most 13.8 KiB of heap + mapped"), std::string::npos) << text;
  EXPECT_EQ(heapline::launcher::summarize_tree({tree[0]}), "");
}

// By default the summary lists the five largest processes and counts the
// rest: 15 processes, the largest 5 with a row each, 10 more counted.
TEST(TreeSummary, ListsTheFiveLargestByDefault) {
  std::vector<TreeReport> tree = {fake(1, 0, {{0, 100, 100}, {9000, 100, 100}})};
  for (int pid = 2; pid <= 15; ++pid) tree.push_back(fake(pid, 10, {{0, pid * 1000, pid * 1000}, {10, 0, 0}}));
  const std::string text = heapline::launcher::summarize_tree(tree);
  EXPECT_NE(text.find("heapline: 15 processes"), std::string::npos) << text;
  const std::regex row(R"(pid (\d+)\s+parent)");
  std::vector<int> listed;
  for (std::sregex_iterator it(text.begin(), text.end(), row), end; it != end; ++it) listed.push_back(std::stoi((*it)[1]));
  EXPECT_EQ(listed, (std::vector<int>{15, 14, 13, 12, 11})) << text;
  EXPECT_NE(text.find("... and 10 more, each at most 9.8 KiB"), std::string::npos) << text;
}

// A shim's helpers (pyenv runs some thirty bash and readlink processes
// before it execs python) fold into one line, counted by program; the
// command and a child that matters keep their rows.
TEST(TreeSummary, TrivialShortLivedHelpersFoldIntoOneLine) {
  std::vector<TreeReport> tree = {fake(1, 0, {{0, 6 << 20, 6 << 20}}), fake(2, 10, {{0, 3 << 20, 3 << 20}})};
  tree[0].report.exe = "/usr/bin/python3.11";
  tree[1].report.exe = "/usr/bin/worker";
  for (int pid = 3; pid < 36; ++pid) {
    tree.push_back(fake(pid, 20, {{0, 100 << 10, 100 << 10}}));
    tree.back().report.exe = pid % 11 == 0 ? "/usr/bin/readlink" : "/bin/bash";
    tree.back().report.duration_ns = 5'000'000;
  }
  // A helper that ran long is not trivial: it keeps its row.
  tree[5].report.duration_ns = 3'000'000'000;
  const std::string text = heapline::launcher::summarize_tree(tree);
  EXPECT_NE(text.find("pid 1 "), std::string::npos) << text;
  EXPECT_NE(text.find("pid 2 "), std::string::npos) << text;
  EXPECT_NE(text.find("pid 6 "), std::string::npos) << text;
  EXPECT_NE(text.find("heapline:   32 short-lived helpers (29 bash, 3 readlink), each under 1.000 s and at most "
                      "100.0 KiB; --verbose lists each\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5) << text;
}

// The same for real: a shim that runs twenty helpers, then execs python.
// The whole summary stays short (the pyenv shim's was 67 lines).
TEST_F(Tree, AShimsHelpersLeaveASummaryAPersonReads) {
  const std::string shim = "i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i+1)); done; exec /usr/bin/python3 -c pass";
  RunResult r = launch({"--summary", "--out", "run.json", "--", "/bin/sh", "-c", shim});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("heapline: 21 processes"), std::string::npos) << r.err;
  // (A helper the machine held up past a second keeps its row.)
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(heapline:   \d+ short-lived helpers \(\d+ true\))"))) << r.err;
  EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 15) << r.err;
}

// A shim that execs the real program: the command's report starts when the
// program did, after processes of the run had come and gone. Times count
// from the first of them.
TEST(TreeSummary, TimesCountFromTheFirstProcess) {
  const std::uint64_t second = 1'000'000'000;
  std::vector<TreeReport> tree = {fake(1, 3 * second, {{0, 5000, 5000}}), fake(2, 1 * second, {{0, 100, 100}})};
  tree[1].report.duration_ns = 2 * second;  // not a short-lived helper: it keeps its row
  const std::string text = heapline::launcher::summarize_tree(tree);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(at\s+2\.000 s\s+heap [^\n]+pid 1 )"))) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(at\s+0\.000 s\s+heap [^\n]+pid 2 )"))) << text;
}

TEST(OutputNaming, FindsThePidInAnInsertedName) {
  using heapline::launcher::pid_of_inserted_path;
  EXPECT_EQ(pid_of_inserted_path("/d/run.json", "/d/run.123.json"), 123);
  EXPECT_EQ(pid_of_inserted_path("/d/run", "/d/run.77"), 77);
  EXPECT_EQ(pid_of_inserted_path("/d/run.json", "/d/run.json"), 0);
  EXPECT_EQ(pid_of_inserted_path("/d/run.json", "/d/run.12x.json"), 0);
  EXPECT_EQ(pid_of_inserted_path("/d/run.json", "/d/run.012.json"), 0);
  EXPECT_EQ(pid_of_inserted_path("/d/run.json", "/e/run.12.json"), 0);
  EXPECT_EQ(pid_of_inserted_path("/d/run.json", "/d/run.12.json.live"), 0);
}

// heapline clean removes what processes that are gone left, and nothing
// else: a running process's live file, a file that only looks like one, a
// link, another program's JSON.
TEST_F(Tree, CleanRemovesOnlyWhatGoneProcessesLeft) {
  RunOptions aborted = options(true, "dead.json");
  ASSERT_EQ(run({kProbe, "abort", "30"}, aborted).signal, SIGABRT);
  ASSERT_TRUE(fs::exists(dir_ / "dead.json.live"));
  ASSERT_EQ(run({kPatterns, "single", "chunk", "10", "0"}, options(true, "done.json")).exit_code, 0);
  std::ofstream(dir_ / "notes.live") << "not a live file";
  std::ofstream(dir_ / "other.json") << R"({"format":"something/2","pid":1})";
  fs::create_symlink(dir_ / "dead.json.live", dir_ / "link.live");
  auto running = start({kProbe, "hold", "20"}, options(true, "held.json"));
  ASSERT_TRUE(wait_for_output(running, "ready"));

  RunResult dry = launch({"clean", dir_.string(), "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.err.find("would remove " + (dir_ / "dead.json.live").string() + " (pid "), std::string::npos) << dry.err;
  EXPECT_TRUE(fs::exists(dir_ / "dead.json.live"));

  // Not recursive: a live file in a subdirectory is not DIR's.
  fs::create_directory(dir_ / "sub");
  fs::copy_file(dir_ / "dead.json.live", dir_ / "sub" / "dead.json.live");
  RunResult clean = launch({"clean", dir_.string()});
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  // Each removed file named with its process's pid and program.
  EXPECT_TRUE(std::regex_search(clean.err, std::regex("removed " + (dir_ / "dead\\.json\\.live").string() +
                                                      R"( \(pid \d+, phase_probe\))")))
      << clean.err;
  EXPECT_TRUE(fs::exists(dir_ / "sub" / "dead.json.live"));
  EXPECT_NE(clean.err.find("kept " + (dir_ / "held.json.live").string() + ": process " + std::to_string(running.pid) +
                           " is running"),
            std::string::npos)
      << clean.err;
  EXPECT_FALSE(fs::exists(dir_ / "dead.json.live"));
  EXPECT_TRUE(fs::exists(dir_ / "held.json.live"));
  EXPECT_TRUE(fs::exists(dir_ / "notes.live"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.live"));
  EXPECT_TRUE(fs::exists(dir_ / "done.json"));

  RunResult reports = launch({"clean", dir_.string(), "--reports"});
  EXPECT_EQ(reports.exit_code, 0) << reports.err;
  EXPECT_FALSE(fs::exists(dir_ / "done.json"));
  EXPECT_TRUE(fs::exists(dir_ / "other.json"));
  EXPECT_TRUE(fs::exists(dir_ / "held.json.live"));
  kill(running.pid, SIGKILL);
  finish(running);

  RunResult after = launch({"clean", dir_.string()});
  EXPECT_NE(after.err.find("removed " + (dir_ / "held.json.live").string()), std::string::npos) << after.err;
  RunResult missing = launch({"clean", (dir_ / "nowhere").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("heapline clean: cannot read "), std::string::npos) << missing.err;
}

// A live file whose pid is another user's running process, whose mappings
// this user cannot read: clean cannot tell whether that process writes it,
// so the file is kept, with the reason.
TEST_F(Tree, CleanKeepsAFileWhoseProcessItCannotInspect) {
  if (geteuid() != 0 || !fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "needs root and setpriv to be another user";
  ASSERT_EQ(run({kProbe, "abort", "30"}, options(true, "theirs.json")).signal, SIGABRT);
  const fs::path live = dir_ / "theirs.json.live";
  ASSERT_TRUE(fs::exists(live));
  // A process of root's that nobody cannot inspect, named in the file.
  auto rooted = start({"/bin/sleep", "30"}, options());
  std::string bytes = heapline::test::read_file(live);
  const std::int32_t pid = rooted.pid;
  std::memcpy(bytes.data() + offsetof(heapline::LiveHeader, pid), &pid, sizeof pid);
  std::ofstream(live, std::ios::binary | std::ios::trunc) << bytes;
  ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chown(live.c_str(), 65534, 65534), 0);
  RunOptions as_nobody = options();
  as_nobody.cwd = "/";
  const RunResult r = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", kLauncher, "clean",
                           dir_.string()},
                          as_nobody);
  kill(rooted.pid, SIGKILL);
  finish(rooted);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("kept " + live.string() + ": process " + std::to_string(pid) + " is running"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(live));
  ASSERT_EQ(chown(dir_.c_str(), 0, 0), 0);
}

}  // namespace
