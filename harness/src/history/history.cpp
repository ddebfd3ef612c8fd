#include "heapline_bench/history/history.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <map>
#include <stdexcept>

namespace heapline::bench {
namespace {

using simdjson::ondemand::object;

std::string string_field(object& point, const char* name, const std::string& fallback = "") {
  auto field = point.find_field_unordered(name);
  if (field.error()) return fallback;
  if (field.is_null()) return fallback;
  std::string_view value;
  if (auto error = field.get_string().get(value)) throw simdjson::simdjson_error(error);
  return std::string(value);
}

double number_field(object& point, const char* name) {
  double value;
  if (point.find_field_unordered(name).get_double().get(value) != simdjson::SUCCESS)
    throw std::runtime_error(std::string("field \"") + name + "\" is missing or not a number");
  return value;
}

// Fields are read in the order point.cpp writes them, so the parser never
// goes back, and never reaches the raw times at the end of the line.
HistoryEntry entry_from(object point, int line, std::map<std::string, int>& machine_index,
                        std::vector<std::string>& machines) {
  HistoryEntry entry;
  entry.line = line;
  // The same rules as point_from_json (point.h), on the fields read here.
  int64_t schema = kPointSchema;
  if (!point.find_field_unordered("schema").get_int64().get(schema) && schema > kPointSchema)
    throw std::runtime_error("schema " + std::to_string(schema) + " is newer than this heapline-bench");
  entry.scenario = string_field(point, "scenario", kDefaultScenario);
  entry.commit = string_field(point, "commit");
  auto range = point.find_field_unordered("commit_range");
  if (!range.error() && !range.is_null()) {
    object range_object = range.get_object();
    entry.range_first = string_field(range_object, "first");
  }
  entry.measured_at = string_field(point, "measured_at");
  if (entry.measured_at.empty()) throw std::runtime_error("field \"measured_at\" is missing");
  entry.overhead = number_field(point, "overhead");
  auto interval = point.find_field_unordered("interval");
  if (interval.error()) {
    entry.low = entry.high = entry.overhead;
  } else {
    double bounds[2];
    std::size_t count = 0;
    for (auto value : interval.get_array()) {
      if (count == 2) throw std::runtime_error("field \"interval\" must hold two numbers");
      bounds[count++] = value.get_double();
    }
    if (count != 2) throw std::runtime_error("field \"interval\" must hold two numbers");
    entry.low = bounds[0];
    entry.high = bounds[1];
  }
  entry.timing = string_field(point, "timing");
  const std::string version = string_field(point, "heapline_version");
  if (entry.timing.empty()) entry.timing = default_timing_for_version(version);
  if (entry.timing != "command" && entry.timing != "benchmark")
    throw std::runtime_error("timing must be \"command\" or \"benchmark\"");
  auto machine_field = point.find_field_unordered("machine");
  if (machine_field.error()) {
    entry.fingerprint = "unknown";
    return entry;
  }
  object machine_object = machine_field.get_object();
  entry.fingerprint = string_field(machine_object, "fingerprint");
  if (auto known = machine_index.find(entry.fingerprint); known != machine_index.end()) {
    entry.machine = known->second;  // the same machine as an earlier point
    return entry;
  }
  Machine machine;
  machine.cpu_model = string_field(machine_object, "cpu_model");
  int64_t cores = 0;
  if (machine_object.find_field_unordered("cores").get_int64().get(cores) != simdjson::SUCCESS) cores = 0;
  machine.cores = static_cast<int>(cores);
  machine.kernel = string_field(machine_object, "kernel");
  machine.glibc = string_field(machine_object, "glibc");
  machine.compiler = string_field(machine_object, "compiler");
  machine.runner_image = string_field(machine_object, "runner_image");
  if (entry.fingerprint.empty()) entry.fingerprint = machine.fingerprint();
  entry.machine = static_cast<int>(machines.size());
  machines.push_back(machine.describe());
  machine_index.emplace(entry.fingerprint, entry.machine);
  return entry;
}

}  // namespace

namespace {

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

}  // namespace

History read_history(const std::string& path, std::size_t last_lines) {
  History history;
  if (!std::filesystem::exists(path)) return history;
  const MappedFile file(path);
  const std::string_view whole = file.text();
  const std::size_t tail_start = last_lines > 0 ? start_of_last_lines(whole, last_lines) : 0;
  history.skipped_lines = count_lines(whole.substr(0, tail_start));
  // simdjson wants padding after the text it parses: copy just the tail.
  const simdjson::padded_string text(whole.data() + tail_start, whole.size() - tail_start);

  simdjson::ondemand::parser parser;
  std::map<std::string, int> machine_index;  // fingerprint -> index in history.machines
  const std::string_view all(text.data(), text.size());
  std::size_t start = 0;
  int line = static_cast<int>(history.skipped_lines);
  while (start < all.size()) {
    ++line;
    std::size_t end = all.find('\n', start);
    const bool torn = end == std::string_view::npos;
    if (torn) end = all.size();
    const std::string_view json_line = all.substr(start, end - start);
    start = end + 1;
    if (json_line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (torn) {
      history.problems.push_back({path, line, "the last line is incomplete (no newline): an append was interrupted"});
      continue;
    }
    try {
      // The line is followed by the rest of the padded file, so simdjson's
      // padding requirement holds without copying each line.
      const std::size_t capacity = all.size() - static_cast<std::size_t>(json_line.data() - all.data()) +
                                   simdjson::SIMDJSON_PADDING;
      auto document = parser.iterate(json_line.data(), json_line.size(), capacity);
      object point;
      if (auto error = document.get_object().get(point)) throw simdjson::simdjson_error(error);
      history.entries.push_back(entry_from(point, line, machine_index, history.machines));
    } catch (const simdjson::simdjson_error& e) {
      history.problems.push_back({path, line, std::string("not a valid point: ") + e.what()});
    } catch (const std::exception& e) {
      history.problems.push_back({path, line, e.what()});
    }
  }
  return history;
}

}  // namespace heapline::bench
