// The heapline/1 report: one JSON object per process, written by
// libheapline.so at exit and by `heapline convert` from a live file. The
// writer makes no allocation (numbers by hand into a fixed buffer, streamed
// with write(2)) and goes through a temporary name in the destination
// directory renamed into place, so a reader never sees half a file under the
// final name.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapline/live_format.h"
#include "heapline/profile_format.h"

namespace heapline {

// The report's field names and fixed values, shared by the writer (output.cpp)
// and the reader (report_reader.h), so the two cannot drift apart. Nested
// objects' fields are listed under their object.
namespace report_key {
inline constexpr char kFormat[] = "format";
inline constexpr char kPid[] = "pid";
inline constexpr char kPpid[] = "ppid";
inline constexpr char kExe[] = "exe";
inline constexpr char kStartUnixNs[] = "start_unix_ns";
inline constexpr char kDurationNs[] = "duration_ns";
inline constexpr char kAllocator[] = "allocator";
inline constexpr char kSizeBasis[] = "size_basis";
inline constexpr char kPrecision[] = "precision";  // {mode, bound_bytes, budget_floor_bytes, budget_divisor,
                                                   //  budget_bytes, max_threshold_bytes, max_threads}
inline constexpr char kMode[] = "mode";
inline constexpr char kBoundBytes[] = "bound_bytes";
inline constexpr char kBudgetFloorBytes[] = "budget_floor_bytes";
inline constexpr char kBudgetDivisor[] = "budget_divisor";
inline constexpr char kBudgetBytes[] = "budget_bytes";
// In reports written before the budget, in place of its three: each
// thread's minimum threshold and divisor.
inline constexpr char kMinThresholdBytes[] = "min_threshold_bytes";
inline constexpr char kDivisor[] = "divisor";
inline constexpr char kMaxThresholdBytes[] = "max_threshold_bytes";
inline constexpr char kMaxThreads[] = "max_threads";
inline constexpr char kPeakBytes[] = "peak_bytes";  // also in mapped and total
inline constexpr char kPeakTimeNs[] = "peak_time_ns";
inline constexpr char kFinalBytes[] = "final_bytes";
inline constexpr char kMapped[] = "mapped";  // {mode, peak_bytes, peak_time_ns, final_bytes, changes, untracked}
inline constexpr char kChanges[] = "changes";
inline constexpr char kUntracked[] = "untracked";
inline constexpr char kTotal[] = "total";  // {peak_bytes, peak_time_ns, final_bytes}
inline constexpr char kCalls[] = "calls";  // {alloc, free, realloc}
inline constexpr char kAlloc[] = "alloc";
inline constexpr char kFree[] = "free";
inline constexpr char kRealloc[] = "realloc";
inline constexpr char kPublishes[] = "publishes";
inline constexpr char kIntervalNs[] = "interval_ns";
inline constexpr char kAllocationsSeen[] = "allocations_seen";
inline constexpr char kEnded[] = "ended";
inline constexpr char kLastSampleNs[] = "last_sample_ns";
inline constexpr char kSignal[] = "signal";
// The launch a process belongs to (HEAPLINE_RUN_ID in its environment), when
// the writer records it: optional for readers.
inline constexpr char kRunId[] = "run_id";
// The process image's peak resident set size (the memory's high-water mark,
// VmHWM, at exit: an exec starts it again, unlike getrusage's ru_maxrss),
// beside the heap it held: heap never touched is not resident. Optional for readers (absent
// from older reports and from those converted from a live file).
inline constexpr char kPeakRssBytes[] = "peak_rss_bytes";
// The resident set read at samples (/proc's statm): {peak_bytes,
// peak_time_ns, final_bytes}, the largest reading, its time and the last
// reading, with the series "resident_samples". Optional for readers (absent
// from older reports, and when no reading succeeded).
inline constexpr char kResident[] = "resident";
// The accuracy build's exact shadow (libheapline_accuracy.so only): the
// exact peak and final figure of the same run, counted call by call beside
// the batched figures, {peak_bytes, final_bytes}. Optional for readers.
inline constexpr char kExactShadow[] = "exact_shadow";
inline constexpr char kLiveFileProblem[] = "live_file_problem";  // why the live file could not follow an exec (optional)
// The heap sampler (profile_format.h): "sampling" {mean_bytes, unwinder,
// entry_points (the functions whose blocks it meters, optional), samples
// (blocks sampled), dropped, live_capacity, stack_capacity, snapshots},
// then "peak_profile" and "exit_profile", each null or {time_ns,
// heap_bytes, mapped_bytes (optional: older reports have none), mean_bytes,
// live_samples, stacks, bytes, error_bytes, sites: [{bytes, error_bytes,
// samples, sampled_bytes, kind ("mapped" for a site that mapped memory;
// absent: the heap's), frames: [[module, address], ...]}, ...], other:
// {bytes, error_bytes, samples, sampled_bytes, sites}, modules: [{path,
// build_id}, ...]}.
inline constexpr char kSampling[] = "sampling";
inline constexpr char kMeanBytes[] = "mean_bytes";
inline constexpr char kUnwinder[] = "unwinder";
inline constexpr char kEntryPoints[] = "entry_points";
inline constexpr char kDropped[] = "dropped";
inline constexpr char kLiveCapacity[] = "live_capacity";
inline constexpr char kStackCapacity[] = "stack_capacity";
inline constexpr char kSnapshots[] = "snapshots";
inline constexpr char kPeakProfile[] = "peak_profile";
inline constexpr char kExitProfile[] = "exit_profile";
inline constexpr char kTimeNs[] = "time_ns";
inline constexpr char kHeapBytes[] = "heap_bytes";
inline constexpr char kMappedBytes[] = "mapped_bytes";
inline constexpr char kKind[] = "kind";
inline constexpr char kLiveSamples[] = "live_samples";
inline constexpr char kStacks[] = "stacks";
inline constexpr char kBytes[] = "bytes";
inline constexpr char kErrorBytes[] = "error_bytes";
inline constexpr char kSampleCount[] = "samples";  // in "sampling" and a site: a count, not the timeline
inline constexpr char kSampledBytes[] = "sampled_bytes";
inline constexpr char kFrames[] = "frames";
inline constexpr char kSites[] = "sites";  // a profile's array; in "other", their count
inline constexpr char kOther[] = "other";
inline constexpr char kModules[] = "modules";
inline constexpr char kPath[] = "path";
inline constexpr char kBuildId[] = "build_id";
inline constexpr char kMarkers[] = "markers";                // [[t_ns, "name"], ...]
// The markers placed past the report's capacity (kLiveMarkerCapacity), which
// it does not hold; absent when none was (optional for readers: 0).
inline constexpr char kMarkersDropped[] = "markers_dropped";
inline constexpr char kSamples[] = "samples";                // [[t_ns, live, max_live], ...]
inline constexpr char kMappedSamples[] = "mapped_samples";   // the same shape
inline constexpr char kResidentSamples[] = "resident_samples";  // the same shape, [t_ns, bytes, max_bytes]
}  // namespace report_key

inline constexpr char kReportFormatName[] = "heapline/1";
inline constexpr char kPrecisionExact[] = "exact";
inline constexpr char kPrecisionBatched[] = "batched";
inline constexpr char kMappedModeOn[] = "on";
inline constexpr char kMappedModeOff[] = "off";
inline constexpr char kMappedModeUnknown[] = "unknown";
inline constexpr char kSiteKindMapped[] = "mapped";  // a profile site's kind
inline constexpr char kEndedExit[] = "exit";
inline constexpr char kEndedWithoutExit[] = "without-exit";
inline constexpr char kEndedRunning[] = "running";  // a snapshot of a running process (convert)

// The launch's identity, set by the launcher in the command's environment.
inline constexpr char kRunIdVariable[] = "HEAPLINE_RUN_ID";

struct Report {
  int pid;
  int ppid;
  const char* exe;
  std::uint64_t start_unix_ns;
  std::uint64_t duration_ns;
  const char* allocator;
  const char* size_basis;
  // The precision: |published live − true live| <= bound_bytes at every
  // moment (0 in exact mode): the largest share of the budget the threads
  // held together, never above budget_bytes = max(budget_floor_bytes,
  // peak_bytes / budget_divisor). The budget's three figures are 0 in exact
  // mode and in a report converted from a live file older than the budget.
  bool exact;
  std::uint64_t bound_bytes;
  std::uint64_t budget_floor_bytes;
  std::uint64_t budget_divisor;
  std::uint64_t budget_bytes;
  std::uint64_t max_threshold_bytes;
  std::uint64_t max_threads;
  std::int64_t peak_bytes;
  std::uint64_t peak_time_ns;
  std::int64_t final_bytes;
  // Mapped memory (the interposer's mapped_memory.h) and heap + mapped
  // ("total").
  // mapped_known false: a live file of the older layout, converted ("mode":
  // "unknown", no figures).
  bool mapped_known = true;
  bool mapped_enabled = false;
  std::int64_t mapped_peak_bytes = 0;
  std::uint64_t mapped_peak_time_ns = 0;
  std::int64_t mapped_final_bytes = 0;
  std::uint64_t mapped_changes = 0;
  std::uint64_t mapped_untracked = 0;
  std::int64_t total_peak_bytes = 0;
  std::uint64_t total_peak_time_ns = 0;
  std::uint64_t alloc_calls;
  std::uint64_t free_calls;
  std::uint64_t realloc_calls;
  std::uint64_t publishes;
  std::uint64_t interval_ns;
  // The timeline: `sample_count` samples in time order.
  const Sample* samples = nullptr;
  std::size_t sample_count = 0;
  // The mapped series ("mapped_samples"), same shape; none when off.
  const Sample* mapped_samples = nullptr;
  std::size_t mapped_sample_count = 0;
  // Markers: the first min(marker_slots, kLiveMarkerCapacity) of `markers`,
  // those whose ready flag is set.
  const LiveMarker* markers = nullptr;
  std::uint32_t marker_slots = 0;
  // "exit" (written by the process at exit) or "without-exit" (converted
  // from the live file of a process that did not run its exit handlers);
  // for the latter, the time of its last sample and, when known, the signal.
  // Whether the program's malloc is libheapline's own: false when the
  // library was loaded with dlopen, preloaded after another allocator, or the
  // program defines malloc (the figures then miss the program's
  // allocations); -1 when not known (converted from a live file).
  int allocations_seen = -1;
  const char* ended = "exit";
  std::uint64_t last_sample_ns = 0;
  int signal = 0;
  // Why the process's live file was not made, or stopped being kept (a full
  // disk, the file size limit...): the heap line then lived in memory only,
  // and a kill would have lost it. nullptr (no "live_file_problem" in the
  // JSON) when the live file served the whole run, or was not asked for.
  const char* live_file_problem = nullptr;
  // The run the launcher started this process in (HEAPLINE_RUN_ID);
  // nullptr (no "run_id" in the JSON) when none.
  const char* run_id = nullptr;
  // The heap sampler's figures and profiles ("sampling", "peak_profile",
  // "exit_profile"); none when null (a library without the sampler).
  const SamplingReport* sampling = nullptr;
  // The peak resident set size in bytes; -1 (no "peak_rss_bytes" in the
  // JSON) when not known, as for a report converted from a live file.
  std::int64_t peak_rss_bytes = -1;
  // The resident set read at samples: its series ("resident_samples", same
  // shape as the timeline: [t_ns, resident bytes, the largest reading the
  // sample stands for]) and figures ("resident": the largest reading and
  // its time, the last reading). resident_final_bytes -1: no reading (no
  // "resident" in the JSON, "resident_samples" empty).
  const Sample* resident_samples = nullptr;
  std::size_t resident_sample_count = 0;
  std::int64_t resident_peak_bytes = 0;
  std::uint64_t resident_peak_time_ns = 0;
  std::int64_t resident_final_bytes = -1;
  // The accuracy build's exact shadow ("exact_shadow"); -1 (not written)
  // in every other build.
  std::int64_t exact_shadow_peak_bytes = -1;
  std::int64_t exact_shadow_final_bytes = 0;
};

// Writes `report` as heapline/1 JSON at final_path through a temporary name.
// Returns 0 or the errno of the step that failed, or kReportPathNotOurs
// when final_path exists and is not a regular file of this user's: only
// this user's regular file (or a missing path) is ever replaced, never a
// device, a FIFO, a directory, a symbolic link or another user's file. A
// new report gets the mode open(2) gives (0666 less the umask), a replaced
// one keeps its own. errno itself is left as it was.
int write_report_file(const char* final_path, const Report& report);

constexpr int kReportPathNotOurs = -1;

// Whether `path` may receive a report: missing, or a regular file of this
// user's. Returns 0 or kReportPathNotOurs (or the errno of lstat).
int check_report_path(const char* path);

// The reason for a write_report_file result, for a message: a static string.
const char* report_error_text(int error);

}  // namespace heapline
