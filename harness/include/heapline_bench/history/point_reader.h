// The one reader of the point schema (point.h): validate, import, render,
// check and export all read points through it, so they agree on what a
// valid point is: a line that one of them accepts, all of them accept, with
// the same values; a line one of them reports, all of them report, with the
// same reason.
//
// The rule, line by line: exactly one JSON object (RFC 8259: UTF-8 without
// overlong forms or surrogates, no raw control character, no content after
// the object, no key twice in an object), every field of the schema of the
// right type, whatever the caller keeps (RawTimes), text fields without
// control characters, `measured_at` an RFC 3339 UTC time (utc_time.h); a
// point equal to an earlier line's (point_identity) is a duplicate; a last
// line without its newline is an interrupted append, unless it holds a
// whole, valid point (an editor that dropped the final newline): that point
// is read, and the line's number kept (unterminated_line) for validate to
// say. Each bad line is a problem with its line number, never dropped
// silently. Blank lines are skipped.
//
// It parses each line with simdjson's DOM parser (the whole line is
// validated, at a few hundred MB/s). A store of 100 000 points (~200 MB) is
// read in about a second.
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
  enum class Kind {
    invalid,     // not a point
    duplicate,   // a valid point, equal to an earlier line's
    incomplete,  // the last line, without its newline: an interrupted append
  } kind = Kind::invalid;
  std::string describe() const { return file + ":" + std::to_string(line) + ": " + reason; }
};

struct PointsRead {
  std::vector<Point> points;  // in file order
  std::vector<int> lines;     // the line number of each point
  std::vector<StoreProblem> problems;  // in line order
  // The last line's number when it lacks its newline but holds a whole,
  // valid point (read like any other); 0 otherwise.
  int unterminated_line = 0;
};

enum class RawTimes {
  read,  // every field kept: validate, import, export
  skip,  // the raw times checked but not kept (those of schema-1 points are, for their cpu figure)
};

// Parses points.jsonl text.
PointsRead read_points(std::string_view text, const std::string& file_name, RawTimes raw);

// Reads the file at `path`; a missing file is an empty store; anything but
// a regular file (a FIFO, a directory) is refused (std::runtime_error).
PointsRead read_points_file(const std::string& path, RawTimes raw);

// Reads like read_points_file, but hands each point to `sink` (with its line
// number) instead of keeping them all: validate of a long store keeps only
// what it checks.
using PointSink = std::function<void(Point&&, int line)>;
// `unterminated_line`, when given, is set as PointsRead's.
void scan_points_file(const std::string& path, RawTimes raw, const PointSink& sink, std::vector<StoreProblem>& problems,
                      int* unterminated_line = nullptr);

// One point from one line of JSON; throws std::runtime_error saying which
// field is wrong.
Point parse_point_line(std::string_view line);
// The same from a JSON value (a point written by to_json, say).
Point point_from_json(const nlohmann::json& json);

}  // namespace heapline::bench
