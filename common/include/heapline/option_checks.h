// The checks of the numeric options of heapline and heapline-bench, as CLI11
// validators over heapline/option_values.h's readers: one rule per kind for
// both programs. CLI11 runs a check on the text as given, before its own
// conversion (which would take 0x10 as 16 and 1e-300 as a number): a value
// the reader refuses is refused with "OPTION: must be RULE, got 'VALUE'"
// (the value as a terminal shows it), and the help says the rule.
#pragma once

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include <heapline/option_values.h>
#include <heapline/terminal_text.h>

namespace heapline::option_checks {

inline std::string shown(const std::string& text) { return "'" + terminal_text(text) + "'"; }

// A whole number from `low` to `high`: "a whole number from LOW to HIGH".
inline CLI::Validator whole_number(long long low, long long high) {
  const std::string accepted = "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        long long value = 0;
        if (!read_whole_number<long long>(text, low, high, &value)) return "must be " + accepted + ", got " + shown(text);
        return {};
      },
      accepted);
}

// A number from `low` (above it without `low_included`) to `high`: "a
// number from LOW to HIGH" or "a number above LOW, at most HIGH".
inline CLI::Validator number(double low, double high, bool low_included = true) {
  char range[96];
  std::snprintf(range, sizeof range, low_included ? "a number from %g to %g" : "a number above %g, at most %g", low,
                high);
  const std::string accepted = range;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        if (!read_number(text, low, high, low_included, &value)) return "must be " + accepted + ", got " + shown(text);
        return {};
      },
      accepted);
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

// The line for a refusal of the command line: CLI11's own, but for a flag
// given a value, which CLI11 calls "a disallowed flag override".
inline std::string refusal_text(const CLI::Error& error) {
  const std::string text = error.what();
  const std::string said = " was given a disallowed flag override";
  if (text.size() > said.size() && text.compare(text.size() - said.size(), said.size(), said) == 0) {
    std::string flag = text.substr(0, text.size() - said.size());
    if (flag.rfind('-', 0) != 0) flag = (flag.size() == 1 ? "-" : "--") + flag;
    return flag + ": a flag takes no value (give " + flag + " alone)";
  }
  return text;
}

}  // namespace heapline::option_checks
