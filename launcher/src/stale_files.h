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
  kRunning,      // its process runs and has the file mapped: never touched
  kGone,         // its process is gone (or the pid now belongs to another program)
  kHalfCreated,  // no identity, old, and nobody has it open or mapped: never to be finished
  kBeingCreated, // no identity yet, but young or still open or mapped: left alone
  kNotOurs,      // not a regular file of ours (this user's) with the live file's identity
  kDamaged,      // ours, with its identity, but cut short or corrupt: no reader takes it
};

// A live file without its identity (magic) older than this, that no process
// has open or mapped, will never have one: a writer publishes the identity
// within microseconds of creating the file. (Why it has none, a writer
// killed while making it or a file another program made, is not known.)
constexpr int kHalfCreatedAfterSeconds = 10;

// What the file at `path` is; `pid` gets the process it names, and `why`
// (when given) what is wrong with a kDamaged one.
LiveFileState live_file_state(const std::filesystem::path& path, pid_t& pid, std::string* why = nullptr);

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
