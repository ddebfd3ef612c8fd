// heapline's subcommands, in the programs' one pattern (heapline/subcommand.h):
// each adds its options to the command line (a CLI11 subcommand of
// `heapline`) and says what runs once they are parsed. One file each:
// run_command.cpp (the default: run a command under the library),
// convert_command.cpp, top_command.cpp, clean_command.cpp,
// profile_command.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <heapline/subcommand.h>

#include "say.h"

namespace heapline::launcher {

constexpr int kUsageError = 2;

using heapline::Subcommand;

// `heapline run [OPTIONS] [--] CMD [ARGS...]`, also `heapline [OPTIONS] [--]
// CMD [ARGS...]`: `command` receives CMD and its arguments, split off before
// the options are parsed (the command's own flags are never heapline's).
Subcommand add_run_command(CLI::App& heapline, const std::vector<std::string>& command);
Subcommand add_convert_command(CLI::App& heapline);
Subcommand add_top_command(CLI::App& heapline);
Subcommand add_clean_command(CLI::App& heapline);
Subcommand add_profile_command(CLI::App& heapline);

}  // namespace heapline::launcher
