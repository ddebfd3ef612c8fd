// A live file cut under its running process (another process truncates it:
// `: > x.live`, a log rotator's copytruncate): the process survives, in
// batched and in exact precision, whether the file is cut to nothing or to
// the middle of its heap line, and whether or not a sample meets the cut
// before the exit or a failed exec; its report stays valid (no sample of the
// zeroed pages, nothing back in time) and says once, on stderr and in
// live_file_problem, what the cut lost. And the library's SIGBUS handler,
// which makes that so, changes nothing of a program's own SIGBUS
// semantics: a fault outside the live file kills as before, a signal sent
// kills as before, a handler the program installed gets its signals with
// their address and code, SIG_IGN stays honoured (docs/design.md, "A live
// file cut under its process").
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "heapline/live_format.h"
#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::finish;
using heapline::test::heapline_format_problem;
using heapline::test::preload_options;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;
using heapline::test::start;
using heapline::test::wait_for_output;
using nlohmann::json;

namespace {

const std::string kLib = HEAPLINE_LIB;
const std::string kCutProgram = LIVE_FILE_CUT;

// Where a field of the live file is, in bytes from its start.
std::size_t offset_in_region(const void* field, const heapline::LiveRegion& region) {
  return static_cast<std::size_t>(static_cast<const char*>(field) - reinterpret_cast<const char*>(&region));
}
struct Layout {
  std::size_t heap_count, first_sample;
};
Layout layout() {
  const auto region = std::make_unique<heapline::LiveRegion>();
  return {offset_in_region(&region->timeline.count, *region), offset_in_region(&region->timeline.samples[0], *region)};
}

// The count of heap samples the live file holds now.
std::uint64_t heap_samples_in(const fs::path& live) {
  std::uint64_t count = 0;
  const int fd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  if (::pread(fd, &count, sizeof count, static_cast<off_t>(layout().heap_count)) != static_cast<ssize_t>(sizeof count)) count = 0;
  ::close(fd);
  return count;
}

// The first `count` heap samples of the live file, as it holds them now.
std::vector<heapline::Sample> heap_samples(const fs::path& live, std::size_t count) {
  std::vector<heapline::Sample> samples(count);
  const int fd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const auto bytes = static_cast<ssize_t>(count * sizeof(heapline::Sample));
  if (::pread(fd, samples.data(), static_cast<std::size_t>(bytes), static_cast<off_t>(layout().first_sample)) != bytes) {
    samples.clear();
  }
  ::close(fd);
  return samples;
}

std::size_t lines_containing(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  std::size_t at = 0;
  while ((at = text.find(part, at)) != std::string::npos) ++count, ++at;
  return count;
}

std::vector<std::string> marker_names(const json& report) {
  std::vector<std::string> names;
  for (const auto& marker : report.value("markers", json::array())) names.push_back(marker[1].get<std::string>());
  return names;
}

struct CutCase {
  const char* name;
  bool to_nothing;  // else to the middle of the heap line written so far
  bool exact;
};

// Printed by its name (gtest would print its bytes, a pointer among them,
// into the test's name).
void PrintTo(const CutCase& cut, std::ostream* out) { *out << cut.name; }

template <typename Param>
class CutTest : public heapline::test::TempDirFixture<::testing::TestWithParam<Param>> {
 protected:
  CutTest() : heapline::test::TempDirFixture<::testing::TestWithParam<Param>>("cut") {}
};
using CutLiveFile = CutTest<CutCase>;

// The process went on to its end, and its stderr has the one line that
// says the live file was cut.
void expect_survived_and_said_once(const RunResult& result, const fs::path& live) {
  ASSERT_EQ(result.signal, 0) << "killed by signal " << result.signal << "\n" << result.err;
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("done"), std::string::npos) << result.out;
  EXPECT_EQ(lines_containing(result.err, "was cut short by another process while the program ran"), 1u) << result.err;
  EXPECT_NE(result.err.find("heapline: " + live.string() + " was cut short"), std::string::npos) << result.err;
}

TEST_P(CutLiveFile, TheProcessSurvivesAndItsReportSaysWhatWasLost) {
  const CutCase cut = GetParam();
  const fs::path live = dir_ / "r.json.live";
  const fs::path go = dir_ / "go";
  std::map<std::string, std::optional<std::string>> env = {{"HEAPLINE_INTERVAL_MS", "1"}};
  if (cut.exact) env["HEAPLINE_PRECISION"] = "exact";
  auto running = start({kCutProgram, "churn", go.string()}, preload_options(kLib, dir_, "r.json", env));
  ASSERT_TRUE(wait_for_output(running, "ready")) << running.out_so_far();
  // Enough of a heap line that its middle is pages past its first: 400
  // samples span three pages of the file.
  std::uint64_t count = 0;
  for (int waited = 0; waited < 1500 && (count = heap_samples_in(live)) < 400; ++waited) usleep(10'000);
  ASSERT_GE(count, 400u);
  const std::vector<heapline::Sample> before = heap_samples(live, count);
  ASSERT_EQ(before.size(), count);
  const std::size_t size = cut.to_nothing ? 0 : layout().first_sample + count / 2 * sizeof(heapline::Sample) + 1000;
  // Kept: the samples wholly below the last page the file still has (that
  // page is zeroed past its new end).
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t last_page = (size + page - 1) / page * page - page;
  const std::size_t kept = cut.to_nothing ? 0 : (last_page - layout().first_sample) / sizeof(heapline::Sample);
  ASSERT_EQ(::truncate(live.c_str(), static_cast<off_t>(size)), 0);
  usleep(50'000);  // samples and publishes into the cut pages meanwhile
  std::ofstream(go).put('\n');
  const RunResult result = finish(running);
  // One line, at once, naming the file.
  expect_survived_and_said_once(result, live);
  if (HasFatalFailure()) return;

  const json report = read_json(dir_ / "r.json");
  EXPECT_EQ(heapline_format_problem(report), "") << report.dump();
  ASSERT_TRUE(report.contains("live_file_problem")) << report.dump();
  const std::string problem = report["live_file_problem"].get<std::string>();
  EXPECT_TRUE(std::regex_match(problem, std::regex(R"(cut short by another process at \d+\.\d{3} s: .+ lost; )"
                                                   R"(the figures are exact, and the heap line after it was kept in memory)")))
      << problem;
  // What was lost is a list of known parts, each said once: "N samples of
  // the heap line (A s to B s)", "the mapped series", "N markers", "N
  // resident readings", "the peak profile", joined by ", " and " and ".
  {
    const std::size_t from = problem.find(" s: ") + 4, to = problem.find(" lost; ");
    ASSERT_LT(from, to) << problem;
    const std::string lost = problem.substr(from, to - from);
    const std::string part =
        R"((\d+ samples? of the heap line( \(\d+\.\d{3} s to \d+\.\d{3} s\))?|the mapped series|\d+ markers?|)"
        R"(\d+ resident readings?|the peak profile))";
    EXPECT_TRUE(std::regex_match(lost, std::regex(part + "((, " + part + ")*( and " + part + "))?"))) << lost;
  }
  const std::size_t mapped_samples = report.value("mapped_samples", json::array()).size();
  // Nothing zeroed kept: every sample after the first has a time.
  const json& samples = report["samples"];
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_GT(samples[i][0].get<std::int64_t>(), 0) << i;
  const std::vector<std::string> markers = marker_names(report);
  const auto named = [&](const std::string& prefix) {
    return std::count_if(markers.begin(), markers.end(), [&](const std::string& name) { return name.rfind(prefix, 0) == 0; });
  };
  EXPECT_GT(named("after-"), 0) << report.dump();  // written after the cut: kept
  if (cut.to_nothing) {
    // Everything written before the cut was in the file: its markers are
    // said lost (those made between the cut and the go are kept).
    EXPECT_EQ(std::count(markers.begin(), markers.end(), "before-0"), 0) << report.dump();
    EXPECT_TRUE(std::regex_search(problem, std::regex(R"(\d+ markers?)"))) << problem;
    EXPECT_TRUE(std::regex_search(problem, std::regex(R"(\d+ samples? of the heap line \(\d+\.\d{3} s to \d+\.\d{3} s\))")))
        << problem;
    // Each lost sample went with its mapped twin: the two series still
    // pair one for one.
    EXPECT_EQ(mapped_samples, report["samples"].size());
  } else {
    // The markers and the start of the heap line were before the cut.
    EXPECT_GT(named("before-"), 0) << report.dump();
    ASSERT_GE(samples.size(), kept) << problem;
    for (std::size_t i = 0; i < kept; ++i) {
      EXPECT_EQ(samples[i], json::array({before[i].t_ns, before[i].live, before[i].max_live})) << i;
    }
    EXPECT_TRUE(std::regex_search(problem, std::regex(R"(\d+ samples? of the heap line \(\d+\.\d{3} s to \d+\.\d{3} s\))")))
        << problem;
    // The mapped series lay past the cut, beside heap samples it left: the
    // heap line is kept, the mapped series given up (never half of it).
    EXPECT_NE(problem.find("the mapped series"), std::string::npos) << problem;
    EXPECT_EQ(mapped_samples, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Cuts, CutLiveFile,
                         ::testing::Values(CutCase{"ToNothingBatched", true, false}, CutCase{"ToNothingExact", true, true},
                                           CutCase{"ToTheMiddleBatched", false, false},
                                           CutCase{"ToTheMiddleExact", false, true}),
                         [](const ::testing::TestParamInfo<CutCase>& info) { return std::string(info.param.name); });

// --- a cut no sample met ------------------------------------------------------

// A cut while the program touches nothing of its live file (no allocation,
// so no sample faults on the cut pages and the handler never runs): found
// all the same where the whole file is settled, at the exit and after an
// exec that failed (whose new live file is made from the region: a cut not
// found first would copy zeroed pages into it as samples, and forget the
// loss). The report says once what was lost and holds no zeroed sample.
using IdleCut = CutTest<bool>;

TEST_P(IdleCut, IsFoundWhereTheWholeFileIsSettled) {
  const bool failed_exec = GetParam();
  const fs::path live = dir_ / "r.json.live";
  const fs::path go = dir_ / "go";
  std::vector<std::string> command = {kCutProgram, "idle", go.string()};
  if (failed_exec) command.push_back("exec");
  auto running = start(command, preload_options(kLib, dir_, "r.json", {{"HEAPLINE_INTERVAL_MS", "1"}}));
  ASSERT_TRUE(wait_for_output(running, "ready")) << running.out_so_far();
  ASSERT_GT(heap_samples_in(live), 2u);
  ASSERT_EQ(::truncate(live.c_str(), 0), 0);
  std::ofstream(go).put('\n');
  expect_survived_and_said_once(finish(running), live);
  if (HasFatalFailure()) return;

  const json report = read_json(dir_ / "r.json");
  EXPECT_EQ(heapline_format_problem(report), "") << report.dump();
  const std::string problem = report.value("live_file_problem", "");
  EXPECT_TRUE(std::regex_search(problem, std::regex(R"(^cut short by another process at \d+\.\d{3} s: )"
                                                    R"(.*\d+ samples? of the heap line)")))
      << report.dump();
  const json& samples = report["samples"];
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_GT(samples[i][0].get<std::int64_t>(), 0) << i;
}

INSTANTIATE_TEST_SUITE_P(Cuts, IdleCut, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "AfterAFailedExec" : "AtTheExit");
                         });

// --- the program's own SIGBUS semantics ----------------------------------------

class OwnSigbus : public heapline::test::TempDirTest {
 protected:
  OwnSigbus() : TempDirTest("own-sigbus") {}
  // The command (its live file made at the start, the library's handler in
  // place before main), or a process that is not the command (its live file
  // made once it holds 1 MiB: the library's handler in place after the
  // program's own disposition).
  RunResult traced(const std::string& mode, bool command) {
    std::map<std::string, std::optional<std::string>> env;
    if (!command) env["HEAPLINE_ROOT_PID"] = "1";
    return run({kCutProgram, mode}, preload_options(kLib, dir_, "r.json", env));
  }
};

// A SIGBUS fault the library has nothing to do with kills by SIGBUS, as the
// default action does without the library.
TEST_F(OwnSigbus, AFaultOutsideTheLiveFileKillsWithSigbusAsBefore) {
  const RunResult result = traced("fault", true);
  EXPECT_NE(result.out.find("handler=library"), std::string::npos) << result.out;
  EXPECT_EQ(result.signal, SIGBUS) << result.out << result.err;
  EXPECT_EQ(result.out.find("survived"), std::string::npos) << result.out;
}

TEST_F(OwnSigbus, ASigbusSentToTheProgramKillsAsBefore) {
  const RunResult result = traced("sent", true);
  EXPECT_NE(result.out.find("handler=library"), std::string::npos) << result.out;
  EXPECT_EQ(result.signal, SIGBUS) << result.out << result.err;
  EXPECT_EQ(result.out.find("survived"), std::string::npos) << result.out;
}

// The program's handler, installed before the library's: called for its
// own fault (with the fault's address and BUS_ADRERR, so it can recover as
// it meant to) and for a raise (SI_TKILL).
TEST_F(OwnSigbus, AHandlerTheProgramInstalledGetsItsSignals) {
  const RunResult result = traced("own", false);
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err << " signal " << result.signal;
  EXPECT_NE(result.out.find("handler=library"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("fault=own code=" + std::to_string(BUS_ADRERR) + "\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("sent=own code=" + std::to_string(SI_TKILL) + "\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("done"), std::string::npos) << result.out;
}

// SIG_IGN set by the program: a raise stays ignored, and a fault still
// kills (the kernel never lets a fault be ignored).
TEST_F(OwnSigbus, AnIgnoredSigbusStaysIgnoredAndAFaultStillKills) {
  const RunResult result = traced("ignored", false);
  EXPECT_NE(result.out.find("handler=library"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("ignored"), std::string::npos) << result.out;
  EXPECT_EQ(result.signal, SIGBUS) << result.out << result.err;
  EXPECT_EQ(result.out.find("survived"), std::string::npos) << result.out;
}

}  // namespace
