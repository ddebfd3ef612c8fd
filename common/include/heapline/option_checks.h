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

}  // namespace heapline::option_checks
