// A signal handler that allocates while its thread is inside heapline's hot
// path (programs/signal_probe.cpp): its update must never be lost, so the
// exact live heap after every block is freed equals the one before, and the
// report's final figure agrees.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;

namespace {

struct Outcome {
  long long before = -1;
  long long after = -2;
  int handled = 0;
  long long final_bytes = -3;
};

Outcome run_probe(const fs::path& dir, const std::string& precision) {
  RunOptions options;
  options.env["LD_PRELOAD"] = HEAPLINE_LIB;
  options.env["HEAPLINE_OUT"] = (dir / ("signal." + precision + ".json")).string();
  options.env["HEAPLINE_PRECISION"] = precision;
  options.env.emplace("HEAPLINE_ROOT_PID", std::nullopt);
  options.cwd = dir;
  const RunResult result = run({SIGNAL_PROBE, "500"}, options);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  Outcome outcome;
  std::smatch match;
  const std::regex line(R"(before=(-?\d+) after=(-?\d+) handled=(\d+))");
  if (!std::regex_search(result.out, match, line)) {
    ADD_FAILURE() << "no figures in: " << result.out << result.err;
    return outcome;
  }
  outcome.before = std::stoll(match[1]);
  outcome.after = std::stoll(match[2]);
  outcome.handled = std::stoi(match[3]);
  outcome.final_bytes = read_json(dir / ("signal." + precision + ".json")).at("final_bytes").get<long long>();
  return outcome;
}

class SignalSafety : public heapline::test::TempDirTest {
 protected:
  SignalSafety() : TempDirTest("signal") {}
};

TEST_F(SignalSafety, AllocatingHandlerDuringTheHotPathLosesNoBytes) {
  const Outcome batched = run_probe(dir_, "batched");
  // Thousands of handler calls land inside the malloc(32)/free loop; the
  // count only shows that the handler really ran many times.
  EXPECT_GE(batched.handled, 100);
  EXPECT_EQ(batched.after, batched.before) << batched.handled << " blocks from the handler";
  EXPECT_EQ(batched.final_bytes, batched.after);
}

TEST_F(SignalSafety, ExactModeAgrees) {
  const Outcome exact = run_probe(dir_, "exact");
  EXPECT_GE(exact.handled, 100);
  EXPECT_EQ(exact.after, exact.before);
  EXPECT_EQ(exact.final_bytes, exact.after);
}

}  // namespace
