#include "output.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "os.h"

namespace heapline {

void write_stderr(const char* data, std::size_t size) { os::write_all(STDERR_FILENO, data, size, nullptr); }

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
      path.append(exe_name != nullptr && exe_name[0] != 0 ? exe_name : "unknown");
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

// [t_ns, bytes, max bytes] per sample, one a line.
void append_samples(TextSink& sink, const Sample* samples, std::size_t count) {
  for (std::size_t i = 0; samples != nullptr && i < count; ++i) {
    const Sample& s = samples[i];
    sink.append(i == 0 ? "\n[" : ",\n[");
    sink.append_unsigned(s.t_ns);
    sink.append(',');
    sink.append_signed(s.live);
    sink.append(',');
    sink.append_signed(s.max_live);
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
  sink.append_unsigned(r.start_unix_ns);
  append_key(sink, ",", key::kDurationNs);
  sink.append_unsigned(r.duration_ns);
  append_key(sink, ",", key::kAllocator);
  sink.append_json_string(r.allocator);
  append_key(sink, ",", key::kSizeBasis);
  sink.append_json_string(r.size_basis);
  append_key(sink, ",\n", key::kPrecision);
  append_key(sink, "{", key::kMode);
  append_string(sink, r.exact ? kPrecisionExact : kPrecisionBatched);
  append_key(sink, ",", key::kBoundBytes);
  sink.append_unsigned(r.bound_bytes);
  append_key(sink, ",", key::kBudgetFloorBytes);
  sink.append_unsigned(r.budget_floor_bytes);
  append_key(sink, ",", key::kBudgetDivisor);
  sink.append_unsigned(r.budget_divisor);
  append_key(sink, ",", key::kBudgetBytes);
  sink.append_unsigned(r.budget_bytes);
  append_key(sink, ",", key::kMaxThresholdBytes);
  sink.append_unsigned(r.max_threshold_bytes);
  append_key(sink, ",", key::kMaxThreads);
  sink.append_unsigned(r.max_threads);
  append_key(sink, "},\n", key::kPeakBytes);
  sink.append_signed(r.peak_bytes);
  append_key(sink, ",", key::kPeakTimeNs);
  sink.append_unsigned(r.peak_time_ns);
  append_key(sink, ",", key::kFinalBytes);
  sink.append_signed(r.final_bytes);
  append_key(sink, ",\n", key::kMapped);
  append_key(sink, "{", key::kMode);
  append_string(sink, !r.mapped_known ? kMappedModeUnknown : r.mapped_enabled ? kMappedModeOn : kMappedModeOff);
  append_key(sink, ",", key::kPeakBytes);
  sink.append_signed(r.mapped_peak_bytes);
  append_key(sink, ",", key::kPeakTimeNs);
  sink.append_unsigned(r.mapped_peak_time_ns);
  append_key(sink, ",", key::kFinalBytes);
  sink.append_signed(r.mapped_final_bytes);
  append_key(sink, ",", key::kChanges);
  sink.append_unsigned(r.mapped_changes);
  append_key(sink, ",", key::kUntracked);
  sink.append_unsigned(r.mapped_untracked);
  append_key(sink, "},", key::kTotal);
  append_key(sink, "{", key::kPeakBytes);
  sink.append_signed(r.total_peak_bytes);
  append_key(sink, ",", key::kPeakTimeNs);
  sink.append_unsigned(r.total_peak_time_ns);
  append_key(sink, ",", key::kFinalBytes);
  sink.append_signed(r.final_bytes + r.mapped_final_bytes);
  append_key(sink, "},", key::kCalls);
  append_key(sink, "{", key::kAlloc);
  sink.append_unsigned(r.alloc_calls);
  append_key(sink, ",", key::kFree);
  sink.append_unsigned(r.free_calls);
  append_key(sink, ",", key::kRealloc);
  sink.append_unsigned(r.realloc_calls);
  append_key(sink, "},", key::kPublishes);
  sink.append_unsigned(r.publishes);
  append_key(sink, ",", key::kIntervalNs);
  sink.append_unsigned(r.interval_ns);
  if (r.allocations_seen >= 0) {
    append_key(sink, ",", key::kAllocationsSeen);
    sink.append(r.allocations_seen != 0 ? "true" : "false");
  }
  const char* ended = r.ended != nullptr ? r.ended : kEndedExit;
  append_key(sink, ",", key::kEnded);
  sink.append_json_string(ended);
  if (std::strcmp(ended, kEndedExit) != 0) {
    append_key(sink, ",", key::kLastSampleNs);
    sink.append_unsigned(r.last_sample_ns);
    if (r.signal > 0) {
      append_key(sink, ",", key::kSignal);
      sink.append_signed(r.signal);
    }
  }
  if (r.peak_rss_bytes >= 0) {
    append_key(sink, ",", key::kPeakRssBytes);
    sink.append_signed(r.peak_rss_bytes);
  }
  if (r.live_file_problem != nullptr) {
    append_key(sink, ",", key::kLiveFileProblem);
    sink.append_json_string(r.live_file_problem);
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
    sink.append_unsigned(marker.t_ns.load(std::memory_order_relaxed));
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
  if (target->kill == KillWriter::kMidWrite) ::kill(::getpid(), SIGKILL);
#endif
  return true;
}

}  // namespace

int check_report_path(const char* path) {
  int saved_errno = errno;
  struct stat info;
  int result = 0;
  if (::lstat(path, &info) != 0) {
    if (errno != ENOENT) result = errno;
  } else if (!S_ISREG(info.st_mode)) {
    result = kReportPathNotRegular;
  }
  errno = saved_errno;
  return result;
}

const char* report_error_text(int error) {
  if (error == kReportPathNotRegular) return "not a regular file (heapline replaces only regular files)";
  const char* reason = strerrordesc_np(error);  // static, unlike strerror's buffer
  return reason != nullptr ? reason : "unknown error";
}

int write_report_file(const char* final_path, const Report& report, KillWriter kill) {
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
    if (::close(fd) != 0 && result == 0) result = errno;
#if HEAPLINE_TEST_HOOKS
    if (result == 0 && kill == KillWriter::kBeforeRename) ::kill(::getpid(), SIGKILL);
#endif
    if (result == 0 && ::rename(temp_path, final_path) != 0) result = errno;
    if (result != 0) ::unlink(temp_path);
  }
  errno = saved_errno;
  return result;
}

int write_report_file(const char* final_path, const Report& report) {
  return write_report_file(final_path, report, KillWriter::kNever);
}

}  // namespace heapline
