// The heapline/1 output file (include/heapline/report_format.h is its public
// face): the path template, the JSON writer, and the writer's test hook.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.h"
#include "heapline/report_format.h"
#include "text.h"

namespace heapline {

// Expands HEAPLINE_OUT: %p → pid, %e → exe_name, %% → %. A relative result is
// placed under base_dir (the working directory when heapline started, so a
// program that changes directory still writes where it was launched). When
// insert_pid is set and the template has no %p, ".<pid>" goes before the
// extension of the file name (or at its end), so processes of one run never
// overwrite each other. False when the result does not fit.
bool format_output_path(const char* path_template, const char* base_dir, int pid, const char* exe_name,
                        bool insert_pid, char* out, std::size_t capacity);

// ".<pid>" into `path` before the extension of its file name (or at its
// end). False, `path` unchanged, when the result does not fit.
bool insert_pid_before_extension(char* path, std::size_t capacity, int pid);

void write_report_json(TextSink& sink, const Report& report);

// write_report_file (report_format.h) with the test hook `kill`.
int write_report_file(const char* final_path, const Report& report, KillWriter kill);

// A report name that no live file claimed (the live file could not be
// made): it is the writer's only if no process of the run wrote it first.
// A file there that was written since `started_unix_s` (this process's
// start) is another process's report, and is kept: the report goes to the
// name with `pid` inserted (insert_pid_before_extension), written into
// `path` (of `capacity` bytes) for the caller's messages. An older file is
// an earlier run's, and is replaced as a claimed name would be.
struct UnclaimedName {
  char* path;
  std::size_t capacity;
  int pid;
  std::int64_t started_unix_s;
};
int write_report_file(const UnclaimedName& name, const Report& report, KillWriter kill);

}  // namespace heapline
