// Process-level tests of the mapped-memory series (mapped_memory.h): known
// mapping patterns, errno and results as without the library, threads,
// fork, the setting that turns it off, and Python's arenas against what the
// interpreter itself says it holds.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <string>

#include "process_runner.h"

namespace fs = std::filesystem;
using heapline::test::heapline_format_problem;
using heapline::test::parse_keys;
using heapline::test::preload_options;
using heapline::test::read_json;
using heapline::test::run;
using heapline::test::RunOptions;
using heapline::test::RunResult;
using nlohmann::json;

namespace {

const std::string kLib = HEAPLINE_LIB;
const std::string kNullLib = HEAPLINE_NULL_LIB;
const std::string kMappedPatterns = MAPPED_PATTERNS;
const std::string kPythonTruth = PYTHON_TRUTH;
const std::string kPython = "/usr/bin/python3";

std::int64_t mapped_peak(const json& r) { return r.at("mapped").at("peak_bytes").get<std::int64_t>(); }
std::int64_t mapped_final(const json& r) { return r.at("mapped").at("final_bytes").get<std::int64_t>(); }

class Mapped : public heapline::test::TempDirTest {
 protected:
  Mapped() : TempDirTest("mapped") {}

  RunResult run_with(const std::string& preload, const std::vector<std::string>& argv, const std::string& name,
                     std::map<std::string, std::optional<std::string>> env = {}) {
    return run(argv, preload_options(preload, dir_, name, std::move(env)));
  }

  json report(const std::vector<std::string>& argv, const std::string& name,
              std::map<std::string, std::optional<std::string>> env = {}, std::string* out = nullptr) {
    RunResult result = run_with(kLib, argv, name, std::move(env));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    if (out) *out = result.out;
    if (!fs::exists(dir_ / name)) {
      ADD_FAILURE() << "no output file " << name;
      return json::object();
    }
    json r = read_json(dir_ / name);
    EXPECT_EQ(heapline_format_problem(r), "");
    return r;
  }
};

TEST_F(Mapped, EveryKindOfMappingCountsExactlyWhatTheProgramHolds) {
  std::string out;
  json r = report({kMappedPatterns, "kinds"}, "kinds.json", {{"HEAPLINE_PRECISION", "exact"}}, &out);
  auto expected = parse_keys(out);
  ASSERT_EQ(expected["mapped_peak"], 16 << 20) << out;
  EXPECT_EQ(r["mapped"]["mode"], "on");
  EXPECT_EQ(mapped_peak(r), expected["mapped_peak"]);
  EXPECT_EQ(mapped_final(r), expected["mapped_final"]);
  EXPECT_EQ(r["mapped"]["untracked"], 0);
  // glibc's 32 MiB block went through its internal mmap: heap, not mapped.
  EXPECT_GE(r["peak_bytes"].get<std::int64_t>(), 32 << 20);
  // The 32 MiB block is held across the mapped peak: the peak of the sum
  // holds both, and is never above the sum of the two peaks.
  const std::int64_t total_peak = r["total"]["peak_bytes"].get<std::int64_t>();
  EXPECT_GE(total_peak, (32 << 20) + mapped_peak(r));
  EXPECT_LE(total_peak, r["peak_bytes"].get<std::int64_t>() + mapped_peak(r));
  EXPECT_EQ(r["total"]["final_bytes"].get<std::int64_t>(), r["final_bytes"].get<std::int64_t>() + mapped_final(r));
}

TEST_F(Mapped, ResultsAndErrnoAreThoseOfTheSystemCalls) {
  RunResult without = run_with("", {kMappedPatterns, "errno"}, "none.json");
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(without.out.find("mmap anonymous works errno=kept"), std::string::npos) << without.out;
  EXPECT_NE(without.out.find("mmap bad fd fails errno=EBADF"), std::string::npos) << without.out;
  EXPECT_NE(without.out.find("munmap again works errno=kept"), std::string::npos) << without.out;
  RunResult with = run_with(kLib, {kMappedPatterns, "errno"}, "with.json");
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(with.err, "");
  RunResult with_null = run_with(kNullLib, {kMappedPatterns, "errno"}, "null.json");
  EXPECT_EQ(with_null.out, without.out);
  RunResult with_off = run_with(kLib, {kMappedPatterns, "errno"}, "off.json", {{"HEAPLINE_MAPPED", "off"}});
  EXPECT_EQ(with_off.out, without.out);
}

TEST_F(Mapped, ThreadsThatSplitAndUnmapLeaveTheExactFinalFigure) {
  std::string out;
  json r = report({kMappedPatterns, "threads", "8"}, "threads.json", {}, &out);
  auto expected = parse_keys(out);
  ASSERT_EQ(expected["mapped_final"], 36 * 65536) << out;  // (1 + ... + 8) × 64 KiB
  EXPECT_EQ(mapped_final(r), expected["mapped_final"]);
  EXPECT_GE(mapped_peak(r), expected["mapped_final"]);
  EXPECT_LE(mapped_peak(r), expected["mapped_final"] + 8 * 256 * 1024);
  EXPECT_GE(r["mapped"]["changes"].get<std::int64_t>(), 8 * 200 * 3);
}

TEST_F(Mapped, ForkChildStartsFromTheInheritedMappings) {
  RunResult result = run_with(kLib, {kMappedPatterns, "fork"}, "fork.%p.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(parent=(\d+) child=(\d+))"))) << result.out;
  json parent = read_json(dir_ / ("fork." + std::string(m[1]) + ".json"));
  json child = read_json(dir_ / ("fork." + std::string(m[2]) + ".json"));
  EXPECT_EQ(mapped_final(child), 5 << 20);
  EXPECT_EQ(mapped_peak(child), 5 << 20);
  EXPECT_EQ(mapped_final(parent), 3 << 20);
  EXPECT_EQ(mapped_peak(parent), 4 << 20);
}

// A fork child's peaks start from what it inherited: the mappings it got
// from its parent count in its total peak, as the API gives it, after it
// has unmapped them.
TEST_F(Mapped, AForkChildsTotalPeakStartsFromWhatItInherited) {
  RunResult result = run_with(kLib, {kMappedPatterns, "fork-drop"}, "drop.%p.json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(result.out, m, std::regex(R"(child_total_peak=(\d+))"))) << result.out;
  EXPECT_GE(std::stoll(m[1]), std::int64_t{4} << 20);
}

TEST_F(Mapped, OffCountsNothingAndSaysSo) {
  std::string out;
  json r = report({kMappedPatterns, "kinds"}, "off.json", {{"HEAPLINE_MAPPED", "off"}}, &out);
  EXPECT_EQ(r["mapped"]["mode"], "off");
  EXPECT_EQ(mapped_peak(r), 0);
  EXPECT_EQ(mapped_final(r), 0);
  EXPECT_EQ(r["mapped"]["changes"], 0);
  EXPECT_EQ(r["total"]["peak_bytes"], r["peak_bytes"]);
  // No mapped series either: nothing was sampled, not a series of zeros.
  EXPECT_EQ(r["mapped_samples"], json::array()) << r["mapped_samples"].dump();

  RunResult bad = run_with(kLib, {kMappedPatterns, "kinds"}, "bad.json", {{"HEAPLINE_MAPPED", "sometimes"}});
  EXPECT_EQ(bad.exit_code, 0);
  EXPECT_EQ(bad.err,
            "heapline: HEAPLINE_MAPPED='sometimes' is not valid (expected on or 1, off or 0); using the default on\n");
  EXPECT_EQ(read_json(dir_ / "bad.json")["mapped"]["mode"], "on");
}

// --- Python: arenas outside malloc ------------------------------------------

struct Truth {
  std::int64_t arenas = 0, malloc = 0, total = 0, rss = 0;
};

Truth python_truth(const std::string& tuples, const std::string& buffers_mib) {
  RunOptions plain;
  plain.env["LD_PRELOAD"] = std::nullopt;
  RunResult result = run({kPython, kPythonTruth, tuples, buffers_mib, "truth"}, plain);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  auto values = parse_keys(result.out);
  return {values["arenas"], values["malloc"], values["total"], values["rss"]};
}

TEST_F(Mapped, PythonHeapPlusMappedPeakIsWithinAFewPercentOfWhatTheInterpreterHolds) {
  // 600 000 tuples (about 70 MiB of small objects in arenas) and 64 MiB of
  // one-MiB buffers (glibc's mapped blocks).
  Truth truth = python_truth("600000", "64");
  ASSERT_GT(truth.arenas, 50 << 20);
  ASSERT_GT(truth.malloc, 64 << 20);
  std::string out;
  json r = report({kPython, kPythonTruth, "600000", "64", "run"}, "python.json", {}, &out);
  EXPECT_EQ(out, "tuples=600000 buffers_mib=64\n");
  const double total_peak = r["total"]["peak_bytes"].get<double>();
  EXPECT_NEAR(total_peak / static_cast<double>(truth.total), 1.0, 0.03)
      << "heapline heap+mapped peak " << total_peak << ", interpreter " << truth.total;
  // The arenas are in the mapped series, the buffers in the heap.
  EXPECT_NEAR(mapped_peak(r) / static_cast<double>(truth.arenas), 1.0, 0.03);
  // Without the mapped series the peak misses the arenas.
  json off = report({kPython, kPythonTruth, "600000", "64", "run"}, "python-off.json", {{"HEAPLINE_MAPPED", "off"}});
  EXPECT_LT(off["total"]["peak_bytes"].get<double>(), 0.7 * static_cast<double>(truth.total));
}

}  // namespace
