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
#include <csignal>
#include <cstring>
#include <functional>
#include <iostream>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/text/text.h"

int bench_main(int argc, char** argv);

// What heapline-bench printed on stdout (an export, a table, JSON, the
// help) is whole, or its status says it is not.
int main(int argc, char** argv) {
  return heapline::finish_standard_output("heapline-bench", bench_main(argc, argv), heapline::bench::kExitRefused);
}

int bench_main(int argc, char** argv) {
  using namespace heapline::bench;
  // 1. Which subcommand, with which options (cli/command_line.cpp).
  std::function<int()> subcommand;
  if (const auto done = parse_command_line(argc, argv, subcommand)) return *done;

  // 2. Past a file size limit (ulimit -f) a write fails with EFBIG instead of
  //    killing heapline-bench: the store rolls the append back and the
  //    measurement is kept. (The programs it runs get the default back.)
  std::signal(SIGXFSZ, SIG_IGN);

  // 3. Run it. Whatever stops it says why, and the exit status tells scripts
  //    apart a refusal (nothing recorded) from an interruption.
  //    Every line goes out through the door of printed lines (text/text.h):
  //    a refusal may hold several lines (a failed command's stderr,
  //    indented), each escaped.
  try {
    return subcommand();
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
