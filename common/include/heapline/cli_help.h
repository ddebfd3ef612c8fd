// The help that --help-all prints, for heapline and heapline-bench alike.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace heapline {

// The program's help with every subcommand's options, from wherever on the
// command line --help-all was given. CLI11's App::help hands over to the
// subcommand that was named, so `heapline run --help-all` printed run's help
// alone, while the flag says "of every subcommand".
inline std::string whole_program_help(CLI::App& program) {
  return program.get_formatter()->make_help(&program, program.get_name(), CLI::AppFormatMode::All);
}

}  // namespace heapline
