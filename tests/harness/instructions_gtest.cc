// The instruction figure, driven by a fake runner: what is run under
// callgrind, on which side the library is preloaded, and how a failure ends.
#include "heapline_bench/measurement/instructions.h"

#include <gtest/gtest.h>

#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {
namespace {

class CallgrindFake : public ProcessRunner {
 public:
  std::vector<RunSpec> seen;
  bool fail_with = false;
  RunResult run(const RunSpec& spec) override {
    seen.push_back(spec);
    RunResult r;
    r.started = true;
    const bool with = spec.env.count("LD_PRELOAD") > 0;
    r.exit_status = with && fail_with ? 1 : 0;
    r.stderr_tail = "==42== Events    : Ir\n==42== Collected : " + std::string(with ? "1100000" : "1000000") + "\n";
    return r;
  }
};

TEST(Instructions, CollectedCountIsTheLastOneCallgrindPrints) {
  EXPECT_EQ(collected_instructions("==1== Collected : 12345\n"), 12345u);
  EXPECT_EQ(collected_instructions("noise\n==1== Collected : 7\n==1== Collected : 9\n"), 9u);
  EXPECT_FALSE(collected_instructions("==1== Events : Ir\n").has_value());
  EXPECT_FALSE(collected_instructions("==1== Collected : \n").has_value());
}

TEST(Instructions, WithoutThenWithUnderCallgrindTheLibraryOnTheWithSideOnly) {
  CallgrindFake runner;
  InstructionRequest request{"/usr/bin/valgrind", {"/bin/churn", "1", "200"}, {{"PYTHONHASHSEED", "0"}}, "/lib/x.so"};
  const InstructionFigure figure = count_instructions(runner, request);
  ASSERT_EQ(runner.seen.size(), 2u);
  for (const auto& spec : runner.seen) {
    ASSERT_GE(spec.argv.size(), 4u);
    EXPECT_EQ(spec.argv[0], "/usr/bin/valgrind");
    EXPECT_EQ(spec.argv[1], "--tool=callgrind");
    EXPECT_EQ(spec.argv[3], "/bin/churn");
    EXPECT_EQ(spec.env.at("PYTHONHASHSEED"), "0");
    EXPECT_EQ(spec.env.at("HEAPLINE_OUT"), "off") << "the report's cost is not the per-call cost";
  }
  EXPECT_EQ(runner.seen[0].env.count("LD_PRELOAD"), 0u);
  EXPECT_EQ(runner.seen[1].env.at("LD_PRELOAD"), "/lib/x.so");
  EXPECT_EQ(figure.without, 1000000u);
  EXPECT_EQ(figure.with, 1100000u);
  EXPECT_NEAR(figure.overhead, 0.10, 1e-12);
}

TEST(Instructions, AFailedCountIsARefusal) {
  CallgrindFake runner;
  runner.fail_with = true;
  InstructionRequest request{"/usr/bin/valgrind", {"/bin/churn"}, {}, "/lib/x.so"};
  EXPECT_THROW(count_instructions(runner, request), Refusal);
}

}  // namespace
}  // namespace heapline::bench
