// How heapline and heapline-bench build their command lines, alike: each
// subcommand is a file of its own whose add_..._command function adds the
// subcommand's options to the program's CLI11 app and returns what runs
// once they are parsed. The program's main lists those functions (its
// table of contents), parses, and runs the one subcommand that was named.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace heapline {

struct Subcommand {
  CLI::App* app;             // its options, a subcommand of the program's
  std::function<int()> run;  // runs it once the command line is parsed; returns the exit status
};

}  // namespace heapline
