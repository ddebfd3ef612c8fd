// The history as the page needs it: the few fields of each point that the
// table and the plots show, read fast. A store of 100 000 points is ~200 MB
// of JSON (raw times included); simdjson's On-Demand parser reads only the
// fields asked for, so rendering stays well under a second. Full points
// (raw times and all) are read by store.h.
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/store.h"

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
};

// Reads points.jsonl at `path`; a missing file is an empty history. Lines
// that are not points are reported in `problems` with their line number.
History read_history(const std::string& path);

}  // namespace heapline::bench
