// The checks of the numeric options of heapline and heapline-bench, as CLI11
// validators over heapline/option_values.h's readers: one rule per kind for
// both programs. CLI11 runs a check on the text as given, before its own
// conversion (which would take 0x10 as 16 and 1e-300 as a number): a value
// the reader refuses is refused with "OPTION: must be RULE, got 'VALUE'"
// (the value as a terminal shows it), and the help says the rule.
#pragma once

#include <cstdio>
#include <cstring>
#include <functional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include <heapline/option_values.h>
#include <heapline/terminal_text.h>

namespace heapline::option_checks {

inline std::string shown(const std::string& text) { return "'" + terminal_text(text) + "'"; }

// A whole number from `low` to `high`: "a whole number from LOW to HIGH",
// in decimal digits as every setting is read (017 is 17). Give it with
// transform(), never check(): it writes the value back in plain decimal,
// which is what CLI11's own conversion then reads (strtoll with base 0,
// which reads 017 as octal 15 and fails on 08); check() would run it on a
// copy. (common.OptionChecks holds the two readings equal.)
inline CLI::Validator whole_number(long long low, long long high) {
  const std::string accepted = "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        long long value = 0;
        if (!read_whole_number<long long>(text, low, high, &value)) return "must be " + accepted + ", got " + shown(text);
        text = std::to_string(value);
        return {};
      },
      accepted);
}

// A number from `low` to `high`: "a number from LOW to HIGH". The range is
// closed and sensible (heapline/option_values.h: each end 0 or a magnitude
// from 1e-12 to 1e12); a program that states another fails as it starts.
inline CLI::Validator number(double low, double high) {
  if (!sensible_number_range(low, high)) {
    throw std::logic_error("option_checks::number: " + std::to_string(low) + " to " + std::to_string(high) +
                           " is not a range an option may state");
  }
  char range[96];
  std::snprintf(range, sizeof range, "a number from %g to %g", low, high);
  const std::string accepted = range;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        if (!read_number(text, low, high, &value)) return "must be " + accepted + ", got " + shown(text);
        return {};
      },
      accepted);
}

// What a list's refusal says after "must be ...": the problem and the text.
inline std::string list_refusal(ListProblem problem, char separator, std::string_view repeated,
                                const std::string& text) {
  const std::string mark(1, separator);
  switch (problem) {
    case ListProblem::kNone: return "";
    case ListProblem::kEmpty: return "must not be empty";
    case ListProblem::kEmptyPart:
      return "has an empty part (a '" + mark + "' first, last or beside another), got " + shown(text);
    case ListProblem::kRepeated:
      return "names " + shown(std::string(repeated)) + " twice, got " + shown(text);
  }
  return "";
}

// One value that is a list of names separated by `separator` (a
// library's A:B, preloaded in that order): none empty, none twice. An empty
// value is left to the rule it is combined with (name(), a text check).
inline CLI::Validator list(char separator) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (text.empty()) return "";
        std::string_view repeated;
        return list_refusal(read_list(text, separator, [](std::string_view) {}, &repeated), separator, repeated,
                            text);
      },
      "");
}

// Each value of a repeated option once (--lib a --lib a, --only x --only
// x): "OPTION: names 'VALUE' twice".
inline void each_once(const std::string& option, const std::vector<std::string>& values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (values[i] == values[j]) throw CLI::ValidationError(option, "names " + shown(values[i]) + " twice");
}

// An option whose values are names separated by `separator`, given once or
// more (--only a,b --only c): every name into `names`, in order. A value
// with an empty part (a,, ,a a,,b) or a name given twice, in one value or
// across them, is refused; `each` checks every name ("" when fine, else
// what is wrong with it). CLI11's own delimiter dropped empty parts without
// a word.
inline CLI::Option* add_list_option(CLI::App& app, const std::string& name, std::vector<std::string>& names,
                                    char separator, const std::string& description,
                                    std::function<std::string(const std::string&)> each = {}) {
  const std::string option_name = name.substr(name.rfind(',') == std::string::npos ? 0 : name.rfind(',') + 1);
  CLI::Option* option = app.add_option_function<std::vector<std::string>>(
      name,
      [&names, option_name, separator, each](const std::vector<std::string>& given) {
        std::vector<std::string> read;
        for (const std::string& text : given) {
          std::string_view repeated;
          const ListProblem problem =
              read_list(text, separator, [&](std::string_view part) { read.emplace_back(part); }, &repeated);
          if (problem != ListProblem::kNone)
            throw CLI::ValidationError(option_name, list_refusal(problem, separator, repeated, text));
        }
        each_once(option_name, read);
        if (each) {
          for (const std::string& part : read)
            if (const std::string problem = each(part); !problem.empty())
              throw CLI::ValidationError(option_name, problem);
        }
        names = std::move(read);
      },
      description);
  std::string joined;
  for (const std::string& part : names) joined += (joined.empty() ? "" : std::string(1, separator)) + part;
  if (!joined.empty()) option->default_str(joined);
  return option;
}

// A name: a file, a directory, a library. An empty one is refused rather
// than taken for the option's default (--lib '' looked up the default
// library) or tried as a file (profile '' said ": No such file").
inline CLI::Validator name() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "must not be empty: an empty name names nothing" : ""; },
      "");
}

// Flags take no value. CLI11 reads `--flag=VALUE` with its own spellings of
// true and false (yes, no, enable, 0...), which no setting of the library
// takes, and `--profile=0` or `--dry-run=no` turned the flag off without a
// word. Called on a program's app before its options and subcommands are
// added, which inherit it: a flag given any value but its own "true" is
// refused (refusal_text says so).
inline void flags_take_no_value(CLI::App& app) { app.option_defaults()->disable_flag_override(); }

// Every word of an option that takes several (a command after `--`, a list
// of files, a repeated --build) is taken as given. CLI11 reads a word of
// such an option written "[a,b]" as its own list syntax: "[x]" lost its
// brackets and "[a,b]" became two words, so a command measured was not the
// one given (sh -c '[ -z "$X" ]' ran as sh -c ' -z "$X" ') and a file
// named [pts] was looked for as pts. CLI11 applies that syntax only to an
// option allowed to take further words on its own (allow_extra_args), so:
// a positional takes every word left (it asks for them all instead) and a
// named option one word each time it is given. Called by each program on
// its whole command line once every option is added, before parsing: no
// option is left that rewrites a word.
inline void take_every_word_as_given(CLI::App& app) {
  for (CLI::Option* option : app.get_options([](CLI::Option* o) { return o->get_allow_extra_args(); })) {
    if (option->get_expected_max() <= 1) continue;
    option->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    // A positional with this many words still to come takes every word
    // left; CLI11 refuses a required one given none ("COMMAND is required").
    if (!option->nonpositional())
      option->expected(CLI::detail::expected_max_vector_size, CLI::detail::expected_max_vector_size);
  }
  for (CLI::App* subcommand : app.get_subcommands([](const CLI::App*) { return true; }))
    take_every_word_as_given(*subcommand);
}

// Whether `name` ("--profile") is a flag of `app` or of one of its
// subcommands, at any depth.
inline bool is_flag_of(const CLI::App& app, const std::string& name) {
  // A flag expects no value (CLI11's expected(0)).
  if (const CLI::Option* option = app.get_option_no_throw(name); option != nullptr && option->get_expected_max() == 0)
    return true;
  for (const CLI::App* subcommand : app.get_subcommands([](const CLI::App*) { return true; }))
    if (is_flag_of(*subcommand, name)) return true;
  return false;
}

// The refusal of a flag given an empty value among `words` (the program's
// own words, before `--`): CLI11 takes `--profile=` as the flag given, past
// the rule above. "" when there is none.
inline std::string empty_flag_value(const CLI::App& app, const std::vector<std::string>& words) {
  for (const std::string& word : words) {
    if (word == "--") break;
    if (word.size() < 4 || word.rfind("--", 0) != 0 || word.back() != '=') continue;
    const std::string flag = word.substr(0, word.size() - 1);
    if (is_flag_of(app, flag)) return flag + ": a flag takes no value (give " + flag + " alone)";
  }
  return "";
}

// CLI11's own texts for the kinds of refusal it makes itself, in the
// programs' words (design.md: "OPTION: must be ..., got 'VALUE'"): "At Most
// 1 required but received 2", "1 required TEXT:{tree,command} missing",
// "The following argument was not expected", its file checks' "File does
// not exist". A text of another kind is kept.
inline std::string in_the_projects_words(const std::string& text) {
  std::smatch m;
  // An option given more times than it takes.
  static const std::regex at_most(R"(^(\S+): At Most (\d+) required but received (\d+)$)");
  if (std::regex_match(text, m, at_most)) {
    if (m[2] == "1" && m[3] == "2") return m[1].str() + ": given twice (it takes one value)";
    return m[1].str() + ": given " + m[3].str() + " times (it takes at most " + m[2].str() + ")";
  }
  static const std::regex at_least(R"(^(\S+): At least (\d+) required but received (\d+)$)");
  if (std::regex_match(text, m, at_least))
    return m[1].str() + ": needs " + m[2].str() + " values, got " + m[3].str();
  // A value missing: its type name is CLI11's ("TEXT:{tree,command}",
  // "INT:a whole number from 2 to 10000"), its rule after the colon.
  static const std::regex missing(R"(^(\S+): \d+ required (\S+?)(:(.*))? missing$)");
  if (std::regex_match(text, m, missing)) {
    std::string rule = m[4].str();
    if (rule.size() >= 2 && rule.front() == '{' && rule.back() == '}') {
      rule = rule.substr(1, rule.size() - 2);
      const std::size_t last = rule.rfind(',');
      if (last != std::string::npos) rule = rule.substr(0, last) + " or " + rule.substr(last + 1);
      for (std::size_t at = rule.find(','); at != std::string::npos; at = rule.find(',', at + 2)) rule.replace(at, 1, ", ");
    }
    return m[1].str() + ": needs a value" + (rule.empty() ? std::string() : " (" + rule + ")");
  }
  // A value outside a list (CLI::IsMember): "x not in {wall,cpu}".
  static const std::regex not_member(R"(^(\S+): (.*) not in \{(.*)\}$)");
  if (std::regex_match(text, m, not_member)) {
    std::string names = m[3].str();
    const std::size_t last = names.rfind(',');
    if (last != std::string::npos) names = names.substr(0, last) + " or " + names.substr(last + 1);
    for (std::size_t at = names.find(','); at != std::string::npos; at = names.find(',', at + 2)) names.replace(at, 1, ", ");
    return m[1].str() + ": must be " + names + ", got " + shown(m[2].str());
  }
  static const std::regex extra(R"(^The following arguments? (was|were) not expected: (.*)$)");
  if (std::regex_match(text, m, extra)) {
    if (m[1] == "was") return "unexpected argument " + shown(m[2].str());
    // CLI11 lists them last first, separated by spaces.
    std::vector<std::string> words;
    std::istringstream list(m[2].str());
    for (std::string word; list >> word;) words.insert(words.begin(), shown(word));
    std::string joined;
    for (const std::string& word : words) joined += (joined.empty() ? "" : " ") + word;
    return "unexpected arguments " + joined;
  }
  // The file checks of an option (CLI::ExistingFile, ExistingDirectory).
  static const std::pair<const char*, const char*> files[] = {
      {"File does not exist: ", "no such file: "},
      {"File is actually a directory: ", "a directory, not a file: "},
      {"Directory does not exist: ", "no such directory: "},
      {"Directory is actually a file: ", "not a directory: "},
      {"Path does not exist: ", "no such file or directory: "},
  };
  for (const auto& [theirs, ours] : files) {
    if (const std::size_t at = text.find(theirs); at != std::string::npos)
      return text.substr(0, at) + ours + text.substr(at + std::strlen(theirs));
  }
  return text;
}

// The line for a refusal of `program`'s command line: CLI11's own, but for
// a flag given a value, which CLI11 calls "a disallowed flag override", and
// a word where the subcommand goes that names none, which CLI11 calls "A
// subcommand is required" without naming the word.
inline std::string refusal_text(const CLI::Error& error, const CLI::App& program) {
  const std::string text = error.what();
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && program.get_subcommands().empty()) {
    const std::vector<std::string> unused = program.remaining();
    if (!unused.empty()) {
      std::string names;
      for (const CLI::App* subcommand : program.get_subcommands([](const CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + subcommand->get_name();
      return shown(unused.front()) + " is not a subcommand of " + program.get_name() + " (" + names + ")";
    }
  }
  const std::string said = " was given a disallowed flag override";
  if (text.size() > said.size() && text.compare(text.size() - said.size(), said.size(), said) == 0) {
    std::string flag = text.substr(0, text.size() - said.size());
    if (flag.rfind('-', 0) != 0) flag = (flag.size() == 1 ? "-" : "--") + flag;
    return flag + ": a flag takes no value (give " + flag + " alone)";
  }
  return in_the_projects_words(text);
}

}  // namespace heapline::option_checks
