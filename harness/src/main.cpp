// heapline-bench: measures what heapline costs, keeps the history of it, and
// renders that history. This file is the table of contents; the layers below
// build on each other in this order, each in its own folder:
//
//   text/         how outside text is quoted in messages, and its checks
//   measurement/  running a command (process_runner), the statistics, the
//                 machine, the scenario catalogue, the interleaved
//                 measurement and the figures of its runs, and the release
//                 comparison's rounds
//   history/      the point (its schema), the append-only store, and the fast
//                 reader of the history
//   verdicts/     the regression rule, change points, noise calibration
//   reports/      one file per format: summary, suite table, page, plots,
//                 scenario table, release comparison; and the atomic writer
//   cli/          the command line (command_line.cpp) and one file per
//                 group of subcommands
// (tests/tools/include_layers.py checks that no layer includes a later one.)
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>
#include <heapline/write_signals.h>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/text/text.h"

namespace {

// Runs the subcommand. Whatever stops it says why, and the exit status tells
// scripts apart a refusal (nothing recorded) from an interruption. Every
// line goes out through the door of printed lines (text/text.h): a refusal
// may hold several lines (a failed command's stderr, indented), each
// escaped.
int run_saying_why_it_stopped(const heapline::Subcommand& subcommand) {
  using namespace heapline::bench;
  try {
    return subcommand.run();
  } catch (const Refusal& refusal) {
    say_lines(std::cerr, "heapline-bench: " + std::string(refusal.what()));
    return kExitRefused;
  } catch (const Interrupted& interrupted) {
    Say(std::cerr) << "\nheapline-bench: interrupted by " << sigabbrev_np(interrupted.signal)
                   << "; the running command was stopped and nothing was recorded.";
    return kExitInterrupted;
  } catch (const std::exception& error) {
    say_lines(std::cerr, "heapline-bench: " + std::string(error.what()));
    return kExitRefused;
  }
}

}  // namespace

int bench_main(int argc, char** argv);

// What heapline-bench printed on stdout (an export, a table, JSON, the
// help) is whole, or its status says it is not.
int main(int argc, char** argv) {
  return heapline::finish_standard_output("heapline-bench", bench_main(argc, argv), heapline::bench::kExitRefused);
}

int bench_main(int argc, char** argv) {
  using namespace heapline::bench;
  // 0. A write that fails (past a file size limit, to a pipe whose reader
  //    has gone) fails with EFBIG or EPIPE instead of killing
  //    heapline-bench: the store rolls an append back and the measurement
  //    is kept (heapline/write_signals.h; the programs it runs get the
  //    default back).
  heapline::ignore_write_signals();

  // 1. The command line (cli/command_line.cpp): heapline-bench's own
  //    options, then each subcommand, which adds its options and says what
  //    runs it (cli/commands.h), in the order the help lists them.
  CLI::App bench{"heapline-bench: the overhead-regression service of heapline", "heapline-bench"};
  Locations where;
  add_program_options(bench, where);
  const Subcommand subcommands[] = {
      add_overhead_command(bench, where),     add_suite_command(bench, where),
      add_compare_command(bench, where),      add_check_command(bench, where),
      add_instructions_command(bench, where), add_accuracy_command(bench, where),
      add_calibrate_command(bench, where),    add_render_command(bench, where),
      add_validate_command(bench, where),     add_import_command(bench, where),
      add_export_command(bench, where),
  };
  if (const auto done = parse_command_line(bench, argc, argv, where)) return *done;

  // 2. Run the one subcommand named (CLI11 requires exactly one).
  for (const Subcommand& subcommand : subcommands) {
    if (subcommand.app->parsed()) return run_saying_why_it_stopped(subcommand);
  }
  return kExitUsage;
}
