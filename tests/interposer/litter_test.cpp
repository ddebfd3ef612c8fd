// What a run leaves on disk: processes ending through _exit/_Exit, a shell
// shim that forks subshells, HEAPLINE_FOLLOW, and a program that defines its
// own malloc. Each test works in its own temporary directory.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::files_matching;
using heapline::test::heapline_format_problem;
using heapline::test::preload_options;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunResult;
using nlohmann::json;

namespace {

const std::string kLib = HEAPLINE_LIB;
const std::string kForkProbe = FORK_PROBE;
const std::string kOwnMalloc = OWN_MALLOC;
const std::string kPhaseProbe = PHASE_PROBE;

class Litter : public heapline::test::TempDirTest {
 protected:
  Litter() : TempDirTest("litter") {}
  RunResult traced(const std::vector<std::string>& argv, const std::string& name,
                   std::map<std::string, std::optional<std::string>> env = {}) {
    return run(argv, preload_options(kLib, dir_, name, std::move(env)));
  }
  std::vector<fs::path> live_files() { return files_matching(dir_, R"(.*\.live)"); }
  void check_shim(const std::string& shell);
};

// A fork child ending through _exit or _Exit skips every destructor: it
// still writes its report and removes its live file, as exit() does.
TEST_F(Litter, AChildEndingThroughUnderscoreExitWritesItsReportAndLeavesNoLiveFile) {
  for (const std::string how : {"_exit", "_Exit"}) {
    SCOPED_TRACE(how);
    RunResult result = traced({kForkProbe, "fork", "1048576", how}, how + ".json");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(child=(\d+) held=(\d+))"))) << result.out;
    const fs::path child = dir_ / (how + "." + m[1].str() + ".json");
    ASSERT_TRUE(fs::exists(child));
    json report = read_json(child);
    EXPECT_EQ(heapline_format_problem(report), "");
    EXPECT_GE(report["final_bytes"].get<std::int64_t>(), std::stoll(m[2]) + 64 * 1000);
    EXPECT_TRUE(live_files().empty());
  }
}

// A vfork child runs in its parent's memory: its _exit must neither write a
// report nor remove the parent's live file (python's subprocess uses vfork).
TEST_F(Litter, AVforkChildsUnderscoreExitLeavesTheParentAlone) {
  RunResult result = traced({"/usr/bin/python3", "-c",
                             "import subprocess, os\n"
                             "x = [bytes(1000) for _ in range(3000)]\n"
                             "try:\n  subprocess.run(['/nonexistent/program'])\nexcept OSError:\n  pass\n"
                             "assert os.path.exists(os.environ['HEAPLINE_OUT'] + '.live')\n"},
                            "vfork.json");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(fs::exists(dir_ / "vfork.json"));
  EXPECT_EQ(files_matching(dir_, R"(.*\.json)").size(), 1u);
  EXPECT_TRUE(live_files().empty());
}

// A pyenv-like shim: the shell forks `$(...)` subshells (dash's end
// through _exit, as does python's os._exit), then execs the real program.
void write_shim(const fs::path& path, const std::string& shell) {
  std::ofstream shim(path);
  shim << "#!" << shell << "\n"
          "set -e\n"
          "for i in 1 2 3; do\n"
          "  version=$(echo \"3.11.$i\")\n"
          "  prefix=$( (echo nested) )\n"
          "done\n"
          "quick=$(/usr/bin/python3 -c 'import os; print(1, flush=True); os.fork() or os._exit(0)')\n"
          "exec /usr/bin/python3 -c 'x = [bytes(1000) for _ in range(20000)]; print(len(x))'\n";
  shim.close();
  fs::permissions(path, fs::perms::owner_all);
}

TEST_F(Litter, AShellShimLeavesNoLiveFileAndFollowingTheCommandLeavesOneReport) {
  for (const std::string shell : {"/bin/dash", "/bin/bash"}) {
    SCOPED_TRACE(shell);
    check_shim(shell);
    for (const auto& file : files_matching(dir_, ".*")) fs::remove(file);
  }
}

void Litter::check_shim(const std::string& shell) {
  write_shim(dir_ / "shim", shell);
  RunResult tree = traced({(dir_ / "shim").string()}, "tree.json");
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_EQ(tree.out, "20000\n");
  EXPECT_TRUE(live_files().empty());
  const auto reports = files_matching(dir_, R"(tree\..*json)");
  EXPECT_GT(reports.size(), 5u);
  for (const auto& file : reports) EXPECT_EQ(heapline_format_problem(read_json(file)), "") << file;
  // The plain name went to the shim's process, which became python.
  EXPECT_NE(read_json(dir_ / "tree.json")["exe"].get<std::string>().find("python3"), std::string::npos);

  RunResult command = traced({(dir_ / "shim").string()}, "command.json", {{"HEAPLINE_FOLLOW", "command"}});
  ASSERT_EQ(command.exit_code, 0) << command.err;
  EXPECT_EQ(command.err, "");
  const auto only = files_matching(dir_, R"(command\..*)");
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].filename(), "command.json");
  json report = read_json(only[0]);
  EXPECT_GE(report["peak_bytes"].get<std::int64_t>(), 20000 * 1000);
  EXPECT_TRUE(live_files().empty());
}

// A process that is not the command (a fork child, or a child told so by
// HEAPLINE_ROOT_PID as the launcher does) creates its live file only once
// its heap matters: killed before that, it leaves nothing; killed after,
// its heap line. The command's own live file exists from its start.
TEST_F(Litter, OnlyAChildWhoseHeapMattersLeavesALiveFileWhenKilled) {
  const std::string as_launched = "export HEAPLINE_ROOT_PID=$$; ";
  RunResult small = traced({"/bin/sh", "-c", as_launched + kPhaseProbe + " abort 30; true"}, "small.json");
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_TRUE(live_files().empty());
  EXPECT_EQ(files_matching(dir_, R"(small.*)").size(), 1u);  // the shell's report

  RunResult forked = traced({kForkProbe, "fork", "4194304", "abort"}, "forked.json");  // 4 MiB inherited
  EXPECT_EQ(forked.exit_code, 1) << forked.err;
  EXPECT_TRUE(live_files().empty());

  RunResult large = traced({"/bin/sh", "-c", as_launched + kPhaseProbe + " hold-abort; true"}, "large.json");
  ASSERT_EQ(large.exit_code, 0) << large.err;
  const auto left = live_files();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_TRUE(std::regex_match(left[0].filename().string(), std::regex(R"(large\.\d+\.json\.live)"))) << left[0];

  RunResult command = traced({kPhaseProbe, "abort", "30"}, "command.json");
  EXPECT_EQ(command.signal, SIGABRT);
  EXPECT_TRUE(fs::exists(dir_ / "command.json.live"));
}

// With follow=command, the processes the command starts neither write nor
// say anything, even when asked for a summary; the command still does.
TEST_F(Litter, FollowingTheCommandSilencesItsForkAndExecChildren) {
  RunResult result = traced({kForkProbe, "exec", kForkProbe, "fork", "65536"}, "c.json",
                            {{"HEAPLINE_FOLLOW", "command"}, {"HEAPLINE_SUMMARY", "1"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::regex_match(result.err, std::regex(R"(heapline: peak [^\n]*output .*/c\.json\n)"))) << result.err;
  EXPECT_EQ(files_matching(dir_, R"(.*)").size(), 1u);
  json report = read_json(dir_ / "c.json");
  EXPECT_EQ(report["exe"], fs::canonical(kForkProbe).string());
}

// A HEAPLINE_ROOT_PID that is not valid is said once and replaced: the
// command names itself the root over it, so its exec child does not take
// it for its own, repeat the line, and write over the command's report.
TEST_F(Litter, FollowingTheCommandReplacesAnInvalidRootPidItInherited) {
  RunResult result = traced({kForkProbe, "exec", kForkProbe, "fork", "65536"}, "c.json",
                            {{"HEAPLINE_FOLLOW", "command"}, {"HEAPLINE_SUMMARY", "1"}, {"HEAPLINE_ROOT_PID", "12abc"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::regex_match(result.err, std::regex(R"(heapline: HEAPLINE_ROOT_PID='12abc' is not valid [^\n]*\n)"
                                                      R"(heapline: peak [^\n]*output .*/c\.json\n)")))
      << result.err;
  EXPECT_EQ(files_matching(dir_, R"(.*)").size(), 1u);
  EXPECT_EQ(read_json(dir_ / "c.json")["exe"], fs::canonical(kForkProbe).string());
}

// A program with its own malloc: the library sees none of its allocations
// and says so once, on stderr and in the report, instead of a silent zero.
TEST_F(Litter, AProgramWithItsOwnMallocIsSaidNotToBeSeen) {
  RunResult result = traced({kOwnMalloc}, "own.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("own malloc served"), std::string::npos) << result.out;
  const std::string line = "heapline: the program's malloc is not libheapline's (it comes from ";
  ASSERT_NE(result.err.find(line), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find(line), result.err.rfind(line)) << "said more than once: " << result.err;
  EXPECT_NE(result.err.find("own_malloc"), std::string::npos) << result.err;
  json report = read_json(dir_ / "own.json");
  EXPECT_EQ(report["allocations_seen"], false);
}

}  // namespace
