// heapline run (the default subcommand): run a command with libheapline.so
// preloaded. The command's exit status is passed through (128+N when signal
// N killed it). After it ends, a summary of the root process's report goes to
// stderr, then the tree it ran (stale_files.h, process_tree.h: its largest
// processes, its short-lived helpers folded into one line; one line per
// process with --verbose) and, with --plot, the heap line (or the tree's, when the
// command started other processes) is drawn with gnuplot. The
// launcher's own problems after the command ran (no report, no gnuplot) are
// reported but never change the exit status.
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include <heapline/file_kind.h>
#include <heapline/library_settings.h>
#include <heapline/option_checks.h>
#include <heapline/option_values.h>
#include <heapline/output_file.h>
#include <heapline/regular_file.h>
#include <heapline/report_reader.h>

#include "child_process.h"
#include "commands/subcommand.h"
#include "library_locator.h"
#include "live_view.h"
#include "output_naming.h"
#include "process_tree.h"
#include "profile_summary.h"
#include "report_summary.h"
#include "symbolizer.h"
#include "timeline_plot.h"

namespace fs = std::filesystem;

namespace heapline::launcher {

namespace {

// The heapline/1 report at `path` when it is process `pid`'s, of this run
// (started since `since_unix_ns`: a pid an earlier run's process had is
// not enough).
std::optional<heapline::ParsedReport> report_of(const std::string& path, pid_t pid, std::uint64_t since_unix_ns) {
  if (!not_regular_at(path).empty()) return std::nullopt;
  heapline::ReportReading reading = heapline::read_report_file(path);
  if (!reading || reading.report->pid != pid || reading.report->start_unix_ns < since_unix_ns) return std::nullopt;
  return std::move(reading.report);
}

// Why the command (pid) left no report at `path`: each case its own true
// message. A file there that was written before the run (since_unix_ns)
// and is no report is not the command's: never blamed on it (as "not
// JSON"), the causes of no report are said instead.
std::string why_no_report(const std::string& path, pid_t pid, const std::string& program, std::uint64_t since_unix_ns) {
  const fs::path file = fs::absolute(path);
  const fs::path dir = file.parent_path();
  std::error_code error;
  if (fs::exists(fs::symlink_status(file, error))) {
    if (const std::string kind = not_regular_at(file.string()); !kind.empty())
      return file.string() + " is " + kind + ", not a report (the library writes regular files only)";
    const heapline::ReportReading reading = heapline::read_report_file(file.string());
    if (reading) {
      return file.string() + " is from an earlier run (pid " + std::to_string(reading.report->pid) +
             "), not from this command (pid " + std::to_string(pid) + ")";
    }
    if (!written_before_run(file.string(), since_unix_ns)) return reading.error;
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "cannot write in " + dir.string() + " (" + std::strerror(errno) + ")";
  }
  if (const std::string reason = why_preload_cannot_apply(program); !reason.empty()) return reason;
  return "the library wrote none (where it was loaded it said why above, such as a full disk or a file size "
         "limit; a program that clears LD_PRELOAD, or a --lib that is not libheapline.so, leaves none)";
}

struct Options {
  std::string out;
  bool out_given = false;  // --out '' is refused, not the default
  std::string plot;
  bool plot_given = false;
  std::string plot_path;  // absolute, as claimed
  std::string lib;
  bool summary = false;  // --summary: the default, which --quiet turns off (the two exclude each other)
  bool per_process_summary = false;
  std::string follow = "tree";
  bool quiet = false;
  bool profile = false;
  std::vector<std::string> command;
};

void prepend_preload(const fs::path& library) {
  std::string value = library.string();
  if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing != 0) {
    value += ":";
    value += existing;
  }
  setenv("LD_PRELOAD", value.c_str(), 1);
}

// The bytes the library adds to the report's name for the names it derives
// from it (interposer/README.md): a pid inserted (".<pid>", pids have up to
// 7 digits), the live file's ".live", and a temporary's
// ".<pid>.<16 hex digits>.tmp" beside either.
constexpr std::size_t kLibraryDerivedBytes = 8 + 5 + 29;
constexpr pid_t kWidestPid = 4194304;  // the kernel's largest pid_max

// Claims the report's name (--out, or the default) and --plot's before the
// command runs (heapline/output_file.h): a missing or unwritable directory,
// a name that is not a regular file or is too long for the names the
// library derives from it, and a plot named like the report are refused.
// "" when fine, else the line to print.
std::string claim_outputs(Options& options, heapline::OutputFiles& outputs) {
  if (options.out_given && options.out.empty()) return "--out '': an empty name is not a file name";
  if (options.plot_given && options.plot.empty()) return "--plot '': an empty name is not a file name";
  if (const std::string problem = report_name_problem(options.out, true); !problem.empty()) {
    return "--out " + options.out + ": " + problem;
  }
  const std::string& command = options.command.front();
  // What the refusal is about: the name given, or the default one (made
  // from the command's name), never "the directory" when it is the name.
  const std::string shown =
      options.out.empty() ? "the report's default name " + shown_default_output_path(command) : "--out " + options.out;
  std::error_code error;
  const fs::path report = fs::absolute(root_output_path(options.out, command, kWidestPid), error);
  if (error) return shown + ": " + error.message();
  const heapline::OutputRules report_rules{.derived_bytes = kLibraryDerivedBytes};
  // The default name is made from the program's file name, which may hold
  // any byte: a control character there is the program's, not a name given
  // here, so it is checked as a plain byte (the summary shows it escaped).
  std::string checked = report.string();
  if (options.out.empty()) {
    for (char& c : checked)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '_';
  }
  if (const std::string problem = heapline::output_problem(checked, report_rules); !problem.empty()) {
    return shown + ": " + problem;
  }
  // The command's library is given the name as HEAPLINE_OUT: one it would
  // refuse (its own reading, with a length limit of its own, below the
  // system's) would run the command with the library's default name
  // instead, and this run would find no report of its own.
  if (heapline::read_setting_alone("HEAPLINE_OUT", as_template(report.string()).c_str()) != 1) {
    return shown + ": the library does not take it for its report (" +
           heapline::setting_rule("HEAPLINE_OUT") + ")";
  }
  try {
    // The program run is read by the command: no output may be it (--out
    // prog -- ./prog replaced the program with its report).
    if (const std::string program = resolve_on_path(command); !program.empty()) outputs.reads(command, program);
    // A name without %p is the same for this run, and no other output may
    // share it; with %p, only its directory and length are known now.
    if (root_output_path(options.out, command, 1) == root_output_path(options.out, command, 2)) {
      outputs.claim(shown, report.string(), report_rules);
    }
    if (options.plot_given) {
      if (const std::string problem = plot_output_problem(options.plot); !problem.empty()) {
        return "--plot " + options.plot + ": " + problem;
      }
      const fs::path plot = fs::absolute(options.plot, error);
      if (error) return "--plot " + options.plot + ": " + error.message();
      options.plot_path = plot.string();
      outputs.claim("--plot " + options.plot, options.plot_path);
    }
  } catch (const heapline::OutputRefused& refused) {
    return refused.what();
  }
  return "";
}

// --profile asks for the heap sampler, and a HEAPLINE_SAMPLE of the user's
// wins (a mean of their own); one that gives no profile (off, or a value
// the library does not take, which leaves the sampler off) is refused
// before the command runs, saying why. "" when fine.
std::string profile_problem(const Options& options) {
  const char* sample = std::getenv("HEAPLINE_SAMPLE");
  if (!options.profile || sample == nullptr) return "";
  std::uint64_t mean_bytes = 0;
  if (!heapline::read_sample_mean(sample, &mean_bytes)) {
    return "--profile: HEAPLINE_SAMPLE='" + terminal_text(sample, 80) +
           "' in the environment is not valid (expected " HEAPLINE_SAMPLE_MEAN_RULE
           "), and the library would sample nothing: no profile would come; unset it or give a mean";
  }
  if (mean_bytes == 0) {
    return "--profile: HEAPLINE_SAMPLE=off in the environment turns the heap sampler off: no profile would come; "
           "unset it or give a mean such as 4m";
  }
  return "";
}

std::uint64_t unix_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// A name no other launch shares: this launcher's pid, the time and random
// bits.
std::string new_run_id() {
  std::uint64_t random = 0;
  if (getrandom(&random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) random = unix_now_ns();
  char text[64];
  std::snprintf(text, sizeof text, "%d-%016llx", static_cast<int>(getpid()), static_cast<unsigned long long>(random));
  return text;
}

void report_on_run(const Options& options, const ChildResult& child, RunIdentity& run, ReportWatch& watch,
                   heapline::OutputFiles& outputs);

// The launcher names the report with --out: a HEAPLINE_OUT of the user's
// (a path, or off) would be replaced without a word, so it is said, once,
// when --out is not given (given, it replaces the variable as an option
// does).
void say_heapline_out_not_used(const Options& options) {
  const char* out = std::getenv("HEAPLINE_OUT");
  if (out == nullptr || *out == 0 || options.out_given) return;
  say("heapline", std::string("HEAPLINE_OUT=") + terminal_text(out, 80) +
                      " in the environment is not used: the launcher writes the report to --out, by default " +
                      shown_default_output_path(options.command.front()));
}

int run(Options& options) {
  say_heapline_out_not_used(options);
  heapline::OutputFiles outputs;
  if (const std::string problem = claim_outputs(options, outputs); !problem.empty()) {
    say("heapline", problem + "; the command was not run");
    return kUsageError;
  }
  if (const std::string problem = profile_problem(options); !problem.empty()) {
    say("heapline", problem + "; the command was not run");
    return kUsageError;
  }

  LibraryChoice choice;
  auto library = locate_library(options.lib, choice);
  if (!library) {
    say("heapline", "cannot find libheapline.so (looked at " + choice.tried + "); give its path with --lib or HEAPLINE_LIB");
    return kUsageError;
  }
  if (const std::string problem = shared_object_problem(library->string()); !problem.empty()) {
    say("heapline", library->string() + " is " + problem + ", not libheapline.so");
    return kUsageError;
  }

  std::fflush(stdout);
  // Every process of the tree gets the report's name as a full path from
  // here: a relative one is resolved in each process's own directory, so a
  // process that changes directory before exec (a make recipe's
  // `cd sub && cc ...`) wrote its report there, and the summary lost it.
  std::error_code no_directory;
  const fs::path launch_directory = fs::current_path(no_directory);
  if (no_directory) {
    say("heapline", "cannot tell the working directory (" + no_directory.message() + "); the command was not run");
    return kUsageError;
  }
  // Reports of this run start after this instant; older files of the same
  // names are an earlier run's. The run id tells this run's processes from
  // those of another launch writing beside it.
  RunIdentity run;
  run.since_unix_ns = unix_now_ns();
  run.launcher_pid = getpid();
  run.run_id = new_run_id();
  ReportWatch watch;
  ChildResult child = run_command(
      options.command,
      [&](pid_t pid) {
        // Runs in the child before exec: its own pid names the root report.
        prepend_preload(*library);
        const fs::path report = launch_directory / root_output_path(options.out, options.command.front(), pid);
        setenv("HEAPLINE_OUT", as_template(report.string()).c_str(), 1);
        setenv("HEAPLINE_ROOT_PID", std::to_string(pid).c_str(), 1);
        setenv("HEAPLINE_FOLLOW", options.follow.c_str(), 1);
        setenv(heapline::kRunIdVariable, run.run_id.c_str(), 1);
        // The launcher summarises the run; the processes never print their
        // own summary line into the command's output (a shim or a build
        // would print one per process).
        setenv("HEAPLINE_SUMMARY", "0", 1);
        // The heap sampler costs the hot path (docs/design.md): on only when
        // asked for; a HEAPLINE_SAMPLE of the user's own (a mean, off) wins.
        if (options.profile) setenv("HEAPLINE_SAMPLE", "on", 0);
      },
      {watch.fd(), [&] { watch.read_events(); },
       [&](pid_t pid) { watch.start(root_output_path(options.out, options.command.front(), pid)); },
       // The tree is followed: processes the command left running are of
       // the run, and their reports are in its summary.
       options.follow == "tree" ? std::function<void()>([&] {
         if (!options.quiet) {
           say("heapline", "the command ended; waiting for the processes it left running "
                           "(Ctrl-C: the summary without them)");
         }
       })
                                : std::function<void()>()});
  if (!child.started) return child.exit_status;
  // Whatever goes wrong from here on is the launcher's own problem: it is
  // said in one line, and the command's status is kept.
  try {
    report_on_run(options, child, run, watch, outputs);
  } catch (const std::exception& error) {
    say("heapline", std::string("after the command: ") + error.what());
  }
  return child.exit_status;
}

// The summary, the reports of the tree and the plot, once the command ended.
void report_on_run(const Options& options, const ChildResult& child, RunIdentity& run, ReportWatch& watch,
                   heapline::OutputFiles& outputs) {
  run.command_pid = child.pid;
  run.keeper_pid = child.keeper_pid;
  // With --follow command the others were never of the summary.
  if (options.follow == "tree") run.left_running = child.left_running;

  // The command's report is at the name it claimed: the plain one, or with
  // its pid inserted when that was taken (see the library's README). Only a
  // file that says it comes from the command's pid is its report.
  const std::string plain_path = root_output_path(options.out, options.command.front(), child.pid);
  const std::string names[] = {plain_path, pid_inserted_path(plain_path, child.pid)};
  // A command that ended without its exit handlers (killed, a crash, _exit)
  // wrote no report but left its live file: convert it in its place.
  for (const std::string& name : names) {
    const std::string live_path = name + ".live";
    std::error_code missing;
    if (!fs::exists(fs::symlink_status(live_path, missing)) || !not_regular_at(live_path).empty() ||
        report_of(name, child.pid, run.since_unix_ns))
      continue;
    try {
      LiveFile file(live_path);
      if (file.region().header.pid != child.pid) continue;  // another process's
      // The report's name taken by what is not a regular file (the command
      // put a link, a FIFO or a directory there before it died): the
      // report goes to the name with its pid inserted, never through it.
      std::string target = name;
      const std::string kind = not_regular_at(name);
      if (!kind.empty()) {
        target = pid_inserted_path(name, child.pid);
        if (target == name || fs::exists(fs::symlink_status(target, missing))) {
          say("heapline", "cannot convert " + live_path + ": " + name + " is " + kind + " and " + target +
                              " is taken");
          continue;
        }
        say("heapline", name + " is " + kind + ", not the command's report: its live file is converted into " +
                            target);
      }
      LiveSnapshot snapshot = take_snapshot(file, false);
      const int signal_number = child.exit_status > 128 ? child.exit_status - 128 : 0;
      write_converted_report(file, snapshot, target, snapshot.exited ? "exit" : "without-exit", signal_number);
      fs::remove(live_path);
      if (snapshot.dropped_samples > 0) say("heapline", dropped_samples_note(snapshot));
      if (!options.quiet && signal_number > 0) {
        say("heapline", "the command ended without exit (signal " + std::to_string(signal_number) +
                            "); report converted from its live file");
      } else if (!options.quiet && snapshot.exited) {
        // What took the name was said above, with the conversion: one line.
        if (kind.empty()) {
          say("heapline", "the command's report could not be written at its exit (the library said why above); "
                          "report converted from its live file");
        }
      } else if (!options.quiet && !snapshot.exec_note.empty()) {
        // The library wrote which program and why just before the exec.
        say("heapline", "the command exec'd " + terminal_text(snapshot.exec_note, 300) +
                            ", which runs without the library; report converted from its live file");
      } else if (!options.quiet) {
        // Exited with a status, yet the library's exit handlers never ran:
        // the last image the library saw was replaced by one it cannot
        // follow, or the process left through the raw system call.
        say("heapline", "the command (" + terminal_text(fs::path(snapshot.exe).filename().string(), 64) +
                            " as the library last saw it) exited without the library's exit handlers: it exec'd a "
                            "program that runs without the library (a static or setuid program, or one whose "
                            "LD_PRELOAD was changed or cleared, as by env LD_PRELOAD=...) or made the exit system "
                            "call itself; report converted from its live file");
      }
    } catch (const std::exception& error) {
      say("heapline", "cannot convert " + live_path + ": " + error.what());
    }
  }
  std::string report_path;
  heapline::ParsedReport report;
  for (const std::string& name : names) {
    if (auto found = report_of(name, child.pid, run.since_unix_ns)) {
      report_path = name;
      report = std::move(*found);
      break;
    }
  }
  // The processes the command started, each with its own report.
  std::vector<std::string> notes;
  std::vector<TreeReport> tree;
  if (!report_path.empty()) tree.push_back({report_path, report});
  for (TreeReport& other : find_child_reports(plain_path, run, watch.seen(), notes)) tree.push_back(std::move(other));
  if (report_path.empty()) {
    say("heapline", "no report from the command: " + why_no_report(plain_path, child.pid, options.command.front(), run.since_unix_ns));
    if (!options.quiet && !tree.empty()) {
      say("heapline", std::to_string(tree.size()) + (tree.size() == 1 ? " process" : " processes") +
                          " it started wrote a report, for example " + tree.front().path);
    }
    return;
  }
  if (!options.quiet) {
    say_lines(summarize(report, report_path));
    for (const std::string& note : notes) say("heapline", note);
    say_lines(summarize_tree(tree));
    Symbolizer symbolizer;
    say_lines(summarize_peak_profile(report, kSummarySites, symbolizer));
    say_lines(summarize_tree_profile(tree, symbolizer, kSummarySites));
  }
  if (options.per_process_summary) say_lines(summarize_each(tree));

  if (options.plot_given) {
    try {
      // A tree is drawn whole: the command alone would be a flat line for
      // make or a compiler driver. A lone process's peak names its top site.
      Symbolizer symbolizer;
      PlotFiles files = tree.size() > 1 ? write_tree_plot_files(tree, options.plot)
                                        : write_plot_files(report, options.plot, top_peak_site(report, symbolizer).value_or(""));
      std::string gnuplot_said;
      std::string problem = render_plot(files, options.plot_path, outputs, gnuplot_said);
      if (!problem.empty()) {
        say("heapline", problem);
        // gnuplot's own words, each line indented under the launcher's and
        // shown as a terminal would print it literally: no line of it can
        // pass for heapline's, or drive the terminal.
        if (!gnuplot_said.empty()) say_lines(heapline::indented(gnuplot_said) + "\n");
      } else if (!options.quiet) {
        say("heapline", "plot " + options.plot);
      }
    } catch (const std::exception& error) {
      say("heapline", std::string("cannot plot: ") + error.what());
    }
  }
}

}  // namespace

Subcommand add_run_command(CLI::App& heapline, const std::vector<std::string>& command) {
  CLI::App* app = heapline.add_subcommand(
      "run", "run a command and record its live heap over time, with its peak (the default: `heapline [OPTIONS] "
             "[--] CMD [ARGS...]` is `heapline run ...`)");
  app->footer(
      "usage: heapline [run] [OPTIONS] [--] CMD [ARGS...]\n\n"
      "The report (heapline/1 JSON) is written by the command's process itself at exit;\n"
      "processes it starts write their own, with their pid inserted before the extension\n"
      "(as does the command when a running process holds the name); the summary lists\n"
      "the tree's largest processes with their peak of heap + mapped (heap, mapped and\n"
      "peak resident set beside it), its short-lived helpers in one line, and their sum\n"
      "over time; --verbose adds one line per process.\n"
      "Settings for the library: HEAPLINE_PRECISION (exact | BYTES[,DIVISOR], the process's budget),\n"
      "HEAPLINE_INTERVAL_MS (sampling interval, default 10), HEAPLINE_SAMPLE (the heap\n"
      "sampler: off, the default; on, a 4 MiB mean; or a mean in bytes such as 256k).");
  auto options = std::make_shared<Options>();
  CLI::Option* out_option = app->add_option("--out", options->out,
                  "report file for the command's process (%p pid, %e command name; "
                  "default heapline.<command>.<pid>.json)");
  CLI::Option* plot_option = app->add_option("--plot", options->plot,
                  "draw the heap line into this .png or .svg file (needs gnuplot); for a tree of processes, the "
                  "command's and the largest ones' heap + mapped, and their sum");
  CLI::Option* summary = app->add_flag(
      "--summary", options->summary,
      "print the launcher's summary: the command's figures, the tree's largest processes, the sites at the peak "
      "(the default; -q turns it off)");
  app->add_flag("-v,--verbose", options->per_process_summary,
                "also print a one-line summary of every process of the tree, the short-lived helpers too (the "
                "launcher prints it: the processes themselves never do)");
  app->add_option("--follow", options->follow,
                  "tree: the command and every process it starts write a report (the default); "
                  "command: only the command")
      ->check(CLI::IsMember({"tree", "command"}));
  app->add_flag("-q,--quiet", options->quiet, "no summary from the launcher")->excludes(summary);
  app->add_flag("--profile", options->profile,
                "sample the heap for the sites that held it at the peak (HEAPLINE_SAMPLE=on, a 4 MiB mean, "
                "unless HEAPLINE_SAMPLE is set to a mean; set to off or to a value not valid, it is refused "
                "and the command not run); off by default, for its cost");
  app->add_option("--lib", options->lib,
                  "libheapline.so to preload (default: $HEAPLINE_LIB, else next to heapline in a build tree, "
                  "<libdir>/heapline when installed; heapline --version says which)")
      ->check(heapline::option_checks::name());
  return {app, [options, &command, out_option, plot_option] {
            options->command = command;
            options->out_given = out_option->count() > 0;
            options->plot_given = plot_option->count() > 0;
            return run(*options);
          }};
}

}  // namespace heapline::launcher
