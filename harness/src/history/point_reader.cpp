#include "heapline_bench/history/point_reader.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include <heapline/json_document.h>

#include "heapline/regular_file.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/measurement/utc_time.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {
namespace {

// What is wrong with a line simdjson refused, in the words of the programs'
// other JSON readers (heapline/json_document.h), never simdjson's own text
// ("NUMBER_ERROR: Problem while parsing a number" of a valid number too
// large for it). The rule's reader, on this slow path only, tells a number
// too large from a malformed one, and a line cut short from a syntax error.
std::string json_line_problem(simdjson::error_code error, std::string_view line) {
  switch (error) {
    case simdjson::UTF8_ERROR: return "not valid JSON (bytes that are not UTF-8)";
    case simdjson::DEPTH_ERROR: return "nested deeper than any point";
    case simdjson::EMPTY: return "only white space, not a point";
    default: break;
  }
  const heapline::JsonDocument document = heapline::read_json_document(line, "", "a point");
  const bool number = error == simdjson::NUMBER_ERROR || error == simdjson::NUMBER_OUT_OF_RANGE;
  if (number && (document || document.problem == heapline::JsonProblem::kNumberRange))
    return "a number beyond any field's range (a whole number past 64 bits, or beyond any double)";
  if (document.problem == heapline::JsonProblem::kCut) return "not valid JSON (cut short: the line ends inside a value)";
  return "not valid JSON (a syntax error)";
}

using simdjson::dom::element;

[[noreturn]] void wrong(const std::string& field, const std::string& what) {
  throw std::runtime_error("field \"" + field + "\" " + what);
}

// A number as a message shows it: the shortest text that reads back as it.
std::string shown_number(double value) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return error == std::errc() ? std::string(text, end) : std::to_string(value);
}

void check_overhead(const std::string& field, double value) {
  if (!(value > -1))
    wrong(field, "must be above -1 (with / without - 1 of two positive figures), got " + shown_number(value));
  if (!(value <= kMaxOverhead)) wrong(field, "must be at most " + shown_number(kMaxOverhead) + ", got " + shown_number(value));
}

// One JSON object of a point, its keys checked unique: with a key twice,
// which value counts depends on the reader (Python's json takes the last,
// simdjson the first), so the rule refuses it.
class Fields {
 public:
  Fields(element value, std::string name) : name_(std::move(name)) {
    if (value.get_object().get(object_) != simdjson::SUCCESS) {
      if (name_.empty()) throw std::runtime_error("a point must be a JSON object");
      wrong(name_, "must be an object");
    }
    std::vector<std::string_view> keys;
    for (const auto field : object_) keys.push_back(field.key);
    std::sort(keys.begin(), keys.end());
    const auto twice = std::adjacent_find(keys.begin(), keys.end());
    if (twice != keys.end()) wrong(path(*twice), "appears twice");
  }

  // The full name of a field, for messages: "cpu.interval".
  std::string path(std::string_view key) const { return name_.empty() ? std::string(key) : name_ + "." + std::string(key); }

  // A field that may be missing or null.
  std::optional<element> optional(const char* key) const {
    element value;
    if (object_.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
    return value;
  }

  std::optional<std::string> optional_string(const char* key) const {
    const auto value = optional(key);
    if (!value) return std::nullopt;
    std::string_view text;
    if (value->get_string().get(text) != simdjson::SUCCESS) wrong(path(key), "must be a string");
    // A point's text reaches pages, plots, CSV and terminals: a control
    // character in it could end a line or a field there.
    if (const auto at = find_control_character(text); at != std::string_view::npos)
      wrong(path(key), "holds a control character (" + control_character_code(text, at) + ")");
    return std::string(text);
  }

  std::optional<double> optional_number(const char* key) const {
    const auto value = optional(key);
    if (!value) return std::nullopt;
    double number;
    if (value->get_double().get(number) != simdjson::SUCCESS) wrong(path(key), "must be a number");
    return number;
  }

  double required_number(const char* key) const {
    const auto number = optional_number(key);
    if (!number) wrong(path(key), "is missing");
    return *number;
  }

  std::optional<std::int64_t> optional_integer(const char* key) const {
    const auto value = optional(key);
    if (!value) return std::nullopt;
    std::int64_t number;
    if (value->get_int64().get(number) != simdjson::SUCCESS) wrong(path(key), "must be an integer");
    return number;
  }

  std::int64_t required_integer(const char* key) const {
    const auto number = optional_integer(key);
    if (!number) wrong(path(key), "is missing");
    return *number;
  }

  std::optional<std::uint64_t> optional_count(const char* key) const {
    const auto value = optional(key);
    if (!value) return std::nullopt;
    std::uint64_t number;
    if (value->get_uint64().get(number) != simdjson::SUCCESS) wrong(path(key), "must be a whole number");
    return number;
  }

  std::optional<Fields> optional_object(const char* key) const {
    const auto value = optional(key);
    if (!value) return std::nullopt;
    return Fields(*value, path(key));
  }

  std::optional<Interval> optional_interval(const char* key) const {
    const auto value = optional(key);
    if (!value) return std::nullopt;
    simdjson::dom::array array;
    if (value->get_array().get(array) != simdjson::SUCCESS || array.size() != 2)
      wrong(path(key), "must be an array of two numbers");
    double bounds[2];
    std::size_t count = 0;
    for (const auto bound : array)
      if (bound.get_double().get(bounds[count++]) != simdjson::SUCCESS) wrong(path(key), "must be an array of two numbers");
    return Interval{bounds[0], bounds[1]};
  }

  // The values a measurement can give (point_rules.h): each refused with
  // the field's name and the value, whatever reads the point.

  // An overhead (with / without - 1): finite, above -1, at most kMaxOverhead.
  std::optional<double> optional_overhead(const char* key) const {
    const auto number = optional_number(key);
    if (number) check_overhead(path(key), *number);
    return number;
  }
  double required_overhead(const char* key) const {
    const auto number = optional_overhead(key);
    if (!number) wrong(path(key), "is missing");
    return *number;
  }
  // An overhead's interval: two overheads, the low one first.
  std::optional<Interval> optional_overhead_interval(const char* key) const {
    const auto interval = optional_interval(key);
    if (!interval) return std::nullopt;
    check_overhead(path(key) + "[0]", interval->low);
    check_overhead(path(key) + "[1]", interval->high);
    if (interval->low > interval->high)
      wrong(path(key), "is inverted (its low bound " + shown_number(interval->low) + " is above its high bound " +
                           shown_number(interval->high) + ")");
    return interval;
  }
  // A time in seconds: above 0 (`zero_allowed`: at least 0), at most kMaxSeconds.
  std::optional<double> optional_seconds(const char* key, bool zero_allowed = false) const {
    const auto number = optional_number(key);
    if (number && !(zero_allowed ? *number >= 0 : *number > 0))
      wrong(path(key), std::string("must be ") + (zero_allowed ? "at least 0" : "above 0") + " seconds, got " +
                           shown_number(*number));
    if (number && *number > kMaxSeconds)
      wrong(path(key), "must be at most " + shown_number(kMaxSeconds) + " seconds, got " + shown_number(*number));
    return number;
  }
  // A whole number within [low, high].
  std::optional<std::int64_t> optional_integer_within(const char* key, std::int64_t low, std::int64_t high) const {
    const auto number = optional_integer(key);
    if (number && (*number < low || *number > high))
      wrong(path(key), "must be from " + std::to_string(low) + " to " + std::to_string(high) + ", got " +
                           std::to_string(*number));
    return number;
  }
  // A commit's SHA (is_commit_sha); `empty_allowed`: "" for a commit unknown.
  std::optional<std::string> optional_commit(const char* key, bool empty_allowed) const {
    const auto text = optional_string(key);
    if (text && !(empty_allowed && text->empty()) && !is_commit_sha(*text))
      wrong(path(key), std::string("must be a commit's SHA (") + kCommitShaRule + "), got \"" + printable(*text) + "\"");
    return text;
  }

 private:
  simdjson::dom::object object_;
  std::string name_;
};

// The runs of raw.with or raw.without, each checked (a run took some time,
// its CPU times and memory are not negative): their count is checked
// against "runs" whatever the caller keeps of them.
std::vector<RawRun> raw_runs_of(element value, const std::string& name) {
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) wrong(name, "must be an array of runs");
  std::vector<RawRun> runs;
  runs.reserve(array.size());
  for (const auto run : array) {
    const std::string each = name + "[" + std::to_string(runs.size()) + "]";
    RawRun r;
    if (run.is_number()) {  // the oldest stores kept wall times only
      if (run.get_double().get(r.wall_seconds) != simdjson::SUCCESS) wrong(each, "cannot be read");
      if (!(r.wall_seconds > 0 && r.wall_seconds <= kMaxSeconds))
        wrong(each, "must be a time above 0 and at most " + shown_number(kMaxSeconds) + " seconds, got " +
                        shown_number(r.wall_seconds));
    } else {
      const Fields o(run, each);
      r.wall_seconds = o.optional_seconds("wall_s").value_or(0);
      if (!(r.wall_seconds > 0)) wrong(each + ".wall_s", "is missing");
      r.user_seconds = o.optional_seconds("user_s", true).value_or(0);
      r.system_seconds = o.optional_seconds("sys_s", true).value_or(0);
      r.max_rss_kib = static_cast<long>(o.optional_integer_within("max_rss_kib", 0, kMaxKib).value_or(0));
    }
    runs.push_back(r);
  }
  return runs;
}

// The rules between fields, once each field is what it may be.
void check_relations(const Point& p, bool runs_recorded, bool raw_recorded) {
  auto within = [](double value, const Interval& interval) {
    // The bootstrap's percentiles bound the figure they were drawn around;
    // a last-digit rounding of the text is not a point outside.
    const double slack = 1e-9 * std::max({1.0, std::fabs(interval.low), std::fabs(interval.high)});
    return value >= interval.low - slack && value <= interval.high + slack;
  };
  auto outside = [](const std::string& field, double value, const Interval& interval) {
    wrong(field, shown_number(value) + " is outside its own interval [" + shown_number(interval.low) + ", " +
                     shown_number(interval.high) + "]");
  };
  if (!within(p.overhead, p.interval)) outside("overhead", p.overhead, p.interval);
  if (p.cpu && !within(p.cpu->overhead, p.cpu->interval)) outside("cpu.overhead", p.cpu->overhead, p.cpu->interval);
  if (p.commit_range && p.commit_range->last != p.commit)
    wrong("commit_range.last", "must be the point's commit (\"" + printable(p.commit) + "\"), got \"" +
                                   printable(p.commit_range->last) + "\"");
  if (runs_recorded && raw_recorded &&
      (p.with_runs.size() != static_cast<std::size_t>(p.runs) || p.without_runs.size() != static_cast<std::size_t>(p.runs)))
    wrong("runs", "is " + std::to_string(p.runs) + " but raw holds " + std::to_string(p.with_runs.size()) +
                      " run(s) with the library and " + std::to_string(p.without_runs.size()) + " without");
  // A point from the future would stay the newest of the history, the one
  // every verdict judges, whatever is measured after it.
  const auto measured = utc_time_nanoseconds(p.measured_at);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  if (measured && *measured > now + kMeasuredAtSkewSeconds * 1'000'000'000LL)
    wrong("measured_at", "is in the future (\"" + p.measured_at + "\", more than " +
                             std::to_string(kMeasuredAtSkewSeconds / 60) + " minutes after this machine's clock)");
}

// Every field of the schema is checked, whatever the caller keeps: a line
// is a point for every reader or for none.
Point point_from(element document, RawTimes raw) {
  const Fields o(document, "");
  Point p;
  const auto schema = o.optional_integer("schema");
  p.schema = static_cast<int>(schema.value_or(1));  // the oldest points have no schema: version 1
  if (schema && *schema < 1) wrong("schema", "must be a positive integer");
  if (schema && *schema > kPointSchema)
    throw std::runtime_error("schema " + std::to_string(*schema) + " is newer than this heapline-bench (" +
                             std::to_string(kPointSchema) + ")");
  p.scenario = o.optional_string("scenario").value_or(kDefaultScenario);
  // A name a catalogue can hold: a word of the page's tables and a file
  // name of its plots.
  if (!is_scenario_name(p.scenario))
    wrong("scenario", "must be a scenario's name (1 to 64 letters, digits, '.', '_' or '-', not starting with '.' or "
                      "'-'), got \"" + printable(p.scenario) + "\"");
  p.commit = o.optional_commit("commit", true).value_or("");
  if (const auto range = o.optional_object("commit_range")) {
    auto first = range->optional_commit("first", false);
    auto last = range->optional_commit("last", false);
    if (!first || !last) wrong("commit_range", "must hold \"first\" and \"last\"");
    p.commit_range = CommitRange{*first, *last};
  }
  const auto measured_at = o.optional_string("measured_at");
  if (!measured_at || measured_at->empty()) wrong("measured_at", "is missing");
  if (!utc_time_nanoseconds(*measured_at))
    wrong("measured_at", "must be a UTC time as RFC 3339 writes it (\"2026-03-01T12:00:00Z\", 1970 to 2261), got \"" + *measured_at +
                             "\"");
  p.measured_at = *measured_at;
  p.overhead = o.required_overhead("overhead");
  p.interval = o.optional_overhead_interval("interval").value_or(Interval{p.overhead, p.overhead});  // old points: zero width
  p.confidence = o.optional_number("confidence").value_or(kConfidenceOfUnlabelledPoints);
  if (!(p.confidence > 0 && p.confidence < 1)) wrong("confidence", "must be between 0 and 1");
  // An explicit 0 is refused: the writer records "none" as null.
  const auto runs = o.optional_integer_within("runs", 1, kMaxRuns);
  p.runs = static_cast<int>(runs.value_or(0));  // 0: not recorded (the oldest points)
  p.scale = o.optional_number("scale").value_or(1.0);
  if (!(p.scale > 0 && p.scale <= kMaxScale))
    wrong("scale", "must be above 0 and at most " + shown_number(kMaxScale) + ", got " + shown_number(p.scale));
  p.median_with_seconds = o.optional_seconds("median_with_s").value_or(0);  // 0: not recorded
  p.median_without_seconds = o.optional_seconds("median_without_s").value_or(0);
  if (const auto cpu = o.optional_object("cpu")) {
    RunFigure figure;
    figure.overhead = cpu->required_overhead("overhead");
    const auto interval = cpu->optional_overhead_interval("interval");
    if (!interval) wrong("cpu", "needs an \"interval\"");
    figure.interval = *interval;
    figure.median_with_seconds = cpu->optional_seconds("median_with_s").value_or(0);
    figure.median_without_seconds = cpu->optional_seconds("median_without_s").value_or(0);
    p.cpu = figure;
  }
  if (const auto instructions = o.optional_object("instructions")) {
    InstructionFigure figure;
    figure.overhead = instructions->required_overhead("overhead");
    figure.with = instructions->optional_count("with").value_or(0);
    figure.without = instructions->optional_count("without").value_or(0);
    figure.command = instructions->optional_string("command").value_or("");
    p.instructions = figure;
  }
  if (const auto report = o.optional_object("library_report")) {
    p.library_report.publishes_per_1000_calls = report->optional_number("publishes_per_1000_calls");
    if (const auto rate = p.library_report.publishes_per_1000_calls; rate && !(*rate >= 0 && *rate <= kMaxPublishesPer1000Calls))
      wrong("library_report.publishes_per_1000_calls", "must be from 0 to " + shown_number(kMaxPublishesPer1000Calls) +
                                                           ", got " + shown_number(*rate));
    if (const auto rss = report->optional_integer_within("extra_peak_rss_kib", -kMaxKib, kMaxKib))
      p.library_report.extra_peak_rss_kib = *rss;
    if (const auto accuracy = report->optional_object("accuracy")) {
      Accuracy figure;
      auto bytes = [&](const char* key) {
        const auto value = accuracy->optional_integer_within(key, 0, kMaxBytes);
        if (!value) wrong(accuracy->path(key), "is missing");
        return *value;
      };
      figure.batched_peak_bytes = bytes("batched_peak_bytes");
      figure.exact_peak_bytes = bytes("exact_peak_bytes");
      figure.bound_bytes = bytes("bound_bytes");
      p.library_report.accuracy = figure;
    }
  }
  p.heapline_version = o.optional_string("heapline_version").value_or("");
  if (const auto timing = o.optional_string("timing")) {
    p.timing = *timing;
    if (p.timing != "command" && p.timing != "benchmark")
      throw std::runtime_error("timing must be \"command\" or \"benchmark\", got \"" + p.timing + "\"");
  } else {
    p.timing = default_timing(p.scenario, p.heapline_version);
  }
  p.library = o.optional_string("library").value_or("");
  p.command = o.optional_string("command").value_or("");
  if (const auto machine = o.optional_object("machine")) {
    const auto fingerprint = machine->optional_string("fingerprint");
    p.machine.cpu_model = machine->optional_string("cpu_model").value_or("");
    p.machine.cores = static_cast<int>(machine->optional_integer_within("cores", 0, kMaxCores).value_or(0));
    p.machine.kernel = machine->optional_string("kernel").value_or("");
    p.machine.glibc = machine->optional_string("glibc").value_or("");
    p.machine.compiler = machine->optional_string("compiler").value_or("");
    p.machine.runner_image = machine->optional_string("runner_image").value_or("");
    // Points are compared only within a fingerprint: an empty one would
    // make one series of every point that has it.
    if (fingerprint && fingerprint->empty()) wrong("machine.fingerprint", "is empty");
    p.fingerprint = fingerprint ? *fingerprint : p.machine.fingerprint();
  } else {
    p.fingerprint = "unknown";
  }
  const auto runs_of = o.optional_object("raw");
  if (runs_of) {
    const auto with = runs_of->optional("with");
    const auto without = runs_of->optional("without");
    if (!with || !without) wrong("raw", "must hold \"with\" and \"without\"");
    p.with_runs = raw_runs_of(*with, "raw.with");
    p.without_runs = raw_runs_of(*without, "raw.without");
  }
  check_relations(p, runs.has_value(), runs_of.has_value());
  // Schema 1 kept no cpu figure: its raw runs give it, so they are kept.
  if (raw == RawTimes::skip && !(p.schema == 1 && !p.cpu)) {
    p.with_runs = {};
    p.without_runs = {};
  }
  return p;
}

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// The file mapped read-only for the life of one read. Only a regular file
// is read (heapline::RegularFile): a FIFO or a device in the store's place
// would block the reader or never end.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const heapline::RegularFile file = heapline::RegularFile::open(path);
    if (!file.ok()) throw std::runtime_error(printable(file.error()));
    if (file.size() > 0) {
      size_ = file.size();
      void* map = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd(), 0);
      if (map == MAP_FAILED) throw std::runtime_error("cannot map " + printable(path) + ": " + std::strerror(errno));
      data_ = static_cast<const char*>(map);
      madvise(map, size_, MADV_SEQUENTIAL);
      madvise(map, size_, MADV_WILLNEED);
    }
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view text() const { return {data_ != nullptr ? data_ : "", size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

std::size_t count_lines(std::string_view text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// The lines of one read: each point handed to the sink, each problem kept,
// and a point already read a problem of its own: the same measurement twice
// would count twice in every verdict. The same point is an equal one, every
// field and raw run (Point's operator==): lines that share a key
// (point_identity) are read again whole to be compared, so a point that
// differs from an earlier one only in its interval, medians or raw runs is
// a point of its own.
class LineReader {
 public:
  LineReader(const std::string& file_name, RawTimes raw, const PointSink& sink, std::vector<StoreProblem>& problems)
      : file_name_(file_name), raw_(raw), sink_(sink), problems_(problems) {}

  // Parses `all`, whose lines are numbered from `first_line` + 1 on and
  // which starts at byte `first_byte` of its file. At least
  // simdjson::SIMDJSON_PADDING bytes after its end must be readable.
  // The number of the last line when it lacks its newline and holds a
  // whole point; 0 otherwise.
  int unterminated_line() const { return unterminated_line_; }

  void read_lines(std::string_view all, std::size_t first_line, std::size_t first_byte) {
    std::size_t start = 0;
    int line = static_cast<int>(first_line);
    while (start < all.size()) {
      ++line;
      std::size_t end = all.find('\n', start);
      const bool torn = end == std::string_view::npos;
      if (torn) end = all.size();
      std::string_view json_line = all.substr(start, end - start);
      start = end + 1;
      if (json_line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      // A last line that lacks only its newline but holds a whole, valid
      // point (an editor that dropped the final newline) is that point; the
      // store's next append completes it with the newline (store.h).
      if (torn && whole_point(json_line)) {
        unterminated_line_ = line;
      } else if (torn) {
        // What is true of any file read (a store, or a file to import):
        // where it is cut. What the store does about it is said by those
        // that read the store.
        problems_.push_back({file_name_, line,
                             "the last line is incomplete: the file is cut " + std::to_string(json_line.size()) +
                                 " bytes into it, at byte " + std::to_string(first_byte + all.size()) +
                                 ", with no newline (a write was interrupted)",
                             StoreProblem::Kind::incomplete});
        continue;
      }
      // A byte-order mark (an editor's) is not part of the JSON.
      if (json_line.substr(0, kByteOrderMark.size()) == kByteOrderMark) json_line.remove_prefix(kByteOrderMark.size());
      try {
        // The line is followed by the rest of the text and the readable
        // bytes after it, so simdjson's padding requirement holds without
        // copying each line.
        element document;
        if (auto error = parser_.parse(json_line.data(), json_line.size(), false).get(document))
          throw simdjson::simdjson_error(error);
        Point point = point_from(document, raw_);
        std::vector<Earlier>& same_key = earlier_[point_identity(point)];
        if (const int first = first_equal(same_key, point, json_line); first != 0) {
          problems_.push_back({file_name_, line, "the same point as line " + std::to_string(first) + " (a duplicate)",
                               StoreProblem::Kind::duplicate});
          continue;
        }
        same_key.push_back({line, json_line});
        sink_(std::move(point), line);
      } catch (const simdjson::simdjson_error& e) {
        problems_.push_back({file_name_, line, json_line_problem(e.error(), json_line)});
      } catch (const std::exception& e) {
        problems_.push_back({file_name_, line, e.what()});
      }
    }
  }

 private:
  // A point read earlier: its line number, and its text (within the text
  // being read, which outlives the reader's use of it).
  struct Earlier {
    int line;
    std::string_view text;
  };

  // Whether `text` parses as a whole, valid point (a last line without its
  // newline: whole, or cut by an interrupted write).
  bool whole_point(std::string_view text) {
    if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark) text.remove_prefix(kByteOrderMark.size());
    try {
      read_again(text);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  // The point of a line read before, its raw runs included.
  Point read_again(std::string_view text) {
    element document;
    if (auto error = parser_.parse(text.data(), text.size(), false).get(document)) throw simdjson::simdjson_error(error);
    return point_from(document, RawTimes::read);
  }

  // The line of the first earlier point equal to `point` (read from `text`),
  // 0 when none is.
  int first_equal(const std::vector<Earlier>& candidates, const Point& point, std::string_view text) {
    if (candidates.empty()) return 0;
    const Point whole = raw_ == RawTimes::read ? point : read_again(text);
    for (const Earlier& earlier : candidates) {
      if (read_again(earlier.text) == whole) return earlier.line;
    }
    return 0;
  }

  const std::string& file_name_;
  RawTimes raw_;
  const PointSink& sink_;
  std::vector<StoreProblem>& problems_;
  simdjson::dom::parser parser_;
  std::unordered_map<std::string, std::vector<Earlier>> earlier_;
  int unterminated_line_ = 0;
};

PointSink collect_into(PointsRead& read) {
  return [&read](Point&& point, int line) {
    read.points.push_back(std::move(point));
    read.lines.push_back(line);
  };
}

}  // namespace

PointsRead read_points(std::string_view text, const std::string& file_name, RawTimes raw) {
  const simdjson::padded_string padded(text.data(), text.size());
  PointsRead read;
  const PointSink sink = collect_into(read);
  LineReader reader(file_name, raw, sink, read.problems);
  reader.read_lines(std::string_view(padded.data(), padded.size()), 0, 0);
  read.unterminated_line = reader.unterminated_line();
  return read;
}

void scan_points_file(const std::string& path, RawTimes raw, const PointSink& sink, std::vector<StoreProblem>& problems,
                      int* unterminated_line) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  const MappedFile file(path);
  const std::string_view whole = file.text();
  // simdjson reads up to SIMDJSON_PADDING bytes past a document. The lines
  // that end that far before the end of the file are parsed where they are
  // mapped (the file's own next bytes are the padding); only the last few
  // are copied into a padded buffer. A copy of the whole file would double
  // the memory and the page faults of a long store.
  std::size_t in_place = 0;
  if (whole.size() > simdjson::SIMDJSON_PADDING) {
    const void* newline = memrchr(whole.data(), '\n', whole.size() - simdjson::SIMDJSON_PADDING);
    if (newline != nullptr) in_place = static_cast<std::size_t>(static_cast<const char*>(newline) - whole.data()) + 1;
  }
  LineReader reader(path, raw, sink, problems);
  const std::string_view mapped = whole.substr(0, in_place);
  reader.read_lines(mapped, 0, 0);
  const simdjson::padded_string last(whole.data() + in_place, whole.size() - in_place);
  reader.read_lines(std::string_view(last.data(), last.size()), count_lines(mapped), in_place);
  if (unterminated_line != nullptr) *unterminated_line = reader.unterminated_line();
}

PointsRead read_points_file(const std::string& path, RawTimes raw) {
  PointsRead read;
  scan_points_file(path, raw, collect_into(read), read.problems, &read.unterminated_line);
  return read;
}

Point parse_point_line(std::string_view line) {
  if (line.find('\n') != std::string_view::npos) throw std::runtime_error("a point is one line of JSON");
  PointsRead read = read_points(std::string(line) + "\n", "point", RawTimes::read);
  if (!read.problems.empty()) throw std::runtime_error(read.problems.front().reason);
  if (read.points.empty()) throw std::runtime_error("a point must be a JSON object");
  return std::move(read.points.front());
}

Point point_from_json(const nlohmann::json& json) { return parse_point_line(json.dump()); }

}  // namespace heapline::bench
