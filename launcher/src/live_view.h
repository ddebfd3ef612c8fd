// Reading a live file (heapline/live_format.h) from outside the process
// that writes it: `heapline convert` (a file left by a process that ended
// without its exit handlers) and `heapline top` (a running process).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <heapline/live_format.h>
#include <heapline/regular_file.h>

namespace heapline::launcher {

// A live file, read as a copy: never mapped, so that a file cut under the
// reader (another process truncating it while `top` watches, or while
// `convert` reads) is a short read, never a SIGBUS. Throws
// std::runtime_error with a message for the user when the file is missing,
// too short or not a heapline live file.
class LiveFile {
 public:
  // What a file shorter than its header says it holds is: refused (convert,
  // the tree's summary: a copy cut short would lose series without a word),
  // or read as far as it goes (top: a running process's file cut by another
  // process still shows its header and the start of its heap line).
  enum class CutFile { kRefused, kReadAsFarAsItGoes };
  explicit LiveFile(const std::filesystem::path& path, CutFile cut = CutFile::kRefused);
  LiveFile(const LiveFile&) = delete;
  LiveFile& operator=(const LiveFile&) = delete;

  // Copies the file again, through the descriptor opened at the start (so a
  // file its process removed at exit still reads). `still_writing`: the
  // process may be running: copied again until the copy is consistent (its
  // seqlocks and merge brackets even, and unchanged in the file after the
  // copy), a bounded number of times. Throws std::runtime_error when the
  // file no longer holds a live file (cut by another process meanwhile).
  void refresh(bool still_writing);

  // Only the older layout's part (kLiveRegionV1Bytes) unless has_mapped_series().
  const LiveRegion& region() const { return *region_; }
  const std::filesystem::path& path() const { return path_; }
  // A file of the current layout, whose writer kept the mapped figures.
  bool has_mapped_series() const {
    return copied_bytes_ >= kLiveRegionWithoutProfileBytes && region_->header.mapped_mode != kMappedUnknown;
  }
  // A file of version 2, with room for the peak profile.
  bool has_peak_profile() const {
    return copied_bytes_ >= kLiveRegionWithoutResidentBytes && region_->header.version >= kLiveVersion;
  }
  // A file whose writer kept the resident-set series (and its figures).
  bool has_resident_series() const {
    return copied_bytes_ >= sizeof(LiveRegion) && region_->header.version >= kLiveVersion &&
           region_->header.resident_series != 0;
  }

 private:
  // Checks the copy; `again`: a later copy of a file that was a live file.
  void check(bool again) const;

  std::filesystem::path path_;
  RegularFile file_;
  std::unique_ptr<LiveRegion> region_;  // bytes past the file's end read as zeros
  std::size_t copied_bytes_ = 0;        // how much of it the file held
  CutFile cut_ = CutFile::kRefused;
};

// A consistent copy of what the file holds now.
struct LiveSnapshot {
  int pid = 0;
  int ppid = 0;
  std::string exe, allocator, size_basis;
  // The program the last image exec'd without the library following it,
  // and why ("PATH: statically linked: no loader runs"); empty otherwise.
  std::string exec_note;
  std::uint64_t start_unix_ns = 0;
  bool exact = false;
  // The budget's BYTES and DIVISOR (0 for a file older than the budget).
  std::uint64_t budget_floor_bytes = 0, budget_divisor = 0;
  std::uint64_t bound_bytes = 0;  // the stated precision (stated_bound)
  LiveFigures figures{};
  bool exited = false;  // the exit handlers ran
  std::uint64_t interval_ns = 0;
  std::vector<std::pair<std::uint64_t, std::string>> markers;  // [t_ns, name], in the order recorded
  std::vector<Sample> samples;
  // Mapped memory: mapped_mode is kMappedUnknown for a file of the older
  // layout (then no figures); mapped_samples match `samples` one for one
  // while it was on (each pair ends the same interval; each sample at the
  // time of its own series' latest change).
  LiveMappedMode mapped_mode = kMappedUnknown;
  std::vector<Sample> mapped_samples;
  // The resident set as read at samples (a file with the resident series):
  // its series, on its own times; figures.resident_live is -1 without a
  // reading.
  std::vector<Sample> resident_samples;
  // Samples dropped because they went back in time (their maxima kept in
  // the sample before): say so when converting.
  std::size_t dropped_samples = 0;
};

// `still_writing`: the process may be running (wait out a merge in progress
// rather than rebuild it). Throws std::runtime_error ("FILE is corrupt: ...")
// for what no writer leaves, however it died: every index read from the file
// is also clamped, so a crafted file can make it refuse, never crash. What a
// writer does leave (samples out of time order, from markers placed
// concurrently) is salvaged, and counted in dropped_samples.
LiveSnapshot take_snapshot(const LiveFile& file, bool still_writing);

// "dropped N samples that went back in time (...)", for a message.
std::string dropped_samples_note(const LiveSnapshot& snapshot);

// The live file of a running process, found among its mappings
// (/proc/PID/maps). nullopt with `why` filled when there is none.
std::optional<std::filesystem::path> find_live_file(pid_t pid, std::string& why);

// Whether process `pid` exists and has not ended (a zombie has).
bool process_alive(pid_t pid);

// The file's latest peak profile (heapline/profile_format.h), copied
// consistently; false when it has none (version 1, or none taken yet).
bool copy_peak_profile(const LiveFile& file, ProfileSnapshot& out);

// The heapline/1 report of a snapshot, written with the library's own writer
// (through a temporary name). `ended`: "without-exit", "exit" or "running";
// signal 0 when unknown. Throws std::runtime_error on failure.
void write_converted_report(const LiveFile& file, const LiveSnapshot& snapshot, const std::filesystem::path& out,
                            const std::string& ended, int signal);

// Where convert writes by default: FILE without its ".live", else FILE.json.
std::filesystem::path default_converted_path(const std::filesystem::path& live_path);

// The text `heapline top` prints: figures, the last markers, a chart
// `width` columns wide.
std::string render_top(const LiveSnapshot& snapshot, bool running, std::size_t width = 72);

}  // namespace heapline::launcher
