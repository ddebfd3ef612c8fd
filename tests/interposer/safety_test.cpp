// The library never harms its host, and nothing it writes is out of order or
// half-made, whatever is around it: files planted at the names it creates,
// the file size limit, a full disk, the live file a killed run left, exec
// wrappers, markers racing from threads and a signal handler. Each test
// works in its own temporary directory.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "heapline/live_format.h"
#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::files_matching;
using heapline::test::heapline_format_problem;
using heapline::test::preload_options;
using heapline::test::read_file;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;
using nlohmann::json;

namespace {

const std::string kLib = HEAPLINE_LIB;
const std::string kTestHooksLib = HEAPLINE_TEST_HOOKS_LIB;
const std::string kPatterns = ALLOC_PATTERNS;
const std::string kPhaseProbe = PHASE_PROBE;
const std::string kMarkerRace = MARKER_RACE;
const std::string kStaticProgram = STATIC_PROGRAM;
const std::string kOlderKernel = OLDER_KERNEL;
const std::string kForkHazards = FORK_HAZARDS;
const std::string kLoadedModule = LOADED_MODULE;
const std::string kExecProbe = EXEC_PROBE;
const std::string kCloneProbe = CLONE_PROBE;

// A short program whose heap peaks at about 10 MiB.
std::vector<std::string> small_program() { return {kPatterns, "single", "chunk", "10000", "0"}; }

// The heap line and markers of a live file, as a reader in another process
// sees them.
struct LiveContent {
  int pid = 0;
  std::vector<heapline::Sample> samples;
  std::vector<heapline::Sample> mapped_samples;
  std::vector<std::uint64_t> marker_times;
  std::string exec_note;
};

LiveContent read_live(const fs::path& path) {
  LiveContent content;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  if (fd < 0) return content;
  struct stat info {};
  ::fstat(fd, &info);
  EXPECT_EQ(static_cast<std::size_t>(info.st_size), sizeof(heapline::LiveRegion)) << path;
  void* address = ::mmap(nullptr, sizeof(heapline::LiveRegion), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (address == MAP_FAILED) return content;
  const auto& region = *static_cast<const heapline::LiveRegion*>(address);
  EXPECT_EQ(region.header.magic.load(), heapline::kLiveMagic) << path;
  content.pid = region.header.pid;
  content.exec_note.assign(region.header.exec_note, strnlen(region.header.exec_note, sizeof region.header.exec_note));
  content.samples.resize(heapline::kHeapLineCapacity);
  content.samples.resize(heapline::read_heap_line(region, content.samples.data(), false));
  content.mapped_samples.resize(heapline::kTimelineCapacity);
  content.mapped_samples.resize(heapline::read_timeline(region.mapped_timeline, content.mapped_samples.data(), false));
  const std::uint32_t claimed = region.header.markers_claimed.load();
  for (std::uint32_t i = 0; i < claimed && i < heapline::kLiveMarkerCapacity; ++i) {
    if (region.markers[i].ready.load() != 0) content.marker_times.push_back(region.markers[i].t_ns.load());
  }
  ::munmap(address, sizeof(heapline::LiveRegion));
  return content;
}

int live_pid(const fs::path& path) { return read_live(path).pid; }

// The index of the first time below its predecessor, or -1.
long first_step_back(const std::vector<std::uint64_t>& times) {
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (times[i] < times[i - 1]) return static_cast<long>(i);
  }
  return -1;
}
std::vector<std::uint64_t> times_of(const std::vector<heapline::Sample>& samples) {
  std::vector<std::uint64_t> times;
  for (const auto& sample : samples) times.push_back(sample.t_ns);
  return times;
}
std::vector<std::uint64_t> times_of(const json& series) {
  std::vector<std::uint64_t> times;
  for (const auto& item : series) times.push_back(item[0].get<std::uint64_t>());
  return times;
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

class Safety : public heapline::test::TempDirTest {
 protected:
  Safety() : TempDirTest("safety") {}
  RunResult traced(const std::vector<std::string>& argv, const std::string& name,
                   std::map<std::string, std::optional<std::string>> env = {}, const std::string& lib = kLib) {
    return run(argv, preload_options(lib, dir_, name, std::move(env)));
  }
  // `script` run by /bin/sh in dir_ without the library; it reaches the
  // program under the library with `exec env LD_PRELOAD=... PROGRAM`, so
  // that the shell's pid ($$) is the program's.
  RunResult shell(const std::string& script, std::map<std::string, std::optional<std::string>> env = {}) {
    RunOptions options;
    options.env = std::move(env);
    options.env["LD_PRELOAD"] = std::nullopt;
    options.env["HEAPLINE_ROOT_PID"] = std::nullopt;
    options.env["HEAPLINE_OUT"] = std::nullopt;
    options.cwd = dir_;
    return run({"/bin/sh", "-c", script}, options);
  }
  std::string under_library(const std::string& report_name, const std::vector<std::string>& argv) {
    std::string command = "exec env LD_PRELOAD=" + shell_quote(kLib) + " HEAPLINE_OUT=" +
                          shell_quote((dir_ / report_name).string());
    for (const auto& word : argv) command += " " + shell_quote(word);
    return command;
  }
  std::vector<fs::path> live_files() { return files_matching(dir_, R"(.*\.live)"); }
};

// --- class B: every file the library creates is new and its own -------------

struct Plant {
  const char* what;
  const char* script;  // plants at "$1" (a name), victim is ./victim
};

// At each name the library creates (the live file's temporary name and the
// report's), something is there already: another user's file, a link to a
// file the program's user cares about, a FIFO. None is opened or written
// through; the report is this process's own new file.
TEST_F(Safety, NothingPlantedAtANameTheLibraryCreatesIsEverWrittenThrough) {
  const bool root = geteuid() == 0;
  const Plant plants[] = {
      {"another user's file", root ? "echo planted > \"$1\"; chown 65534:65534 \"$1\"" : "echo planted > \"$1\""},
      {"a link to the victim", "ln -s victim \"$1\""},
      {"a dangling link", "ln -s nowhere \"$1\""},
      {"a FIFO", "mkfifo \"$1\""},
  };
  for (const Plant& plant : plants) {
    SCOPED_TRACE(plant.what);
    for (const auto& file : files_matching(dir_, ".*")) fs::remove(file);
    {
      std::ofstream victim(dir_ / "victim");
      victim << "precious\n";
    }
    const std::string plant_at = std::string("plant() { ") + plant.script + "; }; ";
    RunResult result = shell(plant_at + "plant r.json.$$.tmp; plant r.json.live.$$.tmp; " +
                             under_library("r.json", small_program()));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(dir_ / "r.json")));
    json report = read_json(dir_ / "r.json");
    EXPECT_EQ(heapline_format_problem(report), "");
    EXPECT_GE(report["peak_bytes"].get<std::int64_t>(), 9 << 20);
    struct stat info {};
    ASSERT_EQ(::stat((dir_ / "r.json").c_str(), &info), 0);
    EXPECT_EQ(info.st_uid, geteuid());
    EXPECT_EQ(info.st_nlink, 1u);
    // What was planted is as it was.
    EXPECT_EQ(read_file(dir_ / "victim"), "precious\n");
    const auto planted = files_matching(dir_, R"(r\.json(\.live)?\.\d+\.tmp)");
    EXPECT_EQ(planted.size(), 2u);
    for (const auto& path : planted) {
      if (fs::is_regular_file(fs::symlink_status(path))) EXPECT_EQ(read_file(path), "planted\n") << path;
    }
    EXPECT_TRUE(live_files().empty());
  }
}

// At the live file's own name, something that is not this user's regular
// file, and old (ten minutes: a file without heapline's identity that old
// is taken for one a killed library left unfinished, and taken over). What
// is not ours is never taken over, however old: it stays as it was, and the
// heap line goes to the next name, which one line says (the report was
// elsewhere than asked for without a word, with the launcher's -q too).
TEST_F(Safety, WhatIsNotOursAtTheLiveNameIsNeverTakenOverHoweverOld) {
  const bool root = geteuid() == 0;
  std::vector<Plant> plants = {{"a FIFO", "mkfifo \"$1\""}, {"a directory", "mkdir \"$1\""}};
  if (root) plants.push_back({"another user's file", "echo planted > \"$1\"; chown 65534:65534 \"$1\""});
  for (const Plant& plant : plants) {
    SCOPED_TRACE(plant.what);
    for (const auto& file : files_matching(dir_, ".*")) fs::remove_all(file);
    const std::string plant_at = std::string("plant() { ") + plant.script + "; }; ";
    RunResult result = shell(plant_at + "plant r.json.live && touch -d '10 minutes ago' r.json.live && " +
                             under_library("r.json", small_program()));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(std::regex_match(result.err, std::regex("heapline: " + (dir_ / "r.json.live").string() +
                                                        R"( is not a file of this user's \(a link, a FIFO, a )"
                                                        R"(directory or another user's file\): left as it is; the )"
                                                        "report goes to " + (dir_ / "r").string() + R"(\.\d+\.json\n)")))
        << result.err;
    const fs::path planted = dir_ / "r.json.live";
    const fs::file_status status = fs::symlink_status(planted);
    if (std::string(plant.what) == "a FIFO") EXPECT_TRUE(fs::is_fifo(status));
    if (std::string(plant.what) == "a directory") EXPECT_TRUE(fs::is_directory(status) && fs::is_empty(planted));
    if (std::string(plant.what) == "another user's file") {
      EXPECT_TRUE(fs::is_regular_file(status));
      EXPECT_EQ(read_file(planted), "planted\n");
    }
    // The heap line had a file at the next name, the report is whole, and
    // nothing of the library's is left beside the plant.
    const auto reports = files_matching(dir_, R"(r(\.\d+)?\.json)");
    ASSERT_EQ(reports.size(), 1u);
    json report = read_json(reports[0]);
    EXPECT_EQ(heapline_format_problem(report), "");
    EXPECT_FALSE(report.contains("live_file_problem")) << report.dump();
    EXPECT_EQ(files_matching(dir_, R"(.*\.tmp)").size(), 0u);
    EXPECT_EQ(live_files().size(), 1u) << "only the plant";
  }
}

// At the report's own name, something that is not this user's regular
// file: a dangling link, a FIFO, a directory, another user's file. It is
// left as it is, and the heap line takes the name with the pid inserted
// from the start, as for what is at the live file's name: its live file
// exists while it runs (a kill loses nothing) and one line says where the
// report goes. (The library made no live file, said nothing until the
// exit, and a kill lost the whole heap line.)
TEST_F(Safety, WhatIsNotOursAtTheReportNameSendsTheHeapLineToTheNextNameFromTheStart) {
  const bool root = geteuid() == 0;
  std::vector<Plant> plants = {{"a dangling link", "ln -s /nonexistent-heapline-target \"$1\""},
                               {"a FIFO", "mkfifo \"$1\""},
                               {"a directory", "mkdir \"$1\""}};
  if (root) plants.push_back({"another user's file", "echo planted > \"$1\"; chown 65534:65534 \"$1\""});
  for (const Plant& plant : plants) {
    SCOPED_TRACE(plant.what);
    for (const auto& file : files_matching(dir_, ".*")) fs::remove_all(file);
    const std::string plant_at = std::string("plant() { ") + plant.script + "; }; ";
    // A shell builtin alone: no other process of the library's runs.
    RunResult result = shell(plant_at + "plant r.json && " +
                             under_library("r.json", {"/bin/sh", "-c", "[ -f r.$$.json.live ] && echo $$ > live-seen"}));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string pid = read_file(dir_ / "live-seen");
    ASSERT_FALSE(pid.empty()) << "no live file while it ran: " << result.err;
    const std::string report = (dir_ / ("r." + pid.substr(0, pid.size() - 1) + ".json")).string();
    EXPECT_EQ(result.err, "heapline: " + (dir_ / "r.json").string() +
                              " is not a file of this user's (a link, a FIFO, a directory or another user's file): "
                              "left as it is; the report goes to " + report + "\n");
    json written = read_json(report);
    EXPECT_EQ(heapline_format_problem(written), "");
    EXPECT_FALSE(written.contains("live_file_problem")) << written.dump();
    const fs::file_status status = fs::symlink_status(dir_ / "r.json");
    if (std::string(plant.what) == "a dangling link") EXPECT_TRUE(fs::is_symlink(status));
    if (std::string(plant.what) == "a FIFO") EXPECT_TRUE(fs::is_fifo(status));
    if (std::string(plant.what) == "a directory") EXPECT_TRUE(fs::is_directory(status) && fs::is_empty(dir_ / "r.json"));
    if (std::string(plant.what) == "another user's file") EXPECT_EQ(read_file(dir_ / "r.json"), "planted\n");
    EXPECT_TRUE(live_files().empty()) << "the live file is removed once the report is written";
  }
}

// Both names the report may take (its own and the one with the pid) are
// held by what is not this user's file: nothing is touched, the heap line
// stays in memory, and both the start and the exit say why, the exit with
// the figures that nothing else then holds.
TEST_F(Safety, WhenNoReportNameIsOursTheStartAndTheExitSaySo) {
  RunResult result = shell("mkfifo r.json r.$$.json && " + under_library("r.json", small_program()));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string why = "not a regular file of this user's (heapline replaces only its user's own regular files)";
  const std::string start = "heapline: cannot create " + (dir_ / "r.json").string() + ": " + why +
                            "; the heap line is kept in memory only (lost if the process is killed)\n";
  ASSERT_EQ(result.err.rfind(start, 0), 0u) << result.err;
  // At the exit, for the same cause: said only so, with the figures.
  EXPECT_TRUE(std::regex_match(result.err.substr(start.size()),
                               std::regex("heapline: " + (dir_ / "r.json").string() +
                                          R"( was not written either; the heap line is lost \(\d+ samples\), its )"
                                          R"(figures: peak [^\n]*\n)")))
      << result.err;
  EXPECT_TRUE(fs::is_fifo(dir_ / "r.json"));
  EXPECT_TRUE(live_files().empty());
}

// Both names the command's live file may take are held by what is not a
// heapline file (directories here: never touched). It is said once, the
// heap line kept in memory and the report written; the file made for the
// heap line under a temporary name is removed, never left beside them.
TEST_F(Safety, ALiveFileThatNoNameCanHoldLeavesNoTemporaryFile) {
  fs::create_directory(dir_ / "r.json.live");
  RunResult result = shell("mkdir r.$$.json.live && " + under_library("r.json", small_program()));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::regex_match(result.err, std::regex(R"(heapline: cannot create .*/r\.json\.live: File exists; )"
                                                       R"(the heap line is kept in memory only \(lost if the process )"
                                                       R"(is killed\)\n)")))
      << result.err;
  json report = read_json(dir_ / "r.json");
  EXPECT_EQ(heapline_format_problem(report), "");
  EXPECT_EQ(report.value("live_file_problem", ""), "not made: File exists; the heap line was kept in memory only");
  EXPECT_EQ(files_matching(dir_, R"(.*\.tmp)").size(), 0u);
  const auto held = live_files();
  ASSERT_EQ(held.size(), 2u);
  for (const auto& path : held) EXPECT_TRUE(fs::is_empty(path)) << path;
}

// --- class B: the file size limit and a full disk ----------------------------

// `ulimit -f 200` (blocks of 1 KiB): the live file's 385 KiB do not fit.
// The program runs to its end, the report says the heap line was kept in
// memory, and one line on stderr says why.
TEST_F(Safety, TheFileSizeLimitNeverKillsTheProgram) {
  RunResult result = traced({"/bin/bash", "-c", "ulimit -f 200 && exec \"$0\" \"$@\"", kPatterns, "single", "chunk",
                             "10000", "0"},
                            "r.json");
  ASSERT_EQ(result.exit_code, 0) << "signal " << result.signal << ": " << result.err;
  EXPECT_TRUE(std::regex_match(result.err,
                               std::regex(R"(heapline: the file size limit \(ulimit -f\) is 204800 bytes, below the )"
                                          R"(\d+ bytes .*/r\.json\.live needs; the heap line is kept in memory only )"
                                          R"(\(lost if the process is killed\)\n)")))
      << result.err;
  json report = read_json(dir_ / "r.json");
  EXPECT_EQ(heapline_format_problem(report), "");
  // The report says it as the line does: the limit, and the size needed.
  EXPECT_TRUE(std::regex_match(report.value("live_file_problem", ""),
                               std::regex(R"(not made: the file size limit \(RLIMIT_FSIZE\) is 204800 bytes, below the )"
                                          R"(\d+ bytes it needs; the heap line was kept in memory only)")))
      << report.dump();
  EXPECT_TRUE(live_files().empty());
}

// A program that closed its stderr and opened a file of its own as
// descriptor 2 never finds a line of the library's in it: the exit's lines
// (the report that could not be written, the summary) are dropped; the
// start's went to the stderr the process had then.
TEST_F(Safety, AProgramsOwnFileAtDescriptorTwoNeverReceivesALine) {
  const fs::path data = dir_ / "data2";
  RunResult result = traced({kPhaseProbe, "stderr-reused", data.string()}, "nodir/r.json", {{"HEAPLINE_SUMMARY", "1"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(heapline::test::read_file(data), "DATA\n");
  EXPECT_NE(result.err.find("nodir/r.json.live: No such file or directory"), std::string::npos) << result.err;
  // Where descriptor 2 stays the process's stderr, the same exit says both.
  result = traced({kPhaseProbe, "peak-held-to-exit", "alone"}, "nodir/r.json", {{"HEAPLINE_SUMMARY", "1"}});
  EXPECT_NE(result.err.find("was not written either"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("heapline: peak "), std::string::npos) << result.err;
}

// Two processes never write one file, even where no live file claims a name
// (here the file size limit is below a live file's size): without the
// launcher every process of `sh -c 'P; P'` is a command, and a report
// another process of the run wrote at the plain name first is kept, the
// later one taking the name with its pid (each replaced the one before,
// and two of the three reports were lost without a word). A report older
// than the process, an earlier run's, is replaced as before.
TEST_F(Safety, WithoutALiveFileTwoProcessesNeverWriteOneReport) {
  const std::string twice = "\"$0\" single chunk 100 0 && \"$0\" single chunk 100 0";
  RunResult result = shell("ulimit -f 100 && " + under_library("y.json", {"/bin/sh", "-c", twice, kPatterns}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto reports = files_matching(dir_, R"(y(\.\d+)?\.json)");
  ASSERT_EQ(reports.size(), 3u) << result.err;
  std::set<int> pids;
  for (const auto& path : reports) {
    const json report = read_json(path);
    EXPECT_EQ(heapline_format_problem(report), "") << path;
    pids.insert(report["pid"].get<int>());
    if (path.filename() != "y.json") {
      EXPECT_EQ(path.filename().string(), "y." + std::to_string(report["pid"].get<int>()) + ".json");
    }
  }
  EXPECT_EQ(pids.size(), 3u) << "each process's own report";

  // An earlier run's report at the name: replaced.
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  { std::ofstream(dir_ / "y.json") << "{}\n"; }
  fs::last_write_time(dir_ / "y.json", fs::file_time_type::clock::now() - std::chrono::hours(1));
  result = shell("ulimit -f 100 && " + under_library("y.json", {kPatterns, "single", "chunk", "100", "0"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(heapline_format_problem(read_json(dir_ / "y.json")), "");
  EXPECT_EQ(files_matching(dir_, R"(y\.\d+\.json)").size(), 0u);
}

// The library's own stderr line, into a log already past the limit, and a
// report larger than the limit: refused without a signal, and said.
TEST_F(Safety, WritesPastTheFileSizeLimitAreRefusedWithoutASignal) {
  const fs::path log = dir_ / "big.log";
  {
    std::ofstream big(log);
    big << std::string(300 * 1024, 'x');
  }
  RunResult noisy = traced({"/bin/bash", "-c", "ulimit -f 250 && exec \"$0\" \"$@\" 2>>\"$LOG\"", kPatterns, "single",
                            "chunk", "10000", "0"},
                           "noisy.json", {{"HEAPLINE_SUMMARY", "1"}, {"LOG", log.string()}});
  EXPECT_EQ(noisy.exit_code, 0) << "signal " << noisy.signal;
  EXPECT_EQ(fs::file_size(log), 300u * 1024);
  EXPECT_TRUE(fs::exists(dir_ / "noisy.json"));

  // The program lowers the limit below its report's size once its live
  // file is made.
  RunResult large = traced({"/usr/bin/python3", "-c",
                            "import resource\n"
                            "xs = [bytes(1000) for _ in range(10000)]\n"
                            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))\n"},
                           "large.json", {{"HEAPLINE_INTERVAL_MS", "0"}});
  EXPECT_EQ(large.exit_code, 0) << "signal " << large.signal << ": " << large.err;
  EXPECT_TRUE(std::regex_match(large.err,
                               std::regex(R"(heapline: cannot write .*/large\.json: File too large \(the file size )"
                                          R"(limit, ulimit -f, is 4096 bytes\); the heap line stays in )"
                                          R"(.*/large\.json\.live\n)")))
      << large.err;
  EXPECT_FALSE(fs::exists(dir_ / "large.json"));
  EXPECT_TRUE(fs::exists(dir_ / "large.json.live"));
  EXPECT_TRUE(files_matching(dir_, R"(.*\.tmp)").empty());
}

// A full disk (a small tmpfs, in a user and mount namespace of its own): the
// live file cannot be made, and the report says so; with no room for the
// report either, the line on stderr carries the figures.
TEST_F(Safety, AFullDiskSaysWhatWasLost) {
  if (run({"/usr/bin/unshare", "-Urm", "true"}).exit_code != 0) {
    GTEST_SKIP() << "no user namespaces here (unshare -Urm): a small filesystem cannot be mounted";
  }
  const std::string mount = "mkdir -p \"$DISK\" && mount -t tmpfs -o size=200k tmpfs \"$DISK\" && ";
  const std::string program = "env LD_PRELOAD=" + shell_quote(kLib) + " HEAPLINE_OUT=\"$DISK/r.json\" " +
                              shell_quote(kPatterns) + " single chunk 10000 0";
  RunOptions options;
  options.env["DISK"] = (dir_ / "disk").string();
  options.env["LD_PRELOAD"] = std::nullopt;
  options.cwd = dir_;
  RunResult room_for_the_report =
      run({"/usr/bin/unshare", "-Urm", "/bin/sh", "-c", mount + program + " && cp \"$DISK/r.json\" ."}, options);
  ASSERT_EQ(room_for_the_report.exit_code, 0) << room_for_the_report.err;
  EXPECT_TRUE(std::regex_match(room_for_the_report.err,
                               std::regex(R"(heapline: cannot create .*/disk/r\.json\.live: No space left on device; )"
                                          R"(the heap line is kept in memory only \(lost if the process is killed\)\n)")))
      << room_for_the_report.err;
  json report = read_json(dir_ / "r.json");
  EXPECT_EQ(report.value("live_file_problem", ""),
            "not made: No space left on device; the heap line was kept in memory only");

  RunResult no_room = run(
      {"/usr/bin/unshare", "-Urm", "/bin/sh", "-c", mount + "head -c 1M /dev/zero > \"$DISK/fill\"; " + program}, options);
  ASSERT_EQ(no_room.exit_code, 0) << no_room.err;
  EXPECT_TRUE(std::regex_search(no_room.err,
                                std::regex(R"(heapline: .*/disk/r\.json was not written either; the )"
                                           R"(heap line is lost \(\d+ samples\), its figures: peak \d+\.\d MiB at )"
                                           R"(\d+\.\d+ s, final )")))
      << no_room.err;
}

// --- class B: a killed run's live file, exec wrappers ------------------------

// A run killed before its exit handlers left r.json.live. The next run
// takes the name over: the killed run's heap line is moved to the name with
// its pid (which `heapline convert` turns into its report), and one line
// says so.
TEST_F(Safety, AKilledRunsLiveFileIsKeptAsideAndItsNameTakenOver) {
  RunResult killed = traced({kPhaseProbe, "abort", "30"}, "r.json");
  ASSERT_EQ(killed.signal, SIGABRT);
  const int killed_pid = live_pid(dir_ / "r.json.live");
  ASSERT_GT(killed_pid, 0);

  RunResult next = traced(small_program(), "r.json");
  ASSERT_EQ(next.exit_code, 0) << next.err;
  const std::string aside = (dir_ / ("r." + std::to_string(killed_pid) + ".json.live")).string();
  EXPECT_EQ(next.err, "heapline: " + (dir_ / "r.json.live").string() + " was left by process " +
                          std::to_string(killed_pid) + " (phase_probe), which has ended; moved to " + aside +
                          " (heapline convert makes its report)\n");
  EXPECT_EQ(read_json(dir_ / "r.json")["exe"].get<std::string>(), kPatterns);
  EXPECT_EQ(live_pid(aside), killed_pid);
  EXPECT_FALSE(fs::exists(dir_ / "r.json.live"));
  EXPECT_EQ(files_matching(dir_, R"(r\..*)").size(), 2u);  // the report and the killed run's live file
}

// The same name left by an earlier process that had this very pid (pids
// are reused, and in a container the same ones come back): it is that
// process's, not this one's earlier image, and is kept too.
TEST_F(Safety, ALiveFileOfAnEarlierProcessWithTheSamePidIsKept) {
  RunResult killed = traced({kPhaseProbe, "abort", "30"}, "killed.json");
  ASSERT_EQ(killed.signal, SIGABRT);
  // Its copy at r.json.live, made to say it was written by the pid the
  // program will have (the shell's, which execs it).
  const std::string patch = "python3 -c 'import sys; b = bytearray(open(\"killed.json.live\", \"rb\").read()); "
                            "b[" + std::to_string(offsetof(heapline::LiveHeader, pid)) + ":" +
                            std::to_string(offsetof(heapline::LiveHeader, pid) + 4) +
                            "] = int(sys.argv[1]).to_bytes(4, \"little\"); "
                            "open(\"r.json.live\", \"wb\").write(b)' $$ && ";
  RunResult result = shell(patch + under_library("r.json", small_program()));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto kept = files_matching(dir_, R"(r\.\d+\.json\.live)");
  ASSERT_EQ(kept.size(), 1u) << result.err;
  const int pid = read_json(dir_ / "r.json")["pid"].get<int>();
  EXPECT_EQ(kept[0].filename(), "r." + std::to_string(pid) + ".json.live");
  EXPECT_EQ(live_pid(kept[0]), pid);
  EXPECT_NE(result.err.find("which has ended; moved to"), std::string::npos) << result.err;
}

// A live file is named only once it is whole: killed between making it and
// naming it, the library leaves no `.live` file (which a reader would take
// for a process's), only a temporary name that says whose it was. A file
// without identity that an earlier library left at the name is taken over
// once it is old; while it is new it may be being made, and is left alone.
TEST_F(Safety, AHalfMadeLiveFileIsNeverLeftUnderItsName) {
  RunResult killed = traced(small_program(), "killed.json", {{"HEAPLINE_TEST_KILL_WRITER", "live-before-rename"}},
                            kTestHooksLib);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_TRUE(live_files().empty());
  const auto temporary = files_matching(dir_, R"(killed\.json\.live\.\d+\.tmp)");
  EXPECT_EQ(temporary.size(), 1u);

  const fs::path empty = dir_ / "old.json.live";
  std::ofstream(empty).close();
  fs::last_write_time(empty, fs::file_time_type::clock::now() - std::chrono::minutes(5));
  RunResult old = traced(small_program(), "old.json");
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(old.err, "");
  EXPECT_TRUE(fs::exists(dir_ / "old.json"));
  EXPECT_FALSE(fs::exists(empty));

  std::ofstream(dir_ / "new.json.live").close();
  RunResult fresh = traced(small_program(), "new.json");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_TRUE(fs::exists(dir_ / "new.json.live"));
  EXPECT_EQ(files_matching(dir_, R"(new\.\d+\.json)").size(), 1u);
}

// A filesystem without renameat2's flags (some network and FUSE ones: the
// flags fail with EINVAL; here a seccomp filter, older_kernel rename-flags):
// every name is still claimed exclusively, through a hard link. A run
// writes its report and leaves nothing; a killed run leaves its live file
// under its name; an old file without identity is still taken over.
TEST_F(Safety, WithoutRenameFlagsEveryNameIsStillClaimedExclusively) {
  const auto without_flags = [&](const std::string& report, const std::vector<std::string>& argv) {
    std::string command = under_library(report, argv);
    return shell(command.replace(0, std::string("exec ").size(), "exec " + shell_quote(kOlderKernel) + " rename-flags "));
  };
  RunResult plain = without_flags("r.json", small_program());
  if (plain.exit_code == 3 && plain.err.starts_with("older_kernel: seccomp")) {
    GTEST_SKIP() << "this machine lets no process install a seccomp filter: " << plain.err;
  }
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err, "");
  EXPECT_EQ(heapline_format_problem(read_json(dir_ / "r.json")), "");
  EXPECT_FALSE(read_json(dir_ / "r.json").contains("live_file_problem"));
  EXPECT_TRUE(live_files().empty());
  EXPECT_EQ(files_matching(dir_, R"(.*\.tmp)").size(), 0u);

  RunResult killed = without_flags("k.json", {kPhaseProbe, "abort", "30"});
  ASSERT_EQ(killed.signal, SIGABRT) << killed.err;
  const int killed_pid = live_pid(dir_ / "k.json.live");
  EXPECT_GT(killed_pid, 0) << "the live file was named, whole";
  EXPECT_EQ(files_matching(dir_, R"(.*\.tmp)").size(), 0u);

  const fs::path empty = dir_ / "old.json.live";
  std::ofstream(empty).close();
  fs::last_write_time(empty, fs::file_time_type::clock::now() - std::chrono::minutes(5));
  RunResult old = without_flags("old.json", small_program());
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(old.err, "");
  EXPECT_TRUE(fs::exists(dir_ / "old.json"));
  EXPECT_FALSE(fs::exists(empty));

  // The killed run's file cannot be moved aside without an exchange of
  // names (a move that could take another process's file is never tried):
  // it stays, one line says why, and the next run takes the next name.
  RunResult after_kill = without_flags("k.json", small_program());
  ASSERT_EQ(after_kill.exit_code, 0) << after_kill.err;
  EXPECT_EQ(after_kill.err, "heapline: " + (dir_ / "k.json.live").string() + " was left by process " +
                                std::to_string(killed_pid) + " (phase_probe), which has ended, and cannot be moved to " +
                                (dir_ / ("k." + std::to_string(killed_pid) + ".json.live")).string() +
                                ": Invalid argument\n");
  EXPECT_EQ(live_pid(dir_ / "k.json.live"), killed_pid);
  const auto reports = files_matching(dir_, R"(k\.\d+\.json)");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].filename(), "k." + std::to_string(read_json(reports[0])["pid"].get<int>()) + ".json");
  EXPECT_EQ(files_matching(dir_, R"(.*\.tmp)").size(), 0u);
}

// Every function of the exec family the library defines runs the new
// program, with its arguments and the environment it was given, and gives
// the live file up first: the shell it runs (which runs the library too)
// writes the report, and nothing is left beside it.
TEST_F(Safety, EveryExecFunctionRunsTheProgramWithItsArgumentsAndEnvironment) {
  for (const char* variant :
       {"execve", "execv", "execvp", "execvpe", "execl", "execle", "execlp", "fexecve", "execveat"}) {
    SCOPED_TRACE(variant);
    for (const auto& file : files_matching(dir_, ".*")) fs::remove_all(file);
    const RunResult result = traced({kExecProbe, variant}, "e.json");
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(result.out, std::string("ran:via-") + variant + ":" + variant + "\n");
    EXPECT_EQ(result.err, "");
    const json report = read_json(dir_ / "e.json");
    EXPECT_EQ(heapline_format_problem(report), "");
    EXPECT_NE(report["exe"].get<std::string>(), kExecProbe) << "the report is the new program's";
    EXPECT_TRUE(live_files().empty());
    EXPECT_EQ(files_matching(dir_, ".*").size(), 1u) << "only the report";
  }
}

// On a kernel without execveat (before 3.19; here a seccomp filter,
// older_kernel no-execveat), fexecve runs the program as glibc's does,
// through the descriptor's /proc name: the library's fexecve returned
// ENOSYS and the program did not run.
TEST_F(Safety, FexecveRunsTheProgramOnAKernelWithoutExecveat) {
  for (const bool with_library : {false, true}) {
    SCOPED_TRACE(with_library ? "with the library" : "without it");
    for (const auto& file : files_matching(dir_, ".*")) fs::remove_all(file);
    const std::vector<std::string> argv = {kOlderKernel, "no-execveat", kExecProbe, "fexecve"};
    const RunResult result = with_library ? traced(argv, "e.json") : shell("exec " + shell_quote(kOlderKernel) +
                                                                           " no-execveat " + shell_quote(kExecProbe) + " fexecve");
    if (result.exit_code == 3 && result.err.starts_with("older_kernel: seccomp")) GTEST_SKIP() << result.err;
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(result.out, "ran:via-fexecve:fexecve\n");
    if (with_library) {
      EXPECT_EQ(result.err, "");
      EXPECT_EQ(heapline_format_problem(read_json(dir_ / "e.json")), "");
      EXPECT_TRUE(live_files().empty());
    }
  }
}

// env, nice and timeout exec the program they wrap (timeout from a fork
// child): under the default HEAPLINE_OUT each image has its own name, and
// the wrapper's live file used to stay behind.
TEST_F(Safety, ExecWrappersLeaveNoLiveFile) {
  for (const std::vector<std::string> wrapper :
       {std::vector<std::string>{"/usr/bin/env"}, {"/usr/bin/nice", "-n", "1"}, {"/usr/bin/timeout", "60"},
        {"/bin/sh", "-c", "exec \"$0\" \"$@\""}}) {
    SCOPED_TRACE(wrapper[0]);
    std::vector<std::string> argv = wrapper;
    for (const auto& word : small_program()) argv.push_back(word);
    RunOptions options = preload_options(kLib, dir_, "unused", {});
    options.env["HEAPLINE_OUT"] = std::nullopt;  // the default, heapline.%e.%p.json
    RunResult result = run(argv, options);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    EXPECT_TRUE(live_files().empty());
    const auto reports = files_matching(dir_, R"(heapline\.alloc_patterns\.\d+\.json)");
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_GE(read_json(reports[0])["peak_bytes"].get<std::int64_t>(), 9 << 20);
    for (const auto& file : files_matching(dir_, ".*")) fs::remove(file);
  }
}

// An exec of a program the library cannot follow keeps the live file, the
// only trace of the image, and notes in it what was exec'd and why.
TEST_F(Safety, AnExecTheLibraryCannotFollowKeepsTheLiveFileAndSaysWhy) {
  struct Case {
    std::string name;
    std::string command;  // run by sh under the library
    std::string note;     // the live file's exec_note
  };
  std::vector<Case> cases = {
      {"static", "exec " + shell_quote(kStaticProgram), kStaticProgram + ": statically linked: no loader runs"},
      {"unpreloaded", "exec /usr/bin/env -u LD_PRELOAD /bin/true",
       "/bin/true: LD_PRELOAD no longer names the library"},
      // The script itself is text: its interpreter decides, and says so.
      {"script", "exec ./static-script", "./static-script: a script whose interpreter the library cannot follow"},
  };
  {
    std::ofstream script(dir_ / "static-script");
    script << "#!" << kStaticProgram << "\n";
  }
  fs::permissions(dir_ / "static-script", fs::perms::owner_all);
  if (geteuid() == 0) {
    fs::copy_file("/bin/true", dir_ / "setuid-true");
    ASSERT_EQ(chown((dir_ / "setuid-true").c_str(), 65534, 65534), 0);
    ASSERT_EQ(chmod((dir_ / "setuid-true").c_str(), 04755), 0);
    struct statvfs filesystem {};
    if (statvfs(dir_.c_str(), &filesystem) == 0 && (filesystem.f_flag & ST_NOSUID) == 0) {
      cases.push_back({"setuid", "exec ./setuid-true",
                       "./setuid-true: set-user-ID: the loader ignores LD_PRELOAD"});
    }
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RunResult result = traced({"/bin/sh", "-c", c.command}, c.name + ".json");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    const auto left = files_matching(dir_, c.name + R"(.*\.live)");
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(read_live(left[0]).exec_note, c.note);
  }
}

// An exec that fails gives the live file back, with the heap line so far; a
// vfork child's exec never touches its parent's.
TEST_F(Safety, AFailedExecKeepsTheLiveFile) {
  {
    std::ofstream not_a_program(dir_ / "not-a-program");
    not_a_program << "\x01\x02 neither ELF nor script\n";
  }
  fs::permissions(dir_ / "not-a-program", fs::perms::owner_all);
  const std::string script =
      "import os, subprocess, signal\n"
      "live = os.environ['HEAPLINE_OUT'] + '.live'\n"
      "xs = [bytes(1000) for _ in range(5000)]\n"
      "try:\n  os.execv('./not-a-program', ['x'])\nexcept OSError as e:\n  print('exec failed', e.errno)\n"
      "assert os.path.exists(live)\n"
      "subprocess.run(['/bin/true'])\n"
      "assert os.path.exists(live)\n"
      "ys = [bytes(1000) for _ in range(5000)]\n"
      "os.kill(os.getpid(), signal.SIGKILL)\n";
  RunResult result = traced({"/usr/bin/python3", "-c", script}, "r.json");
  EXPECT_EQ(result.signal, SIGKILL) << result.err;
  EXPECT_EQ(result.out, "exec failed 8\n");
  EXPECT_EQ(result.err, "");
  const LiveContent left = read_live(dir_ / "r.json.live");
  ASSERT_FALSE(left.samples.empty());
  std::int64_t most = 0;
  for (const auto& sample : left.samples) most = std::max(most, sample.max_live);
  EXPECT_GE(most, 10'000'000);  // both lists, one before and one after the failed exec
  EXPECT_EQ(files_matching(dir_, R"(.*\.tmp)").size(), 0u);
}

// --- class E: processes are who they say they are ---------------------------

namespace {

// clone_probe's heaps: the parent holds 4 MiB, its child adds 16 MiB.
constexpr std::int64_t kParentHolds = 4096 * 1000;
constexpr std::int64_t kChildAdds = 16 * 1024 * 1000;

// The pids clone_probe printed ("parent=PID child=PID") in a run that ended
// as the probe ends (its own SIGKILL, nothing on stderr); parent 0 when not.
std::pair<int, std::string> probe_family(const RunResult& result) {
  EXPECT_EQ(result.signal, SIGKILL) << result.err;
  EXPECT_EQ(result.err, "");
  std::smatch m;
  if (!std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+))"))) {
    ADD_FAILURE() << "clone_probe said: " << result.out;
    return {0, ""};
  }
  return {std::stoi(m[1]), m[2]};
}

}  // namespace

// A child made without glibc's fork runs no fork handler: its copy of the
// library's state names the parent's report and maps the parent's live
// file. Every way of making one, and every way it can end: the parent's
// live file (the parent is killed) is its own, with no byte of the child's
// 16 MiB in its heap line, and no report ever takes the parent's name. A
// copy is a fork child of its own (its report or live file has its pid, its
// heap starts from what it inherited); a child running in the parent's
// memory (vfork) writes nothing at all. Fails when the identity check
// (acts_as_itself, adopt_if_copy) is dropped from any path: the exit, the
// exec, a publish.
TEST_F(Safety, AChildMadeWithoutForkHandlersNeverActsAsItsParent) {
  struct Case {
    std::string how;
    std::vector<std::string> ends;
  };
  const std::vector<Case> cases = {
      {"clone", {"exit", "_exit", "exec", "kill"}},         {"syscall-clone", {"exit", "_exit", "exec", "kill"}},
      {"_Fork", {"exit", "_exit", "exec", "kill"}},         {"syscall-fork", {"exit", "_exit", "exec", "kill"}},
      {"clone3", {"exit", "_exit", "exec", "kill"}},        {"vfork-clone", {"_exit", "exec", "kill"}},
      {"posix_spawn", {"exec"}},
  };
  for (const Case& c : cases) {
    for (const std::string& end : c.ends) {
      SCOPED_TRACE(c.how + " then " + end);
      const std::string name = c.how + "-" + end;
      RunResult result = traced({kCloneProbe, c.how, end}, name + ".json", {{"HEAPLINE_INTERVAL_MS", "1"}});
      const auto [parent, child] = probe_family(result);
      ASSERT_NE(parent, 0);
      // The parent's: its live file, with its own heap line only.
      EXPECT_FALSE(fs::exists(dir_ / (name + ".json")));
      const LiveContent live = read_live(dir_ / (name + ".json.live"));
      EXPECT_EQ(live.pid, parent);
      ASSERT_FALSE(live.samples.empty());
      for (const auto& sample : live.samples) ASSERT_LT(sample.max_live, kParentHolds + kChildAdds / 4);
      EXPECT_GE(live.samples.back().live, kParentHolds * 3 / 4);
      // The child's: its own report, or live file, or nothing.
      const fs::path child_report = dir_ / (name + "." + child + ".json");
      const bool shares_memory = c.how == "vfork-clone" || c.how == "posix_spawn";
      if (end == "kill") {
        EXPECT_FALSE(fs::exists(child_report));
        if (shares_memory) {
          EXPECT_FALSE(fs::exists(child_report.string() + ".live"));
        } else {
          const LiveContent own = read_live(child_report.string() + ".live");
          EXPECT_EQ(own.pid, std::stoi(child));
          ASSERT_FALSE(own.samples.empty());
          EXPECT_GE(own.samples.back().max_live, kParentHolds + kChildAdds);
        }
        continue;
      }
      EXPECT_FALSE(fs::exists(child_report.string() + ".live"));
      if (shares_memory && end != "exec") {
        EXPECT_FALSE(fs::exists(child_report));
        continue;
      }
      ASSERT_TRUE(fs::exists(child_report));
      const json report = read_json(child_report);
      EXPECT_EQ(heapline_format_problem(report), "");
      EXPECT_EQ(report["pid"].get<int>(), std::stoi(child));
      EXPECT_EQ(report["ppid"].get<int>(), parent);
      if (end == "exec") {
        EXPECT_EQ(fs::path(report["exe"].get<std::string>()).filename(), "true");
      } else {
        EXPECT_GE(report["final_bytes"].get<std::int64_t>(), kParentHolds + kChildAdds);
      }
    }
  }
}

// Without MADV_WIPEONFORK (a kernel before 4.14; here a seccomp filter that
// refuses the advice as such a kernel does, older_kernel wipe-on-fork) a copy
// made without the fork handler cannot be told from a vfork child. Every way
// of making one and every way it ends: it stays silent at exit and exec (no
// report or live file of its own, the parent's live file stays the parent's
// under its name) and its heap reaches the parent's live file meanwhile (the
// program it execs copies that file while the parent waits: the child's
// 16 MiB are in it). Only the program it execs reports, as itself.
TEST_F(Safety, WithoutWipeOnForkACopyIsSilentAndItsHeapReachesItsParentsLiveFile) {
  const fs::path snapshot = dir_ / "snapshot";
  {
    std::ofstream script(snapshot);
    script << "#!/bin/sh\nexec cp \"$HEAPLINE_OUT.live\" \"$HEAPLINE_OUT.snapshot\"\n";
  }
  fs::permissions(snapshot, fs::perms::owner_all);
  for (const std::string how : {"clone", "syscall-clone", "_Fork", "syscall-fork", "clone3"}) {
    for (const std::string end : {"exit", "_exit", "exec", "kill"}) {
      SCOPED_TRACE(how + " then " + end);
      const std::string name = how + "-" + end;
      RunResult result = traced({kOlderKernel, "wipe-on-fork", kCloneProbe, how, end, snapshot.string()},
                                name + ".json", {{"HEAPLINE_INTERVAL_MS", "1"}});
      if (result.exit_code == 3 && result.err.starts_with("older_kernel: seccomp")) {
        GTEST_SKIP() << "this machine lets no process install a seccomp filter: " << result.err;
      }
      const auto [parent, child] = probe_family(result);
      ASSERT_NE(parent, 0);
      EXPECT_FALSE(fs::exists(dir_ / (name + ".json")));
      EXPECT_EQ(read_live(dir_ / (name + ".json.live")).pid, parent);
      const fs::path child_report = dir_ / (name + "." + child + ".json");
      EXPECT_FALSE(fs::exists(child_report.string() + ".live"));
      if (end != "exec") {
        EXPECT_FALSE(fs::exists(child_report));
        continue;
      }
      ASSERT_TRUE(fs::exists(child_report));
      const json report = read_json(child_report);
      EXPECT_EQ(report["pid"].get<int>(), std::stoi(child));
      EXPECT_LT(report["peak_bytes"].get<std::int64_t>(), kParentHolds) << "the exec'd program's heap is its own";
      const LiveContent seen = read_live(dir_ / (name + ".json.snapshot"));
      EXPECT_EQ(seen.pid, parent);
      std::int64_t most = 0;
      for (const auto& sample : seen.samples) most = std::max(most, sample.max_live);
      EXPECT_GE(most, kParentHolds + kChildAdds / 2) << "the copy's publishes did not reach its parent's live file";
    }
  }
}

// --- class D: every series goes forward in time --------------------------------

// Markers from eight threads and from a signal handler on a ninth, with
// publishes between them: in the report, and in the live file of a killed
// run, every sample of both series and every marker is at or after the one
// before it. The race is a matter of chance: each run is short (no merge of
// the timeline, which could hide a step back), and there are twenty.
// A fork child that only calls _exit runs the library's exit, which may
// neither allocate (a fork from a signal handler that interrupted malloc
// leaves the child's heap mid-update: glibc aborts, or waits for ever on
// the arena's lock) nor call into the loader (a thread in dlopen at the
// fork leaves the child's copy of the loader's lock held for ever). The
// library asked the loader whose malloc the program calls at every exit:
// 200 of 200 children aborted, and the first child of a dlopen loop hung.
TEST_F(Safety, ChildrenForkedInsideMallocOrTheLoaderEndWithTheirExit) {
  const RunResult from_handler = traced({kForkHazards, "signal", "200"}, "r.json");
  EXPECT_EQ(from_handler.exit_code, 0) << from_handler.out << from_handler.err;
  EXPECT_EQ(from_handler.out, "forked 200, reaped 200, stuck 0, ended otherwise 0\n");
  EXPECT_EQ(from_handler.err.find("Fatal"), std::string::npos) << from_handler.err;
  const RunResult beside_dlopen = traced({kForkHazards, "loader", "300", kLoadedModule}, "q.json");
  EXPECT_EQ(beside_dlopen.exit_code, 0) << beside_dlopen.out << beside_dlopen.err;
  EXPECT_EQ(beside_dlopen.out, "forked 300, reaped 300, stuck 0, ended otherwise 0\n");
}

TEST_F(Safety, RacingMarkersNeverGoBackInTime) {
  for (int round = 0; round < 20; ++round) {
    const bool kill_it = round % 2 == 1;
    SCOPED_TRACE((kill_it ? "killed, round " : "exit, round ") + std::to_string(round));
    const std::string name = "race" + std::to_string(round) + ".json";
    std::vector<std::string> argv = {kMarkerRace, "8", "400"};
    if (kill_it) argv.push_back("kill");
    RunResult result = traced(argv, name);
    ASSERT_TRUE(std::regex_search(result.out, std::regex(R"(marks=3600 handled=\d+)"))) << result.out;
    if (kill_it) {
      ASSERT_EQ(result.signal, SIGKILL) << result.err;
      const LiveContent live = read_live(dir_ / (name + ".live"));
      ASSERT_GT(live.samples.size(), 1000u);
      ASSERT_EQ(first_step_back(times_of(live.samples)), -1);
      ASSERT_EQ(first_step_back(times_of(live.mapped_samples)), -1);
      ASSERT_EQ(live.marker_times.size(), heapline::kLiveMarkerCapacity);
      ASSERT_EQ(first_step_back(live.marker_times), -1);
    } else {
      ASSERT_EQ(result.exit_code, 0) << result.err;
      json report = read_json(dir_ / name);
      ASSERT_EQ(heapline_format_problem(report), "");
      ASSERT_GT(report["samples"].size(), 1000u);
      ASSERT_EQ(first_step_back(times_of(report["samples"])), -1);
      ASSERT_EQ(first_step_back(times_of(report["mapped_samples"])), -1);
      ASSERT_EQ(report["markers"].size(), heapline::kLiveMarkerCapacity);
      ASSERT_EQ(first_step_back(times_of(report["markers"])), -1);
    }
  }
}

}  // namespace
