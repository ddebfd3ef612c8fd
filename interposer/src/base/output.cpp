#include "output.h"

#include <fcntl.h>
#include <string.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "arch.h"
#include "heapline/figures.h"
#include "os.h"

namespace heapline {

namespace {

enum StderrState : int { kStderrUnknown, kStderrOpen, kStderrClosed };
std::atomic<int> g_stderr_state{kStderrUnknown};
// What descriptor 2 was open on: stored before g_stderr_state becomes
// kStderrOpen. Atomic halves, because two threads whose first line comes
// before the start-up's remembering may both store them (the same values).
std::atomic<dev_t> g_stderr_dev{0};
std::atomic<ino_t> g_stderr_ino{0};

}  // namespace

void remember_stderr() {
  os::FileId id;
  const bool open = os::file_id(STDERR_FILENO, &id);
  if (open) {
    g_stderr_dev.store(id.dev, std::memory_order_relaxed);
    g_stderr_ino.store(id.ino, std::memory_order_relaxed);
  }
  g_stderr_state.store(open ? kStderrOpen : kStderrClosed, std::memory_order_release);
}

void write_stderr(const char* data, std::size_t size) {
  if (g_stderr_state.load(std::memory_order_acquire) == kStderrUnknown) remember_stderr();
  if (g_stderr_state.load(std::memory_order_acquire) != kStderrOpen) return;
  os::FileId now;
  const os::FileId remembered{g_stderr_dev.load(std::memory_order_relaxed), g_stderr_ino.load(std::memory_order_relaxed)};
  if (!os::file_id(STDERR_FILENO, &now) || !(now == remembered)) return;
  os::write_all(STDERR_FILENO, data, size, nullptr);
}

bool format_output_path(const char* path_template, const char* base_dir, int pid, const char* exe_name,
                        bool insert_pid, char* out, std::size_t capacity) {
  TextSink path(out, capacity);
  if (path_template[0] != '/' && base_dir != nullptr && base_dir[0] != 0) {
    path.append(base_dir);
    if (base_dir[std::strlen(base_dir) - 1] != '/') path.append('/');
  }
  bool has_pid = false;
  for (const char* c = path_template; *c != 0; ++c) {
    if (c[0] == '%' && c[1] == 'p') {
      path.append_signed(pid);
      has_pid = true;
      ++c;
    } else if (c[0] == '%' && c[1] == 'e') {
      // The program's name as a file name (heapline/terminal_text.h): the
      // launcher expands %e by the same rule to find the report.
      name_for_file(exe_name != nullptr && exe_name[0] != 0 ? exe_name : "unknown",
                    [&path](const char* bytes, std::size_t size) { path.append(bytes, size); });
      ++c;
    } else if (c[0] == '%' && c[1] == '%') {
      path.append('%');
      ++c;
    } else {
      path.append(*c);
    }
  }
  path.c_str();
  if (path.truncated()) return false;
  return !insert_pid || has_pid || insert_pid_before_extension(out, capacity, pid);
}

bool insert_pid_before_extension(char* path, std::size_t capacity, int pid) {
  const std::size_t length = std::strlen(path);
  const char* slash = std::strrchr(path, '/');
  const char* name = slash ? slash + 1 : path;
  const char* dot = std::strrchr(name, '.');
  // A leading dot (".hidden") is not an extension.
  const std::size_t insert_at = dot != nullptr && dot != name ? static_cast<std::size_t>(dot - path) : length;
  char pid_text[24];
  TextSink pid_sink(pid_text, sizeof pid_text);
  pid_sink.append('.');
  pid_sink.append_signed(pid);
  const std::size_t pid_length = pid_sink.size();
  if (length + pid_length + 1 > capacity) return false;
  std::memmove(path + insert_at + pid_length, path + insert_at, length - insert_at + 1);
  std::memcpy(path + insert_at, pid_text, pid_length);
  return true;
}

namespace {

// Every figure goes out within heapline/figures.h's limits, as the reader
// takes it: a report converted from a damaged or crafted live file, whose
// figures may hold any 64 bits, still reads back (and the library's own
// figures are far inside them).
void append_bytes(TextSink& sink, std::int64_t bytes) { sink.append_signed(bounded_bytes(bytes)); }
void append_byte_size(TextSink& sink, std::uint64_t bytes) {
  sink.append_unsigned(bounded_byte_size(bytes));
}
void append_ns(TextSink& sink, std::uint64_t ns) { sink.append_unsigned(bounded_ns(ns)); }

// [t_ns, bytes, max bytes] per sample, one a line.
void append_samples(TextSink& sink, const Sample* samples, std::size_t count) {
  for (std::size_t i = 0; samples != nullptr && i < count; ++i) {
    const Sample& s = samples[i];
    sink.append(i == 0 ? "\n[" : ",\n[");
    append_ns(sink, s.t_ns);
    sink.append(',');
    append_bytes(sink, s.live);
    sink.append(',');
    append_bytes(sink, s.max_live);
    sink.append(']');
  }
}

}  // namespace

namespace {

// `separator` then "name": (the names are report_format.h's, shared with the
// reader).
void append_key(TextSink& sink, const char* separator, const char* name) {
  sink.append(separator);
  sink.append('"');
  sink.append(name);
  sink.append("\":");
}

void append_string(TextSink& sink, const char* value) {
  sink.append('"');
  sink.append(value);
  sink.append('"');
}

// ,"name":{"peak_bytes":P,"peak_time_ns":T,"final_bytes":F}: a series'
// figures (total, resident).
void append_peak_figures(TextSink& sink, const char* name, std::int64_t peak_bytes, std::uint64_t peak_time_ns,
                         std::int64_t final_bytes) {
  namespace key = report_key;
  append_key(sink, ",", name);
  append_key(sink, "{", key::kPeakBytes);
  append_bytes(sink, peak_bytes);
  append_key(sink, ",", key::kPeakTimeNs);
  append_ns(sink, peak_time_ns);
  append_key(sink, ",", key::kFinalBytes);
  append_bytes(sink, final_bytes);
  sink.append('}');
}

// A byte figure from a double: rounded, and 0 for what no writer leaves
// (negative, NaN, beyond 2^60).
std::int64_t whole_bytes(double value) {
  if (!(value >= 0) || value > static_cast<double>(kBytesLimit)) return 0;
  return static_cast<std::int64_t>(value + 0.5);
}

double square_root(double x) {
  if (!(x > 0)) return 0;
  return arch::square_root(x);  // no libm in the library
}

void append_estimate(TextSink& sink, double bytes, double variance) {
  append_key(sink, "", report_key::kBytes);
  sink.append_signed(whole_bytes(bytes));
  append_key(sink, ",", report_key::kErrorBytes);
  sink.append_signed(whole_bytes(kProfileErrorSigmas * square_root(variance)));
}

void append_site_counts(TextSink& sink, const ProfileSite& site) {
  append_estimate(sink, site.bytes, site.variance);
  append_key(sink, ",", report_key::kSampleCount);
  sink.append_unsigned(site.samples);
  append_key(sink, ",", report_key::kSampledBytes);
  append_byte_size(sink, site.sampled_bytes);
}

// A profile (profile_format.h), null when none was taken. Every count and
// index read from a snapshot is clamped to its capacity, so a snapshot
// copied from a damaged or crafted live file writes a valid (if
// meaningless) profile, never a read out of bounds.
void append_profile(TextSink& sink, const ProfileSnapshot* profile) {
  namespace key = report_key;
  if (profile == nullptr || profile->state != kProfileTaken) {
    sink.append("null");
    return;
  }
  const std::uint32_t modules = profile->module_count < kProfileModules ? profile->module_count : kProfileModules;
  const std::uint32_t sites = profile->site_count < kProfileSites ? profile->site_count : kProfileSites;
  append_key(sink, "{", key::kTimeNs);
  append_ns(sink, profile->time_ns);
  append_key(sink, ",", key::kHeapBytes);
  append_bytes(sink, profile->heap_bytes);
  append_key(sink, ",", key::kMappedBytes);
  append_bytes(sink, profile->mapped_bytes);
  append_key(sink, ",", key::kMeanBytes);
  append_byte_size(sink, profile->mean_bytes);
  append_key(sink, ",", key::kLiveSamples);
  sink.append_unsigned(profile->live_samples);
  append_key(sink, ",", key::kStacks);
  sink.append_unsigned(profile->stacks);
  sink.append(',');
  append_estimate(sink, profile->total_bytes, profile->total_variance);
  append_key(sink, ",\n", key::kSites);
  sink.append('[');
  for (std::uint32_t i = 0; i < sites; ++i) {
    const ProfileSite& site = profile->sites[i];
    sink.append(i == 0 ? "\n{" : ",\n{");
    append_site_counts(sink, site);
    if (site.kind == kProfileSiteMapped) {
      append_key(sink, ",", key::kKind);
      append_string(sink, kSiteKindMapped);
    }
    append_key(sink, ",", key::kFrames);
    sink.append('[');
    const std::uint32_t frames = site.frame_count < kProfileFrames ? site.frame_count : kProfileFrames;
    for (std::uint32_t f = 0; f < frames; ++f) {
      const ProfileFrame& frame = site.frames[f];
      sink.append(f == 0 ? "[" : ",[");
      sink.append_signed(frame.module < modules ? static_cast<std::int64_t>(frame.module) : -1);
      sink.append(',');
      sink.append_unsigned(frame.address);
      sink.append(']');
    }
    sink.append("]}");
  }
  sink.append(']');
  append_key(sink, ",\n", key::kOther);
  sink.append('{');
  append_site_counts(sink, profile->other);
  append_key(sink, ",", key::kSites);
  sink.append_unsigned(profile->other_sites);
  sink.append('}');
  append_key(sink, ",\n", key::kModules);
  sink.append('[');
  static const char kHex[] = "0123456789abcdef";
  for (std::uint32_t m = 0; m < modules; ++m) {
    const ProfileModule& module = profile->modules[m];
    char path[kProfilePathBytes];
    std::memcpy(path, module.path, sizeof path);
    path[sizeof path - 1] = 0;  // a damaged file may lack the NUL
    sink.append(m == 0 ? "\n" : ",\n");
    append_key(sink, "{", key::kPath);
    sink.append_json_string(path);
    append_key(sink, ",", key::kBuildId);
    sink.append('"');
    const std::uint32_t id_bytes = module.build_id_bytes <= kProfileBuildIdBytes ? module.build_id_bytes : 0;
    for (std::uint32_t b = 0; b < id_bytes; ++b) {
      sink.append(kHex[module.build_id[b] >> 4]);
      sink.append(kHex[module.build_id[b] & 15]);
    }
    sink.append("\"}");
  }
  sink.append("]}");
}

// ,"sampling":{...},"peak_profile":{...}|null,"exit_profile":{...}|null
void append_sampling(TextSink& sink, const SamplingReport& s) {
  namespace key = report_key;
  append_key(sink, ",\n", key::kSampling);
  append_key(sink, "{", key::kMeanBytes);
  append_byte_size(sink, s.mean_bytes);
  append_key(sink, ",", key::kUnwinder);
  sink.append_json_string(s.unwinder != nullptr ? s.unwinder : "none");
  if (s.entry_points != nullptr) {
    append_key(sink, ",", key::kEntryPoints);
    sink.append('[');
    for (std::size_t i = 0; i < s.entry_point_count; ++i) {
      if (i > 0) sink.append(',');
      sink.append_json_string(s.entry_points[i]);
    }
    sink.append(']');
  }
  append_key(sink, ",", key::kSampleCount);
  sink.append_unsigned(s.samples);
  append_key(sink, ",", key::kDropped);
  sink.append_unsigned(s.dropped);
  append_key(sink, ",", key::kLiveCapacity);
  sink.append_unsigned(s.live_capacity);
  append_key(sink, ",", key::kStackCapacity);
  sink.append_unsigned(s.stack_capacity);
  append_key(sink, ",", key::kSnapshots);
  sink.append_unsigned(s.snapshots);
  append_key(sink, "},\n", key::kPeakProfile);
  append_profile(sink, s.peak_profile);
  append_key(sink, ",\n", key::kExitProfile);
  append_profile(sink, s.exit_profile);
}

}  // namespace

void write_report_json(TextSink& sink, const Report& r) {
  namespace key = report_key;
  append_key(sink, "{", key::kFormat);
  append_string(sink, kReportFormatName);
  append_key(sink, ",", key::kPid);
  sink.append_signed(r.pid);
  append_key(sink, ",", key::kPpid);
  sink.append_signed(r.ppid);
  append_key(sink, ",", key::kExe);
  sink.append_json_string(r.exe);
  append_key(sink, ",", key::kStartUnixNs);
  append_ns(sink, r.start_unix_ns);
  append_key(sink, ",", key::kDurationNs);
  append_ns(sink, r.duration_ns);
  append_key(sink, ",", key::kAllocator);
  sink.append_json_string(r.allocator);
  append_key(sink, ",", key::kSizeBasis);
  sink.append_json_string(r.size_basis);
  append_key(sink, ",\n", key::kPrecision);
  append_key(sink, "{", key::kMode);
  append_string(sink, r.exact ? kPrecisionExact : kPrecisionBatched);
  append_key(sink, ",", key::kBoundBytes);
  append_byte_size(sink, r.bound_bytes);
  append_key(sink, ",", key::kBudgetFloorBytes);
  append_byte_size(sink, r.budget_floor_bytes);
  append_key(sink, ",", key::kBudgetDivisor);
  sink.append_unsigned(r.budget_divisor);
  append_key(sink, ",", key::kBudgetBytes);
  append_byte_size(sink, r.budget_bytes);
  append_key(sink, ",", key::kMaxThresholdBytes);
  append_byte_size(sink, r.max_threshold_bytes);
  append_key(sink, ",", key::kMaxThreads);
  sink.append_unsigned(r.max_threads);
  append_key(sink, "},\n", key::kPeakBytes);
  append_bytes(sink, r.peak_bytes);
  append_key(sink, ",", key::kPeakTimeNs);
  append_ns(sink, r.peak_time_ns);
  append_key(sink, ",", key::kFinalBytes);
  append_bytes(sink, r.final_bytes);
  append_key(sink, ",\n", key::kMapped);
  append_key(sink, "{", key::kMode);
  append_string(sink, !r.mapped_known ? kMappedModeUnknown : r.mapped_enabled ? kMappedModeOn : kMappedModeOff);
  append_key(sink, ",", key::kPeakBytes);
  append_bytes(sink, r.mapped_peak_bytes);
  append_key(sink, ",", key::kPeakTimeNs);
  append_ns(sink, r.mapped_peak_time_ns);
  append_key(sink, ",", key::kFinalBytes);
  append_bytes(sink, r.mapped_final_bytes);
  append_key(sink, ",", key::kChanges);
  sink.append_unsigned(r.mapped_changes);
  append_key(sink, ",", key::kUntracked);
  sink.append_unsigned(r.mapped_untracked);
  sink.append('}');
  append_peak_figures(sink, key::kTotal, r.total_peak_bytes, r.total_peak_time_ns, bounded_sum(r.final_bytes, r.mapped_final_bytes));
  append_key(sink, ",", key::kCalls);
  append_key(sink, "{", key::kAlloc);
  sink.append_unsigned(r.alloc_calls);
  append_key(sink, ",", key::kFree);
  sink.append_unsigned(r.free_calls);
  append_key(sink, ",", key::kRealloc);
  sink.append_unsigned(r.realloc_calls);
  append_key(sink, "},", key::kPublishes);
  sink.append_unsigned(r.publishes);
  append_key(sink, ",", key::kIntervalNs);
  append_ns(sink, r.interval_ns);
  if (r.allocations_seen >= 0) {
    append_key(sink, ",", key::kAllocationsSeen);
    sink.append(r.allocations_seen != 0 ? "true" : "false");
  }
  const char* ended = r.ended != nullptr ? r.ended : kEndedExit;
  append_key(sink, ",", key::kEnded);
  sink.append_json_string(ended);
  if (std::strcmp(ended, kEndedExit) != 0) {
    append_key(sink, ",", key::kLastSampleNs);
    append_ns(sink, r.last_sample_ns);
    if (r.signal > 0) {
      append_key(sink, ",", key::kSignal);
      sink.append_signed(r.signal);
    }
  }
  if (r.peak_rss_bytes >= 0) {
    append_key(sink, ",", key::kPeakRssBytes);
    append_bytes(sink, r.peak_rss_bytes);
  }
  if (r.resident_final_bytes >= 0) {
    append_peak_figures(sink, key::kResident, r.resident_peak_bytes, r.resident_peak_time_ns, r.resident_final_bytes);
  }
  if (r.exact_shadow_peak_bytes >= 0) {
    append_key(sink, ",", key::kExactShadow);
    append_key(sink, "{", key::kPeakBytes);
    append_bytes(sink, r.exact_shadow_peak_bytes);
    append_key(sink, ",", key::kFinalBytes);
    append_bytes(sink, r.exact_shadow_final_bytes);
    sink.append('}');
  }
  if (r.live_file_problem != nullptr) {
    append_key(sink, ",", key::kLiveFileProblem);
    sink.append_json_string(r.live_file_problem);
  }
  if (r.run_id != nullptr) {
    append_key(sink, ",", key::kRunId);
    sink.append_json_string(r.run_id);
  }
  if (r.sampling != nullptr) append_sampling(sink, *r.sampling);
  if (r.marker_slots > kLiveMarkerCapacity) {
    append_key(sink, ",", key::kMarkersDropped);
    sink.append_unsigned(r.marker_slots - kLiveMarkerCapacity);
  }
  append_key(sink, ",\n", key::kMarkers);
  sink.append('[');
  bool first_marker = true;
  const std::uint32_t slots = r.marker_slots < kLiveMarkerCapacity ? r.marker_slots : kLiveMarkerCapacity;
  for (std::uint32_t i = 0; r.markers != nullptr && i < slots; ++i) {
    const LiveMarker& marker = r.markers[i];
    if (marker.ready.load(std::memory_order_acquire) == 0) continue;
    char name[kLiveMarkerNameBytes];
    std::memcpy(name, marker.name, sizeof name);
    name[sizeof name - 1] = 0;  // a file from a killed writer may lack the NUL
    sink.append(first_marker ? "[" : ",[");
    first_marker = false;
    append_ns(sink, marker.t_ns.load(std::memory_order_relaxed));
    sink.append(',');
    sink.append_json_string(name);
    sink.append(']');
  }
  append_key(sink, "],\n", key::kSamples);
  sink.append('[');
  append_samples(sink, r.samples, r.sample_count);
  append_key(sink, "],\n", key::kMappedSamples);
  sink.append('[');
  append_samples(sink, r.mapped_samples, r.mapped_sample_count);
  append_key(sink, "],\n", key::kResidentSamples);
  sink.append('[');
  append_samples(sink, r.resident_samples, r.resident_sample_count);
  sink.append("]}\n");
}

namespace {

struct FileTarget {
  int fd;
  KillWriter kill;
  std::uint64_t size;  // written so far
  int error;
};

bool flush_to_file(void* context, const char* data, std::size_t size) {
  auto* target = static_cast<FileTarget*>(context);
  if (target->error != 0) return false;
  target->error = os::write_all(target->fd, data, size, &target->size);
  if (target->error != 0) return false;
#if HEAPLINE_TEST_HOOKS
  // Test hook: die with part of the file on disk under the temporary name.
  if (target->kill == KillWriter::kMidWrite) os::kill_this_process();
#endif
  return true;
}

}  // namespace

int check_report_path(const char* path) {
  int error = 0;
  switch (os::path_kind(path, &error)) {
    case os::PathKind::kNothing:
    case os::PathKind::kOwnRegularFile:
      return 0;
    case os::PathKind::kOther:
      return kReportPathNotOurs;
    case os::PathKind::kUnknown:
      return error;
  }
  return 0;
}

const char* report_error_text(int error) {
  if (error == kReportPathNotOurs) {
    return "not a regular file of this user's (heapline replaces only its user's own regular files)";
  }
  const char* reason = strerrordesc_np(error);  // static, unlike strerror's buffer
  return reason != nullptr ? reason : "unknown error";
}

namespace {

// Puts the written report `temp_path` at `final_path`: over whatever report
// is there (a claimed name), or, for an unclaimed one, there only when no
// process of the run wrote it first (UnclaimedName).
int place_report(const char* temp_path, const char* final_path, const UnclaimedName* unclaimed) {
  if (unclaimed == nullptr) return os::replace_name(temp_path, final_path);
  int result = os::rename_new(temp_path, final_path);
  if (result != EEXIST) return result;
  os::FileStatus there;
  const int fd = os::open_to_read(final_path);
  const bool known = fd >= 0 && os::file_status(fd, &there);
  if (fd >= 0) os::close_file(fd);
  if (known && there.modified_s < unclaimed->started_unix_s) return os::replace_name(temp_path, final_path);
  if (!insert_pid_before_extension(unclaimed->path, unclaimed->capacity, unclaimed->pid)) return ENAMETOOLONG;
  if (int refused = check_report_path(unclaimed->path); refused != 0) return refused;
  return os::replace_name(temp_path, unclaimed->path);  // the name with this pid is this process's
}

int write_report(const char* final_path, const UnclaimedName* unclaimed, const Report& report, KillWriter kill) {
  // rename() would put a regular file in place of a device or a FIFO.
  if (int refused = check_report_path(final_path); refused != 0) return refused;
  const int saved_errno = errno;
  // Never a file that was there: a name someone else made (another user in
  // a shared directory) is never written through, and cannot become this
  // process's report.
  static char temp_path[kMaxPath + 48];  // static: see the exit path's note on stacks
  int result = 0;
  const int fd = os::create_temp_file(final_path, report.pid, O_WRONLY, temp_path, sizeof temp_path);
  if (fd < 0) {
    result = errno;
  } else {
    FileTarget target{fd, kill, 0, 0};
    char buffer[4096];
    TextSink sink(buffer, sizeof buffer, flush_to_file, &target);
    write_report_json(sink, report);
    sink.drain();
    result = target.error;
    if (const int closed = os::close_file(fd); closed != 0 && result == 0) result = closed;
#if HEAPLINE_TEST_HOOKS
    if (result == 0 && kill == KillWriter::kBeforeRename) os::kill_this_process();
#endif
    if (result == 0) result = place_report(temp_path, final_path, unclaimed);
    if (result != 0) os::remove_name(temp_path);
  }
  errno = saved_errno;
  return result;
}

}  // namespace

int write_report_file(const char* final_path, const Report& report, KillWriter kill) {
  return write_report(final_path, nullptr, report, kill);
}

int write_report_file(const UnclaimedName& name, const Report& report, KillWriter kill) {
  return write_report(name.path, &name, report, kill);
}

int write_report_file(const char* final_path, const Report& report) {
  return write_report_file(final_path, report, KillWriter::kNever);
}

}  // namespace heapline
