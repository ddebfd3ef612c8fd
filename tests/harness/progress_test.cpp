// The progress of a long measurement: what each line says, and how often a
// log gets one (tools/bench.sh on a fresh clone: a line at least every 10 s
// of a long scenario, never one per second).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "heapline_bench/reports/progress_line.h"

namespace heapline::bench {
namespace {

TEST(Progress, ALineSaysTheRunItsSideTheTimeElapsedAndWhatIsLeft) {
  EXPECT_EQ(progress_text("[2/5] ", "churn-4t", {2, Side::with_library}, 10, 65, 130),
            "[2/5] churn-4t: run 3/10 with the library, 1 min 05 s elapsed, ~2 min 10 s left");
  EXPECT_EQ(progress_text("", "large-4t", {-1, Side::without_library}, 10, 4.3, -1),
            "large-4t: warm-up without the library, 4.3 s elapsed");
  EXPECT_EQ(duration_text(42), "42 s");
  EXPECT_EQ(duration_text(3725), "1 h 02 min");
}

// Events and ticks at fake times, into a memory file.
struct Recorded {
  std::vector<std::string> lines;
  std::string raw;
};

Recorded run_with(bool terminal, const std::vector<std::pair<double, bool>>& moments) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  double now = 0;
  MeasurementRequest request;
  request.scenario = "large-4t";
  request.runs = 10;
  {
    ProgressLine progress("[1/1] ", out, terminal, 10, [&] { return now; });
    int pair = 0;
    for (const auto& [at, is_event] : moments) {
      now = at;
      if (is_event) {
        progress.show({&request, pair, 22, {pair, Side::with_library}, 100 - at});
        ++pair;
      } else {
        progress.tick();
      }
    }
  }
  std::fclose(out);
  Recorded recorded;
  recorded.raw.assign(buffer, size);
  std::free(buffer);
  std::size_t start = 0;
  while (start < recorded.raw.size()) {
    const std::size_t end = recorded.raw.find('\n', start);
    if (end == std::string::npos) break;
    recorded.lines.push_back(recorded.raw.substr(start, end - start));
    start = end + 1;
  }
  return recorded;
}

TEST(Progress, ALogGetsAPlainLineAtTheFirstRunThenAtMostAndAtLeastEveryTenSeconds) {
  // Runs at 0, 3 and 7 s, then one run that lasts 40 s: the ticks between
  // runs carry the line on.
  std::vector<std::pair<double, bool>> moments = {{0, true}, {3, true}, {7, true}};
  for (double t = 8; t <= 47; t += 1) moments.push_back({t, false});
  moments.push_back({47.5, true});
  const auto recorded = run_with(false, moments);
  ASSERT_EQ(recorded.lines.size(), 5u) << recorded.raw;
  EXPECT_EQ(recorded.lines[0], "[1/1] large-4t: run 1/10 with the library, 0.0 s elapsed, ~1 min 40 s left");
  EXPECT_EQ(recorded.lines[1], "[1/1] large-4t: run 3/10 with the library, 10 s elapsed, ~1 min 30 s left");
  EXPECT_EQ(recorded.lines[4], "[1/1] large-4t: run 3/10 with the library, 40 s elapsed, ~1 min 00 s left");
  EXPECT_EQ(recorded.raw.find('\r'), std::string::npos) << "no terminal control in a log";
}

TEST(Progress, ATerminalLineIsRedrawnInPlaceAndErasedAtTheEnd) {
  const auto recorded = run_with(true, {{0, true}, {1, false}, {2, true}});
  EXPECT_TRUE(recorded.lines.empty()) << recorded.raw;
  EXPECT_NE(recorded.raw.find("\r\033[K[1/1] large-4t: run 2/10 with the library, 2.0 s elapsed, ~1 min 38 s left"),
            std::string::npos)
      << recorded.raw;
  EXPECT_EQ(recorded.raw.substr(recorded.raw.size() - 4), "\r\033[K");
}

// A command clears the line before it prints its results (suite, compare,
// overhead): the line is erased once, and what the command prints next is
// left alone when the progress line ends.
TEST(Progress, AClearedLineIsErasedOnceAndWhatFollowsIsLeftAlone) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  double now = 0;
  MeasurementRequest request;
  request.scenario = "churn-1t";
  request.runs = 10;
  {
    ProgressLine progress("", out, true, 10, [&] { return now; });
    progress.show({&request, 0, 22, {0, Side::with_library}, 50});
    progress.clear();
    std::fputs("results\n", out);
  }
  std::fclose(out);
  const std::string raw(buffer, size);
  std::free(buffer);
  const std::string erase = "\r\033[K";
  ASSERT_GE(raw.size(), erase.size() + 8) << raw;
  EXPECT_EQ(raw.substr(raw.size() - erase.size() - 8), erase + "results\n") << raw;
}

}  // namespace
}  // namespace heapline::bench
