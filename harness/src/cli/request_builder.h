// From a catalogue scenario and the command line to a MeasurementRequest:
// paths resolved and checked before anything runs.
#pragma once

#include <string>
#include <vector>

#include "commands.h"
#include <optional>

#include "heapline_bench/measurement/accuracy.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/measurement/instructions.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/measurement/source_tree.h"

namespace heapline::bench {

// Refuses an unknown scenario, naming the known ones.
const Scenario* find_scenario(const Catalogue& catalogue, const std::string& name);

// The scenarios of --only (each one checked, in the order given), or every
// scenario of the catalogue when --only is empty.
std::vector<const Scenario*> selected_scenarios(const Catalogue& catalogue, const std::vector<std::string>& only);

// libheapline.so in --bin-dir: what every command preloads when no library
// is given (heapline/install_layout.h's rule, the launcher's too).
std::string default_library(const Locations& where);

// The library a measuring command preloads, from its --lib (suite,
// calibrate) or LIB (overhead): the list given (a path, or A:B preloaded in
// that order), libheapline.so next to heapline-bench when none is given, or
// nothing ("none": an A/A run, returned empty). Each library is checked here
// (checked_preload_libraries), once for the whole run.
std::string resolved_library(const std::string& option, const Locations& where);

// `library` is resolved_library's (empty: A/A), taken as it is.
// `explicit_command` replaces the catalogue's command when not empty.
MeasurementRequest build_request(const Scenario& scenario, const Locations& where, const std::string& library,
                                 int runs, double scale, const std::vector<std::string>& explicit_command,
                                 const std::string& scratch_directory);

// Sets --until-ci on a request, its values checked by the command line
// (command_line.cpp: the range of each, and the cap at least RUNS).
void apply_precision(MeasurementRequest& request, const AdaptivePrecision& precision);

// The instruction figure's request: the catalogue's reduced command, scaled.
// nullopt when it cannot be counted: no valgrind (`valgrind` empty), an A/A
// run, an explicit command, or a scenario without a reduced command.
std::optional<InstructionRequest> instruction_request(const Scenario& scenario, const Locations& where,
                                                      const MeasurementRequest& measured, double scale,
                                                      const std::vector<std::string>& explicit_command,
                                                      const std::string& valgrind);

// The accuracy figure's request: the same reduced command, run once under
// the accuracy build beside the measured library (accuracy.h). nullopt when
// there is none, for an A/A run, an explicit command, or a scenario without
// a reduced command.
std::optional<AccuracyRequest> accuracy_request(const Scenario& scenario, const Locations& where,
                                                const MeasurementRequest& measured, double scale,
                                                const std::vector<std::string>& explicit_command,
                                                const std::string& report_path);

// The line said once per run when valgrind is missing.
inline constexpr const char* kNoValgrindNote =
    "valgrind is not installed: the points have no instruction figure (tools/setup.sh installs it)";

// What a point records as its library: the path, or "none" for A/A.
std::string library_label(const MeasurementRequest& request);

// What a point records as its command: the catalogue's display form when the
// catalogue's command was run, otherwise the command as given.
std::string describe_command(const Scenario& scenario, const std::vector<std::string>& explicit_command,
                             const std::vector<std::string>& argv);

}  // namespace heapline::bench
