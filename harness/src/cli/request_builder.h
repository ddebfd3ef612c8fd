// From a catalogue scenario and the command line to a MeasurementRequest:
// paths resolved and checked before anything runs.
#pragma once

#include <string>
#include <vector>

#include "commands.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {

// Refuses an unknown scenario, naming the known ones.
const Scenario* find_scenario(const Catalogue& catalogue, const std::string& name);

// The scenarios of --only (each one checked, in the order given), or every
// scenario of the catalogue when --only is empty.
std::vector<const Scenario*> selected_scenarios(const Catalogue& catalogue, const std::vector<std::string>& only);

// `library` is a path or "none" (A/A). `explicit_command` replaces the
// catalogue's command when not empty.
MeasurementRequest build_request(const Scenario& scenario, const Locations& where, const std::string& library,
                                 int runs, double scale, const std::vector<std::string>& explicit_command,
                                 const std::string& scratch_directory);

// What a point records as its library: the path, or "none" for A/A.
std::string library_label(const MeasurementRequest& request);

// What a point records as its command: the catalogue's display form when the
// catalogue's command was run, otherwise the command as given.
std::string describe_command(const Scenario& scenario, const std::vector<std::string>& explicit_command,
                             const std::vector<std::string>& argv);

}  // namespace heapline::bench
