// OnceSetUp (stack_capture.h): how libunwind is set up by the first
// capture instead of at start, across threads and forks.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "stack_capture.h"

namespace {

using heapline::stacks::OnceSetUp;

std::atomic<int> g_runs{0};
std::atomic<bool> g_started{false};
std::atomic<bool> g_released{false};

void count_run() { ++g_runs; }

// A set-up that runs until the test releases it.
void run_until_released() {
  ++g_runs;
  g_started = true;
  while (!g_released) std::this_thread::yield();
}

void reset() {
  g_runs = 0;
  g_started = false;
  g_released = false;
}

}  // namespace

TEST(OnceSetUp, RunsOnceAndAForkAfterItKeepsIt) {
  reset();
  OnceSetUp once;
  EXPECT_TRUE(once.ensure(count_run));
  EXPECT_TRUE(once.ensure(count_run));
  EXPECT_EQ(g_runs, 1);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    once.after_fork_in_child();
    _exit(!once.lost() && once.ensure(count_run) && g_runs == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child lost a set-up that was done";
}

// A thread that needs it while another runs it waits for that run, and
// does not run it again.
TEST(OnceSetUp, AThreadThatNeedsItMeanwhileWaitsForTheOtherThreadsRun) {
  reset();
  OnceSetUp once;
  std::thread first([&] { EXPECT_TRUE(once.ensure(run_until_released)); });
  while (!g_started) std::this_thread::yield();
  bool second = false;
  std::thread waiting([&] { second = once.ensure(count_run); });
  g_released = true;
  first.join();
  waiting.join();
  EXPECT_TRUE(second);
  EXPECT_EQ(g_runs, 1);
}

// A fork child made while another thread runs it has it lost at once: it
// never runs it (what the run had locked stays locked in the child) and
// never waits for a run that will not end there. The parent is unchanged.
TEST(OnceSetUp, AForkChildMadeWhileAnotherThreadRunsItHasItLost) {
  reset();
  OnceSetUp once;
  std::thread first([&] { EXPECT_TRUE(once.ensure(run_until_released)); });
  while (!g_started) std::this_thread::yield();
  const pid_t child = fork();
  if (child == 0) {
    once.after_fork_in_child();
    _exit(once.lost() && !once.ensure(count_run) && g_runs == 1 ? 0 : 1);
  }
  g_released = true;
  first.join();
  ASSERT_GE(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child kept or ran the set-up";
  EXPECT_FALSE(once.lost());
  EXPECT_TRUE(once.ensure(count_run));
  EXPECT_EQ(g_runs, 1);
}
