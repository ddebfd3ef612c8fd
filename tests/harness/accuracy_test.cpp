// measurement/accuracy.h: one run under the accuracy build gives the point's
// accuracy figure, read from that run's own report; the library's contract
// is |batched peak - exact peak| <= the stated bound, within the budget.
#include "heapline_bench/measurement/accuracy.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "heapline_bench/measurement/measurement.h"

namespace fs = std::filesystem;

namespace heapline::bench {
namespace {

// A heapline/1 report of an accuracy build: batched peak 1000000, exact
// peak `exact`, bound 300000, budget max(262144, peak / 100).
std::string accuracy_report(std::int64_t exact, bool with_shadow = true, std::uint64_t divisor = 100) {
  return R"({"format": "heapline/1", "pid": 7, "ppid": 1, "exe": "/bin/churn", "start_unix_ns": 0,
    "duration_ns": 5000000, "precision": {"mode": "batched", "bound_bytes": 300000,
    "budget_floor_bytes": 262144, "budget_divisor": )" +
         std::to_string(divisor) + R"(, "budget_bytes": 300000, "max_threshold_bytes": 65536, "max_threads": 5},
    "peak_bytes": 1000000, "peak_time_ns": 100, "final_bytes": 500,
    "calls": {"alloc": 600, "free": 390, "realloc": 10}, "publishes": 25, "interval_ns": 10000000,
    "samples": [[0, 0, 0], [100, 1000000, 1000000]])" +
         (with_shadow ? R"(, "exact_shadow": {"peak_bytes": )" + std::to_string(exact) + R"(, "final_bytes": 500})"
                      : std::string()) +
         "}";
}

// Plays the program under the accuracy build: writes `report` where
// HEAPLINE_OUT says, or exits with `status` (or is killed by `killed_by`)
// and writes nothing.
class AccuracyBuildFake : public ProcessRunner {
 public:
  std::string report;
  int status = 0;
  int killed_by = 0;
  bool loaded = true;
  RunSpec seen;
  RunResult run(const RunSpec& spec) override {
    seen = spec;
    RunResult r;
    r.started = true;
    r.exit_status = killed_by != 0 ? -1 : status;
    r.signal = killed_by;
    r.stderr_tail = r.succeeded() ? "" : "churn: out of memory";
    r.pid = 4242;
    if (r.succeeded()) std::ofstream(spec.env.at("HEAPLINE_OUT")) << report;
    // ld.so's trace of the run: the library loaded into the program, or
    // (loaded == false) the program without it.
    if (!spec.ld_debug_output.empty() && r.succeeded())
      std::ofstream(spec.ld_debug_output + ".4242")
          << "      4242:\tfile=/lib/libc.so.6 [0];  generating link map\n"
          << (loaded ? "      4242:\tfile=" + spec.env.at("LD_PRELOAD") + " [0];  generating link map\n" : "")
          << "      4242:\tinitialize program: " << spec.argv[0] << "\n";
    return r;
  }
};

class AccuracyRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("heapline-accuracy-gtest-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    request_.command = {"/bin/churn", "4", "100"};
    request_.env = {{"PYTHONHASHSEED", "0"}};
    request_.library = "/build/libheapline_accuracy.so";
    request_.report_path = (dir_ / "accuracy.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  AccuracyRequest request_;
  AccuracyBuildFake runner_;
};

TEST_F(AccuracyRunTest, TheFiguresAreTheRunsOwnReport) {
  runner_.report = accuracy_report(1100000);
  const AccuracyRun run = measure_accuracy(runner_, request_);
  EXPECT_EQ(runner_.seen.argv, request_.command);
  EXPECT_EQ(runner_.seen.env.at("LD_PRELOAD"), "/build/libheapline_accuracy.so");
  EXPECT_EQ(runner_.seen.env.at("HEAPLINE_OUT"), request_.report_path);
  EXPECT_EQ(runner_.seen.env.at("PYTHONHASHSEED"), "0");
  EXPECT_EQ(run.accuracy.batched_peak_bytes, 1000000);
  EXPECT_EQ(run.accuracy.exact_peak_bytes, 1100000);
  EXPECT_EQ(run.accuracy.bound_bytes, 300000);
  EXPECT_EQ(run.accuracy.error_bytes(), -100000);
  EXPECT_EQ(run.budget_bytes, 262144);  // max(262144, 1000000 / 100)
  EXPECT_EQ(run.publishes, 25u);
  EXPECT_EQ(run.calls, 1000u);
  EXPECT_DOUBLE_EQ(run.publishes_per_1000_calls(), 25.0);
  EXPECT_TRUE(run.accuracy.within_bound());
  EXPECT_FALSE(run.bound_within_budget());  // 300000 > 262144
}

TEST_F(AccuracyRunTest, TheBudgetIsThePeaksShareAboveTheFloor) {
  runner_.report = accuracy_report(1000000, true, 2);  // 1000000 / 2 above the floor
  EXPECT_EQ(measure_accuracy(runner_, request_).budget_bytes, 500000);
  EXPECT_TRUE(measure_accuracy(runner_, request_).bound_within_budget());
  runner_.report = accuracy_report(1000000, true, 0);  // a report from before the budget
  EXPECT_EQ(measure_accuracy(runner_, request_).budget_bytes, 0);
  EXPECT_TRUE(measure_accuracy(runner_, request_).bound_within_budget());
}

TEST(Accuracy, TheBoundHoldsOnBothSidesUpToItsLastByte) {
  EXPECT_TRUE((Accuracy{1300, 1000, 300}.within_bound()));
  EXPECT_FALSE((Accuracy{1301, 1000, 300}.within_bound()));
  EXPECT_TRUE((Accuracy{700, 1000, 300}.within_bound()));
  EXPECT_FALSE((Accuracy{699, 1000, 300}.within_bound()));
  EXPECT_TRUE((Accuracy{1000, 1000, 0}.within_bound()));
  AccuracyRun run;
  run.accuracy.bound_bytes = 300;
  run.budget_bytes = 300;
  EXPECT_TRUE(run.bound_within_budget());
  run.budget_bytes = 299;
  EXPECT_FALSE(run.bound_within_budget());
  EXPECT_EQ(run.publishes_per_1000_calls(), 0.0);  // no calls: no rate, no division
}

// The refusal's text; "" when the run gave a figure.
std::string refusal_of(ProcessRunner& runner, const AccuracyRequest& request) {
  try {
    measure_accuracy(runner, request);
  } catch (const Refusal& refusal) {
    return refusal.what();
  }
  return "";
}

// A program the accuracy build was not loaded into is said as every
// measurement says it (library_not_loaded), not as its missing report.
TEST_F(AccuracyRunTest, ALibraryNotLoadedIsSaidAsEveryMeasurementSaysIt) {
  runner_.report = accuracy_report(1100000);
  runner_.loaded = false;
  EXPECT_EQ(refusal_of(runner_, request_),
            "/build/libheapline_accuracy.so was not loaded into /bin/churn: ld.so's trace shows "
            "/bin/churn loaded without /build/libheapline_accuracy.so: the command (or a wrapper it runs through) "
            "removed it from LD_PRELOAD");
  EXPECT_EQ(runner_.seen.ld_debug_output, (dir_ / "accuracy-ld-trace").string());
}

TEST_F(AccuracyRunTest, AFailedRunOrAReportWithoutTheExactPeakIsRefusedWithWhy) {
  runner_.status = 3;
  std::string why = refusal_of(runner_, request_);
  EXPECT_NE(why.find("the accuracy run of /bin/churn under /build/libheapline_accuracy.so "
                     "failed: it exited with status 3:\n    churn: out of memory"),
            std::string::npos)
      << why;
  runner_.killed_by = SIGKILL;
  why = refusal_of(runner_, request_);
  EXPECT_NE(why.find("failed: it was killed by signal 9 (Killed)"), std::string::npos) << why;
  runner_.killed_by = 0;
  runner_.status = 0;
  runner_.report = accuracy_report(0, false);
  why = refusal_of(runner_, request_);
  EXPECT_NE(why.find("has no exact_shadow (not an accuracy build?)"), std::string::npos) << why;
  // The suite keeps the point: the reason must not say that nothing was.
  EXPECT_EQ(why.find("recorded"), std::string::npos) << why;
  runner_.report = "{\"format\": \"heapline/1\"";
  EXPECT_NE(refusal_of(runner_, request_), "");
}

TEST_F(AccuracyRunTest, TheAccuracyBuildIsTheOneBesideTheLibrary) {
  const fs::path library = dir_ / "libheapline.so";
  std::ofstream(library) << "elf";
  EXPECT_EQ(accuracy_library_for(library.string()), "");  // none beside it yet
  std::ofstream(dir_ / "libheapline_accuracy.so") << "elf";
  EXPECT_EQ(accuracy_library_for(library.string()), (dir_ / "libheapline_accuracy.so").string());
  std::ofstream(dir_ / "libother.so") << "elf";
  EXPECT_EQ(accuracy_library_for((dir_ / "libother.so").string()), "");  // another library
  EXPECT_EQ(accuracy_library_for(library.string() + ":" + library.string()), "");  // a list
  fs::remove(dir_ / "libheapline_accuracy.so");
  fs::create_directory(dir_ / "libheapline_accuracy.so");
  EXPECT_EQ(accuracy_library_for(library.string()), "");  // a directory is no build
}

}  // namespace
}  // namespace heapline::bench
