// The live file's creation and its header's identity (live_format.h is the
// layout). When the file cannot be created, the same layout lives in static
// memory (g_static_region) and one line on stderr says so.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include <cstddef>

#include "mapped_memory.h"
#include "output.h"
#include "process_state.h"

namespace heapline::accounting {

// Whether this process's report keeps the plain name (see output.h).
bool is_root_process() {
  const int pid = getpid();
  return !g_process.fork_child && (g_process.root_pid == 0 || g_process.root_pid == pid);
}

// Whether this library came in through LD_PRELOAD (rather than dlopen, which
// may happen while the program's threads read the environment).
bool preloaded() {
  const char* preload = getenv("LD_PRELOAD");
  Dl_info self{};
  if (preload == nullptr || dladdr(reinterpret_cast<void*>(&preloaded), &self) == 0 || self.dli_fname == nullptr) {
    return false;
  }
  const char* slash = strrchr(self.dli_fname, '/');
  return strstr(preload, slash != nullptr ? slash + 1 : self.dli_fname) != nullptr;
}

void decide_followed(bool in_constructor) {
  Config& config = g_process.config;
  if (!config.follow_children && !is_root_process()) {
    // A process the command started: the library is loaded (LD_PRELOAD is
    // inherited) and counts, but nothing of it reaches the disk or stderr.
    g_process.followed = false;
    config.output_off = true;
    config.summary = false;
    return;
  }
  // With follow=command, the first process of a run without the launcher
  // tells the processes it starts that they are not the command, as the
  // launcher does. Only then: setenv allocates (a few dozen bytes, counted
  // in the command's heap) and the program sees the variable. Only from
  // the constructor of a preloaded library, where setenv cannot race the
  // program's threads.
  if (in_constructor && !config.follow_children && g_process.root_pid == 0 && is_root_process() && preloaded()) {
    char pid_text[24];
    TextSink text(pid_text, sizeof pid_text);
    text.append_signed(g_process.pid);
    setenv("HEAPLINE_ROOT_PID", text.c_str(), 1);
    g_process.root_pid = g_process.pid;
  }
}

namespace {

// `report` + ".live" into `live`. False when it does not fit.
bool live_name(const char* report, char* live) {
  const std::size_t length = strlen(report);
  if (length + 6 > kMaxPath) return false;
  memcpy(live, report, length);
  memcpy(live + length, ".live", 6);
  return true;
}

// Whether the live file at `path` is one this very process left before an
// exec (same pid, same owner): then its name is ours to take over.
bool left_by_this_process(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat info;
  LiveHeader head;  // only the identity's first fields are read
  bool ours = fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == geteuid() &&
              pread(fd, &head, offsetof(LiveHeader, start_unix_ns), 0) ==
                  static_cast<ssize_t>(offsetof(LiveHeader, start_unix_ns)) &&
              head.magic.load(std::memory_order_relaxed) == kLiveMagic && head.pid == getpid();
  close(fd);
  return ours;
}

// Claims `report`'s live file exclusively; nullptr with errno on failure.
LiveRegion* claim(const char* report, char* live) {
  if (!live_name(report, live)) {
    errno = ENAMETOOLONG;
    return nullptr;
  }
  LiveRegion* mapped = create_live_region(live);
  if (mapped == nullptr && errno == EEXIST && left_by_this_process(live)) {
    unlink(live);
    mapped = create_live_region(live);
  }
  return mapped;
}

void say_no_live_file(char* path) {
  char* line = g_line;
  TextSink text(line, sizeof g_line);
  append_failure(text, "create", path, errno);
  text.append("; the heap line is kept in memory only (lost if the process is killed)\n");
  write_stderr(line, text.size());
  path[0] = 0;
}

}  // namespace

void create_deferred_live_file() {
  g_process.live_file_floor = INT64_MAX;  // once, whatever happens
  LiveRegion* mapped = claim(g_process.report_path, g_process.live_path);
  if (mapped == nullptr) {
    say_no_live_file(g_process.live_path);  // the report keeps its name
    return;
  }
  // Everything so far (identity, figures, markers, timeline) moves over as
  // it is: only the holder of g_sampling.busy writes the figures and the
  // timeline, and that is this thread. A marker being written right now may
  // land in the static copy only: the exit report takes it from there.
  memcpy(static_cast<void*>(mapped), static_cast<const void*>(&g_static_region), sizeof(LiveRegion));
  attach_timelines(*mapped);
  __atomic_store_n(&g_region, mapped, __ATOMIC_RELEASE);
}

// Creates this process's live file (at init, and in a fork child, whose
// inherited mapping is its parent's file) and writes its identity. The
// report's name is claimed with it: the live file is created exclusively, so
// two running processes never share a name. The plain name goes to the
// first process of the run to claim it (normally the command: it starts
// first); a process that finds it taken (by another process of the run, or
// by the live file of a killed earlier run, which is never touched) inserts
// its pid. Falls back to g_static_region, with one line on stderr, when no
// file can be made. Makes no allocation: runs inside the first malloc call.
void open_live_file() {
  if (g_region != &g_static_region) release_live_region(g_region);  // a fork child: the parent's file
  g_region = &g_static_region;
  char* path = g_process.live_path;
  char* report = g_process.report_path;
  path[0] = 0;
  report[0] = 0;
  g_process.live_file_floor = INT64_MAX;
  const Config& config = g_process.config;
  if (!config.output_off) {
    const int pid = getpid();
    const char* name = program_invocation_short_name;
    // A report path that cannot receive the report (a device...) gets no
    // live file beside it either; the exit says why, once.
    if (!is_root_process()) {
      // Not the command: its name has its pid, so nothing to claim now; the
      // live file waits for the heap to matter (create_deferred_live_file).
      if (format_output_path(config.out_template, g_process.base_dir, pid, name, true, report, kMaxPath - 8) &&
          check_report_path(report) != kReportPathNotRegular) {
        // This very process may have made one before an exec.
        if (live_name(report, path) && left_by_this_process(path)) unlink(path);
        path[0] = 0;
        g_process.live_file_floor = kLiveFileFloor;
      } else {
        report[0] = 0;
      }
    } else if (format_output_path(config.out_template, g_process.base_dir, pid, name, false, report,
                                  kMaxPath - 8) &&
               check_report_path(report) != kReportPathNotRegular) {
      LiveRegion* mapped = claim(report, path);
      if (mapped == nullptr && errno == EEXIST &&
          format_output_path(config.out_template, g_process.base_dir, pid, name, true, report, kMaxPath - 8) &&
          check_report_path(report) != kReportPathNotRegular) {
        mapped = claim(report, path);
      }
      if (mapped != nullptr) {
        g_region = mapped;
      } else {
        say_no_live_file(path);
        report[0] = 0;
      }
    } else {
      report[0] = 0;
    }
  }
  LiveRegion& region = *g_region;
  LiveHeader& h = region.header;
  h.magic.store(0, std::memory_order_relaxed);
  h.version = kLiveVersion;
  h.header_bytes = sizeof(LiveHeader);
  h.marker_capacity = kLiveMarkerCapacity;
  h.sample_capacity = Timeline::kCapacity;
  h.file_bytes = sizeof(LiveRegion);
  h.pid = getpid();
  h.ppid = getppid();
  h.start_unix_ns = g_process.start_unix_ns;
  h.start_mono_ns = g_process.start_mono_ns.load(std::memory_order_relaxed);
  h.exact = config.precision.exact ? 1 : 0;
  h.precision_rule = kPrecisionBudget;
  h.precision_bytes = config.precision.exact ? 0 : config.precision.budget_bytes;
  h.precision_divisor = config.precision.exact ? 0 : config.precision.budget_divisor;
  const NextAllocator& next = next_allocator();
  copy_text(h.allocator, sizeof h.allocator, next.name);
  copy_text(h.size_basis, sizeof h.size_basis, next.size_basis);
  ssize_t exe_length = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
  h.exe[exe_length > 0 ? exe_length : 0] = 0;
  h.seq.store(0, std::memory_order_relaxed);
  // The stated precision as it stands (raised from here on where it grows),
  // and no publish yet in this file.
  h.max_threads.store(g_process.max_registered.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h.max_threshold_bytes.store(static_cast<std::uint64_t>(g_process.max_threshold.load(std::memory_order_relaxed)),
                              std::memory_order_relaxed);
  h.bound_bytes.store(static_cast<std::uint64_t>(g_budget.max_reserved.load(std::memory_order_relaxed)),
                      std::memory_order_relaxed);
  h.publish_mono_ns.store(0, std::memory_order_relaxed);
  h.publish_live.store(0, std::memory_order_relaxed);
  h.open_max.store(0, std::memory_order_relaxed);
  h.state.store(kLiveRunning, std::memory_order_relaxed);
  h.markers_claimed.store(0, std::memory_order_relaxed);
  g_process.markers_claimed.store(0, std::memory_order_relaxed);
  for (LiveMarker& marker : region.markers) marker.ready.store(0, std::memory_order_relaxed);
  h.mapped_mode = mapped::enabled() ? kMappedOn : kMappedOff;
  attach_timelines(region);
  h.magic.store(kLiveMagic, std::memory_order_release);  // identity complete
}

}  // namespace heapline::accounting
