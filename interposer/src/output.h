// The heapline/1 output file, written once at process exit without malloc:
// numbers through std::to_chars into a stack buffer, streamed with write(2)
// to a temporary name in the destination directory and renamed into place,
// so a reader never sees half a file under the final name.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.h"
#include "live_file.h"
#include "text.h"
#include "timeline.h"

namespace heapline {

struct Report {
  int pid;
  int ppid;
  const char* exe;
  std::uint64_t start_unix_ns;
  std::uint64_t duration_ns;
  const char* allocator;
  const char* size_basis;
  bool exact;
  std::uint64_t bound_bytes;
  std::uint64_t min_threshold_bytes;
  std::uint64_t divisor;
  std::uint64_t max_threshold_bytes;
  std::uint64_t max_threads;
  std::int64_t peak_bytes;
  std::uint64_t peak_time_ns;
  std::int64_t final_bytes;
  // Mapped memory (mapped_memory.h) and heap + mapped ("total").
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
  // Markers: the first min(marker_slots, kLiveMarkerCapacity) of `markers`,
  // those whose ready flag is set.
  const LiveMarker* markers = nullptr;
  std::uint32_t marker_slots = 0;
  // "exit" (written by the process at exit) or "without-exit" (converted
  // from the live file of a process that did not run its exit handlers);
  // for the latter, the time of its last sample and, when known, the signal.
  const char* ended = "exit";
  std::uint64_t last_sample_ns = 0;
  int signal = 0;
};

// Expands HEAPLINE_OUT: %p → pid, %e → exe_name, %% → %. A relative result is
// placed under base_dir (the working directory when heapline started, so a
// program that changes directory still writes where it was launched). When
// insert_pid is set and the template has no %p, ".<pid>" goes before the
// extension of the file name (or at its end), so processes of one run never
// overwrite each other. False when the result does not fit.
bool format_output_path(const char* path_template, const char* base_dir, int pid, const char* exe_name,
                        bool insert_pid, char* out, std::size_t capacity);

void write_report_json(TextSink& sink, const Report& report, const Timeline& timeline);

// Writes the file at final_path through a temporary name. Returns 0 or the
// errno of the step that failed; errno itself is left as it was.
int write_report_file(const char* final_path, const Report& report, const Timeline& timeline, KillWriter kill);

}  // namespace heapline
