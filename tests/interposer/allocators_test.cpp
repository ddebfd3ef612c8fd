// The allocators people preload, from Debian, each after libheapline.so:
// jemalloc, tcmalloc and mimalloc. With each: the program's output is what
// it is under the allocator alone, the final figure is exact, the peak is
// within the stated bound on a known pattern (exact mode gives it exactly),
// threads and fork work, and the allocator's own arenas, which it maps
// through the exported mmap, are never counted a second time as mapped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::heapline_format_problem;
using heapline::test::read_json;
using heapline::test::preload_options;
using heapline::test::run;
using heapline::test::RunResult;
using nlohmann::json;

namespace {

const std::string kLib = HEAPLINE_LIB;
const std::string kPatterns = ALLOC_PATTERNS;
const std::string kMappedPatterns = MAPPED_PATTERNS;
const std::string kCorners = API_CORNERS;

struct Allocator {
  const char* name;
  const char* library;  // found at configure time; empty when missing
  const char* package;
};

const Allocator kAllocators[] = {
    {"jemalloc", JEMALLOC_SO, "libjemalloc2"},
    {"tcmalloc", TCMALLOC_SO, "libtcmalloc-minimal4"},
    {"mimalloc", MIMALLOC_SO, "libmimalloc2.0"},
};

// Test names and messages say which allocator.
void PrintTo(const Allocator& allocator, std::ostream* out) { *out << allocator.name; }

std::pair<std::int64_t, std::int64_t> spike_and_leak(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(spike=(\d+) leak=(\d+))"))) return {-1, -1};
  return {std::stoll(m[1]), std::stoll(m[2])};
}

class PreloadedAllocator : public heapline::test::TempDirFixture<::testing::TestWithParam<Allocator>> {
 protected:
  PreloadedAllocator() : TempDirFixture(GetParam().name) {}
  void SetUp() override {
    ASSERT_NE(std::string(GetParam().library), "")
        << GetParam().name << " is not installed: tools/setup.sh --test installs " << GetParam().package;
    TempDirFixture::SetUp();
  }

  // heapline first, the allocator after it: heapline forwards to it.
  RunResult run_under(bool with_heapline, const std::vector<std::string>& argv, const std::string& name,
                      std::map<std::string, std::optional<std::string>> env = {}) {
    const std::string library = GetParam().library;
    return run(argv, preload_options(with_heapline ? kLib + ":" + library : library, dir_, name, std::move(env)));
  }

  // HEAPLINE_SAMPLE=off unless a test asks for the sampler: these runs
  // compare exact figures between runs.
  json report(const std::vector<std::string>& argv, const std::string& name,
              std::map<std::string, std::optional<std::string>> env = {}, std::string* out = nullptr) {
    env.emplace("HEAPLINE_SAMPLE", "off");
    RunResult alone = run_under(false, argv, "unused.json");
    RunResult watched = run_under(true, argv, name, std::move(env));
    EXPECT_EQ(alone.exit_code, 0) << alone.err;
    EXPECT_EQ(watched.exit_code, 0) << watched.err;
    EXPECT_EQ(watched.out, alone.out);  // the program's output is unchanged
    EXPECT_EQ(watched.err, "");
    if (out) *out = watched.out;
    if (!fs::exists(dir_ / name)) {
      ADD_FAILURE() << "no output file " << name;
      return json::object();
    }
    json r = read_json(dir_ / name);
    EXPECT_EQ(heapline_format_problem(r), "");
    EXPECT_EQ(r["allocator"], "foreign");
    EXPECT_EQ(r["size_basis"], "usable-size");
    // The allocator's arenas are its blocks' memory: heap, not mapped.
    EXPECT_EQ(r["mapped"]["peak_bytes"], 0) << "the allocator's own mappings were counted";
    return r;
  }
};

std::int64_t peak(const json& r) { return r.at("peak_bytes").get<std::int64_t>(); }
std::int64_t final_bytes(const json& r) { return r.at("final_bytes").get<std::int64_t>(); }
std::int64_t bound(const json& r) { return r.at("precision").at("bound_bytes").get<std::int64_t>(); }

TEST_P(PreloadedAllocator, KnownPatternExactPeakAndExactFinal) {
  std::string out;
  const std::vector<std::string> argv{kPatterns, "single", "usable", "4000", "100"};
  json exact = report(argv, "exact.json", {{"HEAPLINE_PRECISION", "exact"}}, &out);
  auto [spike, leak] = spike_and_leak(out);
  ASSERT_GT(spike, 1'000'000) << out;
  EXPECT_EQ(peak(exact) - final_bytes(exact), spike - leak);
  json batched = report(argv, "batched.json");
  EXPECT_EQ(final_bytes(batched), final_bytes(exact));
  EXPECT_LE(std::llabs(peak(batched) - final_bytes(batched) - (spike - leak)), bound(batched));
  // Every block freed but the leak: the final figure is that of a run that
  // allocates nothing, plus the leak (a call counted a byte off, in or out,
  // leaves a trace here that peak minus final cannot show).
  json nothing = report({kPatterns, "single", "usable", "0", "0"}, "nothing.json");
  EXPECT_EQ(final_bytes(batched) - final_bytes(nothing), leak);
}

TEST_P(PreloadedAllocator, ThreadsThatFreeEachOthersBlocks) {
  std::string out;
  const std::vector<std::string> argv{kPatterns, "threads", "usable", "4", "2000", "50"};
  json exact = report(argv, "exact.json", {{"HEAPLINE_PRECISION", "exact"}}, &out);
  auto [spike, leak] = spike_and_leak(out);
  EXPECT_EQ(peak(exact) - final_bytes(exact), spike - leak);
  json batched = report(argv, "batched.json");
  EXPECT_EQ(final_bytes(batched), final_bytes(exact));
  EXPECT_LE(std::llabs(peak(batched) - final_bytes(batched) - (spike - leak)), bound(batched));
}

// The sampler on, every block sampled: what the unwinder and the loader
// allocate for it goes to the preloaded allocator too, and is the library's
// own, never the program's heap: the calls counted are the program's
// alone, and where the program sees the same blocks (the same output), the
// figures are those without the sampler. (With threads the loader's
// per-thread vector of TLS modules has one entry more for libunwind's, a
// block of glibc's made for the program's thread: its size class may grow.
// mimalloc may place the program's own blocks differently beside the
// unwinder's, which the program then sees in their usable sizes.)
TEST_P(PreloadedAllocator, TheSamplersOwnBlocksAreNeverTheProgramsHeap) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{kPatterns, "single", "usable", "4000", "100"},
        std::vector<std::string>{kPatterns, "threads", "usable", "4", "2000", "50"}}) {
    SCOPED_TRACE(argv[1]);
    RunResult off = run_under(true, argv, "off.json", {{"HEAPLINE_PRECISION", "exact"}, {"HEAPLINE_SAMPLE", "off"}});
    RunResult every = run_under(true, argv, "every.json", {{"HEAPLINE_PRECISION", "exact"}, {"HEAPLINE_SAMPLE", "1"}});
    ASSERT_EQ(off.exit_code, 0) << off.err;
    ASSERT_EQ(every.exit_code, 0) << every.err;
    const json without = read_json(dir_ / "off.json");
    const json with = read_json(dir_ / "every.json");
    EXPECT_GT(with["sampling"]["samples"].get<std::int64_t>(), 1000) << with["sampling"].dump();
    EXPECT_EQ(with["calls"], without["calls"]);
    if (argv[1] == "single" && every.out == off.out) {
      EXPECT_EQ(final_bytes(with), final_bytes(without));
      EXPECT_EQ(peak(with), peak(without));
    }
  }
}

// Every function of the allocation API that every allocator here defines,
// at its corners (zero sizes, overflows, bad alignments, realloc to zero,
// NULL), forwarded to the allocator: what each returns, and errno, is what
// the allocator alone gives, with the sampler off and with it taking every
// block.
TEST_P(PreloadedAllocator, ApiCornersBehaveAsUnderTheAllocatorAlone) {
  for (const char* sample : {"off", "1"}) {
    SCOPED_TRACE(std::string("HEAPLINE_SAMPLE=") + sample);
    RunResult alone = run_under(false, {kCorners, "common"}, "unused.json");
    RunResult watched = run_under(true, {kCorners, "common"}, "corners.json", {{"HEAPLINE_SAMPLE", sample}});
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    EXPECT_EQ(watched.exit_code, 0) << watched.err;
    EXPECT_EQ(watched.err, "");
    EXPECT_EQ(watched.out, alone.out);
    EXPECT_NE(alone.out.find("aligned_alloc"), std::string::npos) << alone.out;
    EXPECT_EQ(heapline_format_problem(read_json(dir_ / "corners.json")), "");
  }
}

TEST_P(PreloadedAllocator, ProgramMappingsCountAndTheAllocatorsDoNot) {
  std::string out;
  RunResult alone = run_under(false, {kMappedPatterns, "kinds"}, "unused.json");
  RunResult watched = run_under(true, {kMappedPatterns, "kinds"}, "kinds.json");
  ASSERT_EQ(watched.exit_code, 0) << watched.err;
  EXPECT_EQ(watched.out, alone.out);
  json r = read_json(dir_ / "kinds.json");
  EXPECT_EQ(r["mapped"]["peak_bytes"], 16 << 20);
  EXPECT_EQ(r["mapped"]["final_bytes"], 12 << 20);
}

TEST_P(PreloadedAllocator, ForkChildAndParentEachWriteTheirOwnFigures) {
  RunResult result = run_under(true, {kMappedPatterns, "fork"}, "fork.%p.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+))"))) << result.out;
  json parent = read_json(dir_ / ("fork." + std::string(m[1]) + ".json"));
  json child = read_json(dir_ / ("fork." + std::string(m[2]) + ".json"));
  EXPECT_EQ(heapline_format_problem(parent), "");
  EXPECT_EQ(heapline_format_problem(child), "");
  EXPECT_EQ(child["mapped"]["final_bytes"], 5 << 20);
  EXPECT_EQ(parent["mapped"]["final_bytes"], 3 << 20);
  EXPECT_EQ(child["allocator"], "foreign");
}

INSTANTIATE_TEST_SUITE_P(Debian, PreloadedAllocator, ::testing::ValuesIn(kAllocators),
                         [](const ::testing::TestParamInfo<Allocator>& info) { return std::string(info.param.name); });

}  // namespace
