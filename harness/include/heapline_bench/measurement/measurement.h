// The interleaved overhead measurement (docs/design.md, "The measurement"): N runs with the
// library preloaded and N without, in pairs whose order alternates (ABBA...)
// to cancel drift, after one untimed warm-up pair. The warm-up run with the
// library also proves that the library is really loaded (ld.so's own trace).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "heapline_bench/measurement/process_runner.h"
#include "heapline_bench/measurement/statistics.h"

namespace heapline::bench {

// The measurement's defaults, which every command that measures shares:
// interleaved pairs per measurement (--runs), and the most pairs --until-ci
// adds up to (--max-runs).
inline constexpr int kDefaultRuns = 10;
inline constexpr int kDefaultMaxRuns = 50;

// A broken precondition of a function of this layer: the caller's bug, not
// the user's, since the command line refuses (once, before anything runs)
// every value that would break one. Checked in every build.
class PreconditionFailed : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};
// Throws PreconditionFailed naming `what` unless `holds`.
void expects(bool holds, const char* what);

enum class Side { without_library, with_library };
const char* side_name(Side side);

struct PlannedRun {
  int pair;  // -1 for the warm-up pair
  Side side;
  bool warmup() const { return pair < 0; }
};

// The order of runs: the warm-up pair, then `runs` pairs; even pairs run
// without then with, odd pairs with then without.
std::vector<PlannedRun> interleaved_plan(int runs);

// The half-width that --until-ci compares with its target: the larger
// distance from the figure to either end of its interval.
double interval_half_width(double figure, const Interval& interval);

struct MeasurementRequest {
  std::string scenario;
  std::vector<std::string> command;        // argv[0] resolved by the caller or PATH
  std::map<std::string, std::string> env;  // scenario environment, both sides
  // Absolute path, or several joined by ':' (LD_PRELOAD's own list: e.g. a
  // test shim in front of heapline); empty: A/A, same command on both sides.
  std::string library;
  // Preloaded after `library` on the side with it, and after `floor` on the
  // side without: heapline in front of another allocator, measured against
  // the forwarding-only library in front of the same allocator. Both empty
  // for the five scenarios (the side without preloads nothing).
  std::string preload_after;
  std::string floor;
  int runs = kDefaultRuns;
  // Adaptive precision (--until-ci): after `runs` pairs, keep adding pairs
  // (in the same alternating order) until the confidence interval of the figure
  // named by until_ci_cpu (false: wall, true: cpu time) is at most
  // until_half_width on either side of the figure, or max_runs pairs have
  // run. 0: off.
  double until_half_width = 0;
  bool until_ci_cpu = false;
  int max_runs = kDefaultMaxRuns;
  std::string working_directory;  // where the command runs; empty: here
  std::string scratch_directory;  // ld.so traces and heapline's own output files
};

// What heapline's own report (HEAPLINE_OUT) says about one with-run, summed
// over the processes of the run.
struct LibraryRunReport {
  std::uint64_t calls = 0;  // alloc + free + realloc
  std::uint64_t publishes = 0;
};

struct Measurement {
  MeasurementRequest request;  // request.runs: the pairs that ran (more than asked with until_half_width)
  std::vector<RunResult> with_runs;  // in the order they ran
  std::vector<LibraryRunReport> with_reports;  // one per with-run whose report was found
  std::vector<RunResult> without_runs;
  double median_with = 0;
  double median_without = 0;
  double overhead = 0;
  Interval interval;
  BootstrapOptions bootstrap;
};

// A measurement that cannot be trusted: the message says what happened and
// what to fix. Nothing is recorded for it.
class Refusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ProgressEvent {
  const MeasurementRequest* request;
  int index;  // 0-based position in the plan
  int total;  // length of the plan
  PlannedRun run;
  double seconds_left;  // estimate from the runs so far; < 0 when unknown
};
using ProgressCallback = std::function<void(const ProgressEvent&)>;

// Runs the plan and computes the figure. Throws Refusal for any invalid run
// and Interrupted when the user stops it. The request is valid already
// (runs >= 1, a command, max_runs >= runs with --until-ci): build_request and
// the command line made it so; PreconditionFailed otherwise.
Measurement measure(ProcessRunner& runner, const MeasurementRequest& request,
                    const ProgressCallback& progress = {});

// Sums the calls and publishes of heapline's reports (heapline.*.json) in
// `directory`, and removes them, so the next run's reports stand alone.
// nullopt when there is none (the library was not heapline, or wrote none).
std::optional<LibraryRunReport> collect_library_reports(const std::string& directory);

// True when ld.so's LD_DEBUG=files trace for `pid` under `prefix` shows
// `library` being loaded into the last image the process ran (a wrapper
// that loaded it and exec'd the program without it does not count).
bool trace_shows_library_loaded(const std::string& prefix, int pid, const std::string& library);
// The note a heapline build left in a live file of `directory` (the
// scratch directory of a run, where its reports go) when an image it was in
// exec'd a program it could not follow ("PATH: statically linked: no loader
// runs"); "" when none. The live files (*.live) are removed.
std::string exec_note_left(const std::string& directory);

// What a run under a library shows of whether the library was in the
// program it ran.
struct LoadEvidence {
  std::string trace_prefix;  // the run's LD_DEBUG_OUTPUT (LD_DEBUG=files); "" when it was not traced
  int pid = 0;               // the run's process
  std::string exec_note;     // exec_note_left() of the run's scratch directory
  // Not traced (under valgrind, ld.so's trace is valgrind's): why the
  // library is known not to have been in the program; "" when it was.
  std::string untraced_reason;
};

// The one check of every heapline-bench path that runs a command under a
// library and expects it loaded (measure(): overhead, suite, compare,
// calibrate; the accuracy run; the instruction count): "" when `libraries`
// (A or A:B) were loaded into the program `program` ran; otherwise one line,
// "LIB was not loaded into PROGRAM: WHY", WHY as far as it can be told: a
// statically linked program, a set-user-ID one (secure mode), a trace never
// written or empty (a full file system), a command that removed the library
// from LD_PRELOAD, an exec'd program the library could not follow. Callers
// add what they were doing and what they keep.
std::string library_not_loaded(const std::string& libraries, const std::string& program, const LoadEvidence& seen);

// Refuses a preload library that is missing, unreadable, or not a shared
// object for this machine. Returns its absolute path.
std::string checked_preload_library(const std::string& path);

// The same for a list of libraries separated by ':' as LD_PRELOAD takes it
// (one library is a list of one): each checked, the absolute paths joined.
std::string checked_preload_libraries(const std::string& list);
std::vector<std::string> preload_list(const std::string& list);

// Resolves a command's program like execvp would and makes a relative path
// absolute; refuses a program that is not found or not executable.
std::string resolved_program(const std::string& program);

}  // namespace heapline::bench
