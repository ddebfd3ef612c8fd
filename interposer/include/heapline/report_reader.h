// The one reader of the heapline/1 report (report_format.h is its writer;
// both take the field names from report_key there). Every program that
// reads a report (the launcher's summary, tree, plot and clean; the
// harness's measurement) reads it through here: a file that is not a
// regular file, is empty, is not JSON, or has a field missing, of the wrong
// type or out of range is refused with one line naming the file and the
// field, never half-read and never by throwing out of the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heapline/live_format.h"
#include "heapline/report_format.h"
#include "heapline/terminal_text.h"

namespace heapline {

struct ReportMarker {
  std::uint64_t t_ns = 0;
  std::string name;
};

// The heap sampler's part of a report (profile_format.h; the JSON's
// fields are report_key's "sampling", "peak_profile", "exit_profile").
struct ProfileModuleData {
  std::string path;
  std::string build_id;  // lowercase hex; empty when the module had none
};

struct ProfileFrameData {
  int module = -1;            // index into ProfileData::modules; -1: none (a raw address)
  std::uint64_t address = 0;  // in the module's ELF file (return addresses)
};

struct ProfileSiteData {
  std::int64_t bytes = 0;        // estimated
  std::int64_t error_bytes = 0;  // three standard errors
  std::uint64_t samples = 0;
  std::uint64_t sampled_bytes = 0;
  bool mapped = false;  // a site that mapped memory (kind "mapped"), not the heap's
  std::vector<ProfileFrameData> frames;  // innermost first
};

struct ProfileData {
  std::uint64_t time_ns = 0;
  std::int64_t heap_bytes = 0;
  std::int64_t mapped_bytes = 0;  // 0 in reports written before mapped memory was profiled
  std::uint64_t mean_bytes = 0;
  std::uint64_t live_samples = 0;
  std::uint64_t stacks = 0;
  std::int64_t bytes = 0;
  std::int64_t error_bytes = 0;
  std::vector<ProfileSiteData> sites;  // largest first
  ProfileSiteData other;               // the sites past the top ones, summed (no frames)
  std::uint64_t other_sites = 0;
  std::vector<ProfileModuleData> modules;
};

struct SamplingData {
  std::uint64_t mean_bytes = 0;  // 0: sampling was off
  std::string unwinder;
  std::vector<std::string> entry_points;  // empty: not said (a converted live file, an older report)
  std::uint64_t samples = 0;
  std::uint64_t dropped = 0;
  std::optional<ProfileData> peak_profile;  // none: no sample was live at a peak
  std::optional<ProfileData> exit_profile;
};

// A report as read: owning, every field typed. Optional fields of older
// writers get the default written here.
struct ParsedReport {
  std::string path;  // where it was read from
  int pid = 0;       // > 0
  int ppid = 0;      // >= 0
  std::string exe;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t duration_ns = 0;
  std::string allocator;   // optional ("")
  std::string size_basis;  // optional ("")
  struct Precision {
    bool exact = false;
    std::uint64_t bound_bytes = 0;
    // The budget (report_format.h): 0 in reports written before it.
    std::uint64_t budget_floor_bytes = 0;
    std::uint64_t budget_divisor = 0;
    std::uint64_t budget_bytes = 0;
    // Reports written before the budget: each thread's minimum threshold
    // and divisor (0 in later ones).
    std::uint64_t min_threshold_bytes = 0;
    std::uint64_t divisor = 0;
    std::uint64_t max_threshold_bytes = 0;  // optional (min_threshold_bytes)
    std::uint64_t max_threads = 0;
  } precision;
  std::int64_t peak_bytes = 0;
  std::uint64_t peak_time_ns = 0;
  std::int64_t final_bytes = 0;
  // Mapped memory: absent from reports older than it, "unknown" in one
  // converted from an older live file; `total` (heap + mapped) comes with it.
  enum class MappedMode { kAbsent, kUnknown, kOn, kOff };
  struct Mapped {
    MappedMode mode = MappedMode::kAbsent;
    std::int64_t peak_bytes = 0;
    std::uint64_t peak_time_ns = 0;
    std::int64_t final_bytes = 0;
    std::uint64_t changes = 0;
    std::uint64_t untracked = 0;
  } mapped;
  struct Total {
    std::int64_t peak_bytes = 0;
    std::uint64_t peak_time_ns = 0;
    std::int64_t final_bytes = 0;
  } total;
  struct Calls {
    std::uint64_t alloc = 0, free = 0, realloc = 0;
  } calls;
  std::uint64_t publishes = 0;
  std::uint64_t interval_ns = 0;
  std::optional<bool> allocations_seen;  // absent: not known (converted)
  std::string ended = kEndedExit;        // kEndedExit, kEndedWithoutExit or kEndedRunning
  std::uint64_t last_sample_ns = 0;      // when not ended by exit
  int signal = 0;                        // 0: none or not known
  std::string run_id;                    // optional ("": the writer did not record it)
  std::string live_file_problem;         // optional ("": the live file was made): why the heap line stayed in memory
  std::optional<std::int64_t> peak_rss_bytes;  // optional: the peak resident set size, when recorded
  // Optional: the resident set as read at samples (report_format.h,
  // "resident"): the largest reading, its time, the last reading; with it
  // its series, resident_samples (empty in older reports).
  struct Resident {
    std::int64_t peak_bytes = 0;
    std::uint64_t peak_time_ns = 0;
    std::int64_t final_bytes = 0;
  };
  std::optional<Resident> resident;
  // Optional: the accuracy build's exact peak and final figure of the same
  // run (report_format.h, "exact_shadow").
  struct ExactShadow {
    std::int64_t peak_bytes = 0;
    std::int64_t final_bytes = 0;
  };
  std::optional<ExactShadow> exact_shadow;
  std::vector<ReportMarker> markers;     // in the order recorded
  std::uint64_t markers_dropped = 0;     // placed past the capacity, not held (optional: 0)
  std::vector<Sample> samples;           // at least one
  std::vector<Sample> mapped_samples;
  std::vector<Sample> resident_samples;
  std::optional<SamplingData> sampling;  // absent: a writer without the sampler

  bool mapped_on() const { return mapped.mode == MappedMode::kOn; }
  bool ended_by_exit() const { return ended == kEndedExit; }
};

// Why a file is not a report, for callers that treat the cases apart
// (`heapline clean` passes over JSON files that are not heapline's).
enum class ReportProblem {
  kNone,
  kUnreadable,     // missing, no permission, not a regular file, too large
  kEmpty,
  kNotJson,        // or JSON the reader refuses (a key twice in an object)
  kCutReport,      // a heapline/1 report's own opening, then JSON cut short or damaged
  kLiveFile,       // a live file (heapline/live_format.h), which heapline convert makes a report of
  kNotThisFormat,  // JSON, but no "format": "heapline/1": another program's file
  kBadField,       // a heapline/1 report with a field missing, mistyped or out of range
};

struct ReportReading {
  std::optional<ParsedReport> report;
  ReportProblem problem = ReportProblem::kNone;
  std::string error;  // one line: "PATH: what is wrong" (names the field)
  explicit operator bool() const { return report.has_value(); }
};

// Reads the report at `path` (a regular file only, opened without blocking:
// regular_file.h).
ReportReading read_report_file(const std::string& path);

// Reads a report from `text`; `source` names it in messages.
ReportReading parse_report(std::string_view text, const std::string& source);

// Reports are at most this large (4096 samples in each series, markers,
// names): anything larger is refused unread.
inline constexpr std::size_t kMaxReportBytes = 64u << 20;

}  // namespace heapline
