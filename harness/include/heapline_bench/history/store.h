// The history store: points.jsonl in a directory, one point per line,
// append-only. Appends are one write(2) per point under an exclusive flock,
// then fsync, so concurrent writers never interleave and a crash leaves at
// most one torn last line, which readers report and later appends step over
// (they start on a new line) without rewriting it.
#pragma once

#include <string>
#include <vector>

#include "heapline_bench/history/point.h"
#include "heapline_bench/history/point_reader.h"

namespace heapline::bench {

// What a read of the store gives: the points, their line numbers, and the
// lines that are not points (point_reader.h).
using StoreContents = PointsRead;

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

  // Appends the points that the store does not hold yet (point_identity),
  // reading the store under the same lock as the append, so concurrent
  // imports of the same points add them once. Returns how many were added.
  // Throws when the store has unreadable lines: nothing is appended then.
  std::size_t append_new(const std::vector<Point>& points) const;

  // Refuses (std::runtime_error with the path and the reason) a store that
  // cannot be appended to, before anything is measured for it.
  void check_appendable() const;

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

}  // namespace heapline::bench
