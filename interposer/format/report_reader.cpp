#include "heapline/report_reader.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include <heapline/json_document.h>

#include "heapline/figures.h"
#include "heapline/live_format.h"
#include "heapline/regular_file.h"

namespace heapline {

namespace {

using nlohmann::json;
namespace key = report_key;

// A field that is missing, mistyped or out of range: its message.
struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads the fields of one JSON object; `where` is its name in the report
// ("" for the top level, "precision." for a nested one).
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const json* find(const char* name, bool required) const {
    auto it = object_.find(name);
    if (it == object_.end()) {
      if (required) fail(name, "is missing");
      return nullptr;
    }
    return &*it;
  }

  std::uint64_t unsigned_number(const char* name, bool required = true, std::uint64_t fallback = 0) const {
    const json* value = find(name, required);
    if (value == nullptr) return fallback;
    return unsigned_value(*value, name);
  }
  // Figures: a byte figure within ±2^60 and a time within 2^62 ns
  // (heapline/figures.h), so that what the report's readers add up never
  // overflows. A report that holds more is refused, naming the field.
  std::int64_t bytes(const char* name, bool required = true) const {
    const json* value = find(name, required);
    return value == nullptr ? 0 : bytes_value(*value, name);
  }
  // A byte figure that is never negative (an estimate, its error, the
  // resident set): 0 to 2^60, the same rule for each.
  std::int64_t amount(const char* name, bool required = true) const {
    return static_cast<std::int64_t>(byte_size(name, required));
  }
  std::uint64_t byte_size(const char* name, bool required = true, std::uint64_t fallback = 0) const {
    const json* value = find(name, required);
    if (value == nullptr) return fallback;
    const std::uint64_t number = unsigned_value(*value, name);
    if (number > kByteSizeLimit) fail(name, out_of_range(std::to_string(number), "0 to 2^60 bytes"));
    return number;
  }
  std::uint64_t time_ns(const char* name, bool required = true) const {
    const json* value = find(name, required);
    return value == nullptr ? 0 : time_value(*value, name);
  }
  std::int64_t bytes_value(const json& value, const std::string& name) const {
    const std::int64_t number = signed_value(value, name);
    if (number != bounded_bytes(number)) fail(name, out_of_range(std::to_string(number), "-2^60 to 2^60 bytes"));
    return number;
  }
  std::uint64_t time_value(const json& value, const std::string& name) const {
    const std::uint64_t number = unsigned_value(value, name);
    if (number != bounded_ns(number)) fail(name, out_of_range(std::to_string(number), "0 to 2^62 ns"));
    return number;
  }
  static std::string out_of_range(const std::string& number, const char* range) {
    return "is out of range (" + number + "; " + range + ")";
  }
  int int_in(const char* name, std::int64_t low, std::int64_t high, bool required = true) const {
    const json* value = find(name, required);
    if (value == nullptr) return 0;
    const std::int64_t number = signed_value(*value, name);
    if (number < low || number > high) {
      fail(name, "is out of range (" + std::to_string(number) + "; " + std::to_string(low) + " to " +
                     std::to_string(high) + ")");
    }
    return static_cast<int>(number);
  }
  std::string text(const char* name, bool required = true) const {
    const json* value = find(name, required);
    if (value == nullptr) return {};
    if (!value->is_string()) fail(name, wrong_type(*value, "a string"));
    return value->get<std::string>();
  }
  // One of `choices` (a null-terminated list); returns its index.
  std::size_t choice(const char* name, const char* const* choices) const {
    const std::string value = text(name);
    std::string list;
    for (std::size_t i = 0; choices[i] != nullptr; ++i) {
      if (value == choices[i]) return i;
      list += std::string(i == 0 ? "" : ", ") + '"' + choices[i] + '"';
    }
    fail(name, "is \"" + terminal_text(value, 40) + "\", not one of " + list);
  }
  bool boolean(const char* name) const {
    const json* value = find(name, true);
    if (!value->is_boolean()) fail(name, wrong_type(*value, "true or false"));
    return value->get<bool>();
  }
  const json& object(const char* name) const {
    const json* value = find(name, true);
    if (!value->is_object()) fail(name, wrong_type(*value, "an object"));
    return *value;
  }
  const json* array(const char* name, bool required) const {
    const json* value = find(name, required);
    if (value != nullptr && !value->is_array()) fail(name, wrong_type(*value, "an array"));
    return value;
  }

  std::uint64_t unsigned_value(const json& value, const std::string& name) const {
    if (value.is_number_unsigned()) return value.get<std::uint64_t>();
    if (value.is_number_integer()) fail(name, "is out of range (" + std::to_string(value.get<std::int64_t>()) + "; at least 0)");
    if (value.is_number_float()) fail(name, "is not a whole number");
    fail(name, wrong_type(value, "an integer"));
  }
  std::int64_t signed_value(const json& value, const std::string& name) const {
    if (value.is_number_unsigned()) {
      const std::uint64_t number = value.get<std::uint64_t>();
      if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        fail(name, "is out of range (" + std::to_string(number) + ")");
      }
      return static_cast<std::int64_t>(number);
    }
    if (value.is_number_integer()) return value.get<std::int64_t>();
    if (value.is_number_float()) fail(name, "is not a whole number");
    fail(name, wrong_type(value, "an integer"));
  }

  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    throw FieldError("field \"" + where_ + name + "\" " + what);
  }

  static std::string wrong_type(const json& value, const char* wanted) {
    return std::string("is ") + (value.is_string() ? "a string" : value.is_boolean() ? "a boolean"
                                  : value.is_null()                    ? "null"
                                  : value.is_object()                  ? "an object"
                                  : value.is_array()                   ? "an array"
                                                                       : "a number") +
           ", not " + wanted;
  }
 private:
  const json& object_;
  std::string where_;
};

// [[t_ns, live, max_live], ...]
std::vector<Sample> read_samples(const Fields& top, const char* name, bool required) {
  std::vector<Sample> samples;
  const json* array = top.array(name, required);
  if (array == nullptr) return samples;
  samples.reserve(array->size());
  for (std::size_t i = 0; i < array->size(); ++i) {
    const json& entry = (*array)[i];
    const std::string where = std::string(name) + "[" + std::to_string(i) + "]";
    if (!entry.is_array() || entry.size() != 3) top.fail(where, "is not [t_ns, bytes, max_bytes]");
    samples.push_back(Sample{top.time_value(entry[0], where + "[0]"), top.bytes_value(entry[1], where + "[1]"),
                             top.bytes_value(entry[2], where + "[2]")});
  }
  return samples;
}

// A profile's site: {bytes, error_bytes, samples, sampled_bytes[, frames]}.
ProfileSiteData read_site(const json& object, const std::string& where, bool with_frames, std::size_t modules) {
  if (!object.is_object()) Fields(object, "").fail(where, "is not an object");
  const Fields fields(object, where + ".");
  ProfileSiteData site;
  site.bytes = fields.amount(key::kBytes);
  site.error_bytes = fields.amount(key::kErrorBytes);
  site.samples = fields.unsigned_number(key::kSampleCount);
  site.sampled_bytes = fields.byte_size(key::kSampledBytes);
  if (!with_frames) return site;
  if (fields.find(key::kKind, false) != nullptr) {
    static const char* const kKinds[] = {kSiteKindMapped, nullptr};
    site.mapped = fields.choice(key::kKind, kKinds) == 0;
  }
  const json& frames = *fields.array(key::kFrames, true);
  for (std::size_t f = 0; f < frames.size(); ++f) {
    const json& frame = frames[f];
    const std::string at = std::string(key::kFrames) + "[" + std::to_string(f) + "]";
    if (!frame.is_array() || frame.size() != 2) fields.fail(at, "is not [module, address]");
    const std::int64_t module = fields.signed_value(frame[0], at + "[0]");
    if (module < -1 || module >= static_cast<std::int64_t>(modules)) {
      fields.fail(at + "[0]", "is out of range (" + std::to_string(module) + "; -1 to " +
                                  std::to_string(static_cast<std::int64_t>(modules) - 1) + ")");
    }
    site.frames.push_back({static_cast<int>(module), fields.unsigned_value(frame[1], at + "[1]")});
  }
  return site;
}

// "peak_profile" or "exit_profile": null or missing (none taken), or a profile.
std::optional<ProfileData> read_profile(const Fields& top, const char* name) {
  const json* found = top.find(name, false);
  if (found == nullptr || found->is_null()) return std::nullopt;
  const Fields fields(top.object(name), std::string(name) + ".");
  ProfileData profile;
  profile.time_ns = fields.time_ns(key::kTimeNs);
  // The heap and the mapped bytes at the profile's moment are live figures:
  // an exit profile's heap is negative when the library saw blocks freed
  // that it never saw made (loaded with dlopen).
  profile.heap_bytes = fields.bytes(key::kHeapBytes);
  profile.mapped_bytes = fields.bytes(key::kMappedBytes, false);
  profile.mean_bytes = fields.byte_size(key::kMeanBytes);
  // A profile is made of samples: its mean is at least a byte (0 is the
  // sampler off, which makes none).
  if (profile.mean_bytes == 0) fields.fail(key::kMeanBytes, "is out of range (0; at least 1 in a profile)");
  profile.live_samples = fields.unsigned_number(key::kLiveSamples);
  profile.stacks = fields.unsigned_number(key::kStacks);
  profile.bytes = fields.amount(key::kBytes);
  profile.error_bytes = fields.amount(key::kErrorBytes);
  const json& modules = *fields.array(key::kModules, true);
  for (std::size_t m = 0; m < modules.size(); ++m) {
    const std::string at = std::string(name) + "." + key::kModules + "[" + std::to_string(m) + "]";
    if (!modules[m].is_object()) fields.fail(std::string(key::kModules) + "[" + std::to_string(m) + "]", "is not an object");
    const Fields module(modules[m], at + ".");
    profile.modules.push_back({module.text(key::kPath), module.text(key::kBuildId)});
  }
  const json& sites = *fields.array(key::kSites, true);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    profile.sites.push_back(read_site(sites[i], std::string(name) + "." + key::kSites + "[" + std::to_string(i) + "]",
                                      true, profile.modules.size()));
  }
  const json& other = fields.object(key::kOther);
  profile.other = read_site(other, std::string(name) + "." + key::kOther, false, 0);
  profile.other_sites = Fields(other, std::string(name) + "." + key::kOther + ".").unsigned_number(key::kSites);
  return profile;
}

// "sampling" and the two profiles; nullopt without "sampling".
std::optional<SamplingData> read_sampling(const Fields& top) {
  if (top.find(key::kSampling, false) == nullptr) return std::nullopt;
  const Fields fields(top.object(key::kSampling), std::string(key::kSampling) + ".");
  SamplingData data;
  data.mean_bytes = fields.byte_size(key::kMeanBytes);
  data.unwinder = fields.text(key::kUnwinder);
  if (const json* entry_points = fields.array(key::kEntryPoints, false)) {
    for (std::size_t i = 0; i < entry_points->size(); ++i) {
      const json& name = (*entry_points)[i];
      if (!name.is_string()) fields.fail(std::string(key::kEntryPoints) + "[" + std::to_string(i) + "]", "is not a string");
      data.entry_points.push_back(name.get<std::string>());
    }
  }
  data.samples = fields.unsigned_number(key::kSampleCount);
  data.dropped = fields.unsigned_number(key::kDropped);
  data.peak_profile = read_profile(top, key::kPeakProfile);
  data.exit_profile = read_profile(top, key::kExitProfile);
  return data;
}

ParsedReport read_fields(const json& root) {
  Fields top(root, "");
  ParsedReport r;
  r.pid = top.int_in(key::kPid, 1, INT_MAX);
  r.ppid = top.int_in(key::kPpid, 0, INT_MAX);
  r.exe = top.text(key::kExe);
  r.start_unix_ns = top.time_ns(key::kStartUnixNs);
  r.duration_ns = top.time_ns(key::kDurationNs);
  r.allocator = top.text(key::kAllocator, false);
  r.size_basis = top.text(key::kSizeBasis, false);

  Fields precision(top.object(key::kPrecision), std::string(key::kPrecision) + ".");
  static const char* const kPrecisionModes[] = {kPrecisionExact, kPrecisionBatched, nullptr};
  r.precision.exact = precision.choice(key::kMode, kPrecisionModes) == 0;
  r.precision.bound_bytes = precision.byte_size(key::kBoundBytes);
  // The budget's figures, or before it each thread's minimum threshold: one
  // of the two.
  const bool budget = precision.find(key::kBudgetDivisor, false) != nullptr;
  r.precision.budget_floor_bytes = precision.byte_size(key::kBudgetFloorBytes, budget);
  r.precision.budget_divisor = precision.unsigned_number(key::kBudgetDivisor, false);
  r.precision.budget_bytes = precision.byte_size(key::kBudgetBytes, budget);
  r.precision.min_threshold_bytes = precision.byte_size(key::kMinThresholdBytes, !budget);
  r.precision.divisor = precision.unsigned_number(key::kDivisor, false);
  r.precision.max_threshold_bytes =
      precision.byte_size(key::kMaxThresholdBytes, false, r.precision.min_threshold_bytes);
  r.precision.max_threads = precision.unsigned_number(key::kMaxThreads);

  r.peak_bytes = top.bytes(key::kPeakBytes);
  r.peak_time_ns = top.time_ns(key::kPeakTimeNs);
  r.final_bytes = top.bytes(key::kFinalBytes);

  if (top.find(key::kMapped, false) != nullptr) {
    Fields mapped(top.object(key::kMapped), std::string(key::kMapped) + ".");
    static const char* const kMappedModes[] = {kMappedModeUnknown, kMappedModeOn, kMappedModeOff, nullptr};
    static const ParsedReport::MappedMode kModes[] = {ParsedReport::MappedMode::kUnknown,
                                                      ParsedReport::MappedMode::kOn, ParsedReport::MappedMode::kOff};
    r.mapped.mode = kModes[mapped.choice(key::kMode, kMappedModes)];
    if (r.mapped.mode != ParsedReport::MappedMode::kUnknown) {
      r.mapped.peak_bytes = mapped.bytes(key::kPeakBytes);
      r.mapped.peak_time_ns = mapped.time_ns(key::kPeakTimeNs);
      r.mapped.final_bytes = mapped.bytes(key::kFinalBytes);
      r.mapped.changes = mapped.unsigned_number(key::kChanges, false);
      r.mapped.untracked = mapped.unsigned_number(key::kUntracked, false);
      Fields total(top.object(key::kTotal), std::string(key::kTotal) + ".");
      r.total.peak_bytes = total.bytes(key::kPeakBytes);
      r.total.peak_time_ns = total.time_ns(key::kPeakTimeNs);
      r.total.final_bytes = total.bytes(key::kFinalBytes);
    }
  }
  if (r.mapped.mode == ParsedReport::MappedMode::kAbsent || r.mapped.mode == ParsedReport::MappedMode::kUnknown) {
    r.total = {r.peak_bytes, r.peak_time_ns, r.final_bytes};  // heap alone: nothing else known
  }

  Fields calls(top.object(key::kCalls), std::string(key::kCalls) + ".");
  r.calls.alloc = calls.unsigned_number(key::kAlloc);
  r.calls.free = calls.unsigned_number(key::kFree);
  r.calls.realloc = calls.unsigned_number(key::kRealloc);
  r.publishes = top.unsigned_number(key::kPublishes);
  r.interval_ns = top.time_ns(key::kIntervalNs);
  if (top.find(key::kAllocationsSeen, false) != nullptr) r.allocations_seen = top.boolean(key::kAllocationsSeen);

  if (top.find(key::kEnded, false) != nullptr) {
    static const char* const kEndings[] = {kEndedExit, kEndedWithoutExit, kEndedRunning, nullptr};
    r.ended = kEndings[top.choice(key::kEnded, kEndings)];
  }
  r.last_sample_ns = top.time_ns(key::kLastSampleNs, false);
  r.signal = top.int_in(key::kSignal, 1, 127, false);
  r.run_id = top.text(key::kRunId, false);
  r.live_file_problem = top.text(key::kLiveFileProblem, false);
  r.markers_dropped = top.unsigned_number(key::kMarkersDropped, false);
  if (top.find(key::kPeakRssBytes, false) != nullptr) {
    r.peak_rss_bytes = top.amount(key::kPeakRssBytes);
  }
  if (top.find(key::kResident, false) != nullptr) {
    Fields resident(top.object(key::kResident), std::string(key::kResident) + ".");
    r.resident = ParsedReport::Resident{resident.amount(key::kPeakBytes),
                                        resident.time_ns(key::kPeakTimeNs),
                                        resident.amount(key::kFinalBytes)};
  }
  if (top.find(key::kExactShadow, false) != nullptr) {
    Fields shadow(top.object(key::kExactShadow), std::string(key::kExactShadow) + ".");
    r.exact_shadow = ParsedReport::ExactShadow{shadow.bytes(key::kPeakBytes), shadow.bytes(key::kFinalBytes)};
    if (r.exact_shadow->peak_bytes < 0) shadow.fail(key::kPeakBytes, "is out of range (at least 0)");
  }

  if (const json* markers = top.array(key::kMarkers, false)) {
    for (std::size_t i = 0; i < markers->size(); ++i) {
      const json& entry = (*markers)[i];
      const std::string where = std::string(key::kMarkers) + "[" + std::to_string(i) + "]";
      if (!entry.is_array() || entry.size() != 2 || !entry[1].is_string()) top.fail(where, "is not [t_ns, \"name\"]");
      r.markers.push_back(ReportMarker{top.time_value(entry[0], where + "[0]"), entry[1].get<std::string>()});
    }
  }
  r.samples = read_samples(top, key::kSamples, true);
  if (r.samples.empty()) top.fail(key::kSamples, "is empty (a report has at least its first sample)");
  r.mapped_samples = read_samples(top, key::kMappedSamples, false);
  r.resident_samples = read_samples(top, key::kResidentSamples, false);
  for (std::size_t i = 0; i < r.resident_samples.size(); ++i) {
    const Sample& sample = r.resident_samples[i];
    const std::string where = std::string(key::kResidentSamples) + "[" + std::to_string(i) + "]";
    if (sample.live < 0) top.fail(where + "[1]", "is out of range (at least 0)");
    if (sample.max_live < 0) top.fail(where + "[2]", "is out of range (at least 0)");
  }
  r.sampling = read_sampling(top);
  return r;
}

}  // namespace

ReportReading parse_report(std::string_view text, const std::string& source) {
  ReportReading reading;
  auto refuse = [&](ReportProblem problem, const std::string& what) {
    reading.problem = problem;
    reading.error = source + ": " + what;
    return std::move(reading);
  };
  // A live file (a killed process's, say) is heapline's too, in another
  // form: its magic in its first bytes (heapline/live_format.h).
  if (text.size() >= sizeof kLiveMagic && std::memcmp(text.data(), &kLiveMagic, sizeof kLiveMagic) == 0) {
    return refuse(ReportProblem::kLiveFile, "a heapline live file, not a report (heapline convert makes its report)");
  }
  // The programs' one reader of a JSON document (heapline/json_document.h).
  JsonDocument document = read_json_document(text, source, "a heapline/1 report");
  if (!document) {
    const bool empty = document.problem == JsonProblem::kEmpty || document.problem == JsonProblem::kBlank;
    // The opening every heapline/1 writer makes (output.cpp): a file that
    // starts so is heapline's, cut short or damaged, not another program's.
    const std::string opening = std::string("{\"") + report_key::kFormat + "\":\"" + kReportFormatName + "\"";
    const bool ours = text.compare(0, opening.size(), opening) == 0;
    reading.problem = empty ? ReportProblem::kEmpty : ours ? ReportProblem::kCutReport : ReportProblem::kNotJson;
    reading.error = document.error;
    return reading;
  }
  json root = std::move(document.value);
  const auto format = root.find(report_key::kFormat);
  if (format == root.end() || !format->is_string() || format->get_ref<const std::string&>() != kReportFormatName) {
    return refuse(ReportProblem::kNotThisFormat, std::string("no \"") + report_key::kFormat + "\": \"" +
                                                     kReportFormatName + "\": not a heapline/1 report");
  }
  try {
    reading.report = read_fields(root);
  } catch (const FieldError& error) {
    return refuse(ReportProblem::kBadField, std::string("not a valid heapline/1 report: ") + error.what());
  }
  reading.report->path = source;
  return reading;
}

ReportReading read_report_file(const std::string& path) {
  ReportReading reading;
  const RegularFile file = RegularFile::open(path);
  std::string error;
  const std::string text = file.read_all(kMaxReportBytes, error);
  if (!error.empty()) {
    reading.problem = ReportProblem::kUnreadable;
    reading.error = error;
    return reading;
  }
  return parse_report(text, path);
}

}  // namespace heapline
