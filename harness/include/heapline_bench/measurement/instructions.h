// The instruction figure: the scenario's reduced command (the catalogue's
// "instructions_command") under valgrind's callgrind, once without and once
// with the library. Callgrind counts the instructions the program executes,
// whatever else the machine does, so the figure repeats to a few parts per
// million for one thread; with several threads, valgrind serialises them and
// where a thread is switched out moves when it publishes, so a few parts in
// ten thousand still vary.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "heapline_bench/measurement/process_runner.h"

namespace heapline::bench {

struct InstructionFigure {
  double overhead = 0;  // with / without - 1
  std::uint64_t with = 0;
  std::uint64_t without = 0;
  // The reduced command as the catalogue shows it, scaled: a point is
  // compared only with points that counted the same command (history.h).
  // Empty in points counted before it was recorded.
  std::string command;
  bool operator==(const InstructionFigure&) const = default;
};

struct InstructionRequest {
  std::string valgrind;                    // the program; see find_valgrind()
  std::vector<std::string> command;        // the reduced command, resolved
  std::map<std::string, std::string> env;  // the scenario's environment
  std::string library;                     // preloaded on the with side
  std::string shown;                       // the command as the figure records it
};

// valgrind's path, or empty when it is not installed.
std::string find_valgrind();

// The count callgrind prints last on stderr ("==pid== Collected : N").
std::optional<std::uint64_t> collected_instructions(const std::string& callgrind_stderr);

// Whether callgrind's profile (its --callgrind-out-file) names `library`
// (as given or canonical) as an object that ran code or was called.
bool callgrind_profile_names_object(std::istream& profile, const std::string& library);

// Runs the command under callgrind without, then with, the library. Throws
// Refusal (measurement.h) when a run fails or prints no count, or when the
// library ran no code in the program (the count would be the program's).
// The refusal says why the count failed; the caller says what it keeps.
InstructionFigure count_instructions(ProcessRunner& runner, const InstructionRequest& request);

}  // namespace heapline::bench
