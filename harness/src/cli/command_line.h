// The command line of heapline-bench (CLI11): every subcommand with its
// options, their defaults and their help text, in one place.
#pragma once

#include <functional>
#include <optional>

namespace heapline::bench {

// Parses argv. Returns the exit status when the program is done already
// (--help, --version, a usage error, printed by CLI11); otherwise sets
// `subcommand` to the chosen subcommand with its options bound.
std::optional<int> parse_command_line(int argc, char** argv, std::function<int()>& subcommand);

}  // namespace heapline::bench
