// The point reader (points.jsonl) and the five commands that read a store,
// through the library functions they call: on any bytes, validate
// (scan_points_file), import (read_points_file, then Store::append_new),
// render and check (read_history), export (Store::read, sort_by_measured_at,
// the exports) give one verdict: the same points, in the same order, from
// the same lines, and the same problems with the same reasons. Also: the
// text and the file read alike, whatever simdjson's padding does at the end
// of a mapping; an accepted line parses alone and a refused one does not;
// what an import writes reads back as the same points and nothing else; the
// history is ordered by time; every point accepted is one a measurement can
// give (checked here apart from the reader's own rules: an overhead above
// -1 within its interval, times above 0, runs that count the raw runs, SHAs,
// a scenario's name, no point from the future); only an equal point is a
// duplicate, and an import writes points that read back equal. Never a
// crash.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "heapline_bench/history/history.h"
#include "heapline_bench/history/point_reader.h"
#include "heapline_bench/history/store.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/measurement/utc_time.h"
#include "heapline_bench/reports/exporter.h"

namespace {

using namespace heapline::bench;

[[noreturn]] void broken(const char* property) {
  std::fprintf(stderr, "points_fuzz: broken: %s\n", property);
  std::abort();
}
void expect(bool holds, const char* property) {
  if (!holds) broken(property);
}

// A directory of this process's own, emptied for each input.
const std::filesystem::path& work_directory() {
  static const std::filesystem::path path = [] {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/points-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) broken("a temporary directory");
    return std::filesystem::path(pattern);
  }();
  return path;
}

std::vector<std::string> identities(const std::vector<Point>& points) {
  std::vector<std::string> out;
  for (const auto& p : points) out.push_back(point_identity(p));
  return out;
}

bool same_problems(const std::vector<StoreProblem>& a, const std::vector<StoreProblem>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].line != b[i].line || a[i].reason != b[i].reason || a[i].kind != b[i].kind) return false;
  return true;
}

bool same_read(const PointsRead& a, const PointsRead& b) {
  return identities(a.points) == identities(b.points) && a.lines == b.lines && same_problems(a.problems, b.problems);
}

// What one measurement can give, written apart from the reader's rules.
bool possible_overhead(double value) { return std::isfinite(value) && value > -1 && value <= 1e6; }
bool possible_figure(double overhead, const Interval& interval) {
  const double slack = 1e-9 * std::max({1.0, std::fabs(interval.low), std::fabs(interval.high)});
  return possible_overhead(overhead) && possible_overhead(interval.low) && possible_overhead(interval.high) &&
         interval.low <= interval.high && overhead >= interval.low - slack && overhead <= interval.high + slack;
}
bool possible_time(double seconds, bool zero_allowed) {
  return std::isfinite(seconds) && (zero_allowed ? seconds >= 0 : seconds > 0) && seconds <= 1e7;
}
bool sha(const std::string& text) {
  if (text.size() < 7 || text.size() > 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}
bool possible(const Point& p) {
  if (!possible_figure(p.overhead, p.interval)) return false;
  if (p.cpu && !possible_figure(p.cpu->overhead, p.cpu->interval)) return false;
  if (p.instructions && !possible_overhead(p.instructions->overhead)) return false;
  for (double median : {p.median_with_seconds, p.median_without_seconds})  // 0: not recorded
    if (!possible_time(median, true)) return false;
  if (p.cpu && !(possible_time(p.cpu->median_with_seconds, true) && possible_time(p.cpu->median_without_seconds, true)))
    return false;
  for (const auto* runs : {&p.with_runs, &p.without_runs}) {
    for (const RawRun& run : *runs) {
      if (!possible_time(run.wall_seconds, false) || !possible_time(run.user_seconds, true) ||
          !possible_time(run.system_seconds, true) || run.max_rss_kib < 0)
        return false;
    }
    if (p.runs > 0 && !runs->empty() && runs->size() != static_cast<std::size_t>(p.runs)) return false;
  }
  if (!(p.scale > 0 && p.scale <= 1000) || p.machine.cores < 0 || p.fingerprint.empty()) return false;
  if (p.library_report.accuracy &&
      (p.library_report.accuracy->bound_bytes < 0 || p.library_report.accuracy->exact_peak_bytes < 0 ||
       p.library_report.accuracy->batched_peak_bytes < 0))
    return false;
  if (!is_scenario_name(p.scenario) || !(p.commit.empty() || sha(p.commit))) return false;
  if (p.commit_range && !(sha(p.commit_range->first) && p.commit_range->last == p.commit)) return false;
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
  return utc_time_nanoseconds(p.measured_at).value_or(0) <= now.count() + 3600'000'000'000LL;
}

std::string_view line_of(std::string_view text, int number) {
  std::size_t begin = 0;
  for (int line = 1; line < number; ++line) begin = text.find('\n', begin) + 1;
  const std::size_t end = text.find('\n', begin);
  return text.substr(begin, end == std::string_view::npos ? text.size() - begin : end - begin);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::filesystem::path& work = work_directory();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(work, ec)) std::filesystem::remove_all(entry.path(), ec);
  const std::filesystem::path store_dir = work / "store";
  std::filesystem::create_directories(store_dir);
  const std::string path = (store_dir / "points.jsonl").string();
  std::ofstream(path, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));

  // The reader: text and file, every field and figures only.
  const PointsRead every = read_points(text, path, RawTimes::read);
  expect(every.points.size() == every.lines.size(), "a line number per point");
  expect(same_read(every, read_points(text, path, RawTimes::skip)), "figures only reads what every field reads");
  expect(same_read(every, read_points_file(path, RawTimes::read)), "the file reads like its text");
  expect(same_read(every, read_points_file(path, RawTimes::skip)), "the file reads like its text, figures only");
  for (std::size_t i = 1; i < every.problems.size(); ++i)
    expect(every.problems[i - 1].line < every.problems[i].line, "problems in line order, one per line");
  for (const Point& point : every.points) expect(possible(point), "every point accepted is one a measurement can give");
  // A duplicate is equal to the point of the line it names; points kept are
  // all different.
  for (const auto& problem : every.problems) {
    if (problem.kind != StoreProblem::Kind::duplicate) continue;
    const int earlier = std::stoi(problem.reason.substr(problem.reason.find("line ") + 5));
    const auto at = std::find(every.lines.begin(), every.lines.end(), earlier);
    expect(at != every.lines.end(), "a duplicate names a line that was read as a point");
    expect(parse_point_line(line_of(text, problem.line)) == every.points[static_cast<std::size_t>(at - every.lines.begin())],
           "a duplicate is equal to the point it names");
  }
  for (std::size_t i = 0; i < every.points.size(); ++i)
    for (std::size_t j = i + 1; j < every.points.size(); ++j)
      expect(!(every.points[i] == every.points[j]), "the points kept are all different");

  // validate: the same points counted, the same problems.
  std::vector<StoreProblem> validate_problems;
  std::size_t validated = 0;
  scan_points_file(path, RawTimes::read, [&](Point&&, int) { ++validated; }, validate_problems);
  expect(validated == every.points.size() && same_problems(validate_problems, every.problems),
         "validate's verdict is the reader's");

  // render and check: the history holds the same points, ordered by time.
  const History history = read_history(path);
  expect(history.entries.size() == every.points.size() && same_problems(history.problems, every.problems),
         "render's and check's verdict is the reader's");
  for (std::size_t i = 1; i < history.entries.size(); ++i)
    expect(history.entries[i - 1].measured_at_ns <= history.entries[i].measured_at_ns, "the history in time order");

  // export: the store's read is the reader's; every format is written.
  const Store store(store_dir.string(), [](const std::string&) {});
  StoreContents exported = store.read();
  expect(same_read(exported, every), "export's verdict is the reader's");
  sort_by_measured_at(exported.points);
  const std::string csv = exporter_named("csv").serialize(exported.points, {});
  std::size_t rows = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < csv.size(); ++i) {
    if (csv[i] == '"') quoted = !quoted;
    if (!quoted && csv[i] == '\n') ++rows;
  }
  expect(rows == exported.points.size() + 1, "one CSV row per point, and the header");
  for (const auto& format : export_formats()) {
    try {
      format.exporter.serialize(exported.points, {});
    } catch (const std::runtime_error&) {
      // a one-commit format and no point with a commit: refused, said
    }
  }

  // Each line alone: accepted lines parse, refused ones do not (a duplicate
  // and an incomplete last line are problems of the store, not of the line).
  for (int line : every.lines) {
    try {
      parse_point_line(line_of(text, line));
    } catch (const std::exception&) {
      broken("an accepted line parses alone");
    }
  }
  for (const auto& problem : every.problems) {
    if (problem.kind != StoreProblem::Kind::invalid) continue;
    bool refused = false;
    try {
      parse_point_line(line_of(text, problem.line));
    } catch (const std::runtime_error& e) {
      refused = e.what() == problem.reason;
    }
    expect(refused, "a refused line is refused alone, for the same reason");
  }

  // import: a file with problems is not imported (the command refuses it);
  // otherwise its points are appended once, and read back as they were.
  if (every.problems.empty()) {
    const Store target((work / "target").string(), [](const std::string&) {});
    expect(target.append_new(every.points) == every.points.size(), "an import adds every new point");
    const StoreContents back = target.read();
    expect(back.problems.empty(), "what an import writes reads back without a problem");
    expect(back.points == every.points, "what an import writes reads back as its points, every field equal");
    expect(target.append_new(every.points) == 0, "a second import adds nothing");
  }
  return 0;
}
