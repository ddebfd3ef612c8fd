#include "heapline_bench/history/store.h"
#include "heapline_bench/verdicts/verdict.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "heapline_bench/history/history.h"

namespace heapline::bench {
namespace {

// A commit's SHA for a name a test gives it (a point names commits by SHA).
std::string sha(const std::string& name) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ULL;
  char text[41];
  std::snprintf(text, sizeof text, "%016llx%016llx%08x", static_cast<unsigned long long>(hash),
                static_cast<unsigned long long>(hash * 31), static_cast<unsigned>(hash >> 7));
  return text;
}

Point make_point(const std::string& scenario, const std::string& commit, double overhead) {
  Point p;
  p.scenario = scenario;
  p.commit = sha(commit);
  p.measured_at = "2026-11-30T00:00:00Z";
  p.overhead = overhead;
  p.interval = {overhead - 0.01, overhead + 0.01};
  p.runs = 1;
  p.with_runs = {{1.0 + overhead, 1, 0, 10}};
  p.without_runs = {{1.0, 1, 0, 10}};
  p.heapline_version = "0.1.0";
  p.machine = {"cpu", 2, "6.1", "2.36", "gcc", ""};
  p.fingerprint = p.machine.fingerprint();
  return p;
}

// Runs work(i) in `count` child processes at once and expects each to exit 0:
// concurrent writers are separate processes, as two CI jobs or imports are.
template <typename Work>
void in_concurrent_processes(int count, Work work) {
  std::vector<pid_t> children;
  for (int i = 0; i < count; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      work(i);
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("heapline-store-test-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string raw_text() const {
    std::ifstream in(dir / "points.jsonl");
    return {std::istreambuf_iterator<char>(in), {}};
  }
  std::filesystem::path dir;
};

TEST_F(StoreTest, MissingStoreIsEmpty) {
  Store store(dir.string());
  EXPECT_TRUE(store.read().points.empty());
  EXPECT_TRUE(store.read().problems.empty());
  EXPECT_TRUE(read_history(store.points_path()).entries.empty());
}

TEST_F(StoreTest, AppendsOneLinePerPointAndReadsThemBackInOrder) {
  Store store(dir.string());
  store.append(make_point("churn-1t", "a1", 0.01));
  store.append({make_point("churn-4t", "a1", 0.02), make_point("python", "a1", 0.03)});
  auto contents = store.read();
  ASSERT_EQ(contents.points.size(), 3u);
  EXPECT_EQ(contents.points[0].scenario, "churn-1t");
  EXPECT_EQ(contents.points[2].scenario, "python");
  EXPECT_EQ(contents.lines, (std::vector<int>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(contents.points[1].with_runs[0].wall_seconds, 1.02);
  const std::string text = raw_text();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST_F(StoreTest, MalformedLineIsReportedWithItsNumberAndTheOthersStillRead) {
  Store store(dir.string());
  store.append(make_point("churn-1t", "a1", 0.01));
  { std::ofstream(dir / "points.jsonl", std::ios::app) << "{\"overhead\": oops}\n"; }
  store.append(make_point("churn-1t", "a2", 0.02));
  auto contents = store.read();
  ASSERT_EQ(contents.points.size(), 2u);
  ASSERT_EQ(contents.problems.size(), 1u);
  EXPECT_EQ(contents.problems[0].line, 2);
  EXPECT_NE(contents.problems[0].describe().find("points.jsonl:2: "), std::string::npos);
  auto history = read_history(store.points_path());
  EXPECT_EQ(history.entries.size(), 2u);
  ASSERT_EQ(history.problems.size(), 1u);
  EXPECT_EQ(history.problems[0].line, 2);
}

// A writer killed mid-write leaves a line without its newline. The next
// append (or import) moves it to a file of its own beside the store, says
// where, and cuts the store back to its last whole line: nothing is lost,
// and the store is whole again for every reader and for later imports.
TEST_F(StoreTest, ATornLastLineIsMovedAsideByTheNextAppendAndLostNowhere) {
  std::vector<std::string> notes;
  Store store(dir.string(), [&](const std::string& note) { notes.push_back(note); });
  store.append(make_point("churn-1t", "a1", 0.01));
  const std::string whole = raw_text();
  const std::string torn_tail = "{\"schema\": 1, \"scena";
  { std::ofstream(dir / "points.jsonl", std::ios::app) << torn_tail; }  // a crash mid-write
  auto torn = store.read();
  ASSERT_EQ(torn.problems.size(), 1u);
  EXPECT_EQ(torn.problems[0].line, 2);
  EXPECT_NE(torn.problems[0].reason.find("incomplete"), std::string::npos);

  EXPECT_EQ(store.append_new({make_point("churn-1t", "a2", 0.02)}), 1u) << "an import is not blocked by it";
  auto after = store.read();
  EXPECT_EQ(after.points.size(), 2u);
  EXPECT_TRUE(after.problems.empty()) << after.problems.front().describe();
  EXPECT_EQ(raw_text().substr(0, whole.size()), whole) << "the whole lines are untouched";
  ASSERT_EQ(notes.size(), 1u);
  const auto moved_to = notes[0].find("moved to ");
  ASSERT_NE(moved_to, std::string::npos) << notes[0];
  const std::string aside = notes[0].substr(moved_to + 9, notes[0].find(';', moved_to) - moved_to - 9);
  std::ifstream in(aside);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), torn_tail) << "kept byte for byte in " << aside;
  EXPECT_EQ(std::filesystem::path(aside).parent_path(), dir);
}

// A last line that lacks only its newline but holds a whole, valid point
// (an editor dropped the final newline) is that point: read by every
// reader, kept by the next append, which first completes it with the
// newline (an append of its own) and says so; nothing is moved aside.
TEST_F(StoreTest, AWholeLastPointWithoutItsNewlineIsKeptAndCompletedByTheNextAppend) {
  std::vector<std::string> notes;
  Store store(dir.string(), [&](const std::string& note) { notes.push_back(note); });
  store.append(make_point("churn-1t", "a1", 0.01));
  const std::string whole = raw_text();
  std::filesystem::resize_file(dir / "points.jsonl", whole.size() - 1);  // no final newline
  const auto unterminated = store.read();
  EXPECT_EQ(unterminated.points.size(), 1u);
  EXPECT_TRUE(unterminated.problems.empty()) << unterminated.problems.front().describe();
  EXPECT_EQ(unterminated.unterminated_line, 1);

  store.append(make_point("churn-1t", "a2", 0.02));
  const auto after = store.read();
  ASSERT_EQ(after.points.size(), 2u);
  EXPECT_EQ(after.points[0].commit, sha("a1"));
  EXPECT_TRUE(after.problems.empty()) << after.problems.front().describe();
  EXPECT_EQ(after.unterminated_line, 0);
  EXPECT_EQ(raw_text().substr(0, whole.size()), whole) << "the point's line, completed with its newline";
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], (dir / "points.jsonl").string() +
                          ": its last line lacked its newline; its point is whole and kept: the newline was appended");
  for (const auto& file : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(file.path().filename().string().find(".torn-"), std::string::npos) << file.path();

  // One byte less, and the line is no point: moved aside as a torn line.
  const std::string two = raw_text();
  std::filesystem::resize_file(dir / "points.jsonl", two.size() - 2);
  EXPECT_EQ(store.read().unterminated_line, 0);
  ASSERT_EQ(store.read().problems.size(), 1u);
  EXPECT_EQ(store.read().problems[0].kind, StoreProblem::Kind::incomplete);
  store.append(make_point("churn-1t", "a3", 0.03));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("incomplete line"), std::string::npos) << notes[1];
  EXPECT_EQ(store.read().points.size(), 2u);
}

// A write that fails part way (a full disk; here a file size limit) is
// rolled back: the store is byte for byte what it was, and the error says so.
TEST_F(StoreTest, AFailedAppendLeavesTheStoreAsItWas) {
  Store store(dir.string());
  store.append(make_point("churn-1t", "a1", 0.01));
  const std::string before = raw_text();
  in_concurrent_processes(1, [&](int) {
    std::signal(SIGXFSZ, SIG_IGN);  // as heapline-bench does: EFBIG instead of a signal
    const rlimit limit{before.size() + 100, before.size() + 100};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    try {
      store.append(make_point("churn-1t", "a2", 0.02));
    } catch (const std::runtime_error& e) {
      _exit(std::string(e.what()).find("the store is as it was before") != std::string::npos ? 0 : 4);
    }
    _exit(5);  // the append did not fail
  });
  EXPECT_EQ(raw_text(), before);
}

// Every write is checked by the one reader: a point its readers would refuse
// is never stored.
TEST_F(StoreTest, APointTheReadersWouldRefuseIsNeverWritten) {
  Store store(dir.string());
  store.append(make_point("churn-1t", "a1", 0.01));
  const std::string before = raw_text();
  Point bad_time = make_point("churn-1t", "a2", 0.02);
  bad_time.measured_at = "Sun, 01 Mar 2026 12:00:00 GMT";
  try {
    store.append(bad_time);
    ADD_FAILURE() << "a point dated by an e-mail header was stored";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("Sun, 01 Mar 2026 12:00:00 GMT"), std::string::npos) << e.what();
  }
  Point no_figure = make_point("churn-1t", "a3", std::nan(""));
  EXPECT_THROW(store.append(no_figure), std::runtime_error);
  Point control = make_point("churn-1t", "a4", 0.02);
  control.library = "a4\nb";
  EXPECT_THROW(store.append(control), std::runtime_error);
  EXPECT_EQ(raw_text(), before);
}

// A FIFO (or anything but a regular file) in the store's place is refused at
// once, by the readers and the writers: none of them blocks on it.
TEST_F(StoreTest, AFifoInThePlaceOfTheStoreIsRefusedNotWaitedFor) {
  std::filesystem::create_directories(dir);
  ASSERT_EQ(mkfifo((dir / "points.jsonl").c_str(), 0600), 0);
  Store store(dir.string());
  EXPECT_THROW(store.read(), std::runtime_error);
  EXPECT_THROW(read_history(store.points_path()), std::runtime_error);
  EXPECT_THROW(store.append(make_point("churn-1t", "a", 0.01)), std::runtime_error);
  EXPECT_THROW(store.check_appendable(), std::runtime_error);
}

TEST_F(StoreTest, ConcurrentAppendersLoseNothing) {
  Store store(dir.string());
  constexpr int kWriters = 4, kPointsEach = 50;
  in_concurrent_processes(kWriters, [&](int w) {
    for (int i = 0; i < kPointsEach; ++i)
      store.append(make_point("churn-1t", "w" + std::to_string(w) + "-" + std::to_string(i), 0.01 * i));
  });
  auto contents = store.read();
  EXPECT_TRUE(contents.problems.empty());
  std::set<std::string> commits;
  for (const auto& p : contents.points) commits.insert(p.commit);
  EXPECT_EQ(contents.points.size(), static_cast<std::size_t>(kWriters * kPointsEach));
  EXPECT_EQ(commits.size(), static_cast<std::size_t>(kWriters * kPointsEach));
}

TEST_F(StoreTest, UnwritableStoreIsAClearError) {
  Store store("/proc/heapline-cannot-exist");
  EXPECT_THROW(store.append(make_point("churn-1t", "a", 0)), std::runtime_error);
}

// The history is the whole store, ordered by when each point was measured:
// a large import of older points, appended after the newest ones, leaves
// the newest points newest (render once read only the last 10 000 lines).
TEST_F(StoreTest, ALargeImportOfOlderPointsLeavesTheNewestNewest) {
  Store store(dir.string());
  Point newest = make_point("churn-1t", "newest", 0.02);
  newest.measured_at = "2026-06-01T00:00:00Z";
  store.append(newest);
  std::vector<Point> old;
  for (int i = 0; i < 12000; ++i) {
    Point p = make_point("churn-1t", "old" + std::to_string(i), 0.01);
    char at[40];
    std::snprintf(at, sizeof at, "2025-01-01T%02d:%02d:%02d.5Z", i / 3600, i / 60 % 60, i % 60);
    p.measured_at = at;
    old.push_back(p);
  }
  EXPECT_EQ(store.append_new(old), old.size());
  const History history = read_history(store.points_path());
  ASSERT_EQ(history.entries.size(), 12001u);
  EXPECT_EQ(history.entries.back().commit, sha("newest"));
  EXPECT_EQ(history.entries.front().commit, sha("old0"));
  EXPECT_EQ(history.entries[1].commit, sha("old1"));
}

// A fraction of a second sorts before 'Z' as text, but is later in time.
TEST(History, OrdersByTheInstantNotByTheText) {
  const std::string text =
      R"({"measured_at": "2026-01-01T00:00:00.5Z", "overhead": 0.2, "commit": "1a7e400"})" "\n"
      R"({"measured_at": "2026-01-01T00:00:00Z", "overhead": 0.1, "commit": "ea41e40"})" "\n";
  const History history = history_of(read_points(text, "t", RawTimes::skip));
  ASSERT_EQ(history.entries.size(), 2u);
  EXPECT_EQ(history.entries[0].commit, "ea41e40");  // earlier
  EXPECT_EQ(history.entries[1].commit, "1a7e400");  // later
}

TEST(History, ReadsLegacyPointsWithTheUsersRules) {
  const std::string text =
      "{\"measured_at\": \"2024-01-01T00:00:00Z\", \"overhead\": 4.09, \"commit\": \"0001d10\"}\n"
      "{\"measured_at\": \"2025-01-01T00:00:00Z\", \"overhead\": 1.68, \"scenario\": \"resident-4t\", "
      "\"heapline_version\": \"0.4.0\", \"interval\": [1.5, 1.9]}\n";
  auto path = std::filesystem::temp_directory_path() / ("heapline-history-" + std::to_string(getpid()) + ".jsonl");
  std::ofstream(path) << text;
  auto history = read_history(path.string());
  std::filesystem::remove(path);
  ASSERT_EQ(history.entries.size(), 2u);
  EXPECT_EQ(history.entries[0].scenario, "churn-4t");
  EXPECT_EQ(history.entries[0].timing, "benchmark");
  EXPECT_DOUBLE_EQ(history.entries[0].low, 4.09);
  EXPECT_EQ(history.entries[1].timing, "command");
  EXPECT_DOUBLE_EQ(history.entries[1].high, 1.9);
  // The full reader applies the same rules.
  auto full = read_points(text, "legacy", RawTimes::read);
  ASSERT_EQ(full.points.size(), 2u);
  EXPECT_EQ(full.points[0].scenario, history.entries[0].scenario);
  EXPECT_EQ(full.points[0].timing, history.entries[0].timing);
}

// check and the page judge the newest point by when it was measured: a point
// of 2020 imported (appended) after a regression does not hide it.
TEST_F(StoreTest, AnImportedOlderPointNeverBecomesTheNewest) {
  Store store(dir.string());
  std::vector<Point> points;
  for (int i = 0; i < 13; ++i) {
    Point p = make_point("churn-4t", "c" + std::to_string(i), i < 12 ? 0.05 + 0.001 * (i % 3) : 0.50);
    char at[32];
    std::snprintf(at, sizeof at, "2026-11-30T00:00:%02dZ", i);
    p.measured_at = at;
    points.push_back(p);
  }
  store.append(points);
  Point old = make_point("churn-4t", "ancient", 0.05);
  old.measured_at = "2020-01-01T00:00:00Z";
  store.append(old);
  const History history = read_history(store.points_path());
  const auto verdicts = judge_newest(history, {"churn-4t"}, VerdictRule{});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].point->commit, sha("c12"));
  EXPECT_EQ(verdicts[0].verdict, Verdict::regression);
  EXPECT_EQ(history.entries.front().commit, sha("ancient")) << "oldest by its measurement time";
}

TEST_F(StoreTest, ConcurrentImportsOfTheSamePointsAddThemOnce) {
  Store store(dir.string());
  std::vector<Point> points;
  for (int i = 0; i < 200; ++i) points.push_back(make_point("churn-1t", "p" + std::to_string(i), 0.001 * i));
  in_concurrent_processes(3, [&](int) { store.append_new(points); });
  EXPECT_EQ(store.read().points.size(), 200u);
  EXPECT_EQ(store.append_new(points), 0u);
}

// validate (Store::read), render and check (read_history) read the same
// points from the same lines.
TEST_F(StoreTest, EveryCommandAgreesOnWhatAValidPointIs) {
  std::filesystem::create_directories(dir);
  const std::string good = to_json(make_point("churn-1t", "a", 0.01)).dump();
  std::ofstream(dir / "points.jsonl")
      << "\xEF\xBB\xBF" << good << "\n"                                                        // a BOM: read
      << R"({"measured_at":"2026-01-01T00:00:00Z","overhead":0.1,"interval":[0.0,0.1,0.2]})" "\n"  // 3 bounds
      << R"({"schema":"abc","measured_at":"2026-01-01T00:00:00Z","overhead":0.1})" "\n"
      << good << "\n";
  Store store(dir.string());
  const StoreContents all = store.read();
  const History history = read_history(store.points_path());
  EXPECT_EQ(all.points.size(), 1u);
  EXPECT_EQ(history.entries.size(), 1u);
  ASSERT_EQ(all.problems.size(), 3u);
  ASSERT_EQ(history.problems.size(), 3u);
  EXPECT_EQ(all.problems[0].line, 2);
  EXPECT_EQ(history.problems[1].line, 3);
  EXPECT_EQ(history.problems[2].line, 4) << "the same point again: a duplicate, counted once";
  EXPECT_EQ(all.problems[2].kind, StoreProblem::Kind::duplicate);
}

TEST_F(StoreTest, AStoreThatCannotBeAppendedToIsFoundBeforeAnythingIsMeasured) {
  std::filesystem::create_directories(dir);
  std::filesystem::create_directories(dir / "points.jsonl");  // a directory in the file's place
  EXPECT_THROW(Store(dir.string()).check_appendable(), std::runtime_error);
  EXPECT_NO_THROW(Store((dir / "fresh").string()).check_appendable());
}

}  // namespace
}  // namespace heapline::bench
