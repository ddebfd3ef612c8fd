// Files heapline leaves behind: live files of processes that are gone, and
// the reports beside them. `heapline clean` removes them, the launcher
// converts the ones its own run left; neither ever touches a file a running
// process still writes, nor a file that is not heapline's own.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace heapline::launcher {

enum class LiveFileState {
  kRunning,    // its process runs and has the file mapped: never touched
  kGone,       // its process is gone (or the pid now belongs to another program)
  kNotOurs,    // not a regular file of ours (this user's) with the live file's identity
};

// What the file at `path` is; `pid` gets the process it names.
LiveFileState live_file_state(const std::filesystem::path& path, pid_t& pid);

struct CleanOptions {
  bool reports = false;  // also heapline/1 reports (*.json) of this user
  bool dry_run = false;  // say what would go, remove nothing
};

struct CleanOutcome {
  std::vector<std::string> removed;  // "PATH (pid N, PROGRAM)"
  std::vector<std::string> kept;     // "PATH: why"
};

// Removes, in `dir` (not recursively), the live files whose process is
// gone and, with `reports`, the heapline/1 reports. Throws
// std::runtime_error when `dir` cannot be read.
CleanOutcome clean_directory(const std::filesystem::path& dir, const CleanOptions& options);

}  // namespace heapline::launcher
