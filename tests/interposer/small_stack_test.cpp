// The heap sampler on a thread with a small stack: a sampled allocation
// needs more stack than a plain one (libunwind's context and cursor, about
// 2 KiB on x86-64, and its frames). On a thread whose stack is short the
// sampler skips the sample, counted as dropped, rather than overflow it, so
// a program that runs under the library runs with the sampler too, even
// when every allocation is a sample (HEAPLINE_SAMPLE=1): the thread of
// programs/small_stack.c has the smallest stack POSIX allows
// (PTHREAD_STACK_MIN) and has used USED bytes of it when it allocates.
// That stack is the processor's: 16 KiB on x86-64, 128 KiB on arm64; the
// tests take its size from the program and place USED from its end, so a
// stack that is short is as short on either.
#include <gtest/gtest.h>

#include <cstdlib>
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
  // The size of the program's thread stack (PTHREAD_STACK_MIN as it was
  // built), 0 when it does not say.
  int stack_bytes() {
    const RunResult said = run({kSmallStack, "size"}, RunOptions{});
    return said.exit_code == 0 ? std::atoi(said.out.c_str()) : 0;
  }
};

TEST_F(SmallStack, TheSamplerNeverNeedsMoreStackThanAPlainCall) {
  const int stack = stack_bytes();
  ASSERT_GT(stack, 5120);
  // 23 runs, from 1 KiB used to 4 KiB left (1024 to 12288 by 512 on
  // x86-64's 16 KiB; on arm64's 128 KiB, 15.2 and 9.6 KiB left among
  // them, which a sample's capture there overflows).
  const int step = (stack - 5120) / 22;
  int compared = 0;
  for (int used = 1024; used <= stack - 4096; used += step) {
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
  const int stack = stack_bytes();
  ASSERT_GT(stack, 8192);
  ASSERT_EQ(sampled(1024).exit_code, 0);
  const nlohmann::json roomy = sampling(1024);
  EXPECT_GE(roomy["samples"].get<std::int64_t>(), 1000) << roomy.dump();
  EXPECT_EQ(roomy["dropped"].get<std::int64_t>(), 0) << roomy.dump();
  // 8 KiB left, less the thread's own frames: short of what a sample needs
  // (8 KiB on x86-64, 32 KiB on arm64: arch.h, kSampleStackBytes).
  const int used = stack - 8192;
  const RunResult short_of_stack = sampled(used);
  ASSERT_EQ(short_of_stack.exit_code, 0) << short_of_stack.err << " signal " << short_of_stack.signal;
  const nlohmann::json tight = sampling(used);
  EXPECT_GE(tight["dropped"].get<std::int64_t>(), 1000) << tight.dump();
}

}  // namespace
