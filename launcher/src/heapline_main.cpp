// heapline: run a command with libheapline.so preloaded.
//
//   heapline [--out F] [--plot F.png|F.svg] [--summary] [--follow tree|command] [--quiet] [--lib PATH] -- CMD ARGS...
//   heapline convert LIVE_FILE [-o OUT] [--signal N]
//   heapline top PID [--once] [--interval SECONDS]
//   heapline clean [DIR] [--reports] [--dry-run]
//
// A first word `convert`, `top` or `clean` is the subcommand; `heapline --
// top` runs a program named top.
//
// The command's exit status is passed through (128+N when signal N killed
// it). After it ends, a summary of the root process's report goes to stderr,
// then one line per process of the tree it ran (stale_files.h,
// process_tree.h) and, with --plot, the heap line is drawn with gnuplot. The launcher's own
// problems after the command ran (no report, no gnuplot) are reported but
// never change the exit status.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <poll.h>
#include <sys/random.h>
#include <termios.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <CLI/CLI.hpp>
#include <heapline/regular_file.h>
#include <heapline/report_reader.h>

#include "child_process.h"
#include "library_locator.h"
#include "live_view.h"
#include "output_naming.h"
#include "process_tree.h"
#include "report_summary.h"
#include "stale_files.h"
#include "timeline_plot.h"

namespace fs = std::filesystem;
using namespace heapline::launcher;

namespace {

constexpr int kUsageError = 2;

// The heapline/1 report at `path` when it is process `pid`'s.
std::optional<heapline::ParsedReport> report_of(const std::string& path, pid_t pid) {
  heapline::ReportReading reading = heapline::read_report_file(path);
  if (!reading || reading.report->pid != pid) return std::nullopt;
  return std::move(reading.report);
}

// Why the command (pid) left no report at `path`: each case its own true
// message.
std::string why_no_report(const std::string& path, pid_t pid, const std::string& program) {
  const fs::path file = fs::absolute(path);
  const fs::path dir = file.parent_path();
  std::error_code error;
  if (fs::exists(fs::symlink_status(file, error))) {
    const heapline::ReportReading reading = heapline::read_report_file(file.string());
    if (!reading) return reading.error;
    return file.string() + " is from an earlier run (pid " + std::to_string(reading.report->pid) +
           "), not from this command (pid " + std::to_string(pid) + ")";
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "cannot write in " + dir.string() + " (" + std::strerror(errno) + ")";
  }
  if (const std::string reason = why_preload_cannot_apply(program); !reason.empty()) return reason;
  return "the library wrote none (where it was loaded it said why above, such as a full disk or a file size "
         "limit; a program that clears LD_PRELOAD, or a --lib that is not libheapline.so, leaves none)";
}

// Runs one (sub)command's option parsing. Returns the exit status when there
// is nothing more to do: the help was printed, or the options were wrong.
template <typename Parse>
std::optional<int> parse_options(CLI::App& app, const char* who, Parse&& parse) {
  try {
    parse();
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& error) {
    std::cerr << who << ": " << error.what() << "\n" << app.help();
    return kUsageError;
  }
  return std::nullopt;
}

struct Options {
  std::string out;
  std::string plot;
  std::string lib;
  bool per_process_summary = false;
  std::string follow = "tree";
  bool quiet = false;
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

// heapline convert: the live file of a process that ended without its exit
// handlers, as a heapline/1 report.
int convert_main(int argc, char** argv) {
  CLI::App app{"heapline convert: turn the live file a killed process left into a heapline/1 report.",
               "heapline convert"};
  std::string input, output;
  int signal_number = 0;
  app.add_option("FILE", input, "the live file (<report>.live)")->required();
  app.add_option("-o,--out", output, "where to write the report (default: FILE without .live)");
  app.add_option("--signal", signal_number, "the signal that ended the process, when known (written to the report)")
      ->check(CLI::Range(1, SIGRTMAX));
  if (auto status = parse_options(app, "heapline convert", [&] { app.parse(argc, argv); })) return *status;
  try {
    fs::path out = output.empty() ? default_converted_path(input) : fs::path(output);
    std::error_code same_error;
    if (fs::equivalent(out, input, same_error)) {
      std::cerr << "heapline convert: " << out.string() << " is the live file itself: give another name with -o\n";
      return kUsageError;
    }
    LiveFile file(input);
    const int pid = file.region().header.pid;
    std::string why;
    auto mapped_by = find_live_file(pid, why);
    const bool running = mapped_by && fs::equivalent(*mapped_by, input);
    LiveSnapshot snapshot = take_snapshot(file, running);
    std::string ended = running ? "running" : snapshot.exited ? "exit" : "without-exit";
    write_converted_report(file, snapshot, out, ended, signal_number);
    if (snapshot.dropped_samples > 0) std::cerr << "heapline convert: " << dropped_samples_note(snapshot) << "\n";
    std::cerr << "heapline: wrote " << out.string() << " (" << snapshot.samples.size() << " samples, last at "
              << human_seconds(static_cast<std::int64_t>(snapshot.samples.empty() ? 0 : snapshot.samples.back().t_ns))
              << (running ? "; the process is still running: a snapshot" : "") << ")\n";
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "heapline convert: " << error.what() << "\n";
    return 1;
  }
}

// 'q' on the terminal quits `heapline top`: stdin is read key by key (no
// echo) while top runs, and its mode restored however top ends, on return
// or on a signal.
class QuitKey {
 public:
  explicit QuitKey(bool wanted) {
    if (!wanted || isatty(STDIN_FILENO) == 0 || tcgetattr(STDIN_FILENO, &saved_mode()) != 0) return;
    termios keys = saved_mode();
    keys.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    keys.c_cc[VMIN] = 0;
    keys.c_cc[VTIME] = 0;
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal_number, restore_and_die);
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &keys) == 0;
  }
  ~QuitKey() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_mode());
  }
  QuitKey(const QuitKey&) = delete;
  QuitKey& operator=(const QuitKey&) = delete;

  // Waits `seconds`, or less when a key comes; true when it was 'q'.
  bool wait_for_quit(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      if (!active_) {
        std::this_thread::sleep_for(left);
        return false;
      }
      pollfd in{STDIN_FILENO, POLLIN, 0};
      if (poll(&in, 1, static_cast<int>(left.count())) <= 0) continue;
      char key = 0;
      if (read(STDIN_FILENO, &key, 1) == 1 && (key == 'q' || key == 'Q')) return true;
    }
  }

 private:
  static termios& saved_mode() {
    static termios mode{};
    return mode;
  }
  static void restore_and_die(int signal_number) {
    tcsetattr(STDIN_FILENO, TCSANOW, &saved_mode());
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
  }
  bool active_ = false;
};

// A number of seconds in [low, high]: written so that NaN (for which every
// comparison is false, and which CLI::Range lets through) is refused.
CLI::Validator seconds_between(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != 0 || !(value >= low && value <= high)) {
          return "needs a number of seconds from " + CLI::detail::to_string(low) + " to " +
                 CLI::detail::to_string(high) + ", got " + text;
        }
        return "";
      },
      "SECONDS");
}

// heapline top: a running process's heap from its live file.
int top_main(int argc, char** argv) {
  CLI::App app{"heapline top: live bytes, peak, markers and a chart of a process run under heapline.",
               "heapline top"};
  pid_t pid = 0;
  bool once = false;
  double interval = 1.0;
  app.add_option("PID", pid, "the process")->required();
  app.add_flag("--once", once, "print one snapshot and exit");
  app.add_option("--interval", interval, "seconds between refreshes, 0.05 to 3600 (default 1)")
      ->check(seconds_between(0.05, 3600));
  if (auto status = parse_options(app, "heapline top", [&] { app.parse(argc, argv); })) return *status;
  std::string why;
  auto path = find_live_file(pid, why);
  if (!path) {
    std::cerr << "heapline top: " << why << "\n";
    return 1;
  }
  try {
    // The mapping stays valid after the process removes the file at exit:
    // the last screen shows its final figures.
    LiveFile file(*path);
    const bool terminal = isatty(STDOUT_FILENO) != 0;
    QuitKey keys(!once);
    for (;;) {
      const bool alive =
          process_alive(pid) && file.region().header.state.load(std::memory_order_acquire) != heapline::kLiveExited;
      LiveSnapshot snapshot = take_snapshot(file, alive);
      if (terminal && !once) std::cout << "\033[H\033[2J";
      std::cout << render_top(snapshot, alive) << std::flush;
      if (once) return 0;
      if (!alive) {
        std::cout << "heapline top: process " << pid << " has ended\n";
        return 0;
      }
      if (keys.wait_for_quit(interval)) return 0;
    }
  } catch (const std::exception& error) {
    std::cerr << "heapline top: " << error.what() << "\n";
    return 1;
  }
}

// heapline clean: live files (and reports) whose process is gone.
int clean_main(int argc, char** argv) {
  CLI::App app{"heapline clean: remove the live files that processes which are gone left in DIR "
               "(never a running process's, never a file that is not heapline's or not yours).",
               "heapline clean"};
  std::string dir = ".";
  CleanOptions options;
  app.add_option("DIR", dir, "the directory (default: the current one; not recursive)");
  app.add_flag("--reports", options.reports, "also remove the heapline/1 reports (*.json) there");
  app.add_flag("-n,--dry-run", options.dry_run, "only say what would be removed");
  if (auto status = parse_options(app, "heapline clean", [&] { app.parse(argc, argv); })) return *status;
  try {
    const CleanOutcome outcome = clean_directory(dir, options);
    for (const std::string& kept : outcome.kept) std::cerr << "heapline clean: kept " << kept << "\n";
    for (const std::string& removed : outcome.removed) {
      std::cerr << "heapline clean: " << (options.dry_run ? "would remove " : "removed ") << removed << "\n";
    }
    if (outcome.removed.empty()) std::cerr << "heapline clean: nothing to remove in " << dir << "\n";
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "heapline clean: " << error.what() << "\n";
    return 1;
  }
}

std::uint64_t unix_now_ns();

// Why the command's report could not be written where --out (or the
// default) puts it, checked before the command runs: a missing or
// unwritable directory, or a name that is not a regular file. "" when fine.
std::string output_problem(const std::string& out_template, const std::string& command) {
  const fs::path path = fs::absolute(root_output_path(out_template, command, getpid()));
  const std::string shown = out_template.empty() ? "the report's directory" : "--out " + out_template;
  const fs::path dir = path.parent_path();
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return shown + ": " + dir.string() + ": " + std::strerror(errno);
  if (!S_ISDIR(info.st_mode)) return shown + ": " + dir.string() + " is not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return shown + ": cannot write in " + dir.string() + " (" + std::strerror(errno) + ")";
  }
  // A name without %p is the same for this run: it must be a regular file
  // or free (the library replaces nothing else).
  if (root_output_path(out_template, command, 1) == root_output_path(out_template, command, 2) &&
      ::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    return shown + ": " + path.string() + " is " + heapline::file_kind_text(info.st_mode) + ", not a regular file";
  }
  return "";
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

std::uint64_t unix_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "convert") return convert_main(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "top") return top_main(argc - 1, argv + 1);
  if (argc > 1 && std::string(argv[1]) == "clean") return clean_main(argc - 1, argv + 1);

  Options options;
  CLI::App app{"heapline: run a command and record its live heap over time, with its peak.",
               "heapline"};
  app.footer(
      "usage: heapline [OPTIONS] [--] CMD [ARGS...]\n\n"
      "The report (heapline/1 JSON) is written by the command's process itself at exit;\n"
      "processes it starts write their own, with their pid inserted before the extension\n"
      "(as does the command when a running process holds the name); the summary lists\n"
      "each process of the tree with its peak, and their sum over time.\n"
      "Settings for the library: HEAPLINE_PRECISION (exact | MIN_BYTES[,DIVISOR]),\n"
      "HEAPLINE_INTERVAL_MS (sampling interval, default 10).");
  app.add_option("--out", options.out,
                 "report file for the command's process (%p pid, %e command name; "
                 "default heapline.<command>.<pid>.json)");
  app.add_option("--plot", options.plot, "draw the heap line into this .png or .svg file (needs gnuplot)");
  app.add_flag("--summary", options.per_process_summary,
               "also print a one-line summary of every process of the tree (the launcher prints it: "
               "the processes themselves never do)");
  app.add_option("--follow", options.follow,
                 "tree: the command and every process it starts write a report (the default); "
                 "command: only the command")
      ->check(CLI::IsMember({"tree", "command"}));
  app.add_flag("-q,--quiet", options.quiet, "no summary from the launcher");
  app.add_option("--lib", options.lib, "libheapline.so to preload (default: $HEAPLINE_LIB, else next to heapline)");

  // Everything from the command on belongs to it: split there before CLI11
  // sees the arguments, so an unknown heapline flag is an error rather than
  // the start of the command, and the command's own flags are never parsed.
  std::vector<std::string> own_args;
  int command_start = argc;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      command_start = i + 1;
      break;
    }
    if (arg.empty() || arg[0] != '-') {
      command_start = i;
      break;
    }
    own_args.push_back(arg);
    if ((arg == "--out" || arg == "--plot" || arg == "--lib" || arg == "--follow") && i + 1 < argc) {
      own_args.push_back(argv[++i]);
    }
  }
  for (int i = command_start; i < argc; ++i) options.command.push_back(argv[i]);

  std::reverse(own_args.begin(), own_args.end());  // CLI11 takes them last-first
  if (auto status = parse_options(app, "heapline", [&] { app.parse(own_args); })) return *status;
  if (options.command.empty()) {
    std::cerr << "heapline: no command given\n" << app.help();
    return kUsageError;
  }
  if (!options.plot.empty()) {
    if (const std::string problem = plot_output_problem(options.plot); !problem.empty()) {
      std::cerr << "heapline: --plot " << heapline::printable_text(options.plot) << ": " << problem << "\n";
      return kUsageError;
    }
  }

  LibraryChoice choice;
  auto library = locate_library(options.lib, choice);
  if (!library) {
    std::cerr << "heapline: cannot find libheapline.so (looked at " << choice.tried
              << "); give its path with --lib or HEAPLINE_LIB\n";
    return kUsageError;
  }
  if (const std::string problem = shared_object_problem(library->string()); !problem.empty()) {
    std::cerr << "heapline: " << library->string() << " is " << problem << ", not libheapline.so\n";
    return kUsageError;
  }

  if (const std::string problem = output_problem(options.out, options.command.front()); !problem.empty()) {
    std::cerr << "heapline: " << problem << "; the command was not run\n";
    return kUsageError;
  }

  std::fflush(stdout);
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
        setenv("HEAPLINE_OUT", as_template(root_output_path(options.out, options.command.front(), pid)).c_str(), 1);
        setenv("HEAPLINE_ROOT_PID", std::to_string(pid).c_str(), 1);
        setenv("HEAPLINE_FOLLOW", options.follow.c_str(), 1);
        setenv(heapline::kRunIdVariable, run.run_id.c_str(), 1);
        // The launcher summarises the run; the processes never print their
        // own summary line into the command's output (a shim or a build
        // would print one per process).
        setenv("HEAPLINE_SUMMARY", "0", 1);
      },
      {watch.fd(), [&] { watch.read_events(); },
       [&](pid_t pid) { watch.start(root_output_path(options.out, options.command.front(), pid)); }});
  if (!child.started) return child.exit_status;
  run.command_pid = child.pid;

  // The command's report is at the name it claimed: the plain one, or with
  // its pid inserted when that was taken (see the library's README). Only a
  // file that says it comes from the command's pid is its report.
  const std::string plain_path = root_output_path(options.out, options.command.front(), child.pid);
  const std::string names[] = {plain_path, pid_inserted_path(plain_path, child.pid)};
  // A command that ended without its exit handlers (killed, a crash, _exit)
  // wrote no report but left its live file: convert it in its place.
  for (const std::string& name : names) {
    const std::string live_path = name + ".live";
    if (!fs::exists(live_path) || report_of(name, child.pid)) continue;
    try {
      LiveFile file(live_path);
      if (file.region().header.pid != child.pid) continue;  // another process's
      LiveSnapshot snapshot = take_snapshot(file, false);
      const int signal_number = child.exit_status > 128 ? child.exit_status - 128 : 0;
      write_converted_report(file, snapshot, name, snapshot.exited ? "exit" : "without-exit", signal_number);
      fs::remove(live_path);
      if (snapshot.dropped_samples > 0) std::cerr << "heapline: " << dropped_samples_note(snapshot) << "\n";
      if (!options.quiet && signal_number > 0) {
        std::cerr << "heapline: the command ended without exit (signal " << signal_number
                  << "); report converted from its live file\n";
      } else if (!options.quiet && snapshot.exited) {
        std::cerr << "heapline: the command's report could not be written at its exit (the library said why "
                     "above); report converted from its live file\n";
      } else if (!options.quiet) {
        // Exited with a status, yet the library's exit handlers never ran:
        // the last image the library saw was replaced by one it cannot
        // follow, or the process left through the raw system call.
        std::cerr << "heapline: the command (" << heapline::printable_text(fs::path(snapshot.exe).filename().string())
                  << " as the library last saw it) exited without the library's exit handlers: it exec'd a "
                     "program that runs without the library (a static or setuid program, or one whose LD_PRELOAD "
                     "was changed or cleared, as by env LD_PRELOAD=...) or made the exit system call itself; "
                     "report converted from its live file\n";
      }
    } catch (const std::exception& error) {
      std::cerr << "heapline: cannot convert " << live_path << ": " << error.what() << "\n";
    }
  }
  std::string report_path;
  heapline::ParsedReport report;
  for (const std::string& name : names) {
    if (auto found = report_of(name, child.pid)) {
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
    std::cerr << "heapline: no report from the command: " << why_no_report(plain_path, child.pid, options.command.front()) << "\n";
    if (!options.quiet && !tree.empty()) {
      std::cerr << "heapline: " << tree.size() << (tree.size() == 1 ? " process" : " processes")
                << " it started wrote a report, for example " << tree.front().path << "\n";
    }
    return child.exit_status;
  }
  if (!options.quiet) {
    std::cerr << summarize(report, report_path);
    for (const std::string& note : notes) std::cerr << "heapline: " << note << "\n";
    std::cerr << summarize_tree(tree);
  }
  if (options.per_process_summary) std::cerr << summarize_each(tree);

  if (!options.plot.empty()) {
    try {
      PlotFiles files = write_plot_files(report, options.plot);
      std::string problem = render_plot(files, options.plot);
      if (!problem.empty()) {
        std::cerr << problem << "\n";
      } else if (!options.quiet) {
        std::cerr << "heapline: plot " << options.plot << "\n";
      }
    } catch (const std::exception& error) {
      std::cerr << "heapline: cannot plot: " << error.what() << "\n";
    }
  }
  return child.exit_status;
}
