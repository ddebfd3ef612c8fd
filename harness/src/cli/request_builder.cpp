#include "request_builder.h"

#include <cstdio>
#include <sstream>

#include "heapline/install_layout.h"

namespace heapline::bench {

const Scenario* find_scenario(const Catalogue& catalogue, const std::string& name) {
  if (const Scenario* scenario = catalogue.find(name)) return scenario;
  std::string known;
  for (const auto& n : catalogue.names()) known += (known.empty() ? "" : ", ") + n;
  throw Refusal("unknown scenario '" + name + "'. Known scenarios: " + known + ".");
}

std::vector<const Scenario*> selected_scenarios(const Catalogue& catalogue, const std::vector<std::string>& only) {
  std::vector<const Scenario*> selected;
  if (only.empty()) {
    for (const auto& scenario : catalogue.scenarios) selected.push_back(&scenario);
  } else {
    for (const auto& name : only) selected.push_back(find_scenario(catalogue, name));
  }
  return selected;
}

std::string default_library(const Locations& where) { return heapline_library(where.bin_dir).string(); }

std::string resolved_library(const std::string& option, const Locations& where) {
  if (option == "none") return {};
  return checked_preload_libraries(option.empty() ? default_library(where) : option);
}

MeasurementRequest build_request(const Scenario& scenario, const Locations& where, const std::string& library,
                                 int runs, double scale, const std::vector<std::string>& explicit_command,
                                 const std::string& scratch_directory) {
  MeasurementRequest request;
  request.scenario = scenario.name;
  request.runs = runs;
  request.scratch_directory = scratch_directory;
  if (explicit_command.empty()) {
    request.command = expand_command(scenario, {where.bin_dir, where.source_dir}, scale);
    request.env = scenario.env;
    if (!scenario.allocator.empty()) {
      request.preload_after = checked_preload_library(scenario.allocator);
      request.floor = checked_preload_library(where.bin_dir + "/libheapline_null.so");
    }
  } else {
    request.command = explicit_command;
  }
  request.command[0] = resolved_program(request.command[0]);
  request.library = library;
  return request;
}

void apply_precision(MeasurementRequest& request, const AdaptivePrecision& precision) {
  if (precision.points == 0) return;
  request.until_half_width = precision.points / 100;
  request.until_ci_cpu = precision.figure == "cpu";
  request.max_runs = precision.max_runs;
}

std::optional<InstructionRequest> instruction_request(const Scenario& scenario, const Locations& where,
                                                      const MeasurementRequest& measured, double scale,
                                                      const std::vector<std::string>& explicit_command,
                                                      const std::string& valgrind) {
  if (valgrind.empty() || measured.library.empty() || !explicit_command.empty() ||
      scenario.instructions_command.empty())
    return std::nullopt;
  InstructionRequest request;
  request.valgrind = valgrind;
  request.command = expand_instructions_command(scenario, {where.bin_dir, where.source_dir}, scale);
  Scenario reduced = scenario;
  reduced.command = scenario.instructions_command;
  request.shown = describe_command(reduced, {}, request.command);
  request.command[0] = resolved_program(request.command[0]);
  request.env = measured.env;
  request.library = measured.library;
  return request;
}

std::optional<AccuracyRequest> accuracy_request(const Scenario& scenario, const Locations& where,
                                                const MeasurementRequest& measured, double scale,
                                                const std::vector<std::string>& explicit_command,
                                                const std::string& report_path) {
  const std::string accuracy_library = accuracy_library_for(measured.library);
  if (accuracy_library.empty() || !explicit_command.empty() || scenario.instructions_command.empty())
    return std::nullopt;
  AccuracyRequest request;
  request.command = expand_instructions_command(scenario, {where.bin_dir, where.source_dir}, scale);
  request.command[0] = resolved_program(request.command[0]);
  request.env = measured.env;
  request.library = accuracy_library;
  request.report_path = report_path;
  return request;
}

std::string library_label(const MeasurementRequest& request) {
  return request.library.empty() ? "none" : request.library;
}

std::string describe_command(const Scenario& scenario, const std::vector<std::string>& explicit_command,
                             const std::vector<std::string>& argv) {
  if (explicit_command.empty() && argv.size() == scenario.command.size()) {
    // The catalogue's form, with the (possibly scaled) arguments actually run.
    Scenario shown = scenario;
    for (std::size_t i = 1; i < argv.size(); ++i)
      if (shown.command[i].find('{') == std::string::npos) shown.command[i] = argv[i];
    return shown.display_command();
  }
  std::ostringstream out;
  for (std::size_t i = 0; i < explicit_command.size(); ++i) out << (i ? " " : "") << explicit_command[i];
  return out.str();
}

}  // namespace heapline::bench
