#include "heapline_bench/history/point_reader.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace heapline::bench {
namespace {

using simdjson::ondemand::object;
using simdjson::ondemand::value;

[[noreturn]] void wrong(const char* field, const char* what) {
  throw std::runtime_error(std::string("field \"") + field + "\" " + what);
}

// A field that may be missing or null.
std::optional<value> optional_field(object& o, const char* name) {
  auto field = o.find_field_unordered(name);
  if (field.error() == simdjson::NO_SUCH_FIELD) return std::nullopt;
  value v;
  if (field.get(v) != simdjson::SUCCESS) wrong(name, "cannot be read");
  bool null = false;
  if (v.is_null().get(null) == simdjson::SUCCESS && null) return std::nullopt;
  return v;
}

std::optional<std::string> optional_string(object& o, const char* name) {
  auto v = optional_field(o, name);
  if (!v) return std::nullopt;
  std::string_view text;
  if (v->get_string().get(text) != simdjson::SUCCESS) wrong(name, "must be a string");
  return std::string(text);
}

std::optional<double> optional_number(object& o, const char* name) {
  auto v = optional_field(o, name);
  if (!v) return std::nullopt;
  double number;
  if (v->get_double().get(number) != simdjson::SUCCESS) wrong(name, "must be a number");
  return number;
}

double required_number(object& o, const char* name) {
  auto number = optional_number(o, name);
  if (!number) wrong(name, "is missing");
  return *number;
}

std::optional<std::int64_t> optional_integer(object& o, const char* name) {
  auto v = optional_field(o, name);
  if (!v) return std::nullopt;
  std::int64_t number;
  if (v->get_int64().get(number) != simdjson::SUCCESS) wrong(name, "must be an integer");
  return number;
}

std::int64_t required_integer(object& o, const char* name) {
  auto number = optional_integer(o, name);
  if (!number) wrong(name, "is missing");
  return *number;
}

object required_object(value v, const char* name) {
  object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) wrong(name, "must be an object");
  return o;
}

Interval interval_of(value v, const char* name) {
  simdjson::ondemand::array array;
  if (v.get_array().get(array) != simdjson::SUCCESS) wrong(name, "must be an array of two numbers");
  double bounds[2];
  std::size_t count = 0;
  for (auto element : array) {
    double number;
    if (count == 2 || element.get_double().get(number) != simdjson::SUCCESS)
      wrong(name, "must be an array of two numbers");
    bounds[count++] = number;
  }
  if (count != 2) wrong(name, "must be an array of two numbers");
  return {bounds[0], bounds[1]};
}

std::vector<RawRun> raw_runs_of(value v, const char* name) {
  simdjson::ondemand::array array;
  if (v.get_array().get(array) != simdjson::SUCCESS) wrong(name, "must be an array of runs");
  std::vector<RawRun> runs;
  for (auto element : array) {
    value run;
    if (element.get(run) != simdjson::SUCCESS) wrong(name, "holds a run that cannot be read");
    simdjson::ondemand::json_type type;
    if (run.type().get(type) != simdjson::SUCCESS) wrong(name, "holds a run that cannot be read");
    if (type == simdjson::ondemand::json_type::number) {  // the oldest stores kept wall times only
      double wall;
      if (run.get_double().get(wall) != simdjson::SUCCESS) wrong(name, "holds a run that cannot be read");
      runs.push_back({wall, 0, 0, 0});
      continue;
    }
    object o = required_object(run, name);
    RawRun r;
    r.wall_seconds = required_number(o, "wall_s");
    r.user_seconds = optional_number(o, "user_s").value_or(0);
    r.system_seconds = optional_number(o, "sys_s").value_or(0);
    r.max_rss_kib = static_cast<long>(optional_integer(o, "max_rss_kib").value_or(0));
    runs.push_back(r);
  }
  return runs;
}

// Fields are asked for in the order point.cpp writes them, so the parser
// never goes back, and (RawTimes::skip) never reaches the raw times at the
// end of the line.
Point point_from(object o, RawTimes raw) {
  Point p;
  const auto schema = optional_integer(o, "schema");
  p.schema = static_cast<int>(schema.value_or(1));  // the oldest points have no schema: version 1
  if (p.schema < 1) throw std::runtime_error("field \"schema\" must be a positive integer");
  if (p.schema > kPointSchema)
    throw std::runtime_error("schema " + std::to_string(p.schema) + " is newer than this heapline-bench (" +
                             std::to_string(kPointSchema) + ")");
  p.scenario = optional_string(o, "scenario").value_or(kDefaultScenario);
  p.commit = optional_string(o, "commit").value_or("");
  if (auto range = optional_field(o, "commit_range")) {
    object r = required_object(*range, "commit_range");
    auto first = optional_string(r, "first");
    auto last = optional_string(r, "last");
    if (!first || !last) wrong("commit_range", "must hold \"first\" and \"last\"");
    p.commit_range = CommitRange{*first, *last};
  }
  const auto measured_at = optional_string(o, "measured_at");
  if (!measured_at || measured_at->empty()) wrong("measured_at", "is missing");
  p.measured_at = *measured_at;
  p.overhead = required_number(o, "overhead");
  if (auto interval = optional_field(o, "interval")) p.interval = interval_of(*interval, "interval");
  else p.interval = {p.overhead, p.overhead};  // old points without one: a zero-width interval
  p.confidence = optional_number(o, "confidence").value_or(0.95);
  p.runs = static_cast<int>(optional_integer(o, "runs").value_or(0));
  p.scale = optional_number(o, "scale").value_or(1.0);
  if (!(p.scale > 0)) wrong("scale", "must be a positive number");
  p.median_with_seconds = optional_number(o, "median_with_s").value_or(0);
  p.median_without_seconds = optional_number(o, "median_without_s").value_or(0);
  if (auto cpu = optional_field(o, "cpu")) {
    object c = required_object(*cpu, "cpu");
    RunFigure figure;
    figure.overhead = required_number(c, "overhead");
    auto interval = optional_field(c, "interval");
    if (!interval) wrong("cpu", "needs an \"interval\"");
    figure.interval = interval_of(*interval, "cpu.interval");
    figure.median_with_seconds = optional_number(c, "median_with_s").value_or(0);
    figure.median_without_seconds = optional_number(c, "median_without_s").value_or(0);
    p.cpu = figure;
  }
  if (auto instructions = optional_field(o, "instructions")) {
    object i = required_object(*instructions, "instructions");
    InstructionFigure figure;
    figure.overhead = required_number(i, "overhead");
    figure.with = static_cast<std::uint64_t>(optional_integer(i, "with").value_or(0));
    figure.without = static_cast<std::uint64_t>(optional_integer(i, "without").value_or(0));
    figure.command = optional_string(i, "command").value_or("");
    p.instructions = figure;
  }
  if (auto report = optional_field(o, "library_report")) {
    object r = required_object(*report, "library_report");
    p.library_report.publishes_per_1000_calls = optional_number(r, "publishes_per_1000_calls");
    if (auto rss = optional_integer(r, "extra_peak_rss_kib")) p.library_report.extra_peak_rss_kib = *rss;
    if (auto accuracy = optional_field(r, "accuracy")) {
      object a = required_object(*accuracy, "library_report.accuracy");
      Accuracy figure;
      figure.batched_peak_bytes = required_integer(a, "batched_peak_bytes");
      figure.exact_peak_bytes = required_integer(a, "exact_peak_bytes");
      figure.bound_bytes = required_integer(a, "bound_bytes");
      p.library_report.accuracy = figure;
    }
  }
  const auto timing = optional_string(o, "timing");
  p.heapline_version = optional_string(o, "heapline_version").value_or("");
  if (timing) {
    p.timing = *timing;
    if (p.timing != "command" && p.timing != "benchmark")
      throw std::runtime_error("timing must be \"command\" or \"benchmark\", got \"" + p.timing + "\"");
  } else {
    p.timing = default_timing(p.scenario, p.heapline_version);
  }
  p.library = optional_string(o, "library").value_or("");
  p.command = optional_string(o, "command").value_or("");
  if (auto machine = optional_field(o, "machine")) {
    object m = required_object(*machine, "machine");
    const auto fingerprint = optional_string(m, "fingerprint");
    p.machine.cpu_model = optional_string(m, "cpu_model").value_or("");
    p.machine.cores = static_cast<int>(optional_integer(m, "cores").value_or(0));
    p.machine.kernel = optional_string(m, "kernel").value_or("");
    p.machine.glibc = optional_string(m, "glibc").value_or("");
    p.machine.compiler = optional_string(m, "compiler").value_or("");
    p.machine.runner_image = optional_string(m, "runner_image").value_or("");
    p.fingerprint = fingerprint && !fingerprint->empty() ? *fingerprint : p.machine.fingerprint();
  } else {
    p.fingerprint = "unknown";
  }
  // Schema 1 kept no cpu figure: its raw runs give it.
  const bool need_raw = raw == RawTimes::read || (p.schema == 1 && !p.cpu);
  if (need_raw) {
    if (auto runs = optional_field(o, "raw")) {
      object r = required_object(*runs, "raw");
      // On-Demand reads forward only: each array is read before the next
      // field is looked for.
      auto with = optional_field(r, "with");
      if (!with) wrong("raw", "must hold \"with\" and \"without\"");
      p.with_runs = raw_runs_of(*with, "raw.with");
      auto without = optional_field(r, "without");
      if (!without) wrong("raw", "must hold \"with\" and \"without\"");
      p.without_runs = raw_runs_of(*without, "raw.without");
    }
  }
  return p;
}

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// The file mapped read-only for the life of one read.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      size_ = static_cast<std::size_t>(st.st_size);
      void* map = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (map == MAP_FAILED) {
        close(fd);
        throw std::runtime_error("cannot map " + path + ": " + std::strerror(errno));
      }
      data_ = static_cast<const char*>(map);
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view text() const { return {data_ != nullptr ? data_ : "", size_}; }
  // Tells the kernel the bytes from `offset` on are about to be read in
  // order: read-ahead instead of a page fault per page.
  void will_read(std::size_t offset) const {
    if (data_ == nullptr) return;
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t from = offset / page * page;
    madvise(const_cast<char*>(data_) + from, size_ - from, MADV_SEQUENTIAL);
    madvise(const_cast<char*>(data_) + from, size_ - from, MADV_WILLNEED);
  }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

// Where the last `lines` lines begin (0 when the file has no more).
std::size_t start_of_last_lines(std::string_view text, std::size_t lines) {
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;  // the final newline ends the last line
  while (end > 0) {
    const void* newline = memrchr(text.data(), '\n', end);
    if (newline == nullptr) return 0;
    end = static_cast<std::size_t>(static_cast<const char*>(newline) - text.data());
    if (--lines == 0) return end + 1;
  }
  return 0;
}

std::size_t count_lines(std::string_view text) {
  std::size_t count = 0;
  for (const char* at = text.data(); (at = static_cast<const char*>(
                                          std::memchr(at, '\n', static_cast<std::size_t>(text.data() + text.size() - at))));
       ++at)
    ++count;
  return count;
}

// Parses text followed by `readable_after` more readable bytes (at least
// simdjson::SIMDJSON_PADDING), handing each point to `sink` and adding each
// problem to `problems`.
void read_padded(std::string_view all, std::size_t readable_after, const std::string& file_name, RawTimes raw,
                 std::size_t first_line, const PointSink& sink, std::vector<StoreProblem>& problems) {
  simdjson::ondemand::parser parser;
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
    if (torn) {
      problems.push_back({file_name, line,
                               "the last line is incomplete (no newline): an append was interrupted; the line is "
                               "kept as it is and later points start on a new line"});
      continue;
    }
    // A byte-order mark (an editor's) is not part of the JSON.
    if (json_line.substr(0, kByteOrderMark.size()) == kByteOrderMark) json_line.remove_prefix(kByteOrderMark.size());
    try {
      // The line is followed by the rest of the text and the readable bytes
      // after it, so simdjson's padding requirement holds without copying
      // each line.
      const std::size_t capacity = all.size() - static_cast<std::size_t>(json_line.data() - all.data()) + readable_after;
      simdjson::ondemand::document document;
      if (auto error = parser.iterate(json_line.data(), json_line.size(), capacity).get(document))
        throw simdjson::simdjson_error(error);
      object o;
      if (auto error = document.get_object().get(o)) throw simdjson::simdjson_error(error);
      sink(point_from(o, raw), line);
    } catch (const simdjson::simdjson_error& e) {
      problems.push_back({file_name, line, std::string("not valid JSON: ") + e.what()});
    } catch (const std::exception& e) {
      problems.push_back({file_name, line, e.what()});
    }
  }
}

}  // namespace

PointSink collect_into(PointsRead& read) {
  return [&read](Point&& point, int line) {
    read.points.push_back(std::move(point));
    read.lines.push_back(line);
  };
}

PointsRead read_points(std::string_view text, const std::string& file_name, RawTimes raw) {
  const simdjson::padded_string padded(text.data(), text.size());
  PointsRead read;
  read_padded(std::string_view(padded.data(), padded.size()), simdjson::SIMDJSON_PADDING, file_name, raw, 0,
              collect_into(read), read.problems);
  return read;
}

std::size_t scan_points_file(const std::string& path, RawTimes raw, std::size_t last_lines, const PointSink& sink,
                             std::vector<StoreProblem>& problems) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return 0;
  const MappedFile file(path);
  const std::string_view whole = file.text();
  const std::size_t tail_start = last_lines > 0 ? start_of_last_lines(whole, last_lines) : 0;
  const std::size_t skipped = count_lines(whole.substr(0, tail_start));
  file.will_read(tail_start);
  // simdjson reads up to SIMDJSON_PADDING bytes past a document. The lines
  // that end that far before the end of the file are parsed where they are
  // mapped (the file's own next bytes are the padding); only the last few
  // are copied into a padded buffer. A copy of the whole file would double
  // the memory and the page faults of a long store.
  const std::string_view tail = whole.substr(tail_start);
  std::size_t in_place = 0;
  if (tail.size() > simdjson::SIMDJSON_PADDING) {
    const void* newline = memrchr(tail.data(), '\n', tail.size() - simdjson::SIMDJSON_PADDING);
    if (newline != nullptr) in_place = static_cast<std::size_t>(static_cast<const char*>(newline) - tail.data()) + 1;
  }
  const std::string_view mapped = tail.substr(0, in_place);
  read_padded(mapped, tail.size() - in_place, path, raw, skipped, sink, problems);
  const simdjson::padded_string last(tail.data() + in_place, tail.size() - in_place);
  read_padded(std::string_view(last.data(), last.size()), simdjson::SIMDJSON_PADDING, path, raw,
              skipped + count_lines(mapped), sink, problems);
  return skipped;
}

PointsRead read_points_file(const std::string& path, RawTimes raw, std::size_t last_lines) {
  PointsRead read;
  read.skipped_lines = scan_points_file(path, raw, last_lines, collect_into(read), read.problems);
  return read;
}

Point parse_point_line(std::string_view line) {
  if (line.find('\n') != std::string_view::npos) throw std::runtime_error("a point is one line of JSON");
  PointsRead read = read_points(std::string(line) + "\n", "point", RawTimes::read);
  if (!read.problems.empty()) throw std::runtime_error(read.problems.front().reason);
  if (read.points.empty()) throw std::runtime_error("a point must be a JSON object");
  return std::move(read.points.front());
}

}  // namespace heapline::bench
