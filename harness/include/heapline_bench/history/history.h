// The history as the page needs it: the few fields of each point that the
// table and the plots show, read fast. A store of 100 000 points is ~200 MB
// of JSON (raw times included); simdjson's On-Demand parser reads only the
// fields asked for, so rendering stays well under a second. Full points
// (raw times and all) are read by store.h.
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/history/store.h"

namespace heapline::bench {

struct HistoryEntry {
  int line = 0;
  std::string scenario;
  std::string commit;
  std::string range_first;  // empty when the point stands for one commit
  std::string measured_at;
  std::string timing;
  std::string fingerprint;
  int machine = -1;  // index into History::machines; -1 when the point has none
  double overhead = 0;
  double low = 0;
  double high = 0;
};

struct History {
  std::vector<HistoryEntry> entries;  // file order, oldest first
  std::vector<std::string> machines;  // Machine::describe() of each fingerprint seen
  std::vector<StoreProblem> problems;
  std::size_t skipped_lines = 0;  // older lines not read (read_history's last_lines)
};

// Reads points.jsonl at `path`, or only its last `last_lines` lines (0: all):
// the page needs the recent history, and reading from the end keeps render
// time flat as the store grows. A missing file is an empty history. Lines
// that are not points are reported in `problems` with their line number.
History read_history(const std::string& path, std::size_t last_lines = 0);

}  // namespace heapline::bench
