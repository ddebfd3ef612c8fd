// The scenario catalogue (scenarios/scenarios.json): the one place the five
// scenarios are defined. The harness, the docs and the workflow read it.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace heapline::bench {

struct Scenario {
  std::string name;
  std::vector<std::string> command;  // as written, with {bin} and {source}
  std::map<std::string, std::string> env;
  int scale_arg = -1;  // index of the operation count that --scale multiplies
  std::string shows;   // what the scenario shows, for the docs
  // The same work at a fixed reduced operation count, for the instruction
  // figure: callgrind runs ~50x slower. Empty: no instruction figure.
  std::vector<std::string> instructions_command;
  // An allocator preloaded after the measured library on both sides; the
  // side without heapline then preloads the forwarding-only library before
  // it, so the figure is heapline's cost over that allocator's own floor
  // (scenarios/allocators.json). Empty: the program's own allocator.
  std::string allocator;
  // How little each figure may move when nothing changed on a quiet machine
  // of the project's class (2 cores), in percentage points, by figure name
  // ("cpu", "instructions"): calibrate says whether it holds. Absent: no goal.
  std::map<std::string, double> spread_goal_points;

  // The command as a user would type it: placeholders dropped.
  std::string display_command() const;
};

struct Catalogue {
  std::vector<Scenario> scenarios;
  const Scenario* find(const std::string& name) const;
  std::vector<std::string> names() const;
};

// A scenario's name as the catalogue accepts it: 1 to 64 letters, digits,
// '.', '_' or '-', not starting with '.' or '-' (a file name of the plots).
bool is_scenario_name(const std::string& name);

// Throws std::runtime_error naming the file and what is wrong with it: a
// malformed entry, a name that is not is_scenario_name, a control character
// in any text, an operation count that --scale cannot multiply.
//
// A catalogue of entries outside the five (allocators.json) runs their
// commands rather than copying them: its "commands_from" names a catalogue
// (a file beside it), and an entry's "command_of": NAME takes the command
// and scale_arg of NAME there (not its instruction command, env or goals).
Catalogue load_catalogue(const std::string& path);
// `commands_from`: the catalogue a "commands_from" names (load_catalogue
// passes it); null refuses a text that has one.
Catalogue parse_catalogue(const std::string& json_text, const std::string& origin,
                          const Catalogue* commands_from = nullptr);
// The file a catalogue's "commands_from" names, beside it; empty when the
// text names none (or is no JSON object: parse_catalogue says so).
std::string commands_from_path(const std::string& json_text, const std::string& path);

struct Placeholders {
  std::string bin;     // the build's binary directory
  std::string source;  // the source tree
};

// The scales --scale takes. Below kSmallestScale every operation count a
// catalogue may hold (at most 12 digits) scales to less than 1, which is
// taken as 1: such a scale measures nothing of the scenario, whatever it
// says (1e-300 ran every scenario at one operation).
constexpr double kSmallestScale = 1e-12;
constexpr double kLargestScale = 1000;

// The argv to run: placeholders replaced, the operation count scaled (at
// least 1). Throws std::invalid_argument for a scale outside
// [kSmallestScale, kLargestScale].
std::vector<std::string> expand_command(const Scenario& scenario, const Placeholders& where, double scale = 1.0);

// The instructions_command, expanded and scaled the same way (a point records
// its scale, and points are compared only at the same scale). Empty when the
// scenario has none.
std::vector<std::string> expand_instructions_command(const Scenario& scenario, const Placeholders& where,
                                                     double scale = 1.0);

}  // namespace heapline::bench
