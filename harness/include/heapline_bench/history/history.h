// The history as the page and the verdicts need it: the figures of each point
// (no raw times), read through the one schema reader (point_reader.h).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heapline_bench/history/point_reader.h"
#include "heapline_bench/measurement/machine.h"

namespace heapline::bench {

// The three figures of a point (point.h says what each measures).
enum class Figure { wall, cpu, instructions };
inline constexpr Figure kFigures[] = {Figure::wall, Figure::cpu, Figure::instructions};
const char* figure_name(Figure figure);  // "wall", "cpu", "instructions"
std::optional<Figure> figure_from_name(std::string_view name);  // nullopt: not a figure's name

struct FigureValue {
  bool present = false;
  double overhead = 0;
  double low = 0;  // the confidence interval (kConfidenceLevel), when interval_known
  double high = 0;
  // false for the cpu figure of schema-1 points, computed on read from their
  // raw runs as the ratio of medians: a bootstrap of every old point would
  // cost seconds on each read of a long store.
  bool interval_known = true;
};

struct HistoryEntry {
  int line = 0;
  std::string scenario;
  std::string commit;
  std::string range_first;  // empty when the point stands for one commit
  std::string measured_at;
  std::int64_t measured_at_ns = 0;  // the same instant, for ordering (utc_time.h)
  std::string timing;
  std::string fingerprint;
  std::string command;               // what the timed runs ran ("" in points older than the field)
  std::string instructions_command;  // what callgrind counted ("" when unknown or not counted)
  int machine = -1;  // index into History::machines; -1 when the point has none
  double scale = 1.0;
  double overhead = 0;  // the wall figure, the headline
  double low = 0;
  double high = 0;
  FigureValue cpu;
  FigureValue instructions;
  std::optional<double> publishes_per_1000_calls;
  std::optional<long> extra_peak_rss_kib;
  std::optional<Accuracy> accuracy;

  FigureValue figure(Figure which) const;
};

// Which points measure the same thing: a figure of a point is compared only
// with the same figure of points of the same key. The scale alone is not
// enough: the catalogue's operation count can change (large-4t's did), and
// a point measured with an explicit --command carries its scenario's name.
// The instruction figure follows the reduced command callgrind counted, the
// timed figures the command of the timed runs.
struct SeriesKey {
  std::string scenario;
  std::string fingerprint;
  std::string timing;
  double scale = 1.0;
  std::string command;
  auto operator<=>(const SeriesKey&) const = default;
};
SeriesKey series_key(const HistoryEntry& entry, Figure figure);

// A machine as the points recorded it: the fingerprint they carry (the
// series' key) and its fields.
struct HistoryMachine {
  std::string fingerprint;
  Machine machine;
};

struct History {
  std::vector<HistoryEntry> entries;  // oldest first, by measured_at (file order within the same instant)
  std::vector<HistoryMachine> machines;  // each fingerprint seen, in the order of the file
  std::vector<StoreProblem> problems;
};

// What the page calls each of history.machines, index for index: its CPU
// model without the vendor's marks and clock, and its cores ("Xeon Platinum
// 8370C, 4 cores"); a later fingerprint with the same name gets " #2", " #3"
// (the same hardware under another kernel, glibc or runner image).
std::vector<std::string> machine_names(const History& history);
// The name of an entry's machine, or "unknown machine" for a point without one.
std::string machine_name_of(const HistoryEntry& entry, const std::vector<std::string>& names);

// The points of `history` whose scenario is none of `scenarios` (a
// scenario renamed or removed from the catalogue, another catalogue's), as
// a warning says them: "3 point(s) of scenarios the catalogue does not hold
// (old-name: 2, x: 1)"; "" when there are none. No page shows them and no
// verdict judges them: they are said, never left out in silence.
std::string points_outside(const History& history, const std::vector<std::string>& scenarios);

// The entry of a point (figures only; the machine's description goes to
// `machines`, indexed by fingerprint in `machine_index`).
HistoryEntry history_entry(const Point& point, int line);

// Reads the whole of points.jsonl at `path` (the newest points may be
// anywhere in it: an import appends older ones) with the one reader
// (point_reader.h). A missing file is an empty history. Lines that are not
// points are reported in `problems` with their line number.
History read_history(const std::string& path);

// The history of points already read (tests, and stores read whole).
History history_of(const PointsRead& read);

}  // namespace heapline::bench
