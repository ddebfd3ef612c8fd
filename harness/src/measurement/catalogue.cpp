#include "heapline_bench/measurement/catalogue.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include <heapline/json_document.h>
#include <sstream>
#include <stdexcept>

#include "heapline_bench/measurement/process_runner.h"
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
  // `why` is escaped here, once: a text put into it raw (a name, a word of
  // the file) must not be escaped before (a newline was shown as \x5cx0a).
  auto fail = [&](const std::string& why) {
    return std::runtime_error("scenario catalogue " + terminal_text(origin) + ": " + terminal_text(why));
  };
  // The programs' one reader of a JSON document (heapline/json_document.h):
  // an empty, cut or malformed file, or one that is not an object, is one
  // line in the project's words.
  heapline::JsonDocument document = heapline::read_json_document(json_text, origin, "a scenario catalogue");
  if (!document) throw std::runtime_error("scenario catalogue " + terminal_text(document.error));
  nlohmann::json& doc = document.value;
  // A catalogue of another schema is not read as this one.
  if (doc.contains("schema") &&
      (!doc["schema"].is_string() || doc["schema"].get_ref<const std::string&>() != "heapline-scenarios/1"))
    throw fail("\"schema\" is " + doc["schema"].dump() + ": this heapline-bench reads \"heapline-scenarios/1\"");
  if (!doc.contains("scenarios") || !doc["scenarios"].is_array())
    throw fail("expected an object with a \"scenarios\" array");
  if (doc.contains("commands_from") && !doc["commands_from"].is_string())
    throw fail("\"commands_from\" must be the file name of a catalogue beside this one");
  if (doc.contains("commands_from") && commands_from == nullptr)
    throw fail("\"commands_from\" names a catalogue, which only a catalogue read from a file can have");
  Catalogue catalogue;
  int position = 0;
  for (const auto& entry : doc["scenarios"]) {
    ++position;
    Scenario scenario;
    if (!entry.is_object())
      throw fail("scenario " + std::to_string(position) + " must be a JSON object, got " +
                 heapline::json_type_name(entry));
    try {
      using heapline::json_field;
      using Words = std::vector<std::string>;
      const std::string none;
      scenario.name = json_field<std::string>(entry, "name");
      if (entry.contains("command_of")) {
        const std::string of = json_field<std::string>(entry, "command_of");
        const Scenario* source = commands_from != nullptr ? commands_from->find(of) : nullptr;
        if (source == nullptr)
          throw fail(scenario.name + ": command_of names '" + of + "', " +
                     (commands_from != nullptr ? "which is no scenario of commands_from"
                                               : "but the catalogue has no commands_from"));
        if (entry.contains("command") || entry.contains("scale_arg"))
          throw fail(scenario.name + ": command_of takes the command and scale_arg of '" + of +
                     "': give neither beside it");
        scenario.command = source->command;
        scenario.scale_arg = source->scale_arg;
      } else {
        scenario.command = json_field<Words>(entry, "command");
        // A whole number that fits: a float or a huge integer would be
        // converted to an int silently (or, past its range, undefinedly).
        // Word 0 is the program; -1 is how the reader says "none", never a
        // value of the file (a scale_arg of -1 left --scale unapplied while
        // the point recorded it).
        if (entry.contains("scale_arg")) {
          const auto& index = entry["scale_arg"];
          if (!index.is_number_integer() || index.get<std::int64_t>() < 1 ||
              index.get<std::int64_t>() > std::numeric_limits<int>::max())
            throw fail(scenario.name + ": scale_arg must be a whole number, the index of a word of the command (1 to " +
                       std::to_string(scenario.command.empty() ? 0 : scenario.command.size() - 1) + "), got " +
                       index.dump());
          scenario.scale_arg = index.get<int>();
        }
      }
      scenario.shows = json_field<std::string>(entry, "shows", &none);
      const Words no_words;
      scenario.instructions_command = json_field<Words>(entry, "instructions_command", &no_words);
      scenario.allocator = json_field<std::string>(entry, "allocator", &none);
      const std::map<std::string, std::string> no_env;
      scenario.env = json_field<std::map<std::string, std::string>>(entry, "env", &no_env);
      const std::map<std::string, double> no_goals;
      scenario.spread_goal_points = json_field<std::map<std::string, double>>(entry, "spread_goal_points", &no_goals);
    } catch (const heapline::JsonFieldError& e) {
      throw fail("scenario " + (scenario.name.empty() ? std::to_string(position) : scenario.name) + ": " + e.what());
    }
    if (scenario.name.empty() || scenario.command.empty()) throw fail("a scenario has no name or no command");
    // A name is a file name of the page's plots and a word of its tables.
    if (!is_scenario_name(scenario.name))
      throw fail("scenario name '" + scenario.name +
                 "' must be 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' or '-'");
    const std::string& name = scenario.name;
    // The text of a scenario reaches points, pages and terminals.
    auto plain = [&](const std::string& text, const std::string& what) {
      if (find_control_character(text) != std::string::npos)
        throw fail(name + ": " + what + " holds a control character ('" + text + "')");
    };
    for (const auto& word : scenario.command) plain(word, "a word of its command");
    for (const auto& word : scenario.instructions_command) plain(word, "a word of its instructions_command");
    plain(scenario.shows, "shows");
    plain(scenario.allocator, "allocator");
    for (const auto& [variable, value] : scenario.env) {
      plain(variable, "the name of a variable of env");
      plain(value, "the value of " + variable);
      if (variable.empty() || variable.find('=') != std::string::npos)
        throw fail(name + ": env variable names must be non-empty, without '=' ('" + variable + "')");
      // What is preloaded is the measurement's own choice (the library, or
      // none): a scenario's LD_PRELOAD was preloaded beside it, and a
      // failure blamed on heapline was the other library's. So with every
      // variable the harness sets for a run (process_runner.h).
      if (const std::string use = set_by_the_harness(variable); !use.empty())
        throw fail(name + ": env may not set " + variable + " (" + use + ")");
      if (const std::string refused = refused_by_the_library(variable, value); !refused.empty())
        throw fail(name + ": env: " + refused);
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
  std::error_code same_error;
  if (std::filesystem::equivalent(base_path, path, same_error))
    throw std::runtime_error("scenario catalogue " + terminal_text(path) +
                             ": \"commands_from\" names this catalogue itself (it names the catalogue the commands "
                             "come from)");
  const std::string base_text = catalogue_text(base_path);
  if (!commands_from_path(base_text, base_path).empty())
    throw std::runtime_error("scenario catalogue " + terminal_text(path) + ": \"commands_from\" names " +
                             terminal_text(base_path) + ", which has a \"commands_from\" of its own (one level only)");
  const Catalogue base = parse_catalogue(base_text, base_path);
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
