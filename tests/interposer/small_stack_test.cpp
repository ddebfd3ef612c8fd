// The heap sampler on a thread with a small stack: a sampled allocation
// needs more stack than a plain one (libunwind's context and cursor, about
// 2 KiB on x86-64, and its frames). On a thread whose stack is short the
// sampler skips the sample, counted as dropped, rather than overflow it, so
// a program that runs under the library runs with the sampler too, even
// when every allocation is a sample (HEAPLINE_SAMPLE=1): the thread of
// programs/small_stack.c has the smallest stack POSIX allows
// (PTHREAD_STACK_MIN) and has used USED bytes of it when it allocates.
#include <gtest/gtest.h>

#include <string>

#include "process_runner.h"

using heapline::test::preload_options;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;

namespace {

const std::string kLib = HEAPLINE_LIB;
const std::string kSmallStack = SMALL_STACK;

class SmallStack : public heapline::test::TempDirTest {
 protected:
  SmallStack() : TempDirTest("small-stack") {}
  // Under the library with the sampler off (as plain glibc, give or take
  // the library's own few hundred bytes).
  RunResult unsampled(int used) {
    return run({kSmallStack, std::to_string(used)}, preload_options(kLib, dir_, "unsampled.json"));
  }
  RunResult sampled(int used) {
    return run({kSmallStack, std::to_string(used)},
               preload_options(kLib, dir_, "r" + std::to_string(used) + ".json", {{"HEAPLINE_SAMPLE", "1"}}));
  }
  nlohmann::json sampling(int used) { return read_json(dir_ / ("r" + std::to_string(used) + ".json"))["sampling"]; }
};

TEST_F(SmallStack, TheSamplerNeverNeedsMoreStackThanAPlainCall) {
  int compared = 0;
  for (int used = 1024; used <= 12288; used += 512) {
    const RunResult without = unsampled(used);
    if (without.exit_code != 0) continue;  // more than the stack holds, sampler or not
    const RunResult with = sampled(used);
    EXPECT_EQ(with.signal, 0) << "used " << used << ": killed by signal " << with.signal << "\n" << with.err;
    EXPECT_EQ(with.exit_code, 0) << "used " << used << "\n" << with.err;
    ++compared;
  }
  EXPECT_GE(compared, 8);
}

// Skipped only where the room is short: a thread that has used little of
// its stack is sampled, one that has used most of it has its samples
// dropped (and the report counts them).
TEST_F(SmallStack, OnlyAShortStackHasItsSamplesDropped) {
  ASSERT_EQ(sampled(1024).exit_code, 0);
  const nlohmann::json roomy = sampling(1024);
  EXPECT_GE(roomy["samples"].get<std::int64_t>(), 1000) << roomy.dump();
  EXPECT_EQ(roomy["dropped"].get<std::int64_t>(), 0) << roomy.dump();
  const RunResult short_of_stack = sampled(8192);
  ASSERT_EQ(short_of_stack.exit_code, 0) << short_of_stack.err << " signal " << short_of_stack.signal;
  const nlohmann::json tight = sampling(8192);
  EXPECT_GE(tight["dropped"].get<std::int64_t>(), 1000) << tight.dump();
}

}  // namespace
