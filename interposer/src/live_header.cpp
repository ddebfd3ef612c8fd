// The live file's creation and its header's identity (live_format.h is the
// layout). When the file cannot be created, the same layout lives in static
// memory (g_static_region) and one line on stderr says so.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "process_state.h"

namespace heapline::accounting {

// Whether this process's report keeps the plain name (see output.h).
bool is_root_process() {
  const int pid = getpid();
  return !g_process.fork_child && (g_process.root_pid == 0 || g_process.root_pid == pid);
}

// Creates this process's live file (at init, and in a fork child, whose
// inherited mapping is its parent's file) and writes its identity. Falls
// back to g_static_region, with one line on stderr, when the file cannot be
// made. Makes no allocation: runs inside the first malloc call.
void open_live_file() {
  if (g_region != &g_static_region) release_live_region(g_region);  // a fork child: the parent's file
  g_region = &g_static_region;
  char* path = g_process.live_path;
  path[0] = 0;
  const Config& config = g_process.config;
  if (!config.output_off) {
    const int pid = getpid();
    if (format_output_path(config.out_template, g_process.base_dir, pid, program_invocation_short_name,
                           !is_root_process(), path, kMaxPath - 8)) {
      std::size_t length = strlen(path);
      memcpy(path + length, ".live", 6);
      LiveRegion* mapped = create_live_region(path);
      if (mapped != nullptr) {
        g_region = mapped;
      } else {
        char* line = g_line;
        TextSink text(line, sizeof g_line);
        append_failure(text, "create", path, errno);
        text.append("; the heap line is kept in memory only (lost if the process is killed)\n");
        write_stderr(line, text.size());
        path[0] = 0;
      }
    } else {
      path[0] = 0;
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
  h.exact = config.precision.exact ? 1 : 0;
  h.min_threshold_bytes = config.precision.exact ? 1 : config.precision.min_bytes;
  h.divisor = config.precision.exact ? 0 : config.precision.divisor;
  const NextAllocator& next = next_allocator();
  copy_text(h.allocator, sizeof h.allocator, next.name);
  copy_text(h.size_basis, sizeof h.size_basis, next.size_basis);
  ssize_t exe_length = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
  h.exe[exe_length > 0 ? exe_length : 0] = 0;
  h.seq.store(0, std::memory_order_relaxed);
  h.state.store(kLiveRunning, std::memory_order_relaxed);
  h.markers_claimed.store(0, std::memory_order_relaxed);
  for (LiveMarker& marker : region.markers) marker.ready.store(0, std::memory_order_relaxed);
  g_timeline.attach(&region.timeline);
  h.magic.store(kLiveMagic, std::memory_order_release);  // identity complete
}

}  // namespace heapline::accounting
