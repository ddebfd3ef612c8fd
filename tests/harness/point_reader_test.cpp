// The one reader of the point schema: what it accepts and refuses, the same
// for every command, and how older points are read.
#include "heapline_bench/history/point_reader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "heapline_bench/history/history.h"

namespace heapline::bench {
namespace {

constexpr const char* kSchema1 =
    R"({"schema":1,"scenario":"churn-4t","commit":"abcdef0","measured_at":"2026-01-01T00:00:00Z","overhead":0.05,)"
    R"("interval":[0.01,0.09],"runs":3,"timing":"command","heapline_version":"0.4.0",)"
    R"("raw":{"with":[{"wall_s":1.0,"user_s":1.0,"sys_s":0.1,"max_rss_kib":10},)"
    R"({"wall_s":1.0,"user_s":1.2,"sys_s":0.1,"max_rss_kib":10},{"wall_s":1.0,"user_s":1.1,"sys_s":0.1,"max_rss_kib":10}],)"
    R"("without":[{"wall_s":1.0,"user_s":1.0,"sys_s":0.0,"max_rss_kib":9},{"wall_s":1.0,"user_s":1.0,"sys_s":0.0,"max_rss_kib":9},)"
    R"({"wall_s":1.0,"user_s":1.0,"sys_s":0.0,"max_rss_kib":9}]}})";

TEST(PointReader, SchemaOnePointsGetTheirCpuFigureFromTheirRawRuns) {
  const auto read = read_points(std::string(kSchema1) + "\n", "old", RawTimes::skip);
  ASSERT_TRUE(read.problems.empty()) << read.problems.front().describe();
  const History history = history_of(read);
  ASSERT_EQ(history.entries.size(), 1u);
  const FigureValue cpu = history.entries[0].cpu;
  ASSERT_TRUE(cpu.present);
  EXPECT_NEAR(cpu.overhead, 0.2, 1e-12) << "median user+sys 1.2 with, 1.0 without";
  EXPECT_FALSE(cpu.interval_known);
  EXPECT_FALSE(history.entries[0].instructions.present) << "schema 1 had no instruction figure";
  EXPECT_DOUBLE_EQ(history.entries[0].scale, 1.0);
}

TEST(PointReader, ReadsTheNewFiguresOfSchemaTwo) {
  const std::string line =
      R"({"schema":2,"scenario":"churn-1t","measured_at":"2026-01-01T00:00:00Z","overhead":0.05,"interval":[0.01,0.09],)"
      R"("scale":0.5,"cpu":{"overhead":0.03,"interval":[0.02,0.04]},"instructions":{"overhead":0.12,"with":112,"without":100},)"
      R"("library_report":{"publishes_per_1000_calls":5.5,"extra_peak_rss_kib":64}})";
  const History history = history_of(read_points(line + "\n", "new", RawTimes::skip));
  ASSERT_EQ(history.entries.size(), 1u);
  const auto& e = history.entries[0];
  EXPECT_DOUBLE_EQ(e.scale, 0.5);
  EXPECT_DOUBLE_EQ(e.cpu.overhead, 0.03);
  EXPECT_DOUBLE_EQ(e.cpu.high, 0.04);
  EXPECT_TRUE(e.instructions.present);
  EXPECT_DOUBLE_EQ(e.instructions.overhead, 0.12);
  EXPECT_DOUBLE_EQ(*e.publishes_per_1000_calls, 5.5);
  EXPECT_EQ(*e.extra_peak_rss_kib, 64);
}

TEST(PointReader, AFutureSchemaIsRefusedNotGuessed) {
  const auto read = read_points(R"({"schema":3,"measured_at":"x","overhead":0})" "\n", "f", RawTimes::read);
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_NE(read.problems[0].reason.find("newer"), std::string::npos);
}

// A file is parsed where it is mapped except its last lines, which are
// copied for simdjson's padding: whatever the length of those last lines, a
// file gives what the same text gives, with the same line numbers, and a
// file read through the sink gives the same points.
TEST(PointReader, AFileReadsLikeItsTextWhateverTheLengthOfItsLastLines) {
  const std::string path = ::testing::TempDir() + "/point-reader-tail.jsonl";
  for (const std::string& tail : std::vector<std::string>{"", "{}\n", "\n\n", "{\"torn", std::string(100, ' ') + "\n", kSchema1}) {
    std::string text;
    // Distinct points: the same point twice is a duplicate.
    auto numbered = [](int i) {
      std::string line = kSchema1;
      return line.replace(line.find("\"abcdef0\""), 9, "\"abcdef" + std::to_string(i) + "\"");
    };
    for (int i = 0; i < 3; ++i) text += numbered(i) + "\n";
    text += "not json\n";
    text += numbered(3) + "\n" + (tail == kSchema1 ? numbered(4) : tail);
    std::ofstream(path, std::ios::trunc | std::ios::binary) << text;
    const auto from_text = read_points(text, path, RawTimes::read);
    const auto from_file = read_points_file(path, RawTimes::read);
    ASSERT_EQ(from_file.points.size(), from_text.points.size()) << "tail '" << tail << "'";
    EXPECT_EQ(from_file.lines, from_text.lines);
    ASSERT_EQ(from_file.problems.size(), from_text.problems.size());
    for (std::size_t i = 0; i < from_file.problems.size(); ++i)
      EXPECT_EQ(from_file.problems[i].describe(), from_text.problems[i].describe());
    EXPECT_EQ(from_file.problems[0].line, 4);
    std::vector<int> sunk;
    std::vector<StoreProblem> problems;
    scan_points_file(path, RawTimes::read, [&](Point&&, int line) { sunk.push_back(line); }, problems);
    EXPECT_EQ(sunk, from_text.lines);
    EXPECT_EQ(problems.size(), from_text.problems.size());
  }
}

// The defects of the readers' disagreement, each a line that one command
// once used and another refused or read differently: every reader refuses
// each of them, for the same reason, whatever it keeps of a point.
TEST(PointReader, EveryReaderRefusesTheSameLinesForTheSameReason) {
  const std::string good =
      R"({"schema":2,"scenario":"churn-1t","commit":"abcdef0","measured_at":"2026-03-01T12:00:00Z","overhead":0.05,)"
      R"("interval":[0.01,0.09],"raw":{"with":[{"wall_s":1.0}],"without":[{"wall_s":1.0}]}})";
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string line = good;
    return line.replace(line.find(from), from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good.substr(0, good.size() - 1) + std::string(1, '\0') + "}", "not valid JSON"},  // a raw NUL before the last }
      {good + good, "not valid JSON"},                                                   // two points glued
      {replaced("\"abcdef0\"", "\"\xC0\xAF\""), "not valid JSON"},                          // overlong UTF-8
      {replaced("\"abcdef0\"", "\"\\ud800\""), "not valid JSON"},                           // a lone surrogate
      {replaced("\"abcdef0\"", "\"a\tb\""), "not valid JSON"},                               // a raw control character
      {replaced("\"abcdef0\"", "\"a\\nb\""), "field \"commit\" holds a control character (U+000A)"},
      // C1 controls (Unicode's Cc, as C0): U+009B is CSI to a terminal, U+0085 a line break.
      {replaced("\"abcdef0\"", "\"a\\u009bb\""), "field \"commit\" holds a control character (U+009B)"},
      {replaced("\"abcdef0\"", "\"a\xC2\x85" "b\""), "field \"commit\" holds a control character (U+0085)"},
      {replaced("\"abcdef0\"", "\"a\\u0080\""), "field \"commit\" holds a control character (U+0080)"},
      {replaced("0.05,", "0.05,\"overhead\":0.5,"), "field \"overhead\" appears twice"},
      {replaced("\"wall_s\":1.0}],\"without\"", "\"wall_s\":1.0,\"wall_s\":2}],\"without\""),
       "field \"raw.with[0].wall_s\" appears twice"},
      {replaced("0.05,", "1e400,"), "a number beyond any field's range"},
      {replaced("0.05,", "100000000000000000000000,"), "a number beyond any field's range"},
      {good.substr(0, good.size() - 2), "not valid JSON (cut short: the line ends inside a value)"},
      {replaced("2026-03-01T12:00:00Z", "Sun, 01 Mar 2026 12:00:00 GMT"),
       "field \"measured_at\" must be a UTC time as RFC 3339 writes it (\"2026-03-01T12:00:00Z\", 1970 to 2261), got \"Sun, 01 Mar "
       "2026 12:00:00 GMT\""},
      {replaced("2026-03-01T12:00:00Z", "2026-02-30T12:00:00Z"), "must be a UTC time"},
      {replaced("2026-03-01T12:00:00Z", "2026-03-01T12:00:60Z"), "must be a UTC time"},  // a second 60
      // Past 2262-04-11 the nanoseconds since 1970 overflow 64 bits.
      {replaced("2026-03-01T12:00:00Z", "4052-12-01T18:59:06Z"), "must be a UTC time"},
      {replaced("2026-03-01T12:00:00Z", "1969-12-31T23:59:59Z"), "must be a UTC time"},
      {replaced("2026-03-01T12:00:00Z", "2026-03-01T12:00:00+01:00"), "must be a UTC time"},
      {replaced("[{\"wall_s\":1.0}],\"without\"", "\"fast\",\"without\""), "field \"raw.with\" must be an array of runs"},
  };
  const std::string path = ::testing::TempDir() + "/point-reader-agreement.jsonl";
  for (const auto& [line, reason] : cases) {
    const std::string text = good + "\n" + line + "\n";
    std::ofstream(path, std::ios::trunc | std::ios::binary) << text;
    std::vector<std::pair<std::string, PointsRead>> reads;
    reads.emplace_back("text, every field", read_points(text, path, RawTimes::read));
    reads.emplace_back("text, figures only", read_points(text, path, RawTimes::skip));
    reads.emplace_back("file, every field", read_points_file(path, RawTimes::read));
    reads.emplace_back("file, figures only", read_points_file(path, RawTimes::skip));
    for (const auto& [how, read] : reads) {
      ASSERT_EQ(read.points.size(), 1u) << how << ": " << line;
      ASSERT_EQ(read.problems.size(), 1u) << how << ": " << line;
      EXPECT_EQ(read.problems[0].line, 2) << how;
      EXPECT_NE(read.problems[0].reason.find(reason), std::string::npos) << how << ": " << read.problems[0].reason;
      EXPECT_EQ(read.problems[0].reason, reads[0].second.problems[0].reason) << how;
    }
    const History history = read_history(path);
    EXPECT_EQ(history.entries.size(), 1u) << line;
    ASSERT_EQ(history.problems.size(), 1u) << line;
    EXPECT_EQ(history.problems[0].reason, reads[0].second.problems[0].reason);
    EXPECT_THROW(parse_point_line(line), std::runtime_error) << line;
  }
}

}  // namespace
}  // namespace heapline::bench
