#include "heapline_bench/history/point.h"

#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json raw_runs_to_json(const std::vector<RawRun>& runs) {
  ordered_json out = ordered_json::array();
  for (const auto& r : runs)
    out.push_back({{"wall_s", r.wall_seconds}, {"user_s", r.user_seconds}, {"sys_s", r.system_seconds},
                   {"max_rss_kib", r.max_rss_kib}});
  return out;
}

RawRun raw_run(const RunResult& r) { return {r.wall_seconds, r.user_seconds, r.system_seconds, r.max_rss_kib}; }

namespace {

std::vector<RawRun> raw_from_json(const json& array) {
  std::vector<RawRun> out;
  for (const auto& r : array) {
    if (r.is_number()) {  // the oldest stores kept wall times only
      out.push_back({r.get<double>(), 0, 0, 0});
      continue;
    }
    out.push_back({r.at("wall_s").get<double>(), r.value("user_s", 0.0), r.value("sys_s", 0.0),
                   r.value("max_rss_kib", 0L)});
  }
  return out;
}


// "0.3.2" < "0.4.0"; anything unparsable counts as old.
bool version_before(const std::string& version, int major, int minor) {
  int got_major = 0, got_minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &got_major, &got_minor) != 2) return true;
  return got_major < major || (got_major == major && got_minor < minor);
}

}  // namespace

std::string default_timing_for_version(const std::string& heapline_version) {
  return version_before(heapline_version, 0, 4) ? "benchmark" : "command";
}

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

Point point_from_measurement(const Measurement& m, const std::string& library_label,
                             const std::string& command_text) {
  Point point;
  point.scenario = m.request.scenario;
  point.measured_at = utc_now_iso8601();
  point.overhead = m.overhead;
  point.interval = m.interval;
  point.confidence = m.bootstrap.confidence;
  point.runs = m.request.runs;
  point.median_with_seconds = m.median_with;
  point.median_without_seconds = m.median_without;
  for (const auto& r : m.with_runs) point.with_runs.push_back(raw_run(r));
  for (const auto& r : m.without_runs) point.without_runs.push_back(raw_run(r));
  point.heapline_version = HEAPLINE_VERSION;
  point.library = library_label;
  point.command = command_text;
  point.machine = this_machine();
  point.fingerprint = point.machine.fingerprint();
  return point;
}

ordered_json to_json(const Point& p) {
  ordered_json out = {
      {"schema", p.schema},
      {"scenario", p.scenario},
      {"commit", p.commit},
      {"commit_range", p.commit_range
                           ? ordered_json{{"first", p.commit_range->first}, {"last", p.commit_range->last}}
                           : ordered_json(nullptr)},
      {"measured_at", p.measured_at},
      {"overhead", p.overhead},
      {"interval", {p.interval.low, p.interval.high}},
      {"confidence", p.confidence},
      {"runs", p.runs},
      {"median_with_s", p.median_with_seconds},
      {"median_without_s", p.median_without_seconds},
      {"timing", p.timing},
      {"heapline_version", p.heapline_version},
      {"library", p.library},
      {"command", p.command},
      {"machine",
       {{"fingerprint", p.fingerprint},
        {"cpu_model", p.machine.cpu_model},
        {"cores", p.machine.cores},
        {"kernel", p.machine.kernel},
        {"glibc", p.machine.glibc},
        {"compiler", p.machine.compiler},
        {"runner_image", p.machine.runner_image}}},
      // Raw times come last: readers that need only the figures (the page)
      // stop before them.
      {"raw", {{"with", raw_runs_to_json(p.with_runs)}, {"without", raw_runs_to_json(p.without_runs)}}},
  };
  return out;
}

Point point_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("a point must be a JSON object");
  Point p;
  try {
    p.schema = j.value("schema", kPointSchema);
    if (p.schema > kPointSchema)
      throw std::runtime_error("schema " + std::to_string(p.schema) + " is newer than this heapline-bench (" +
                               std::to_string(kPointSchema) + ")");
    p.scenario = j.contains("scenario") && !j["scenario"].is_null() ? j["scenario"].get<std::string>()
                                                                     : kDefaultScenario;
    p.commit = j.value("commit", "");
    if (j.contains("commit_range") && j["commit_range"].is_object())
      p.commit_range = CommitRange{j["commit_range"].at("first").get<std::string>(),
                                   j["commit_range"].at("last").get<std::string>()};
    p.measured_at = j.at("measured_at").get<std::string>();
    p.overhead = j.at("overhead").get<double>();
    if (j.contains("interval")) {
      const auto& interval = j["interval"];
      p.interval = {interval.at(0).get<double>(), interval.at(1).get<double>()};
    } else {
      p.interval = {p.overhead, p.overhead};  // old points without one: a zero-width interval
    }
    p.confidence = j.value("confidence", 0.95);
    p.runs = j.value("runs", 0);
    p.median_with_seconds = j.value("median_with_s", 0.0);
    p.median_without_seconds = j.value("median_without_s", 0.0);
    if (j.contains("raw")) {
      p.with_runs = raw_from_json(j["raw"].at("with"));
      p.without_runs = raw_from_json(j["raw"].at("without"));
    }
    p.heapline_version = j.value("heapline_version", "");
    if (j.contains("timing")) {
      p.timing = j["timing"].get<std::string>();
      if (p.timing != "command" && p.timing != "benchmark")
        throw std::runtime_error("timing must be \"command\" or \"benchmark\", got \"" + p.timing + "\"");
    } else {
      p.timing = default_timing_for_version(p.heapline_version);
    }
    p.library = j.value("library", "");
    p.command = j.value("command", "");
    if (j.contains("machine")) {
      const auto& m = j["machine"];
      p.machine.cpu_model = m.value("cpu_model", "");
      p.machine.cores = m.value("cores", 0);
      p.machine.kernel = m.value("kernel", "");
      p.machine.glibc = m.value("glibc", "");
      p.machine.compiler = m.value("compiler", "");
      p.machine.runner_image = m.value("runner_image", "");
      p.fingerprint = m.value("fingerprint", p.machine.fingerprint());
    } else {
      p.fingerprint = "unknown";
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("malformed point: ") + e.what());
  }
  return p;
}

}  // namespace heapline::bench
