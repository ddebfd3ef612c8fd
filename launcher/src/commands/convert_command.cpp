// heapline convert: the live file of a process that ended without its exit
// handlers (or of one still running: a snapshot), as a heapline/1 report.
#include <csignal>
#include <filesystem>
#include <iostream>

#include <heapline/output_file.h>
#include <heapline/report_reader.h>

#include <heapline/option_checks.h>

#include "commands/subcommand.h"
#include "output_naming.h"
#include "live_view.h"
#include "report_summary.h"

namespace fs = std::filesystem;

namespace heapline::launcher {

namespace {

// The bytes the library's writer adds to the report's name for its
// temporary: ".<pid>.<16 hex digits>.tmp".
constexpr std::size_t kTemporaryBytes = 29;

// Why the default output `out`, which exists, is not this process's own
// report to replace: another process's report, or a file that is no
// report. "" when it is the report of the process `live` describes (the
// same pid and start), or there is no file.
std::string default_output_problem(const fs::path& out, const LiveHeader& live) {
  std::error_code missing;
  if (!fs::exists(fs::symlink_status(out, missing))) return "";
  const ReportReading existing = read_report_file(out.string());
  if (!existing) return out.string() + " exists and is not a report of process " + std::to_string(live.pid) + " (" +
                        existing.error + ")";
  const ParsedReport& report = *existing.report;
  if (report.pid == live.pid && report.start_unix_ns == live.start_unix_ns) return "";
  return out.string() + " holds the report of " +
         (report.pid == live.pid ? "an earlier process " : "process ") + std::to_string(report.pid) + " (" +
         terminal_text(fs::path(report.exe).filename().string(), 64) + "), not of the process " +
         std::to_string(live.pid) + " whose live file this is";
}

struct ConvertOptions {
  std::string input, output;
  bool output_given = false;
  int signal_number = 0;
};

int convert(const ConvertOptions& options) {
  const std::string& input = options.input;
  const std::string& output = options.output;
  const int signal_number = options.signal_number;
  try {
    if (const std::string problem = report_name_problem(output, false); options.output_given && !problem.empty()) {
      say("heapline convert", "-o " + output + ": " + problem);
      return kUsageError;
    }
    fs::path out = options.output_given ? fs::path(output) : default_converted_path(input);
    // The report is written by the library's own writer
    // (interposer/src/base/output.cpp), which follows the output rule; its name
    // is checked before the live file is read.
    if (const std::string problem = output_problem(out.string(), {false, kTemporaryBytes}); !problem.empty()) {
      say("heapline convert", (options.output_given ? "-o " + output : out.string()) + ": " + problem);
      return kUsageError;
    }
    std::error_code same_error;
    if (fs::equivalent(out, input, same_error)) {
      say("heapline convert", out.string() + " is the live file itself: give another name with -o");
      return kUsageError;
    }
    LiveFile file(input);
    const int pid = file.region().header.pid;
    // The name made from the live file's may hold another process's report
    // (live files moved or copied between directories, a CI artifact
    // restored): replaced only when it is this process's own, never
    // without a word.
    if (!options.output_given) {
      if (const std::string problem = default_output_problem(out, file.region().header); !problem.empty()) {
        say("heapline convert", problem + ": give another name with -o");
        return kUsageError;
      }
    }
    std::string why;
    auto mapped_by = find_live_file(pid, why);
    const bool running = mapped_by && fs::equivalent(*mapped_by, input);
    if (running) file.refresh(true);  // a consistent copy of what its process is writing
    LiveSnapshot snapshot = take_snapshot(file, running);
    std::string ended = running ? "running" : snapshot.exited ? "exit" : "without-exit";
    write_converted_report(file, snapshot, out, ended, signal_number);
    if (snapshot.dropped_samples > 0) say("heapline convert", dropped_samples_note(snapshot));
    say("heapline", "wrote " + out.string() + " (" + std::to_string(snapshot.samples.size()) + " samples, last at " +
                        human_seconds(static_cast<std::int64_t>(snapshot.samples.empty() ? 0 : snapshot.samples.back().t_ns)) +
                        (running ? "; the process is still running: a snapshot" : "") + ")");
    return 0;
  } catch (const std::exception& error) {
    say("heapline convert", error.what());
    return 1;
  }
}

}  // namespace

Subcommand add_convert_command(CLI::App& heapline) {
  CLI::App* app = heapline.add_subcommand(
      "convert", "turn the live file a killed process left into a heapline/1 report");
  auto options = std::make_shared<ConvertOptions>();
  app->add_option("FILE", options->input, "the live file (<report>.live)")
      ->required()
      ->check(heapline::option_checks::name());
  CLI::Option* out_option =
      app->add_option("-o,--out", options->output, "where to write the report (default: FILE without .live)");
  app->add_option("--signal", options->signal_number,
                  "the signal that ended the process, when known (written to the report)")
      ->transform(heapline::option_checks::whole_number(1, SIGRTMAX));
  return {app, [options, out_option] {
            options->output_given = out_option->count() > 0;
            return convert(*options);
          }};
}

}  // namespace heapline::launcher
