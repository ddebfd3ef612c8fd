#include "output.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace heapline {

void write_stderr(const char* data, std::size_t size) {
  int saved = errno;
  write_all(STDERR_FILENO, data, size);
  errno = saved;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
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
  if (insert_pid && !has_pid) {
    std::size_t length = std::strlen(out);
    const char* slash = std::strrchr(out, '/');
    const char* name = slash ? slash + 1 : out;
    const char* dot = std::strrchr(name, '.');
    // A leading dot (".hidden") is not an extension.
    std::size_t insert_at = dot != nullptr && dot != name ? static_cast<std::size_t>(dot - out) : length;
    char pid_text[24];
    TextSink pid_sink(pid_text, sizeof pid_text);
    pid_sink.append('.');
    pid_sink.append_signed(pid);
    std::size_t pid_length = pid_sink.size();
    if (length + pid_length + 1 > capacity) return false;
    std::memmove(out + insert_at + pid_length, out + insert_at, length - insert_at + 1);
    std::memcpy(out + insert_at, pid_text, pid_length);
  }
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

void write_report_json(TextSink& sink, const Report& r) {
  sink.append("{\"format\":\"heapline/1\",\"pid\":");
  sink.append_signed(r.pid);
  sink.append(",\"ppid\":");
  sink.append_signed(r.ppid);
  sink.append(",\"exe\":");
  sink.append_json_string(r.exe);
  sink.append(",\"start_unix_ns\":");
  sink.append_unsigned(r.start_unix_ns);
  sink.append(",\"duration_ns\":");
  sink.append_unsigned(r.duration_ns);
  sink.append(",\"allocator\":");
  sink.append_json_string(r.allocator);
  sink.append(",\"size_basis\":");
  sink.append_json_string(r.size_basis);
  sink.append(",\n\"precision\":{\"mode\":");
  sink.append(r.exact ? "\"exact\"" : "\"batched\"");
  sink.append(",\"bound_bytes\":");
  sink.append_unsigned(r.bound_bytes);
  sink.append(",\"budget_floor_bytes\":");
  sink.append_unsigned(r.budget_floor_bytes);
  sink.append(",\"budget_divisor\":");
  sink.append_unsigned(r.budget_divisor);
  sink.append(",\"budget_bytes\":");
  sink.append_unsigned(r.budget_bytes);
  sink.append(",\"max_threshold_bytes\":");
  sink.append_unsigned(r.max_threshold_bytes);
  sink.append(",\"max_threads\":");
  sink.append_unsigned(r.max_threads);
  sink.append("},\n\"peak_bytes\":");
  sink.append_signed(r.peak_bytes);
  sink.append(",\"peak_time_ns\":");
  sink.append_unsigned(r.peak_time_ns);
  sink.append(",\"final_bytes\":");
  sink.append_signed(r.final_bytes);
  sink.append(",\n\"mapped\":{\"mode\":");
  sink.append(!r.mapped_known ? "\"unknown\"" : r.mapped_enabled ? "\"on\"" : "\"off\"");
  sink.append(",\"peak_bytes\":");
  sink.append_signed(r.mapped_peak_bytes);
  sink.append(",\"peak_time_ns\":");
  sink.append_unsigned(r.mapped_peak_time_ns);
  sink.append(",\"final_bytes\":");
  sink.append_signed(r.mapped_final_bytes);
  sink.append(",\"changes\":");
  sink.append_unsigned(r.mapped_changes);
  sink.append(",\"untracked\":");
  sink.append_unsigned(r.mapped_untracked);
  sink.append("},\"total\":{\"peak_bytes\":");
  sink.append_signed(r.total_peak_bytes);
  sink.append(",\"peak_time_ns\":");
  sink.append_unsigned(r.total_peak_time_ns);
  sink.append(",\"final_bytes\":");
  sink.append_signed(r.final_bytes + r.mapped_final_bytes);
  sink.append("}");
  sink.append(",\"calls\":{\"alloc\":");
  sink.append_unsigned(r.alloc_calls);
  sink.append(",\"free\":");
  sink.append_unsigned(r.free_calls);
  sink.append(",\"realloc\":");
  sink.append_unsigned(r.realloc_calls);
  sink.append("},\"publishes\":");
  sink.append_unsigned(r.publishes);
  sink.append(",\"interval_ns\":");
  sink.append_unsigned(r.interval_ns);
  if (r.allocations_seen >= 0) {
    sink.append(",\"allocations_seen\":");
    sink.append(r.allocations_seen != 0 ? "true" : "false");
  }
  sink.append(",\"ended\":");
  sink.append_json_string(r.ended != nullptr ? r.ended : "exit");
  if (r.ended != nullptr && std::strcmp(r.ended, "exit") != 0) {
    sink.append(",\"last_sample_ns\":");
    sink.append_unsigned(r.last_sample_ns);
    if (r.signal > 0) {
      sink.append(",\"signal\":");
      sink.append_signed(r.signal);
    }
  }
  sink.append(",\n\"markers\":[");
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
  sink.append("],\n\"samples\":[");
  append_samples(sink, r.samples, r.sample_count);
  sink.append("],\n\"mapped_samples\":[");
  append_samples(sink, r.mapped_samples, r.mapped_sample_count);
  sink.append("]}\n");
}

namespace {

struct FileTarget {
  int fd;
  KillWriter kill;
  bool failed;
  int error;
};

bool flush_to_file(void* context, const char* data, std::size_t size) {
  auto* target = static_cast<FileTarget*>(context);
  if (target->failed) return false;
  if (!write_all(target->fd, data, size)) {
    target->failed = true;
    target->error = errno;
    return false;
  }
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
  int saved_errno = errno;
  static char temp_path[kMaxPath + 32];  // static: see the exit path's note on stacks
  TextSink temp(temp_path, sizeof temp_path);
  temp.append(final_path);
  temp.append('.');
  temp.append_signed(report.pid);
  temp.append(".tmp");
  temp.c_str();
  if (temp.truncated()) {
    errno = saved_errno;
    return ENAMETOOLONG;
  }

  int result = 0;
  int fd = ::open(temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    result = errno;
  } else {
    FileTarget target{fd, kill, false, 0};
    char buffer[4096];
    TextSink sink(buffer, sizeof buffer, flush_to_file, &target);
    write_report_json(sink, report);
    sink.drain();
    if (target.failed) result = target.error != 0 ? target.error : EIO;
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
