// The process tree a launch ran: the command's report and those of the
// processes it started (the library names them by inserting their pid into
// the command's report name), each process with its peak, and the heaps of
// the tree added up over time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include <heapline/report_reader.h>

namespace heapline::launcher {

struct TreeReport {
  std::string path;
  ParsedReport report;
};

// The reports of the processes started by a launch whose command's report is
// `plain_path`: every `pid_inserted_path(plain_path, PID)` beside it that is a
// heapline/1 report of process PID started at or after `since_unix_ns` (an
// earlier run's files of the same name are not this run's). Live files left
// there by processes of the run that are gone (killed) are converted first
// into their reports, and removed; `notes` gets a line for each, and one for
// processes still running. Sorted by start time.
std::vector<TreeReport> find_child_reports(const std::string& plain_path, std::uint64_t since_unix_ns,
                                           std::vector<std::string>& notes);

// The sum of the processes' heaps over time. Each process is a step
// function of its samples (none before its first sample or after its last);
// at each sample the process counts with the largest heap of the interval
// that sample closes, so the sum's peak is never below a process's own peak.
struct TreeSum {
  std::int64_t peak_bytes = 0;
  std::uint64_t peak_unix_ns = 0;
  std::size_t overlapping = 0;  // most processes alive at one sample
};
TreeSum sum_over_time(const std::vector<TreeReport>& reports);

// The launcher's lines for the tree: one per process (its peak, when, pid,
// parent, program), the largest `max_rows` first and the rest counted, then
// the sum over time when processes overlapped. `root` is the command's
// report (first in `reports`).
std::string summarize_tree(const std::vector<TreeReport>& reports, std::size_t max_rows = 12);

}  // namespace heapline::launcher
