// The command line of heapline-bench (CLI11), in the programs' one pattern
// (heapline/subcommand.h): main.cpp lists the subcommands, each adds its own
// options (the add_..._command functions of commands.h, one file per group
// of subcommands) from the pieces here. Every check of an option's value
// and every option that several subcommands share is here, once; a value is
// refused with a line that names the option, the value and what is
// accepted, before anything runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "heapline/option_checks.h"

namespace heapline::bench {

// The checks of every option's value. CLI11 runs them on the text as given,
// so an empty value is seen as empty (never read as 0) and "nan" or "inf"
// as what they are.
namespace check {

// Numbers are read by the programs' one rule per kind
// (heapline/option_checks.h): decimal only, within the range the help says.
using heapline::option_checks::number;
using heapline::option_checks::shown;
using heapline::option_checks::whole_number;

// Text that is not empty and holds no control character: a name, a path, a
// commit, something a page or a point will show.
extern const CLI::Validator text;
// A commit as the point records it: its SHA (point.h's rule, which the
// store's reader applies too: a point naming anything else is refused).
extern const CLI::Validator commit;
// FIRST..LAST, two commits' SHAs.
extern const CLI::Validator commit_range;
// Lists (heapline/option_checks.h): a library's A:B, names separated by
// ':', none empty, none twice.
extern const CLI::Validator libraries;

// The rules between two options, checked once the values are (a
// subcommand's final callback, after help and the required options): a
// command line that breaks one is refused like a bad value, before anything
// runs, and nothing downstream checks it again.
void relations(const AdaptivePrecision& precision, int runs);
void relations(const VerdictOptions& rule);

}  // namespace check

// heapline-bench itself: its help, version, and the options of where its
// files are (`where`, its defaults from heapline-bench's own place).
void add_program_options(CLI::App& bench, Locations& where);

// The options several subcommands share.
void add_store_option(CLI::App& command, std::string& store);
void add_runs_option(CLI::App& command, int& runs, const char* what = "Runs per side");
void add_scale_option(CLI::App& command, double& scale, const char* what = "Multiply every operation count");
void add_only_option(CLI::App& command, std::vector<std::string>& only);
void add_render_options(CLI::App& command, RenderCommandOptions& render);
void add_verdict_options(CLI::App& command, VerdictOptions& rule);
void add_precision_options(CLI::App& command, AdaptivePrecision& precision);

// Parses argv. Returns the exit status when the program is done already
// (--help, --help-all, --version, a usage error: printed); otherwise
// completes `where` (the work and output directories) and returns nullopt:
// the one subcommand parsed runs.
std::optional<int> parse_command_line(CLI::App& bench, int argc, char** argv, Locations& where);

}  // namespace heapline::bench
