// The one reader of the point schema (point.h). validate, import, render and
// check all read points through it, so they agree on what a valid point is:
// a line that one of them accepts, all of them accept, with the same values.
//
// It reads with simdjson's On-Demand parser, which touches only the fields
// asked for: the page and the verdicts skip the raw times (most of a line),
// validate and import read everything. A store of 100 000 points (~200 MB)
// is read in about a second.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "heapline_bench/history/point.h"

namespace heapline::bench {

struct StoreProblem {
  std::string file;
  int line = 0;  // 1-based
  std::string reason;
  std::string describe() const { return file + ":" + std::to_string(line) + ": " + reason; }
};

struct PointsRead {
  std::vector<Point> points;  // in file order (oldest first)
  std::vector<int> lines;     // the line number of each point
  std::vector<StoreProblem> problems;
  std::size_t skipped_lines = 0;  // older lines not read (last_lines)
};

enum class RawTimes {
  read,  // every field: validate, import
  skip,  // the figures only (raw times of schema-1 points are still read for their cpu figure)
};

// Parses points.jsonl text. Blank lines are skipped; a line that is not a
// valid point, and a torn last line (no newline), are problems with their
// line number, never dropped silently.
PointsRead read_points(std::string_view text, const std::string& file_name, RawTimes raw);

// Reads the file at `path`, or only its last `last_lines` lines (0: all): the
// page needs the recent history, and reading from the end keeps its time flat
// as the store grows. A missing file is an empty store.
PointsRead read_points_file(const std::string& path, RawTimes raw, std::size_t last_lines = 0);

// Reads like read_points_file, but hands each point to `sink` (with its line
// number) instead of keeping them all: validate of a long store keeps only
// what it checks. Returns the number of older lines skipped.
using PointSink = std::function<void(Point&&, int line)>;
std::size_t scan_points_file(const std::string& path, RawTimes raw, std::size_t last_lines, const PointSink& sink,
                             std::vector<StoreProblem>& problems);

// One point from one line of JSON; throws std::runtime_error saying which
// field is wrong.
Point parse_point_line(std::string_view line);

}  // namespace heapline::bench
