// The oracle's checks themselves: a report consistent with its truth
// passes, and each kind of wrong figure is named. (The oracle is only as
// good as these: a check that cannot fail finds nothing.)
#include "oracle.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace heapline::oracle {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A truth and the report an exact library writes for it: heap 100 at the
// end, peak 5000 (designed), 4096 mapped at the end and 8192 at the peak.
struct Example {
  json truth = {{"format", "heapline-oracle-truth/1"}, {"pid", 100}, {"ppid", 1}, {"image", 0}, {"role", "root"},
                {"seed", 7}, {"depth", 0}, {"exec_into", false}, {"calibrate", false},
                {"heap", {{"final", 100}, {"peak", 5000}, {"peak_designed", true}, {"inherited", 0}}},
                {"mapped", {{"final", 4096}, {"peak", 8192}, {"inherited", 0}}},
                {"calls", {{"alloc", 10}, {"free", 5}, {"realloc", 2}}},
                {"threads_created", 1}, {"threads_alive_high", 2}, {"parked_at_fork", 0},
                {"parked_runtime_bytes", 0}, {"markers", {"m.1.0", "m.1.1", "peak"}}, {"children", json::array()}};
  json report = {{"format", "heapline/1"}, {"pid", 100}, {"duration_ns", 30},
                 {"precision", {{"mode", "exact"}, {"bound_bytes", 0}, {"max_threads", 2}, {"max_threshold_bytes", 1}}},
                 {"peak_bytes", 5000}, {"peak_time_ns", 10}, {"final_bytes", 100},
                 {"mapped", {{"mode", "on"}, {"peak_bytes", 8192}, {"peak_time_ns", 10}, {"final_bytes", 4096},
                             {"changes", 3}, {"untracked", 0}}},
                 {"total", {{"peak_bytes", 13192}, {"peak_time_ns", 10}, {"final_bytes", 4196}}},
                 {"calls", {{"alloc", 10}, {"free", 5}, {"realloc", 2}}}, {"allocations_seen", true}, {"ended", "exit"},
                 {"markers", {{4, "m.1.0"}, {6, "m.1.1"}, {9, "peak"}}},
                 {"samples", {{0, 0, 0}, {10, 5000, 5000}, {20, 100, 100}}},
                 {"mapped_samples", {{0, 0, 0}, {10, 8192, 8192}, {20, 4096, 4096}}}};

  Process process() const {
    Process p;
    p.pid = 100;
    p.images.push_back(parse_truth(truth));
    p.report = report;
    p.has_report = true;
    return p;
  }
  std::vector<std::string> problems(bool exact = true) const {
    return check_process(process(), Expectation{"root", 0, {}}, exact);
  }
  // The same report as a batched library with a bound of 4096 writes it.
  void make_batched(std::int64_t peak) {
    report["precision"] = {{"mode", "batched"},         {"bound_bytes", 4096},  {"budget_floor_bytes", 4096},
                           {"budget_divisor", 100},      {"budget_bytes", 4096}, {"max_threads", 2},
                           {"max_threshold_bytes", 2048}};
    report["peak_bytes"] = peak;
    report["total"]["peak_bytes"] = peak + 8192;
    report["samples"][1] = {10, peak, peak};
  }
};

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

#define EXPECT_PROBLEM(problems, text)                                                       \
  do {                                                                                       \
    const std::string all = joined(problems);                                                \
    EXPECT_NE(all.find(text), std::string::npos) << "expected \"" << (text) << "\" in:\n" << all; \
  } while (0)

TEST(OracleChecks, AReportThatAgreesWithItsTruthPasses) {
  Example example;
  EXPECT_EQ(joined(example.problems()), "");
  example.make_batched(5000 - 3000);
  EXPECT_EQ(joined(example.problems(false)), "");
}

TEST(OracleChecks, TheFinalFigureIsExactToTheByte) {
  Example example;
  example.report["final_bytes"] = 116;
  example.report["total"]["final_bytes"] = 4212;
  example.report["samples"][2] = {20, 116, 116};
  EXPECT_PROBLEM(example.problems(), "final_bytes 116 != 100");
}

TEST(OracleChecks, TheRuntimesBytesAreAddedToTheWorkloads) {
  Example example;
  const auto problems = check_process(example.process(), Expectation{"root", 304, {}}, true);
  EXPECT_PROBLEM(problems, "final_bytes 100 != 404 (workload 100 + runtime 304)");
}

TEST(OracleChecks, AnExactPeakIsTheDesignedOne) {
  Example example;
  example.report["peak_bytes"] = 5032;
  example.report["total"]["peak_bytes"] = 13224;
  EXPECT_PROBLEM(example.problems(), "peak_bytes 5032 != the designed peak 5000");
  EXPECT_PROBLEM(example.problems(), "total peak_bytes 13224 is 32 from the designed 13192");
}

TEST(OracleChecks, ABatchedPeakIsWithinTheStatedBound) {
  Example example;
  example.make_batched(5000 - 4096);
  EXPECT_EQ(joined(example.problems(false)), "");
  example.make_batched(5000 - 4097);
  EXPECT_PROBLEM(example.problems(false), "beyond the stated bound 4096");
}

TEST(OracleChecks, TheBoundIsWithinTheBudget) {
  Example example;
  example.make_batched(5000);
  example.report["precision"]["bound_bytes"] = 4097;
  EXPECT_PROBLEM(example.problems(false), "is above budget_bytes 4096");
  example.report["precision"]["bound_bytes"] = 4096;
  example.report["precision"]["budget_bytes"] = 5000;
  EXPECT_PROBLEM(example.problems(false), "is not max(budget_floor_bytes, peak_bytes / budget_divisor)");
}

TEST(OracleChecks, NoSampleIsAboveItsPeak) {
  Example example;
  example.report["samples"][1] = {10, 4000, 5001};
  EXPECT_PROBLEM(example.problems(), "heap sample 1 reaches 5001, above the peak 5000");
  Example mapped;
  mapped.report["mapped_samples"][1] = {10, 8192, 8193};
  EXPECT_PROBLEM(mapped.problems(), "mapped sample 1 reaches 8193, above the peak 8192");
  Example total;
  total.report["mapped_samples"][2] = {20, 13093, 13093};
  total.report["mapped"]["peak_bytes"] = 13093;
  EXPECT_PROBLEM(total.problems(), "heap + mapped 13193 above the total peak 13192");
}

TEST(OracleChecks, EachSeriesReachesItsPeak) {
  Example example;
  example.report["samples"][1] = {10, 4000, 4999};
  EXPECT_PROBLEM(example.problems(), "the heap samples reach 4999 at most, not the peak 5000");
  Example mapped;
  mapped.report["mapped_samples"][1] = {10, 8000, 8000};
  EXPECT_PROBLEM(mapped.problems(), "the mapped samples reach 8000 at most, not the peak 8192");
}

TEST(OracleChecks, SampleTimesNeverGoBack) {
  Example example;
  example.report["samples"][1][0] = 25;
  EXPECT_PROBLEM(example.problems(), "heap sample 2 at 20 ns, before the previous one at 25");
  Example mapped;
  mapped.report["mapped_samples"][2][0] = 5;
  EXPECT_PROBLEM(mapped.problems(), "mapped sample 2 at 5 ns, before the previous one at 10");
}

// Each series at its own times: a mapped sample at its mapping's time,
// apart from the heap sample that ends the same interval, is right.
TEST(OracleChecks, TheMappedSeriesKeepsItsOwnTimes) {
  Example example;
  example.report["mapped_samples"][1][0] = 12;
  EXPECT_EQ(joined(example.problems()), "");
  example.report["mapped_samples"].erase(2);
  EXPECT_PROBLEM(example.problems(), "2 mapped samples for 3 heap samples");
}

TEST(OracleChecks, MappedFiguresAreWhatTheWorkloadMapped) {
  Example example;
  example.report["mapped"]["final_bytes"] = 8192;
  EXPECT_PROBLEM(example.problems(), "mapped final_bytes 8192 != 4096");
  Example peak;
  peak.report["mapped"]["peak_bytes"] = 4096;
  EXPECT_PROBLEM(peak.problems(), "mapped peak_bytes 4096 != the designed 8192");
}

TEST(OracleChecks, EveryCallIsCountedOnce) {
  for (const char* kind : {"alloc", "free", "realloc"}) {
    Example example;
    example.report["calls"][kind] = example.report["calls"][kind].get<int>() + 1;
    EXPECT_PROBLEM(example.problems(), "calls alloc");
  }
  Example runtime;
  const auto problems = check_process(runtime.process(), Expectation{"root", 0, {1, 1, 0}}, true);
  EXPECT_PROBLEM(problems, "(workload alloc 10, free 5, realloc 2 + runtime alloc 1, free 1, realloc 0)");
}

TEST(OracleChecks, MarkersAreTheWorkloadsInEachThreadsOrder) {
  Example missing;
  missing.report["markers"].erase(1);
  EXPECT_PROBLEM(missing.problems(), "2 markers reported, 3 set by the workload");
  Example order;
  order.report["markers"] = {{6, "m.1.0"}, {4, "m.1.1"}, {9, "peak"}};
  EXPECT_PROBLEM(order.problems(), "is out of its thread's order");
}

TEST(OracleChecks, AForkChildStartsFromWhatItInherited) {
  Example example;
  example.truth["role"] = "fork";
  example.truth["heap"]["inherited"] = 100;
  example.report["samples"][0] = {0, 100, 100};
  EXPECT_EQ(joined(example.problems()), "");
  example.report["samples"][0] = {0, 84, 84};
  EXPECT_PROBLEM(example.problems(), "the first heap sample holds 84, not the inherited 100");
  // A merged timeline's first sample is not the fork's.
  example.report["samples"][0] = {3, 84, 84};
  example.report["mapped_samples"][0] = {3, 0, 0};
  EXPECT_EQ(joined(example.problems()), "");
}

TEST(OracleChecks, TheLastSampleHoldsTheFinalFigures) {
  Example example;
  example.report["samples"][2] = {20, 90, 100};
  EXPECT_PROBLEM(example.problems(), "the last heap sample holds 90, not final_bytes 100");
  Example mapped;
  mapped.report["mapped_samples"][2] = {20, 0, 4096};
  EXPECT_PROBLEM(mapped.problems(), "the last mapped sample holds 0, not the final 4096");
}

TEST(OracleChecks, NoMoreThreadsThanWereAlive) {
  Example example;
  example.report["precision"]["max_threads"] = 3;
  EXPECT_PROBLEM(example.problems(), "max_threads 3 but at most 2 threads were alive at once");
}

TEST(OracleChecks, APeakTheWorkloadCouldNotDesignIsAProblemOutsideTheCalibration) {
  Example example;
  example.truth["heap"]["peak_designed"] = false;
  EXPECT_PROBLEM(example.problems(), "could not allocate its designed peak");
  EXPECT_EQ(joined(check_process(example.process(), Expectation{"root", 0, {}}, true, false)), "");
}

Run run_of(const Example& example, const std::string& mode) {
  oracle::Run run;
  run.mode = mode;
  run.root_pid = 100;
  run.processes.emplace(100, example.process());
  return run;
}

TEST(OracleChecks, NoProcessRanLongerThanTheWholeRun) {
  Example example;
  oracle::Run run = run_of(example, "exact");
  run.elapsed_ns = 30;
  EXPECT_EQ(joined(check_run(run, Runtime{})), "");
  run.elapsed_ns = 29;
  EXPECT_PROBLEM(check_run(run, Runtime{}), "duration_ns 30 but the whole run took 29 ns");
}

TEST(OracleChecks, TheTwoRunsAgreeWithinTheBound) {
  Example exact, batched;
  batched.make_batched(5000 - 1000);
  EXPECT_EQ(joined(check_pair(run_of(batched, "batched"), run_of(exact, "exact"), Runtime{})), "");
  // Each peak against its own run's truth: glibc may give a chunk 16
  // bytes more in one run.
  batched.truth["heap"]["peak"] = 5016;
  batched.truth["heap"]["final"] = 116;
  batched.report["final_bytes"] = 116;
  EXPECT_EQ(joined(check_pair(run_of(batched, "batched"), run_of(exact, "exact"), Runtime{})), "");
  batched.make_batched(5000 - 5000);
  EXPECT_PROBLEM(check_pair(run_of(batched, "batched"), run_of(exact, "exact"), Runtime{}),
                 "apart by more than the bound 4096");
  Example uneven;
  uneven.report["final_bytes"] = 132;
  EXPECT_PROBLEM(check_pair(run_of(uneven, "batched"), run_of(exact, "exact"), Runtime{}),
                 "final_bytes 132 batched, 100 exact");
}

// --- the tree on disk -------------------------------------------------------------

class OracleTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "heapline-oracle-test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const json& value) { std::ofstream(dir_ / name) << value.dump(); }
  fs::path dir_;
};

TEST_F(OracleTree, EveryProcessOfTheTreeHasItsReportAndNothingIsLeft) {
  Example root;
  root.truth["children"] = {{{"index", 0}, {"pid", 101}, {"kind", "fork"}, {"status", 0}}};
  Example child;
  child.truth["pid"] = 101;
  child.truth["role"] = "fork";
  write("truth.100.0.json", root.truth);
  write("r.100.json", root.report);
  write("truth.101.0.json", child.truth);
  oracle::Run run = load_run(dir_, 100, "exact");
  EXPECT_PROBLEM(run.problems, "pid 101: no report r.101.json");
  write("r.101.json", child.report);
  std::ofstream(dir_ / "r.101.json.live") << "x";
  write("r.555.json", child.report);
  run = load_run(dir_, 100, "exact");
  EXPECT_PROBLEM(run.problems, "a live file was left behind");
  EXPECT_PROBLEM(run.problems, "a file no process of the tree claims: r.555.json");
  fs::remove(dir_ / "r.101.json.live");
  fs::remove(dir_ / "r.555.json");
  EXPECT_EQ(joined(load_run(dir_, 100, "exact").problems), "");
  EXPECT_EQ(load_run(dir_, 100, "exact").processes.size(), 2u);
}

TEST_F(OracleTree, AChildThatFailedIsAProblem) {
  Example root;
  root.truth["children"] = {{{"index", 0}, {"pid", 101}, {"kind", "fork"}, {"status", 3 << 8}}};
  write("truth.100.0.json", root.truth);
  write("r.100.json", root.report);
  EXPECT_PROBLEM(load_run(dir_, 100, "exact").problems, "pid 101 (child 0 of 100) ended with exit code 3");
  EXPECT_PROBLEM(load_run(dir_, 100, "exact").problems, "pid 101: no truth file");
}

TEST_F(OracleTree, AnExecdImageOwnsThePidsReport) {
  Example before;
  before.truth["exec_into"] = true;
  Example after;
  after.truth["image"] = 1;
  after.truth["role"] = "exec";
  write("truth.100.0.json", before.truth);
  write("r.100.json", after.report);
  EXPECT_PROBLEM(load_run(dir_, 100, "exact").problems, "exec'd, but the next image wrote no truth");
  write("truth.100.1.json", after.truth);
  const oracle::Run run = load_run(dir_, 100, "exact");
  EXPECT_EQ(joined(run.problems), "");
  const auto expected = expectations(run, Runtime{});
  EXPECT_EQ(expected.at(100).name, "root#1");
  EXPECT_EQ(joined(check_run(run, Runtime{})), "");
}

// The runtime's share: a fork child holds its parent's and the DTV of each
// thread that waited at the fork, as the workload read them.
TEST(OracleRuntime, AForkChildKeepsTheDtvsOfTheThreadsWaitingAtTheFork) {
  oracle::Run run;
  run.root_pid = 100;
  Example root;
  root.truth["children"] = {{{"index", 0}, {"pid", 101}, {"kind", "fork"}, {"status", 0}}};
  Example child;
  child.truth["pid"] = 101;
  child.truth["role"] = "fork";
  child.truth["parked_runtime_bytes"] = 624;
  run.processes.emplace(100, root.process());
  Process child_process = child.process();
  child_process.pid = 101;
  run.processes.emplace(101, child_process);
  Runtime runtime;
  runtime.fresh_bytes = 40;
  runtime.fork_calls = {0, 0, 0};
  runtime.fresh_calls = {1, 0, 0};
  runtime.thread_calls = {1, 1, 0};
  const auto expected = expectations(run, runtime);
  EXPECT_EQ(expected.at(100).runtime_bytes, 40);
  EXPECT_EQ(expected.at(101).runtime_bytes, 40 + 624);
  EXPECT_EQ(expected.at(101).name, "root/fork0");
  EXPECT_EQ(expected.at(100).runtime_calls, (Calls{2, 1, 0}));  // fresh, and one thread
}

}  // namespace
}  // namespace heapline::oracle
