// The instruction figure, driven by a fake runner: what is run under
// callgrind, on which side the library is preloaded, and how a failure ends.
#include "heapline_bench/measurement/instructions.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {
namespace {

// Plays callgrind: prints a count, and writes the profile it was asked for,
// naming the preloaded library as an object that ran unless it is told the
// library never reached the program.
class CallgrindFake : public ProcessRunner {
 public:
  std::vector<RunSpec> seen;
  bool fail_with = false;
  bool library_runs = true;
  RunResult run(const RunSpec& spec) override {
    seen.push_back(spec);
    const std::string out_option = "--callgrind-out-file=";
    for (const auto& arg : spec.argv)
      if (arg.rfind(out_option, 0) == 0 && arg != out_option + "/dev/null") {
        std::ofstream profile(arg.substr(out_option.size()));
        profile << "version: 1\ncmd: churn\nob=(1) /usr/lib/x86_64-linux-gnu/libc.so.6\nfn=(1) malloc\n0 12\n";
        const auto preload = spec.env.find("LD_PRELOAD");
        if (library_runs && preload != spec.env.end())
          profile << "ob=(2) " << preload->second << "\nfn=(2) malloc\n0 30\nob=(2)\nfn=(3) free\n0 4\n";
      }
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

// A library that removes itself from LD_PRELOAD where it is first loaded
// (valgrind's launcher) never runs in the program: the count would be the
// program's alone, so it is refused, and callgrind's profile is not left
// behind.
TEST(Instructions, ALibraryThatNeverRanInTheProgramIsRefused) {
  CallgrindFake runner;
  runner.library_runs = false;
  InstructionRequest request{"/usr/bin/valgrind", {"/bin/churn"}, {}, "/lib/x.so"};
  try {
    count_instructions(runner, request);
    FAIL() << "a count without the library was accepted";
  } catch (const Refusal& refusal) {
    EXPECT_EQ(std::string(refusal.what()),
              "the instruction count with the library: /lib/x.so was not loaded into /bin/churn: callgrind counted no "
              "instruction of it in the program: the library did not reach the program under valgrind (a library that "
              "removes itself from LD_PRELOAD, as heaptrack's does, is gone before valgrind starts the program).");
  }
  ASSERT_EQ(runner.seen.size(), 2u);
  const std::string out = runner.seen[1].argv[2];
  ASSERT_EQ(out.rfind("--callgrind-out-file=", 0), 0u);
  EXPECT_FALSE(std::ifstream(out.substr(std::string("--callgrind-out-file=").size())).good())
      << "the profile is removed";
}

TEST(Instructions, AProfileNamesAnObjectInFullOnceThenByNumber) {
  std::istringstream profile("ob=(1) /lib/libc.so.6\nfn=(1) f\ncob=(2) /lib/x.so\ncfn=(2) g\n");
  EXPECT_TRUE(callgrind_profile_names_object(profile, "/lib/x.so"));
  std::istringstream other("ob=(1) /lib/libc.so.6\nfn=(1) /lib/x.so\nob=(3) /lib/x.so.1\n");
  EXPECT_FALSE(callgrind_profile_names_object(other, "/lib/x.so")) << "a function's name, a longer path";
  std::istringstream uncompressed("ob=/lib/x.so\n");
  EXPECT_TRUE(callgrind_profile_names_object(uncompressed, "/lib/x.so"));
}

}  // namespace
}  // namespace heapline::bench
