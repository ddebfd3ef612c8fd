// The history store: points.jsonl in a directory, one point per line,
// append-only. Appends are one write(2) per point under an exclusive flock,
// then fsync, so concurrent writers never interleave and a crash leaves at
// most one torn last line, which readers report and later appends step over
// (they start on a new line) without rewriting it.
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/history/point.h"

namespace heapline::bench {

struct StoreProblem {
  std::string file;
  int line = 0;  // 1-based
  std::string reason;
  std::string describe() const { return file + ":" + std::to_string(line) + ": " + reason; }
};

struct StoreContents {
  std::vector<Point> points;  // in file order (oldest first)
  std::vector<int> lines;     // the line number of each point
  std::vector<StoreProblem> problems;
};

class Store {
 public:
  explicit Store(std::string directory);
  const std::string& directory() const { return directory_; }
  std::string points_path() const;

  // Appends one line per point, all in one write(2) under the lock, then
  // fsync; throws std::runtime_error (with the path and errno text) when the
  // store cannot be written. Creates the directory.
  void append(const Point& point) const;
  void append(const std::vector<Point>& points) const;

  // Noise calibrations (`calibrate`) live beside the points, with the same
  // append rules: one JSON object per line.
  std::string calibration_path() const;
  void append_lines(const std::string& path, std::string lines) const;

  // Reads every line. Malformed lines (and a torn last line) are reported in
  // `problems`, never dropped silently; a missing file is an empty store.
  StoreContents read() const;

 private:
  std::string directory_;
};

// Parses store text (for tests and for importing other files).
StoreContents parse_points(const std::string& text, const std::string& file_name);

}  // namespace heapline::bench
