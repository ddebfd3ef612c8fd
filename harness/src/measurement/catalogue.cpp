#include "heapline_bench/measurement/catalogue.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "heapline_bench/text/regular_file.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {
namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// A positive whole number that --scale can multiply without overflow.
bool is_operation_count(const std::string& word) {
  if (word.empty() || word.size() > 12) return false;
  for (char c : word)
    if (c < '0' || c > '9') return false;
  return std::stoll(word) > 0;
}

}  // namespace

bool is_scenario_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name.front() == '.' || name.front() == '-') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      return false;
  return true;
}

std::string Scenario::display_command() const {
  std::string out;
  for (const auto& word : command) {
    if (!out.empty()) out += ' ';
    std::string shown = replaced(replaced(word, "{bin}/", ""), "{source}/", "");
    if (shown.rfind("/usr/bin/", 0) == 0) shown = shown.substr(9);
    out += shown;
  }
  return out;
}

const Scenario* Catalogue::find(const std::string& name) const {
  for (const auto& scenario : scenarios)
    if (scenario.name == name) return &scenario;
  return nullptr;
}

std::vector<std::string> Catalogue::names() const {
  std::vector<std::string> out;
  for (const auto& scenario : scenarios) out.push_back(scenario.name);
  return out;
}

Catalogue parse_catalogue(const std::string& json_text, const std::string& origin, const Catalogue* commands_from) {
  // One line whatever the file holds: a parser's message quotes the bytes
  // it stopped at.
  auto fail = [&](const std::string& why) {
    return std::runtime_error("scenario catalogue " + terminal_text(origin) + ": " + terminal_text(why));
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number out of range (2e308)
    throw fail(std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("scenarios") || !doc["scenarios"].is_array())
    throw fail("expected an object with a \"scenarios\" array");
  if (doc.contains("commands_from") && !doc["commands_from"].is_string())
    throw fail("\"commands_from\" must be the file name of a catalogue beside this one");
  if (doc.contains("commands_from") && commands_from == nullptr)
    throw fail("\"commands_from\" names a catalogue, which only a catalogue read from a file can have");
  Catalogue catalogue;
  for (const auto& entry : doc["scenarios"]) {
    Scenario scenario;
    try {
      scenario.name = entry.at("name").get<std::string>();
      if (entry.contains("command_of")) {
        const std::string of = entry["command_of"].get<std::string>();
        const Scenario* source = commands_from != nullptr ? commands_from->find(of) : nullptr;
        if (source == nullptr)
          throw fail(terminal_text(scenario.name) + ": command_of names '" + terminal_text(of) + "', " +
                     (commands_from != nullptr ? "which is no scenario of commands_from"
                                               : "but the catalogue has no commands_from"));
        if (entry.contains("command") || entry.contains("scale_arg"))
          throw fail(terminal_text(scenario.name) + ": command_of takes the command and scale_arg of '" +
                     terminal_text(of) + "': give neither beside it");
        scenario.command = source->command;
        scenario.scale_arg = source->scale_arg;
      } else {
        scenario.command = entry.at("command").get<std::vector<std::string>>();
        // A whole number that fits: a float or a huge integer would be
        // converted to an int silently (or, past its range, undefinedly).
        if (entry.contains("scale_arg")) {
          const auto& index = entry["scale_arg"];
          if (!index.is_number_integer() || index.get<std::int64_t>() < -1 ||
              index.get<std::int64_t>() > std::numeric_limits<int>::max())
            throw fail(terminal_text(scenario.name) +
                       ": scale_arg must be a whole number, the index of a word of the command");
          scenario.scale_arg = index.get<int>();
        }
      }
      scenario.shows = entry.value("shows", "");
      if (entry.contains("instructions_command"))
        scenario.instructions_command = entry["instructions_command"].get<std::vector<std::string>>();
      scenario.allocator = entry.value("allocator", "");
      if (entry.contains("env")) scenario.env = entry["env"].get<std::map<std::string, std::string>>();
      if (entry.contains("spread_goal_points"))
        scenario.spread_goal_points = entry["spread_goal_points"].get<std::map<std::string, double>>();
    } catch (const nlohmann::json::exception& e) {
      throw fail("a scenario is malformed: " + std::string(e.what()));
    }
    if (scenario.name.empty() || scenario.command.empty()) throw fail("a scenario has no name or no command");
    // A name is a file name of the page's plots and a word of its tables.
    if (!is_scenario_name(scenario.name))
      throw fail("scenario name '" + terminal_text(scenario.name) +
                 "' must be 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' or '-'");
    const std::string& name = scenario.name;
    // The text of a scenario reaches points, pages and terminals.
    auto plain = [&](const std::string& text, const std::string& what) {
      if (find_control_character(text) != std::string::npos)
        throw fail(name + ": " + what + " holds a control character ('" + terminal_text(text) + "')");
    };
    for (const auto& word : scenario.command) plain(word, "a word of its command");
    for (const auto& word : scenario.instructions_command) plain(word, "a word of its instructions_command");
    plain(scenario.shows, "shows");
    plain(scenario.allocator, "allocator");
    for (const auto& [variable, value] : scenario.env) {
      plain(variable, "the name of a variable of env");
      plain(value, "the value of " + variable);
      if (variable.empty() || variable.find('=') != std::string::npos)
        throw fail(name + ": env variable names must be non-empty, without '=' ('" + terminal_text(variable) + "')");
    }
    if (scenario.scale_arg < -1 || scenario.scale_arg >= static_cast<int>(scenario.command.size()) ||
        (!scenario.instructions_command.empty() &&
         scenario.scale_arg >= static_cast<int>(scenario.instructions_command.size())))
      throw fail(name + ": scale_arg is past the end of the command");
    if (scenario.scale_arg >= 0) {
      const auto at = static_cast<std::size_t>(scenario.scale_arg);
      if (!is_operation_count(scenario.command[at]) ||
          (!scenario.instructions_command.empty() && !is_operation_count(scenario.instructions_command[at])))
        throw fail(name + ": the word at scale_arg must be an operation count (a whole number from 1 to 12 digits)");
    }
    for (const auto& [figure, goal] : scenario.spread_goal_points)
      if (!(goal > 0 && goal <= 100) || (figure != "wall" && figure != "cpu" && figure != "instructions"))
        throw fail(name + ": spread_goal_points takes wall, cpu or instructions, each a number of points above 0, at most 100");
    if (catalogue.find(scenario.name) != nullptr) throw fail("scenario " + scenario.name + " is defined twice");
    catalogue.scenarios.push_back(std::move(scenario));
  }
  if (catalogue.scenarios.empty()) throw fail("it defines no scenario");
  return catalogue;
}

std::string commands_from_path(const std::string& json_text, const std::string& path) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (!doc.is_object() || !doc.contains("commands_from") || !doc["commands_from"].is_string()) return {};
  const auto slash = path.rfind('/');
  return (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) +
         doc["commands_from"].get<std::string>();
}

namespace {

std::string catalogue_text(const std::string& path) {
  try {
    return read_regular_file(path);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("scenario catalogue: ") + e.what());
  }
}

}  // namespace

Catalogue load_catalogue(const std::string& path) {
  const std::string text = catalogue_text(path);
  const std::string base_path = commands_from_path(text, path);
  if (base_path.empty()) return parse_catalogue(text, path);
  // One level: the catalogue the commands come from names none itself.
  const Catalogue base = parse_catalogue(catalogue_text(base_path), base_path);
  return parse_catalogue(text, path, &base);
}

std::vector<std::string> expand_command(const Scenario& scenario, const Placeholders& where, double scale) {
  if (!(scale >= kSmallestScale && scale <= kLargestScale))
    throw std::invalid_argument("--scale must be a number from 1e-12 to 1000");
  std::vector<std::string> argv;
  for (const auto& word : scenario.command)
    argv.push_back(replaced(replaced(word, "{bin}", where.bin), "{source}", where.source));
  if (scale != 1.0 && scenario.scale_arg >= 0) {
    auto& count = argv[static_cast<std::size_t>(scenario.scale_arg)];
    const double scaled = std::round(std::stod(count) * scale);
    count = std::to_string(static_cast<long long>(scaled < 1 ? 1 : scaled));
  }
  return argv;
}

std::vector<std::string> expand_instructions_command(const Scenario& scenario, const Placeholders& where,
                                                     double scale) {
  if (scenario.instructions_command.empty()) return {};
  Scenario reduced = scenario;
  reduced.command = scenario.instructions_command;
  return expand_command(reduced, where, scale);
}

}  // namespace heapline::bench
