// The interleaving and validation logic of measure(), driven by a fake runner:
// no process is started and no time is measured.
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/measurement/process_runner.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <heapline/preload_check.h>
#include <heapline/shared_object.h>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace heapline::bench {
namespace {

bool preloads(const RunSpec& spec) { return spec.env.count("LD_PRELOAD") > 0; }

// Answers each run from a script of wall times, records what it was asked,
// and writes the ld.so trace that a real loader would write.
class FakeRunner : public ProcessRunner {
 public:
  double with_seconds = 1.10;
  double without_seconds = 1.00;
  bool loader_traces_library = true;
  // When it does not: whether ld.so wrote a trace at all, an empty one, or
  // one of the program alone.
  enum class Trace { none, empty, program_only } trace_without_library = Trace::none;
  std::vector<RunSpec> seen;
  std::function<void(RunResult&, const RunSpec&, int)> tweak;

  RunResult run(const RunSpec& spec) override {
    seen.push_back(spec);
    RunResult result;
    result.started = true;
    result.exit_status = 0;
    result.pid = 1000 + static_cast<int>(seen.size());
    const bool with = preloads(spec);
    // Spread the times so the interval is not degenerate.
    result.wall_seconds = (with ? with_seconds : without_seconds) + 0.001 * static_cast<double>(seen.size() % 3);
    if (!spec.ld_debug_output.empty() && loader_traces_library) {
      std::ofstream trace(spec.ld_debug_output + "." + std::to_string(result.pid));
      // One line per preloaded object, as ld.so writes them.
      std::string preload = spec.env.at("LD_PRELOAD");
      for (std::size_t from = 0, to; from <= preload.size(); from = to + 1) {
        to = preload.find(':', from);
        if (to == std::string::npos) to = preload.size();
        trace << "      " << result.pid << ":\tfile=" << preload.substr(from, to - from)
              << " [0];  generating link map\n";
      }
    }
    if (!spec.ld_debug_output.empty() && !loader_traces_library && trace_without_library != Trace::none) {
      std::ofstream trace(spec.ld_debug_output + "." + std::to_string(result.pid));
      if (trace_without_library == Trace::program_only)
        trace << "      " << result.pid << ":\tfile=libc.so.6 [0];  generating link map\n";
    }
    if (tweak) tweak(result, spec, static_cast<int>(seen.size()));
    return result;
  }
};

class MeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch = std::filesystem::temp_directory_path() /
              ("heapline-measurement-test-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(scratch);
    request.scenario = "churn-1t";
    request.command = {"/bin/true"};
    request.library = "/opt/libheapline.so";
    request.runs = 4;
    request.scratch_directory = scratch.string();
  }
  void TearDown() override { std::filesystem::remove_all(scratch); }

  std::filesystem::path scratch;
  MeasurementRequest request;
  FakeRunner runner;
};

TEST(InterleavedPlan, WarmUpPairThenAlternatingPairs) {
  auto plan = interleaved_plan(3);
  ASSERT_EQ(plan.size(), 8u);
  const std::vector<std::pair<int, Side>> expected = {
      {-1, Side::without_library}, {-1, Side::with_library},  // warm-up
      {0, Side::without_library},  {0, Side::with_library},   // A B
      {1, Side::with_library},     {1, Side::without_library},  // B A
      {2, Side::without_library},  {2, Side::with_library},   // A B
  };
  for (std::size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(plan[i].pair, expected[i].first) << "at " << i;
    EXPECT_EQ(plan[i].side, expected[i].second) << "at " << i;
  }
  EXPECT_TRUE(plan[0].warmup());
  EXPECT_FALSE(plan[2].warmup());
}

TEST(InterleavedPlan, EachSideRunsEqually) {
  auto plan = interleaved_plan(10);
  int with = 0, without = 0;
  for (const auto& run : plan) (run.side == Side::with_library ? with : without)++;
  EXPECT_EQ(with, 11);
  EXPECT_EQ(without, 11);
  EXPECT_THROW(interleaved_plan(0), std::invalid_argument);
}

TEST_F(MeasureTest, RunsThePlanInOrderAndPreloadsOnlyTheWithSide) {
  auto m = measure(runner, request);
  const auto plan = interleaved_plan(request.runs);
  ASSERT_EQ(runner.seen.size(), plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(preloads(runner.seen[i]), plan[i].side == Side::with_library) << "run " << i;
    if (preloads(runner.seen[i])) EXPECT_EQ(runner.seen[i].env.at("LD_PRELOAD").rfind(request.library, 0), 0u);
    // heapline's own files never land in the user's directory.
    EXPECT_EQ(runner.seen[i].env.at("HEAPLINE_OUT").rfind(scratch.string(), 0), 0u);
  }
  // Only the warm-up run with the library is traced by ld.so.
  EXPECT_FALSE(runner.seen[1].ld_debug_output.empty());
  for (std::size_t i = 2; i < plan.size(); ++i) EXPECT_TRUE(runner.seen[i].ld_debug_output.empty());
}

TEST_F(MeasureTest, AnAllocatorGoesAfterHeaplineAndAfterTheFloorOnTheOtherSide) {
  request.preload_after = "/usr/lib/libjemalloc.so.2";
  request.floor = "/opt/libheapline_null.so";
  measure(runner, request);
  const auto plan = interleaved_plan(request.runs);
  ASSERT_EQ(runner.seen.size(), plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(runner.seen[i].env.at("LD_PRELOAD"), plan[i].side == Side::with_library
                                                       ? "/opt/libheapline.so:/usr/lib/libjemalloc.so.2"
                                                       : "/opt/libheapline_null.so:/usr/lib/libjemalloc.so.2")
        << "run " << i;
  }
}

TEST_F(MeasureTest, WarmUpRunsAreNotCounted) {
  runner.tweak = [](RunResult& r, const RunSpec&, int call) {
    if (call <= 2) r.wall_seconds = 100;  // a cold start, far slower
  };
  auto m = measure(runner, request);
  EXPECT_EQ(m.with_runs.size(), 4u);
  EXPECT_EQ(m.without_runs.size(), 4u);
  for (const auto& r : m.with_runs) EXPECT_LT(r.wall_seconds, 2);
}

TEST_F(MeasureTest, FigureIsTheRatioOfMedians) {
  runner.with_seconds = 1.2;
  runner.without_seconds = 1.0;
  auto m = measure(runner, request);
  EXPECT_NEAR(m.overhead, 0.2, 0.01);
  EXPECT_LE(m.interval.low, m.overhead);
  EXPECT_GE(m.interval.high, m.overhead);
}

TEST_F(MeasureTest, AaModeRunsTheSameCommandOnBothSides) {
  request.library.clear();
  runner.with_seconds = runner.without_seconds;
  auto m = measure(runner, request);
  for (const auto& spec : runner.seen) {
    EXPECT_FALSE(preloads(spec));
    EXPECT_TRUE(spec.ld_debug_output.empty());
  }
  EXPECT_EQ(m.with_runs.size(), 4u);
  EXPECT_NEAR(m.overhead, 0.0, 0.01);
}

TEST_F(MeasureTest, RefusesWhenTheLibraryWasNotLoaded) {
  runner.loader_traces_library = false;  // a static binary: ld.so never ran
  try {
    measure(runner, request);
    FAIL() << "expected a refusal";
  } catch (const Refusal& refusal) {
    EXPECT_NE(std::string(refusal.what()).find("was not loaded"), std::string::npos) << refusal.what();
  }
  EXPECT_EQ(runner.seen.size(), 2u) << "stops at the warm-up pair";
}

// "Was not loaded" says why, as far as it can be told (safety, class E):
// each cause its own message, none blaming a static binary that is not one.
TEST_F(MeasureTest, SaysWhyTheLibraryWasNotLoaded) {
  runner.loader_traces_library = false;
  auto refusal_of = [&](const std::vector<std::string>& command) {
    request.command = command;
    try {
      measure(runner, request);
    } catch (const Refusal& refusal) {
      return std::string(refusal.what());
    }
    return std::string("no refusal");
  };
  // A statically linked program: an ELF file without an interpreter.
  const std::string static_program = (scratch / "static").string();
  {
    Elf64_Ehdr header{};
    std::memcpy(header.e_ident, ELFMAG, SELFMAG);
    header.e_ident[EI_CLASS] = ELFCLASS64;
    header.e_type = ET_EXEC;
    header.e_phentsize = sizeof(Elf64_Phdr);
    std::ofstream(static_program, std::ios::binary).write(reinterpret_cast<const char*>(&header), sizeof header);
  }
  EXPECT_NE(refusal_of({static_program}).find(static_program + ": statically linked"), std::string::npos);
  const std::string script = (scratch / "script").string();
  std::ofstream(script) << "#!" << static_program << " -x\n";
  EXPECT_NE(refusal_of({script}).find(static_program + ": statically linked"), std::string::npos)
      << "a script is its interpreter";

  // A dynamic program whose run left no trace, an empty one, or one without
  // the library: never "statically linked".
  std::string message = refusal_of({"/bin/true"});
  EXPECT_NE(message.find("ld.so wrote no trace"), std::string::npos) << message;
  EXPECT_EQ(message.find("statically"), std::string::npos) << message;
  runner.trace_without_library = FakeRunner::Trace::empty;
  message = refusal_of({"/bin/true"});
  EXPECT_NE(message.find("is empty: it could not be written"), std::string::npos) << message;
  runner.trace_without_library = FakeRunner::Trace::program_only;
  message = refusal_of({"/bin/true"});
  EXPECT_NE(message.find("removed it from LD_PRELOAD"), std::string::npos) << message;

  // A set-user-ID program of another user runs in ld.so's secure mode.
  const std::string set_uid = (scratch / "set-uid").string();
  std::filesystem::copy_file("/bin/true", set_uid);
  if (getuid() == 0 && chown(set_uid.c_str(), 65534, 65534) == 0 && chmod(set_uid.c_str(), 04755) == 0) {
    runner.trace_without_library = FakeRunner::Trace::none;
    message = refusal_of({set_uid});
    EXPECT_NE(message.find("set-user-ID"), std::string::npos) << message;
  }
  EXPECT_EQ(heapline::preload_blocker_of("/bin/true"), heapline::PreloadBlocker::none);
}

TEST_F(MeasureTest, RefusesWhenTheLoaderRefusedTheLibraryInAnyRun) {
  runner.tweak = [](RunResult& r, const RunSpec& spec, int call) {
    if (call == 8 && preloads(spec))
      r.stderr_tail = "ERROR: ld.so: object '/opt/libheapline.so' from LD_PRELOAD cannot be preloaded: ignored.\n";
  };
  EXPECT_THROW(measure(runner, request), Refusal);
}

TEST_F(MeasureTest, RefusesWhenTheLoaderMessageIsOnlyAtTheStartOfAChattyStderr) {
  runner.tweak = [](RunResult& r, const RunSpec& spec, int call) {
    if (call == 8 && preloads(spec)) {
      r.stderr_head = "ERROR: ld.so: object '/opt/libheapline.so' from LD_PRELOAD cannot be preloaded: ignored.\n";
      r.stderr_tail = std::string(4096, 'x');  // the program's own output pushed it out of the tail
    }
  };
  EXPECT_THROW(measure(runner, request), Refusal);
}

TEST_F(MeasureTest, RefusesAFailingRunAndShowsItsStderr) {
  runner.tweak = [](RunResult& r, const RunSpec&, int call) {
    if (call == 5) {
      r.exit_status = 3;
      r.stderr_tail = "out of widgets\n";
    }
  };
  try {
    measure(runner, request);
    FAIL() << "expected a refusal";
  } catch (const Refusal& refusal) {
    const std::string message = refusal.what();
    EXPECT_NE(message.find("exited with status 3"), std::string::npos) << message;
    EXPECT_NE(message.find("out of widgets"), std::string::npos) << message;
    EXPECT_NE(message.find("nothing was recorded"), std::string::npos) << message;
  }
  EXPECT_EQ(runner.seen.size(), 5u) << "stops at the first failure";
}

TEST_F(MeasureTest, RefusesAKilledRun) {
  runner.tweak = [](RunResult& r, const RunSpec&, int call) {
    if (call == 3) {
      r.exit_status = -1;
      r.signal = 11;
    }
  };
  try {
    measure(runner, request);
    FAIL() << "expected a refusal";
  } catch (const Refusal& refusal) {
    EXPECT_NE(std::string(refusal.what()).find("killed by signal 11"), std::string::npos) << refusal.what();
  }
}

TEST_F(MeasureTest, RefusesACommandThatCannotStart) {
  runner.tweak = [](RunResult& r, const RunSpec&, int) {
    r.started = false;
    r.start_error = "No such file or directory";
  };
  EXPECT_THROW(measure(runner, request), Refusal);
}

// The command line refuses --runs 0 (option_values_test.sh); a request
// without runs is a caller's bug, caught before anything runs.
TEST_F(MeasureTest, ARequestWithoutRunsBreaksItsPrecondition) {
  request.runs = 0;
  EXPECT_THROW(measure(runner, request), PreconditionFailed);
  request.runs = 4;
  request.until_half_width = 0.01;
  request.max_runs = 3;
  EXPECT_THROW(measure(runner, request), PreconditionFailed);
  EXPECT_TRUE(runner.seen.empty());
}

TEST_F(MeasureTest, InterruptionPropagatesAndNothingIsReturned) {
  runner.tweak = [](RunResult&, const RunSpec&, int call) {
    if (call == 4) throw Interrupted{2};
  };
  EXPECT_THROW(measure(runner, request), Interrupted);
}

TEST_F(MeasureTest, ReportsProgressForEveryRun) {
  std::vector<ProgressEvent> events;
  measure(runner, request, [&](const ProgressEvent& e) { events.push_back(e); });
  ASSERT_EQ(events.size(), 10u);
  EXPECT_LT(events[0].seconds_left, 0) << "unknown before the first timed run";
  EXPECT_GT(events[5].seconds_left, 0);
  EXPECT_EQ(events.back().index, 9);
  EXPECT_EQ(events.back().total, 10);
}

// A preload list (a test shim in front of heapline): both sides differ by
// the whole list, and every library of it must show in ld.so's trace.
TEST_F(MeasureTest, APreloadListIsPreloadedWholeAndEachLibraryMustBeLoaded) {
  request.library = "/opt/libslow_shim.so:/opt/libheapline.so";
  measure(runner, request);
  for (const auto& spec : runner.seen)
    if (preloads(spec)) EXPECT_EQ(spec.env.at("LD_PRELOAD"), request.library);
  runner.seen.clear();
  runner.tweak = [](RunResult&, const RunSpec& spec, int) {
    if (spec.ld_debug_output.empty()) return;
    // The loader found the shim but not heapline behind it.
    std::ofstream(spec.ld_debug_output + "." + std::to_string(1000 + 2), std::ios::trunc)
        << "      1002:\tfile=/opt/libslow_shim.so [0];  generating link map\n";
  };
  try {
    measure(runner, request);
    FAIL() << "a list whose second library was not loaded was measured";
  } catch (const Refusal& refusal) {
    EXPECT_NE(std::string(refusal.what()).find("/opt/libheapline.so was not loaded"), std::string::npos)
        << refusal.what();
  }
}

// --until-ci: pairs are added, alternating as the plan would, until the
// interval is narrow enough or the cap is reached; the measurement says how
// many pairs ran.
TEST_F(MeasureTest, AdaptivePrecisionAddsPairsUntilTheIntervalIsNarrowOrTheCap) {
  request.until_half_width = 1e-9;  // never narrow enough: up to the cap
  request.max_runs = 7;
  const Measurement capped = measure(runner, request);
  EXPECT_EQ(capped.request.runs, 7);
  EXPECT_EQ(capped.with_runs.size(), 7u);
  EXPECT_EQ(capped.without_runs.size(), 7u);
  ASSERT_EQ(runner.seen.size(), 2u + 14u);
  const auto plan = interleaved_plan(7);
  for (std::size_t i = 0; i < plan.size(); ++i)
    EXPECT_EQ(preloads(runner.seen[i]), plan[i].side == Side::with_library) << "run " << i;

  runner.seen.clear();
  request.until_half_width = 0.5;  // 50 points: the first RUNS pairs are enough
  EXPECT_EQ(measure(runner, request).request.runs, 4);
  EXPECT_EQ(runner.seen.size(), 10u);

  // Noise that shrinks as pairs are added stops the run early.
  runner.seen.clear();
  runner.tweak = [](RunResult& r, const RunSpec&, int n) {
    r.wall_seconds += n < 14 ? 0.3 * (n % 2) : 0.0;
    r.user_seconds = r.wall_seconds;
  };
  request.until_half_width = 0.08;
  request.max_runs = 40;
  const Measurement narrowed = measure(runner, request);
  EXPECT_GT(narrowed.request.runs, 4);
  EXPECT_LT(narrowed.request.runs, 40);
  EXPECT_LE(interval_half_width(narrowed.overhead, narrowed.interval), 0.08);
}

// The stop rules of --until-ci, as a property over seeded noise: the
// measurement runs RUNS pairs, then adds pairs one at a time and stops at the
// first count whose interval (of the figure --until-ci-of names) is at most
// the target on either side, or at --max-runs; never earlier, never later.
// A figure the runs do not hold (no CPU times) stops it at RUNS.
TEST_F(MeasureTest, UntilCiStopsAtTheFirstIntervalNarrowEnoughOrAtTheCap) {
  std::mt19937_64 random(20261206);
  std::normal_distribution<double> noise(0, 1);
  // The half width of the figure of the first `pairs` pairs.
  auto half_width = [](const Measurement& m, int pairs, bool cpu) {
    std::vector<double> with, without;
    for (int i = 0; i < pairs; ++i) {
      const RunResult& w = m.with_runs[static_cast<std::size_t>(i)];
      const RunResult& wo = m.without_runs[static_cast<std::size_t>(i)];
      with.push_back(cpu ? w.user_seconds + w.system_seconds : w.wall_seconds);
      without.push_back(cpu ? wo.user_seconds + wo.system_seconds : wo.wall_seconds);
    }
    return interval_half_width(overhead_ratio(with, without), bootstrap_overhead_interval(with, without));
  };
  int at_runs = 0, between = 0, at_cap = 0;  // where the trials stopped: each rule is met
  for (int trial = 0; trial < 24; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const bool cpu = trial % 2 == 1;
    const double wall_spread = 0.02 + 0.01 * (trial % 5), cpu_spread = 0.01 + 0.02 * (trial % 3);
    runner.tweak = [&](RunResult& r, const RunSpec&, int) {
      r.wall_seconds = std::max(0.1, r.wall_seconds + wall_spread * noise(random));
      r.user_seconds = std::max(0.05, 0.8 * r.wall_seconds + cpu_spread * noise(random));
      r.system_seconds = 0.05;
    };
    request.runs = 3 + trial % 4;
    request.max_runs = 12 + trial % 9;
    request.until_ci_cpu = cpu;
    request.until_half_width = 0.01 + 0.005 * (trial % 7);
    runner.seen.clear();
    const Measurement m = measure(runner, request);
    const int pairs = m.request.runs;
    ASSERT_EQ(m.with_runs.size(), static_cast<std::size_t>(pairs));
    ASSERT_EQ(m.without_runs.size(), static_cast<std::size_t>(pairs));
    EXPECT_EQ(runner.seen.size(), static_cast<std::size_t>(2 * pairs + 2)) << "the warm-up pair and the timed ones";
    EXPECT_GE(pairs, request.runs);
    EXPECT_LE(pairs, request.max_runs);
    for (int k = request.runs; k < pairs; ++k) {
      EXPECT_GT(half_width(m, k, cpu), request.until_half_width) << "narrow enough at " << k << " pairs of " << pairs;
    }
    if (pairs < request.max_runs) EXPECT_LE(half_width(m, pairs, cpu), request.until_half_width);
    (pairs == request.runs ? at_runs : pairs == request.max_runs ? at_cap : between) += 1;
  }
  EXPECT_GT(at_runs, 0);
  EXPECT_GT(between, 0);
  EXPECT_GT(at_cap, 0);
  // Without CPU times the CPU figure cannot narrow: RUNS pairs, however
  // noisy the wall clock.
  runner.tweak = [&](RunResult& r, const RunSpec&, int) {
    r.wall_seconds = 1 + 0.3 * noise(random) * noise(random);
    r.user_seconds = r.system_seconds = 0;
  };
  request.runs = 4;
  request.max_runs = 30;
  request.until_ci_cpu = true;
  request.until_half_width = 1e-9;
  EXPECT_EQ(measure(runner, request).request.runs, 4);
  request.until_ci_cpu = false;
  EXPECT_EQ(measure(runner, request).request.runs, 30) << "the wall clock's interval never that narrow: the cap";
}

TEST(LibraryCheck, APreloadListIsSplitOnColonsAndEachPartChecked) {
  EXPECT_EQ(preload_list("/a.so:/b.so"), (std::vector<std::string>{"/a.so", "/b.so"}));
  // The options' list rule: an empty part or a library twice is refused, never skipped.
  for (const char* list : {"", ":", "/a.so:", ":/a.so", "/a.so::/b.so", "/a.so::", "/a.so:/a.so"})
    EXPECT_THROW(preload_list(list), Refusal) << list;
  EXPECT_THROW(checked_preload_libraries(":"), Refusal);
  EXPECT_THROW(checked_preload_libraries(std::string(HEAPLINE_SOURCE_DIR) + "/no-such.so"), Refusal);
}

TEST(LibraryCheck, RefusesMissingNonElfAndNonSharedFiles) {
  EXPECT_THROW(checked_preload_library("/nonexistent/libnothing.so"), Refusal);
  EXPECT_THROW(checked_preload_library("/etc/hostname"), Refusal);
  EXPECT_THROW(checked_preload_library("/"), Refusal);
}

// The one check both programs make (heapline/shared_object.h): each kind of
// file that cannot be preloaded is told apart, from its header alone.
TEST(LibraryCheck, TellsEachKindOfFileThatCannotBePreloaded) {
  const std::string dir = ::testing::TempDir();
  auto with_header = [&](const std::string& name, unsigned char elf_class, int machine, int type) {
    Elf64_Ehdr header{};
    std::memcpy(header.e_ident, ELFMAG, SELFMAG);
    header.e_ident[EI_CLASS] = elf_class;
    header.e_machine = static_cast<Elf64_Half>(machine);
    header.e_type = static_cast<Elf64_Half>(type);
    std::ofstream(dir + name, std::ios::binary).write(reinterpret_cast<const char*>(&header), sizeof header);
    return dir + name;
  };
#if defined(__aarch64__)
  const int here = EM_AARCH64;
#else
  const int here = EM_X86_64;
#endif
  unsigned type = 0;
  EXPECT_EQ(shared_object_problem_of(with_header("so", ELFCLASS64, here, ET_DYN)), SharedObjectProblem::none);
  EXPECT_EQ(shared_object_problem_of(with_header("exec", ELFCLASS64, here, ET_EXEC), &type),
            SharedObjectProblem::not_shared_object);
  EXPECT_EQ(type, unsigned{ET_EXEC});
  EXPECT_EQ(shared_object_problem_of(with_header("32", ELFCLASS32, here, ET_DYN)), SharedObjectProblem::not_elf64);
  EXPECT_EQ(shared_object_problem_of(with_header("other", ELFCLASS64, here == EM_AARCH64 ? EM_X86_64 : EM_AARCH64, ET_DYN)),
            SharedObjectProblem::other_machine);
  std::ofstream(dir + "short") << "\x7f" "ELF";
  EXPECT_EQ(shared_object_problem_of(dir + "short"), SharedObjectProblem::unreadable);
  std::ofstream(dir + "text") << std::string(100, 'x');
  EXPECT_EQ(shared_object_problem_of(dir + "text"), SharedObjectProblem::not_elf);
  EXPECT_EQ(shared_object_problem_of("/"), SharedObjectProblem::not_regular_file);
  EXPECT_EQ(shared_object_problem_of("/nonexistent/lib.so"), SharedObjectProblem::missing);
  EXPECT_EQ(checked_preload_library(dir + "so"), dir + "so");
  EXPECT_THROW(checked_preload_library(dir + "exec"), Refusal);
}

TEST(ProgramResolution, FindsProgramsOnPathAndRefusesUnknownOnes) {
  EXPECT_EQ(resolved_program("sh").front(), '/');
  EXPECT_THROW(resolved_program("heapline-no-such-program"), Refusal);
  const auto plain_file = std::filesystem::temp_directory_path() / "heapline-not-executable.txt";
  std::ofstream(plain_file) << "data\n";
  std::filesystem::permissions(plain_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_THROW(resolved_program(plain_file.string()), Refusal);
  std::filesystem::remove(plain_file);
}

// A heapline/1 report with these counts (the rest as the library writes it).
std::string report_with(int alloc, int free, int realloc, int publishes) {
  return R"({"format":"heapline/1","pid":5,"ppid":1,"exe":"/bin/churn","start_unix_ns":0,"duration_ns":1,
    "precision":{"mode":"exact","bound_bytes":0,"min_threshold_bytes":1,"max_threads":1},
    "peak_bytes":0,"peak_time_ns":0,"final_bytes":0,"interval_ns":10000000,"samples":[[0,0,0]],)" +
         std::string(R"("calls":{"alloc":)") + std::to_string(alloc) + R"(,"free":)" + std::to_string(free) +
         R"(,"realloc":)" + std::to_string(realloc) + R"(},"publishes":)" + std::to_string(publishes) + "}";
}

TEST_F(MeasureTest, HeaplinesReportsAreSummedPerWithRunAndRemoved) {
  FakeRunner runner;
  int with_runs = 0;
  runner.tweak = [&](RunResult&, const RunSpec& spec, int) {
    if (!preloads(spec)) return;
    // Two processes per run: their calls and publishes add up.
    const auto dir = std::filesystem::path(spec.env.at("HEAPLINE_OUT")).parent_path();
    ++with_runs;
    std::ofstream(dir / "heapline.churn.1.json") << report_with(600, 300, 100, 4);
    std::ofstream(dir / "heapline.churn.2.json") << report_with(1000, 0, 0, 6);
    std::ofstream(dir / "heapline.churn.3.json") << R"({"calls":{"alloc":"x"},"publishes":6})";  // not counted
  };
  const Measurement m = measure(runner, request);
  ASSERT_EQ(m.with_reports.size(), 4u) << "one per timed with-run, the warm-up's discarded";
  EXPECT_EQ(m.with_reports[0].calls, 2000u);
  EXPECT_EQ(m.with_reports[0].publishes, 10u);
  EXPECT_EQ(with_runs, 5);
  EXPECT_FALSE(std::filesystem::exists(scratch / "heapline.churn.1.json"));
}

// The line FIELD of /proc/self/status of a command run by the runner (its
// own, as grep reads it).
RunResult status_line_of_a_command(const std::string& field) {
  RunSpec spec;
  spec.argv = {"grep", "^" + field + ":", "/proc/self/status"};
  spec.capture_stdout = true;
  PosixProcessRunner runner;
  return runner.run(spec);
}

// A measured command runs as it would on its own: with the signal mask
// heapline-bench was started with (a signal its caller blocks stays blocked),
// never with the interrupts heapline-bench blocks while it waits (the
// command could not be stopped with SIGTERM or ^C).
TEST(PosixProcessRunner, TheCommandStartsWithTheCallersSignalMask) {
  sigset_t callers, previous;
  sigemptyset(&callers);
  sigaddset(&callers, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &callers, &previous), 0);
  const RunResult result = status_line_of_a_command("SigBlk");
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ASSERT_TRUE(result.succeeded()) << result.start_error << result.stderr_tail;
  // SIGUSR1 (10) alone: bit 9.
  EXPECT_EQ(result.stdout_head, "SigBlk:\t0000000000000200\n");
}

// heapline-bench ignores the signals of a failed write (SIGPIPE, SIGXFSZ:
// heapline/write_signals.h); a command it measures runs with their
// default, as it would on its own (an ignored signal stays ignored across
// exec).
TEST(PosixProcessRunner, TheCommandStartsWithTheWriteSignalsAtTheirDefault) {
  struct sigaction ignore {}, previous[2];
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &previous[0]), 0);
  ASSERT_EQ(sigaction(SIGXFSZ, &ignore, &previous[1]), 0);
  const RunResult result = status_line_of_a_command("SigIgn");
  sigaction(SIGPIPE, &previous[0], nullptr);
  sigaction(SIGXFSZ, &previous[1], nullptr);
  ASSERT_TRUE(result.succeeded()) << result.start_error << result.stderr_tail;
  const std::string& line = result.stdout_head;
  const unsigned long long mask = std::stoull(line.substr(line.find('\t') + 1), nullptr, 16);
  EXPECT_EQ(mask & (1ULL << (SIGPIPE - 1)), 0u) << line;
  EXPECT_EQ(mask & (1ULL << (SIGXFSZ - 1)), 0u) << line;
}

// Every failure report says how the run ended in the same words, from the
// real outcome: a status, a signal (never "status -1") or no start at all.
TEST(PosixProcessRunner, HowARunEndedIsSaidOneWay) {
  PosixProcessRunner runner;
  RunSpec spec;
  spec.argv = {"sh", "-c", "exit 3"};
  EXPECT_EQ(how_it_ended(runner.run(spec)), "exited with status 3");
  spec.argv = {"sh", "-c", "kill -9 $$"};
  EXPECT_EQ(how_it_ended(runner.run(spec)), "was killed by signal 9 (Killed)");
  spec.argv = {"/nonexistent/heapline-test-program"};
  const RunResult missing = runner.run(spec);
  EXPECT_FALSE(missing.started);
  EXPECT_EQ(how_it_ended(missing), "could not be started (" + missing.start_error + ")");
  EXPECT_NE(missing.start_error.find("No such file or directory"), std::string::npos) << missing.start_error;
  spec.argv = {"true"};
  EXPECT_EQ(how_it_ended(runner.run(spec)), "exited with status 0");
}

}  // namespace
}  // namespace heapline::bench
