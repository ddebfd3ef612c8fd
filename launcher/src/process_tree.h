// The process tree a launch ran: the command's report and those of the
// processes it started (the library names them by inserting their pid into
// the command's report name), each process with its peak, and the heaps of
// the tree added up over time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include <heapline/peak_rule.h>
#include <heapline/report_reader.h>

namespace heapline::launcher {

struct TreeReport {
  std::string path;
  ParsedReport report;
};

// What is at `path` when it is not a regular file ("a symbolic link", "a
// FIFO", "a directory"); "" when it is one, or nothing is there. The
// library writes its report and live file as regular files only: anything
// else at their names was put there by someone else, and is never read
// through.
std::string not_regular_at(const std::string& path);

// Whether the regular file at `path` was last written before this run
// started (`since_unix_ns`): then it is an earlier run's, never this run's
// output, whatever it holds.
bool written_before_run(const std::string& path, std::uint64_t since_unix_ns);

// Which launch this is: a process belongs to it when its report carries
// `run_id` (HEAPLINE_RUN_ID, when the writer records it), else when its
// parent is the command, the keeper (which adopts orphans of the run), the
// launcher (which does, should the keeper die), or
// another process of the run. Another launch writing beside this one (the
// same --out) is not this one, even where its names look alike.
struct RunIdentity {
  pid_t command_pid = 0;
  pid_t launcher_pid = 0;
  pid_t keeper_pid = 0;  // the command's parent, which adopts the run's orphans
  std::string run_id;
  std::uint64_t since_unix_ns = 0;  // no process of the run started before
  // Processes of the run still running when the launcher stopped waiting
  // (those it adopted): counted in the summary, not summarised.
  std::vector<pid_t> left_running;
};

// Reports of the run read while it ran, as each landed: a process that
// reuses an earlier one's pid later replaces that report's file, but not
// this copy. Without inotify (fd() < 0), only the files left at the end are
// read.
class ReportWatch {
 public:
  ReportWatch();
  ~ReportWatch();
  ReportWatch(const ReportWatch&) = delete;
  ReportWatch& operator=(const ReportWatch&) = delete;
  int fd() const { return fd_; }
  // Watches the directory of `plain_path` for its pid-inserted names.
  void start(const std::string& plain_path);
  // Reads the reports that landed since the last call.
  void read_events();
  const std::vector<TreeReport>& seen() const { return seen_; }

 private:
  std::string plain_;
  int fd_ = -1;
  std::vector<TreeReport> seen_;
};

// The reports of the processes started by a launch whose command's report is
// `plain_path`: every `pid_inserted_path(plain_path, PID)` beside it that is a
// heapline/1 report of process PID of this run (`run`), and those of `seen`
// (read while it ran) that were replaced since. Live files left there by
// processes of the run that are gone (killed) are converted first into their
// reports, and removed; `notes` gets a line for each, for each report that
// cannot be read, and one for processes still running. Sorted by start time;
// the command's own report is not among them.
std::vector<TreeReport> find_child_reports(const std::string& plain_path, const RunIdentity& run,
                                           const std::vector<TreeReport>& seen, std::vector<std::string>& notes);

// The one-line summary of each process, for --verbose.
std::string summarize_each(const std::vector<TreeReport>& reports);

// A process's peak of heap + mapped and its time since the process's start,
// by the library's rule (heapline/peak_rule.h).
PeakAt whole_peak(const ParsedReport& report);

// Whether a report holds a mapped series to draw and add (HEAPLINE_MAPPED
// on, at least one mapped sample).
bool has_mapped_series(const ParsedReport& report);

// A process's memory over time, one point at each time either series has a
// sample (each series keeps its own times: a mapping shows when it was
// made): the heap and the mapped bytes held from then on, the most the heap
// can have held since the previous point, and the most heap + mapped can
// have held. That bound adds both series' maxima (which may not have been
// held at once), never above the process's own peak of heap + mapped, and
// the interval that holds that peak reaches it. Times since the process's
// start. Without a mapped series (HEAPLINE_MAPPED=off, an older report) the
// heap alone.
struct MemoryPoint {
  std::uint64_t t_ns;
  std::int64_t heap, mapped;           // at t_ns
  std::int64_t heap_most, most;        // the interval's most: heap, heap + mapped
  std::int64_t mapped_most = 0;        // the interval's most of mapped
};
std::vector<MemoryPoint> memory_over_time(const ParsedReport& report);

// The same as samples of heap + mapped: [unix ns, heap + mapped, most].
std::vector<Sample> whole_memory(const ParsedReport& report);

// The sum of the processes' series (whole_memory) over time. Each process
// is a step function of its points (none before its first point or after
// its last); at each point the process counts with the bound of the
// interval that point closes, so the sum's peak is never below a process's
// own peak.
struct TreeSum {
  std::int64_t peak_bytes = 0;
  std::uint64_t peak_unix_ns = 0;
  std::size_t overlapping = 0;  // most processes alive at one point
  // The sum at each point, in time order: [unix ns, the sum of what the
  // processes held then, the sum with this point's process at its bound].
  std::vector<Sample> line;
};
TreeSum sum_over_time(const std::vector<std::vector<Sample>>& series);
TreeSum sum_over_time(const std::vector<TreeReport>& reports);

// The first process's start: the origin of the tree's times.
std::uint64_t tree_origin_unix_ns(const std::vector<TreeReport>& reports);

// The processes in the order the summary lists them: the largest peak of
// heap + mapped first.
std::vector<const TreeReport*> largest_first(const std::vector<TreeReport>& reports);

// A trivial short-lived helper of the tree (a shim's bash, a readlink):
// not the command, ended by exit within kHelperMostNs, its peak of heap +
// mapped under kHelperMostBytes and at most an eighth of the tree's
// largest process's. The summary folds them into one line.
constexpr std::uint64_t kHelperMostNs = 1'000'000'000;
constexpr std::int64_t kHelperMostBytes = 1 << 20;
bool is_trivial_helper(const TreeReport& entry, const std::vector<TreeReport>& reports);

// The launcher's lines for the tree: one per process (its peak of heap +
// mapped and when, its own peaks of the heap and of mapped memory, pid,
// parent, program), the largest `max_rows` first and the rest counted, the
// trivial helpers in one line (how many of each program), then the sum over
// time when processes overlapped. The command's report is first in
// `reports`.
std::string summarize_tree(const std::vector<TreeReport>& reports, std::size_t max_rows = 5);

}  // namespace heapline::launcher
