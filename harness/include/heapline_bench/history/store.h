// The history store: points.jsonl in a directory, one point per line,
// append-only, every write all-or-nothing (docs/design.md, "The history
// store"):
// - an append is one write(2) of whole lines under an exclusive flock, then
//   fsync; a short write, a failed write or a failed fsync is rolled back
//   with ftruncate to the size before it, and the error says so;
// - every point is checked by the one reader (point_reader.h) before it is
//   written: the store never holds a line its readers refuse;
// - a torn last line (a writer killed mid-write) is moved, under the lock,
//   to a file of its own beside the store (points.jsonl.torn-TIME-PID) before
//   the next append, and the store cut back to its last whole line; the
//   note says where it went, so nothing is lost and nothing blocks later
//   imports; a last line that lacks only its newline and holds a whole,
//   valid point (an editor dropped it) is kept instead, completed with the
//   newline (an append of its own, all or nothing), and the note says so;
// - lines that cannot be appended can be written beside the store
//   (keep_beside), for the caller to name on stderr.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "heapline/output_file.h"
#include "heapline_bench/history/point.h"
#include "heapline_bench/history/point_reader.h"

namespace heapline::bench {

// What a read of the store gives: the points, their line numbers, and the
// lines that are not points (point_reader.h).
using StoreContents = PointsRead;

class Store {
 public:
  // Where the store's notes go (a torn line moved aside): stderr by default.
  using Notes = std::function<void(const std::string&)>;
  static void print_note(const std::string& note);

  explicit Store(std::string directory, Notes notes = print_note);
  const std::string& directory() const { return directory_; }
  std::string points_path() const;

  // Appends one line per point, all in one write(2) under the lock, then
  // fsync; throws std::runtime_error (with the path and errno text, or the
  // reader's reason for a point it would refuse) when the points cannot be
  // stored, and then the store is as it was. Creates the directory.
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

  // Writes `lines` that could not be appended into a new file beside the
  // store (unstored-TIME-PID-N.jsonl, created exclusively, fsynced) and
  // returns its path; throws std::runtime_error when even that fails, and
  // then leaves no file.
  std::string keep_beside(const std::string& lines) const;

  // The store's points and calibration files for a reader, after the rule
  // every command applies to them, reading or appending: a regular file or
  // none yet, never a symbolic link ("PATH is a symbolic link (nothing is
  // written through a link: ...)") nor another kind of file; throws
  // std::runtime_error with that one line.
  std::string points_to_read() const;
  std::string calibrations_to_read() const;

  // Names every file of the store to `outputs` as one the command reads:
  // its points and calibrations, and whatever else the directory holds
  // (a torn line moved aside, an unstored measurement). No output of any
  // command may be one of them or lie inside the store (export --out
  // STORE/calibration.jsonl replaced the calibrations with CSV). Every
  // command with an output and a store calls it.
  void protect_from(heapline::OutputFiles& outputs) const;

  // Reads every line with the one reader (points_to_read). A missing file is
  // an empty store.
  StoreContents read() const;

 private:
  std::string directory_;
  Notes notes_;
};

}  // namespace heapline::bench
